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

#include <cmath>

namespace accel {
#define GEN_PASS_DEF_RAISEROTARY
#include "passes/Passes.h.inc"
} // namespace accel

using namespace mlir;
using namespace accel;
using namespace accel::raise;

namespace {

struct RotarySite {
  Operation *target; // the Add, or the Concat of a partial rotary
  Value input;       // [1, heads, T, head_dim]
  int64_t heads = 0, headDim = 0, rotaryDim = 0;
  bool interleaved = false;
  double theta = 0;
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

/// Proves `site` by evaluation and fills in style and theta.
bool prove(func::FuncOp func, Value positions, RotarySite &site, std::string &why) {
  const std::vector<int64_t> pos = {1, 0, 5, 17, 100, 3, 42};
  const int64_t T = int64_t(pos.size()), N = site.heads, D = site.headDim;
  eval::Evaluator ev;
  for (BlockArgument arg : func.getArguments())
    if (auto t = dyn_cast<RankedTensorType>(arg.getType()))
      if (std::optional<rt::DType> dt = eval::toDType(t.getElementType()))
        ev.bind(arg, rt::Tensor::zeros(*dt, {T}));
  std::optional<rt::DType> posType =
      eval::toDType(getElementTypeOrSelf(positions.getType()));
  std::vector<double> posD(pos.begin(), pos.end());
  rt::StatusOr<rt::Tensor> p = rt::Tensor::fromDoubles(*posType, {T}, posD);
  ev.bind(positions, std::move(*p));
  std::mt19937 rng(99);
  rt::Tensor x = randomTensor({1, N, T, D}, rng);
  std::optional<rt::DType> xType = eval::toDType(getElementTypeOrSelf(site.input.getType()));
  ev.bind(site.input, x.astype(*xType));
  llvm::Expected<rt::Tensor> y = ev.evaluate(site.target->getResult(0));
  if (!y) {
    why = "it cannot be evaluated: " + llvm::toString(y.takeError());
    return false;
  }
  rt::Tensor got = y->toF32();
  if (got.shape() != rt::Shape{1, N, T, D}) {
    why = "its result is " + got.describe();
    return false;
  }
  // Frequencies from the rotation of token 0 (position 1): for each pair
  // (i, partner) the angle is atan2 of the rotated unit vector.
  const float *xd = x.data<float>(), *gd = got.data<float>();
  const int64_t r = site.rotaryDim, half = r / 2;
  auto rotate = [&](bool interleaved, double theta, int64_t h, int64_t t, int64_t i) {
    if (i >= r)
      return double(xd[((h * T) + t) * D + i]);
    int64_t j = interleaved ? i / 2 : i % half;
    double f = std::pow(theta, -2.0 * double(j) / double(r)) * double(pos[size_t(t)]);
    double c = std::cos(f), s = std::sin(f);
    const float *row = xd + ((h * T) + t) * D;
    if (interleaved) {
      double a = row[i & ~int64_t(1)], b = row[i | 1];
      return (i % 2 == 0) ? a * c - b * s : b * c + a * s;
    }
    double a = row[i], partner = i < half ? -double(row[i + half]) : double(row[i - half]);
    return a * c + partner * s;
  };
  auto error = [&](bool interleaved, double theta) {
    double err = 0;
    for (int64_t h = 0; h < N; ++h)
      for (int64_t t = 0; t < T; ++t)
        for (int64_t i = 0; i < D; ++i)
          err = std::max(err, std::abs(rotate(interleaved, theta, h, t, i) -
                                       gd[((h * T) + t) * D + i]));
    return err;
  };
  // Solve for f from two rotated components of the pair (a, b) → (ya, yb).
  auto angle = [&](int64_t i0, int64_t i1) {
    double a = xd[i0], b = xd[i1], ya = gd[i0], yb = gd[i1];
    // (ya, yb) = R(f) (a, b): f = atan2(a*yb - b*ya, a*ya + b*yb)
    return std::atan2(a * yb - b * ya, a * ya + b * yb);
  };
  for (bool interleaved : {false, true}) {
    if (r < 4)
      break;
    double f1 = interleaved ? angle(2, 3) : angle(1, 1 + half); // pair j = 1
    if (!(f1 > 0))
      continue;
    double theta = std::pow(f1, -double(r) / 2.0);
    double err = error(interleaved, theta);
    if (err <= 1e-3) {
      site.interleaved = interleaved;
      site.theta = theta;
      // Round to the nearest integer base when that is as good (1e4, 5e5).
      double rounded = std::round(theta);
      if (error(interleaved, rounded) <= err + 1e-6)
        site.theta = rounded;
      return true;
    }
  }
  why = "it is not x·cos + rotate(x)·sin with frequencies theta^(-2i/d)";
  return false;
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
