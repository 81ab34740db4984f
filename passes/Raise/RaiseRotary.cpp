//===- RaiseRotary.cpp - rotary embedding → transformer.rotary ------------===//
//
// Runs after accel-raise-attention, when the graph's positions come from
// transformer.positions. A rotary site is `x * C + R * S` where C and S are
// computed from the positions alone (cos/sin tables, however the exporter
// wrote them) and R is a rotation of x's halves (or pairs); a partial rotary
// concatenates the result with x's untouched tail. The site is proved by
// evaluation: C and S at chosen positions give the style (half split or
// interleaved) and the frequencies, which must follow theta^(-2i/d); then x
// bound to random values must come out as rotary(x) computed here.
//
// Frequencies that are not theta^(-2i/d) (or that differ from it only where
// positions up to 100 cannot show it) are measured precisely, at positions
// 1, 2, 4, ..., 2^20 (the angles f * 2^k are exact in f32), and a linear or
// llama3 rope scaling is recovered from them (recoverScaling): the rotary
// gets `scaling = #transformer.rope_scaling<...>` when the runtime's own
// formula (rotaryInvFreq) reproduces every measured frequency to a few f32
// ulps. Only those rotary_dim / 2 frequencies are ever used, so any
// parameter set that reproduces them is the model's rotary.
//
// onnxruntime's com.microsoft RotaryEmbedding (onnx.ms_RotaryEmbedding, what
// onnxruntime-genai's builder writes when RoPE stays out of
// GroupQueryAttention) carries its own [max_position, rotary_dim / 2] cos/sin
// tables: it becomes transformer.rotary with cos_sin(tables) once its
// position_ids are proved, by evaluation at chosen positions, to be the
// token positions (batch 1, [1, tokens] or [tokens]). 3-D input [1, tokens,
// heads * head_dim] is split into heads by a reshape, 4-D [1, heads, tokens,
// head_dim] by a transpose and a reshape. Not raised (a warning says why):
// a scalar position offset (not one sequence's positions in a ragged batch),
// is_packed_batching, scale other than 1, tables that depend on graph inputs.
//
//===----------------------------------------------------------------------===//
#include "IRBuilders.h"
#include "Probe.h"
#include "RaiseUtils.h"

#include "accel/dialects/Onnx/OnnxOps.h"
#include "accel/dialects/Transformer/TransformerOps.h"
#include "accel/passes/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/TypeUtilities.h"
#include "core/Rope.h"

#include <cmath>
#include <limits>

namespace accel {
#define GEN_PASS_DEF_RAISEROTARY
#include "passes/Passes.h.inc"
} // namespace accel

using namespace mlir;
using namespace accel;
using namespace accel::raise;
namespace tk = accel::rt; // core/Rope.h: the runtime's own frequencies

namespace {

struct RotarySite {
  Operation *target; // the Add, or the Concat of a partial rotary
  Value input;       // [1, heads, T, head_dim]
  int64_t heads = 0, headDim = 0, rotaryDim = 0;
  bool interleaved = false;
  double theta = 0;
  tk::RopeScaling scaling; // kNone: none
};

/// The operand of `mul` that depends only on `positions` (and shapes), and
/// the other one.
bool splitPositional(Operation *mul, Value positions, Value &table, Value &data) {
  if (!isa_and_nonnull<onnx::MulOp>(mul))
    return false;
  Value a = mul->getOperand(0), b = mul->getOperand(1);
  bool pa = dependsOnlyOnShapesAnd(a, positions), pb = dependsOnlyOnShapesAnd(b, positions);
  if (pa == pb)
    return false;
  table = pa ? a : b;
  data = pa ? b : a;
  return true;
}

std::optional<RotarySite> match(onnx::AddOp add, Value positions) {
  Value c, x, s, r;
  Operation *m0 = add.getA().getDefiningOp(), *m1 = add.getB().getDefiningOp();
  if (!splitPositional(m0, positions, c, x) || !splitPositional(m1, positions, s, r))
    return std::nullopt;
  // x is the one the rotation R is built from; try both orders.
  auto reaches = [](Value from, Value to) {
    SmallVector<Value> work{from};
    for (int steps = 0; !work.empty() && steps < 16; ++steps) {
      Value v = work.pop_back_val();
      if (v == to)
        return true;
      Operation *op = v.getDefiningOp();
      if (op && isa<onnx::SliceOp, onnx::NegOp, onnx::ConcatOp, onnx::ReshapeOp,
                    onnx::TransposeOp, onnx::UnsqueezeOp, onnx::SqueezeOp>(op))
        for (Value o : op->getOperands())
          work.push_back(o);
    }
    return false;
  };
  if (!reaches(r, x)) {
    if (!reaches(x, r))
      return std::nullopt;
    std::swap(x, r);
    std::swap(c, s);
  }
  auto xt = dyn_cast<RankedTensorType>(x.getType());
  if (!xt || xt.getRank() != 4 || xt.isDynamicDim(1) || xt.isDynamicDim(3))
    return std::nullopt;
  RotarySite site;
  site.target = add;
  site.input = x;
  site.heads = xt.getDimSize(1);
  site.headDim = site.rotaryDim = xt.getDimSize(3);
  // Partial: x = Slice(full, 0:r) and the result is Concat(add, Slice(full, r:)).
  if (auto slice = x.getDefiningOp<onnx::SliceOp>(); slice && add->hasOneUse())
    if (auto cat = dyn_cast<onnx::ConcatOp>(*add->getUsers().begin()))
      if (cat.getInputs().size() == 2 && cat.getInputs()[0] == add.getResult() &&
          (int64_t(cat.getAxis()) == -1 || int64_t(cat.getAxis()) == 3))
        if (auto tail = cat.getInputs()[1].getDefiningOp<onnx::SliceOp>();
            tail && tail.getData() == slice.getData()) {
          auto full = dyn_cast<RankedTensorType>(slice.getData().getType());
          if (full && full.getRank() == 4 && !full.isDynamicDim(3)) {
            site.target = cat;
            site.input = slice.getData();
            site.headDim = full.getDimSize(3);
          }
        }
  return site;
}

/// The site evaluated with x bound to random values and the positions to
/// `pos`: x [1, N, T, D] and the result, in f32.
struct SiteProbe {
  std::vector<int64_t> pos;
  rt::Tensor x, y;
};

std::optional<SiteProbe> probeSite(func::FuncOp func, Value positions, const RotarySite &site,
                                   std::vector<int64_t> pos, std::string &why) {
  const int64_t T = int64_t(pos.size()), N = site.heads, D = site.headDim;
  eval::Evaluator ev;
  for (BlockArgument arg : func.getArguments())
    if (auto t = dyn_cast<RankedTensorType>(arg.getType()))
      if (std::optional<rt::DType> dt = eval::toDType(t.getElementType()))
        ev.bind(arg, rt::Tensor::zeros(*dt, {T}));
  std::optional<rt::DType> posType = eval::toDType(getElementTypeOrSelf(positions.getType()));
  std::optional<rt::DType> xType = eval::toDType(getElementTypeOrSelf(site.input.getType()));
  if (!posType || !xType) {
    why = "its positions or input have an unsupported type";
    return std::nullopt;
  }
  rt::StatusOr<rt::Tensor> p =
      rt::Tensor::fromDoubles(*posType, {T}, std::vector<double>(pos.begin(), pos.end()));
  ev.bind(positions, std::move(*p));
  std::mt19937 rng(99);
  rt::Tensor x = randomTensor({1, N, T, D}, rng);
  ev.bind(site.input, x.astype(*xType));
  llvm::Expected<rt::Tensor> y = ev.evaluate(site.target->getResult(0));
  if (!y) {
    why = "it cannot be evaluated: " + llvm::toString(y.takeError());
    return std::nullopt;
  }
  rt::Tensor got = y->toF32();
  if (got.shape() != rt::Shape{1, N, T, D}) {
    why = "its result is " + got.describe();
    return std::nullopt;
  }
  return SiteProbe{std::move(pos), x.astype(*xType).toF32(), std::move(got)};
}

/// The channel pairs of pair index j: (j, j + r/2) or (2j, 2j + 1).
std::pair<int64_t, int64_t> pairOf(bool interleaved, int64_t r, int64_t j) {
  return interleaved ? std::pair{2 * j, 2 * j + 1} : std::pair{j, j + r / 2};
}

/// The rotation angle of pair j at token t, in (-pi, pi], from every head:
/// (ya, yb) = R(angle) (a, b), summed over heads before the atan2 so that
/// the heads average without wrapping.
double measuredAngle(const SiteProbe &probe, int64_t heads, int64_t d, bool interleaved,
                     int64_t r, int64_t j, int64_t t) {
  const int64_t T = int64_t(probe.pos.size());
  auto [i0, i1] = pairOf(interleaved, r, j);
  const float *xd = probe.x.data<float>(), *yd = probe.y.data<float>();
  double num = 0, den = 0;
  for (int64_t h = 0; h < heads; ++h) {
    const int64_t row = (h * T + t) * d;
    double a = xd[row + i0], b = xd[row + i1], ya = yd[row + i0], yb = yd[row + i1];
    num += a * yb - b * ya;
    den += a * ya + b * yb;
  }
  return std::atan2(num, den);
}

/// The frequency (angle per position) of every pair j < r/2, from a probe
/// at positions 1, 2, 4, ..., 2^k: the angle at position 1 is the frequency,
/// and each doubling unwraps the next measurement by the previous estimate.
/// The angles f * 2^k are exact in f32, so the estimate ends within a few
/// 1e-7 / 2^k of the model's own frequency.
std::vector<double> measureFrequencies(const SiteProbe &probe, int64_t heads, int64_t d,
                                       bool interleaved, int64_t r) {
  std::vector<double> freqs;
  for (int64_t j = 0; j < r / 2; ++j) {
    double f = measuredAngle(probe, heads, d, interleaved, r, j, 0); // position 1
    for (size_t t = 1; t < probe.pos.size(); ++t) {
      const double p = double(probe.pos[t]);
      const double a = measuredAngle(probe, heads, d, interleaved, r, j, int64_t(t));
      const double turns = std::round((f * p - a) / (2 * M_PI));
      f = (a + 2 * M_PI * turns) / p;
    }
    freqs.push_back(f);
  }
  return freqs;
}

/// One unit in the last place of `f` as an f32.
double ulpF32(double f) {
  float x = std::fabs(float(f));
  return double(std::nextafter(x, std::numeric_limits<float>::infinity()) - x);
}

/// Whether the runtime's frequencies `inv` (rotaryInvFreq) are the measured
/// `freqs`: within 4 ulp of f32 (two f32 evaluations of one formula), plus
/// what a 1e-5 rad error of the angle at the largest probed position allows.
bool sameFrequencies(const std::vector<float> &inv, const std::vector<double> &freqs,
                     int64_t maxPos) {
  if (inv.size() != freqs.size())
    return false;
  for (size_t j = 0; j < inv.size(); ++j)
    if (!(std::fabs(double(inv[j]) - freqs[j]) <= 4 * ulpF32(freqs[j]) + 1e-5 / double(maxPos)))
      return false;
  return true;
}

/// theta (and scaling, when not kNone) whose runtime frequencies are the
/// measured ones.
struct RotaryFrequencies {
  double theta = 0;
  tk::RopeScaling scaling;
};

/// The runtime's frequencies of `rf`, or an empty vector if it refuses them.
std::vector<float> runtimeFrequencies(int64_t r, const RotaryFrequencies &rf) {
  rt::StatusOr<std::vector<float>> inv = tk::rotaryInvFreq(r, rf.theta, rf.scaling);
  return inv.isOk() ? *inv : std::vector<float>{};
}

/// Recovers theta and a linear or llama3 scaling from the measured
/// frequencies `f` of a rotary of `r` channels. In HF's llama3 rule
/// (_compute_llama3_parameters, which the runtime's rotaryInvFreq repeats)
/// the base frequencies b_j = theta^(-2j/r) keep their value below the
/// wavelength old / high_freq_factor, are divided by `factor` above old /
/// low_freq_factor, and blend linearly in 1 / wavelength between. So:
/// theta from the ratio f_{j+1} / f_j of the longest run of equal ratios
/// (the unscaled or the fully scaled band), `factor` from the lowest
/// frequency, and the band edges from the blended ones (two or more give
/// both edges; one or none leave a choice, made with HF's defaults
/// low_freq_factor 1 and high_freq_factor 4 where they fit). Any choice that
/// reproduces every frequency is exact, since only these r/2 are used; the
/// caller verifies that with the runtime's formula.
std::optional<RotaryFrequencies> recoverScaling(const std::vector<double> &f, int64_t r,
                                                int64_t maxPos) {
  const int64_t h = int64_t(f.size());
  if (h < 3)
    return std::nullopt;
  for (double v : f)
    if (!(v > 0))
      return std::nullopt;
  // The longest run of equal consecutive ratios.
  const double tol = 1e-5;
  int64_t bestBegin = 0, bestLen = 0;
  for (int64_t b = 0; b + 2 < h + 1; ++b) {
    int64_t e = b + 1; // ratios b .. e-1 agree with ratio b
    const double q = f[size_t(b + 1)] / f[size_t(b)];
    while (e + 1 < h && approxEqual(f[size_t(e + 1)] / f[size_t(e)], q, tol))
      ++e;
    if (e - b > bestLen) {
      bestLen = e - b;
      bestBegin = b;
    }
  }
  if (bestLen < 2)
    return std::nullopt;
  const int64_t b0 = bestBegin, b1 = bestBegin + bestLen;
  const double logQ = (std::log(f[size_t(b1)]) - std::log(f[size_t(b0)])) / double(b1 - b0);
  const double thetaFit = std::exp(-logQ * double(r) / 2.0);
  auto verify = [&](const RotaryFrequencies &rf) {
    return sameFrequencies(runtimeFrequencies(r, rf), f, maxPos);
  };
  for (double theta : {std::round(thetaFit), thetaFit}) {
    if (!approxEqual(theta, thetaFit, 1e-4))
      continue;
    std::vector<float> base = runtimeFrequencies(r, RotaryFrequencies{theta, {}});
    if (base.empty())
      continue;
    // high: unchanged; low: divided by the factor; medium: in between.
    const double factorFit = double(base.back()) / f.back();
    if (!(factorFit > 1 + tol))
      continue;
    std::vector<int64_t> high, medium, low;
    for (int64_t j = 0; j < h; ++j) {
      const double g = f[size_t(j)] / double(base[size_t(j)]);
      if (approxEqual(g, 1.0, tol))
        high.push_back(j);
      else if (approxEqual(g * factorFit, 1.0, tol))
        low.push_back(j);
      else
        medium.push_back(j);
    }
    for (double factor : {std::round(factorFit * 1000) / 1000, factorFit}) {
      RotaryFrequencies rf{theta, {}};
      rf.scaling.factor = float(factor);
      if (high.empty() && medium.empty()) {
        rf.scaling.kind = tk::RopeScalingKind::kLinear;
        if (verify(rf))
          return rf;
        continue;
      }
      rf.scaling.kind = tk::RopeScalingKind::kLlama3;
      auto wavelength = [&](int64_t j) { return 2 * M_PI / double(base[size_t(j)]); };
      // Candidates (original_max_position, low_freq_factor, high_freq_factor).
      SmallVector<std::tuple<int64_t, double, double>> candidates;
      if (medium.size() >= 2) {
        // smooth_j = (f_j / b_j - 1 / factor) / (1 - 1 / factor) is linear in
        // 1 / wavelength: 0 at old / low_freq_factor, 1 at old / high_freq_factor.
        double su = 0, ss = 0, suu = 0, sus = 0, n = double(medium.size());
        for (int64_t j : medium) {
          double u = 1 / wavelength(j);
          double sm = (f[size_t(j)] / double(base[size_t(j)]) - 1 / factor) / (1 - 1 / factor);
          su += u;
          ss += sm;
          suu += u * u;
          sus += u * sm;
        }
        double a = (n * sus - su * ss) / (n * suu - su * su), bb = (ss - a * su) / n;
        if (a > 0 && bb < 0) {
          double lowWavelen = -a / bb, highWavelen = a / (1 - bb);
          int64_t old = std::max<int64_t>(1, int64_t(std::llround(lowWavelen)));
          double lowF = double(old) / lowWavelen, highF = double(old) / highWavelen;
          candidates.push_back({old, std::round(lowF * 1000) / 1000,
                                std::round(highF * 1000) / 1000});
          candidates.push_back({old, lowF, highF});
        }
      } else {
        // The band edges lie between the last unchanged wavelength and the
        // first fully scaled one; with one blended frequency, it fixes
        // high_freq_factor once old and low_freq_factor = 1 are chosen.
        const double lastHigh = high.empty() ? 0 : wavelength(high.back());
        const double firstLow = low.empty() ? 2 * wavelength(h - 1) : wavelength(low.front());
        SmallVector<int64_t> olds;
        for (int64_t p2 = int64_t(1) << 62; p2 >= 1; p2 >>= 1)
          if (double(p2) < firstLow) {
            olds.push_back(p2);
            break;
          }
        olds.push_back(int64_t(std::ceil(firstLow)) - 1);
        for (int64_t old : olds) {
          if (old < 1)
            continue;
          if (medium.empty()) {
            double maxHigh = double(old) / lastHigh; // high_freq_factor below this
            double highF = lastHigh > 0 ? (maxHigh > 4 ? 4.0 : (1 + maxHigh) / 2) : 4.0;
            candidates.push_back({old, 1.0, highF});
          } else {
            int64_t m = medium.front();
            double sm = (f[size_t(m)] / double(base[size_t(m)]) - 1 / factor) / (1 - 1 / factor);
            double u = double(old) / wavelength(m);
            if (sm > 0)
              candidates.push_back({old, 1.0, 1 + (u - 1) / sm});
          }
        }
      }
      for (auto [old, lowF, highF] : candidates) {
        rf.scaling.originalMaxPosition = old;
        rf.scaling.lowFreqFactor = float(lowF);
        rf.scaling.highFreqFactor = float(highF);
        if (highF > lowF && lowF > 0 && verify(rf))
          return rf;
      }
    }
  }
  return std::nullopt;
}

/// Proves `site` by evaluation and fills in style, theta and scaling.
bool prove(func::FuncOp func, Value positions, RotarySite &site, std::string &why) {
  const int64_t N = site.heads, D = site.headDim, r = site.rotaryDim, half = r / 2;
  std::optional<SiteProbe> probe =
      probeSite(func, positions, site, {1, 0, 5, 17, 100, 3, 42}, why);
  if (!probe)
    return false;
  const std::vector<int64_t> &pos = probe->pos;
  const int64_t T = int64_t(pos.size());
  const float *xd = probe->x.data<float>(), *gd = probe->y.data<float>();
  // rotary(x) with the frequencies freq(j), at the probe's positions.
  auto rotate = [&](bool interleaved, auto &&freq, int64_t h, int64_t t, int64_t i) {
    if (i >= r)
      return double(xd[((h * T) + t) * D + i]);
    int64_t j = interleaved ? i / 2 : i % half;
    double a = freq(j) * double(pos[size_t(t)]);
    double c = std::cos(a), s = std::sin(a);
    const float *row = xd + ((h * T) + t) * D;
    if (interleaved) {
      double x0 = row[i & ~int64_t(1)], x1 = row[i | 1];
      return (i % 2 == 0) ? x0 * c - x1 * s : x1 * c + x0 * s;
    }
    double x0 = row[i], partner = i < half ? -double(row[i + half]) : double(row[i - half]);
    return x0 * c + partner * s;
  };
  auto error = [&](bool interleaved, auto &&freq) {
    double err = 0;
    for (int64_t h = 0; h < N; ++h)
      for (int64_t t = 0; t < T; ++t)
        for (int64_t i = 0; i < D; ++i)
          err = std::max(err, std::abs(rotate(interleaved, freq, h, t, i) -
                                       gd[((h * T) + t) * D + i]));
    return err;
  };
  auto thetaFreq = [&](double theta) {
    return [=](int64_t j) { return std::pow(theta, -2.0 * double(j) / double(r)); };
  };
  // Solve for f from two rotated components of the pair (a, b) → (ya, yb).
  auto angle = [&](int64_t i0, int64_t i1) {
    double a = xd[i0], b = xd[i1], ya = gd[i0], yb = gd[i1];
    // (ya, yb) = R(f) (a, b): f = atan2(a*yb - b*ya, a*ya + b*yb)
    return std::atan2(a * yb - b * ya, a * ya + b * yb);
  };
  // Every pair's frequency, measured precisely at positions 1, 2, 4, ...
  // (or up to 64 when the graph cannot go further, e.g. a position table).
  std::optional<SiteProbe> powers;
  for (int64_t maxLog : {20, 6}) {
    std::vector<int64_t> p2;
    for (int64_t k = 0; k <= maxLog; ++k)
      p2.push_back(int64_t(1) << k);
    std::string ignored;
    if ((powers = probeSite(func, positions, site, p2, ignored)))
      break;
  }
  std::optional<std::pair<bool, double>> unscaled;
  for (bool interleaved : {false, true}) {
    if (r < 4)
      break;
    double f1 = interleaved ? angle(2, 3) : angle(1, 1 + half); // pair j = 1
    if (!(f1 > 0))
      continue;
    double theta = std::pow(f1, -double(r) / 2.0);
    double err = error(interleaved, thetaFreq(theta));
    if (err <= 1e-3) {
      // Round to the nearest integer base when that is as good (1e4, 5e5).
      double rounded = std::round(theta);
      if (error(interleaved, thetaFreq(rounded)) <= err + 1e-6)
        theta = rounded;
      unscaled = {interleaved, theta};
      break;
    }
  }
  // theta^(-2j/r) and nothing else, unless the precise frequencies say
  // otherwise (a scaling that changes only frequencies too low to show at
  // the positions above) and a scaling reproduces them.
  if (unscaled && powers) {
    std::vector<double> freqs = measureFrequencies(*powers, N, D, unscaled->first, r);
    if (sameFrequencies(runtimeFrequencies(r, RotaryFrequencies{unscaled->second, {}}), freqs,
                        powers->pos.back()))
      powers.reset();
  }
  if (powers) {
    for (bool interleaved : {false, true}) {
      if (r < 6)
        break;
      std::vector<double> freqs = measureFrequencies(*powers, N, D, interleaved, r);
      std::optional<RotaryFrequencies> rf = recoverScaling(freqs, r, powers->pos.back());
      if (!rf)
        continue;
      std::vector<float> inv = runtimeFrequencies(r, *rf);
      if (error(interleaved, [&](int64_t j) { return double(inv[size_t(j)]); }) > 1e-3)
        continue;
      site.interleaved = interleaved;
      site.theta = rf->theta;
      site.scaling = rf->scaling;
      return true;
    }
  }
  if (unscaled) {
    site.interleaved = unscaled->first;
    site.theta = unscaled->second;
    return true;
  }
  why = "it is not x·cos + rotate(x)·sin with frequencies theta^(-2i/d), plain or with a "
        "linear or llama3 rope scaling";
  return false;
}

/// The #transformer.rope_scaling of a recovered linear or llama3 scaling
/// (null for none). The parameters are the f32 values the runtime computes
/// with, printed exactly.
transformer::RopeScalingAttr scalingAttr(MLIRContext *ctx, const tk::RopeScaling &s) {
  auto f64 = [](float v) { return llvm::APFloat(double(v)); };
  switch (s.kind) {
  case tk::RopeScalingKind::kLinear:
    return transformer::RopeScalingAttr::get(ctx, transformer::RopeScalingKind::Linear,
                                             f64(s.factor), std::nullopt, std::nullopt,
                                             std::nullopt, std::nullopt, std::nullopt);
  case tk::RopeScalingKind::kLlama3:
    return transformer::RopeScalingAttr::get(
        ctx, transformer::RopeScalingKind::Llama3, f64(s.factor), s.originalMaxPosition,
        f64(s.lowFreqFactor), f64(s.highFreqFactor), std::nullopt, std::nullopt);
  default:
    return {};
  }
}

/// A com.microsoft RotaryEmbedding raised with its own cos/sin tables.
struct MsRotarySite {
  onnx::MsRotaryEmbeddingOp op;
  int64_t heads = 0, headDim = 0, rotaryDim = 0;
};

/// Whether `posIds` evaluates to the token positions: bound to chosen
/// positions, it must come out as [1, T] (or [T]) holding them.
bool provePositions(func::FuncOp func, Value positions, Value posIds, std::string &why) {
  if (!dependsOnlyOnShapesAnd(posIds, positions)) {
    why = "its position_ids are not computed from the token positions";
    return false;
  }
  const std::vector<int64_t> pos = {1, 0, 5, 17, 100, 3, 42};
  const int64_t T = int64_t(pos.size());
  eval::Evaluator ev;
  for (BlockArgument arg : func.getArguments())
    if (auto t = dyn_cast<RankedTensorType>(arg.getType()))
      if (std::optional<rt::DType> dt = eval::toDType(t.getElementType()))
        ev.bind(arg, rt::Tensor::zeros(*dt, {T}));
  std::optional<rt::DType> posType = eval::toDType(getElementTypeOrSelf(positions.getType()));
  if (!posType) {
    why = "the token positions have an unsupported type";
    return false;
  }
  rt::StatusOr<rt::Tensor> p =
      rt::Tensor::fromDoubles(*posType, {T}, std::vector<double>(pos.begin(), pos.end()));
  ev.bind(positions, std::move(*p));
  llvm::Expected<rt::Tensor> got = ev.evaluate(posIds);
  if (!got) {
    why = "its position_ids cannot be evaluated: " + llvm::toString(got.takeError());
    return false;
  }
  const rt::Shape &shape = got->shape();
  if (shape != rt::Shape{1, T} && shape != rt::Shape{T}) {
    why = "its position_ids are " + got->describe() + ", not the token positions [1, tokens]";
    return false;
  }
  std::vector<double> v = got->toDoubles();
  for (int64_t i = 0; i < T; ++i)
    if (v[size_t(i)] != double(pos[size_t(i)])) {
      why = "its position_ids are not the token positions";
      return false;
    }
  return true;
}

std::optional<MsRotarySite> matchMsRotary(func::FuncOp func, Value positions,
                                          onnx::MsRotaryEmbeddingOp op, std::string &why) {
  if (op.getIsPackedBatching() != 0) {
    why = "is_packed_batching = 1";
    return std::nullopt;
  }
  if (op.getScale().convertToFloat() != 1.0f) {
    why = "scale is not 1";
    return std::nullopt;
  }
  auto xt = dyn_cast<RankedTensorType>(op.getInput().getType());
  auto ct = dyn_cast<RankedTensorType>(op.getCosCache().getType());
  if (!xt || !ct || ct != op.getSinCache().getType() || ct.getRank() != 2 ||
      !ct.hasStaticShape() || !isa<FloatType>(ct.getElementType())) {
    why = "its cos/sin caches are not static [max_position, rotary_dim / 2] tables";
    return std::nullopt;
  }
  if (!dependsOnlyOnShapesAnd(op.getCosCache(), {}) ||
      !dependsOnlyOnShapesAnd(op.getSinCache(), {})) {
    why = "its cos/sin caches depend on graph inputs";
    return std::nullopt;
  }
  MsRotarySite site;
  site.op = op;
  const int64_t half = ct.getDimSize(1);
  const int64_t numHeads = int64_t(op.getNumHeads());
  const int64_t rotAttr = int64_t(op.getRotaryEmbeddingDim());
  if (xt.getRank() == 4) {
    if (xt.isDynamicDim(1) || xt.isDynamicDim(3)) {
      why = "its input's heads or head size are not static";
      return std::nullopt;
    }
    site.heads = xt.getDimSize(1);
    site.headDim = xt.getDimSize(3);
  } else if (xt.getRank() == 3 && !xt.isDynamicDim(2)) {
    const int64_t hidden = xt.getDimSize(2);
    // As onnxruntime does: without num_heads the head size is the tables'.
    site.heads = numHeads > 0 ? numHeads : (half > 0 ? hidden / (2 * half) : 0);
    if (site.heads <= 0 || hidden % site.heads) {
      why = "its hidden size does not split into heads";
      return std::nullopt;
    }
    site.headDim = hidden / site.heads;
  } else {
    why = "its input is not [batch, seq, hidden] with a static hidden size";
    return std::nullopt;
  }
  site.rotaryDim = rotAttr > 0 ? rotAttr : site.headDim;
  if (site.rotaryDim % 2 || site.rotaryDim > site.headDim || 2 * half != site.rotaryDim) {
    why = "its cos/sin caches are not [max_position, rotary_dim / 2]";
    return std::nullopt;
  }
  if (!provePositions(func, positions, op.getPositionIds(), why))
    return std::nullopt;
  return site;
}

struct RaiseRotaryPass : public accel::impl::RaiseRotaryBase<RaiseRotaryPass> {
  void runOnOperation() override {
    func::FuncOp func;
    for (auto f : getOperation().getOps<func::FuncOp>())
      if (!f.isDeclaration())
        func = f;
    if (!func)
      return;
    Value positions;
    func.walk([&](transformer::PositionsOp op) { positions = op.getResult(); });
    if (!positions)
      return; // not token-major yet: accel-raise-attention runs first
    SmallVector<RotarySite> sites;
    // The fused opset-23 RotaryEmbedding on 4-D [batch, heads, seq, dim]
    // input with tables computed from the positions.
    func.walk([&](onnx::RotaryEmbeddingOp op) {
      auto xt = dyn_cast<RankedTensorType>(op.getX().getType());
      if (!xt || xt.getRank() != 4 || xt.isDynamicDim(1) || xt.isDynamicDim(3) ||
          op.getPositionIds() ||
          !dependsOnlyOnShapesAnd(op.getCosCache(), positions) ||
          !dependsOnlyOnShapesAnd(op.getSinCache(), positions))
        return;
      RotarySite site;
      site.target = op;
      site.input = op.getX();
      site.heads = xt.getDimSize(1);
      site.headDim = xt.getDimSize(3);
      int64_t r = op.getRotaryEmbeddingDim();
      site.rotaryDim = r > 0 ? r : site.headDim;
      std::string why;
      if (!prove(func, positions, site, why)) {
        op.emitWarning() << "rotary embedding could not be raised: " << why;
        return;
      }
      sites.push_back(site);
    });
    SmallVector<MsRotarySite> msSites;
    func.walk([&](onnx::MsRotaryEmbeddingOp op) {
      std::string why;
      if (std::optional<MsRotarySite> site = matchMsRotary(func, positions, op, why))
        msSites.push_back(*site);
      else
        op.emitWarning() << "rotary embedding could not be raised: " << why;
    });
    func.walk([&](onnx::AddOp add) {
      std::optional<RotarySite> site = match(add, positions);
      if (!site)
        return;
      std::string why;
      if (!prove(func, positions, *site, why)) {
        add.emitWarning() << "rotary embedding could not be raised: " << why;
        return;
      }
      sites.push_back(*site);
    });
    for (RotarySite &s : sites) {
      OpBuilder b(s.target);
      Location loc = s.target->getLoc();
      Type elem = getElementTypeOrSelf(s.input.getType());
      auto t4 = RankedTensorType::get(
          {ShapedType::kDynamic, ShapedType::kDynamic, s.heads, s.headDim}, elem);
      auto t3 = RankedTensorType::get({ShapedType::kDynamic, s.heads, s.headDim}, elem);
      Value tokens = reshape(b, loc, transpose(b, loc, s.input, {0, 2, 1, 3}, t4),
                             {-1, s.heads, s.headDim}, t3);
      Value pos = positions;
      Value rot = buildOp(
          b, loc, "transformer.rotary", {tokens, pos}, t3,
          {b.getNamedAttr("style", transformer::RotaryStyleAttr::get(
                                       b.getContext(), s.interleaved
                                                           ? transformer::RotaryStyle::Interleaved
                                                           : transformer::RotaryStyle::HalfSplit)),
           b.getNamedAttr("rotary_dim", b.getI64IntegerAttr(s.rotaryDim)),
           b.getNamedAttr("theta", b.getF64FloatAttr(s.theta)),
           b.getNamedAttr("operandSegmentSizes", b.getDenseI32ArrayAttr({1, 1, 0, 0}))});
      if (transformer::RopeScalingAttr scaling = scalingAttr(b.getContext(), s.scaling))
        rot.getDefiningOp()->setAttr("scaling", scaling);
      Value back = transpose(b, loc, reshape(b, loc, rot, {1, -1, s.heads, s.headDim}, t4),
                             {0, 2, 1, 3}, s.target->getResult(0).getType());
      s.target->getResult(0).replaceAllUsesWith(back);
    }
    for (MsRotarySite &s : msSites) {
      onnx::MsRotaryEmbeddingOp op = s.op;
      OpBuilder b(op);
      Location loc = op.getLoc();
      Value x = op.getInput();
      auto xt = cast<RankedTensorType>(x.getType());
      Type elem = xt.getElementType();
      auto t3 = RankedTensorType::get({ShapedType::kDynamic, s.heads, s.headDim}, elem);
      const bool fourD = xt.getRank() == 4;
      auto t4 = RankedTensorType::get(
          {ShapedType::kDynamic, ShapedType::kDynamic, s.heads, s.headDim}, elem);
      // [1, T, N*D] -> [T, N, D]; [1, N, T, D] -> [1, T, N, D] -> [T, N, D].
      Value tokens = fourD ? reshape(b, loc, transpose(b, loc, x, {0, 2, 1, 3}, t4),
                                     {-1, s.heads, s.headDim}, t3)
                           : reshape(b, loc, x, {-1, s.heads, s.headDim}, t3);
      Value rot = buildOp(
          b, loc, "transformer.rotary",
          {tokens, positions, op.getCosCache(), op.getSinCache()}, t3,
          {b.getNamedAttr("style", transformer::RotaryStyleAttr::get(
                                       b.getContext(), op.getInterleaved() != 0
                                                           ? transformer::RotaryStyle::Interleaved
                                                           : transformer::RotaryStyle::HalfSplit)),
           b.getNamedAttr("rotary_dim", b.getI64IntegerAttr(s.rotaryDim)),
           b.getNamedAttr("operandSegmentSizes", b.getDenseI32ArrayAttr({1, 1, 1, 1}))});
      Value back = fourD ? transpose(b, loc, reshape(b, loc, rot, {1, -1, s.heads, s.headDim}, t4),
                                     {0, 2, 1, 3}, op.getType())
                         : reshape(b, loc, rot, {1, -1, s.heads * s.headDim}, op.getType());
      op.getResult().replaceAllUsesWith(back);
    }
    eraseDeadOps(func.getBody().front());
  }
};
} // namespace
