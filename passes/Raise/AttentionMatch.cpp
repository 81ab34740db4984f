//===- AttentionMatch.cpp - find and prove attention subgraphs ------------===//
#include "AttentionMatch.h"

#include "Probe.h"
#include "RaiseUtils.h"

#include "accel/dialects/Onnx/OnnxOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"

#include <cmath>

using namespace mlir;
using namespace accel;
using namespace accel::raise;

namespace {

/// Static [?, heads, ?, headDim] (dims 1 and 3 static).
bool isHeadsTensor(Value v, int64_t headDim, int64_t &heads) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t || t.getRank() != 4 || t.isDynamicDim(1) || t.isDynamicDim(3))
    return false;
  if (headDim > 0 && t.getDimSize(3) != headDim)
    return false;
  heads = t.getDimSize(1);
  return true;
}

/// Mul(x, c) / Mul(c, x) / Div(x, c) with a scalar constant c: returns x and
/// multiplies `scale` by c (or 1/c).
Value stripScalar(Value v, double &scale) {
  Operation *op = v.getDefiningOp();
  if (!op)
    return {};
  if (isa<onnx::MulOp>(op)) {
    if (std::optional<double> c = getScalarConstant(op->getOperand(1))) {
      scale *= *c;
      return op->getOperand(0);
    }
    if (std::optional<double> c = getScalarConstant(op->getOperand(0))) {
      scale *= *c;
      return op->getOperand(1);
    }
  }
  if (isa<onnx::DivOp>(op))
    if (std::optional<double> c = getScalarConstant(op->getOperand(1))) {
      scale /= *c;
      return op->getOperand(0);
    }
  return {};
}

bool isMovement(Operation *op) {
  return isa<onnx::TransposeOp, onnx::ReshapeOp, onnx::ExpandOp, onnx::UnsqueezeOp,
             onnx::SqueezeOp, onnx::TileOp, onnx::IdentityOp>(op);
}

/// Walks back from `from` through scalar scales and movement ops to the
/// earliest per-head tensor [?, heads, ?, headDim]; a Concat(past, new) on
/// the sequence axis whose first operand is a graph argument stops the walk
/// and names the past.
struct HeadsTrace {
  Value heads, past, present;
  double scale = 1.0;
};
HeadsTrace traceHeads(Value from, int64_t headDim) {
  HeadsTrace best;
  Value cur = from;
  double scale = 1.0;
  for (int steps = 0; cur && steps < 64; ++steps) {
    int64_t h;
    if (isHeadsTensor(cur, headDim, h)) {
      best.heads = cur;
      best.scale = scale;
    }
    Operation *op = cur.getDefiningOp();
    if (!op)
      break;
    if (Value inner = stripScalar(cur, scale)) {
      cur = inner;
      continue;
    }
    if (isMovement(op)) {
      cur = op->getOperand(0);
      continue;
    }
    if (auto cat = dyn_cast<onnx::ConcatOp>(op)) {
      int64_t axis = cat.getAxis();
      if (cat.getInputs().size() == 2 && (axis == 2 || axis == -2) &&
          isa<BlockArgument>(cat.getInputs()[0]) &&
          isHeadsTensor(cat.getInputs()[1], headDim, h)) {
        best.past = cat.getInputs()[0];
        best.present = cur;
        best.heads = cat.getInputs()[1];
        best.scale = scale;
      }
    }
    break;
  }
  return best;
}
} // namespace

std::optional<AttentionSite> raise::matchAttention(Operation *softmax, std::string &why) {
  auto sm = dyn_cast<onnx::SoftmaxOp>(softmax);
  auto scoresType = dyn_cast<RankedTensorType>(sm.getInput().getType());
  if (!sm || !scoresType || scoresType.getRank() != 4 ||
      (int64_t(sm.getAxis()) != -1 && int64_t(sm.getAxis()) != 3)) {
    why = "the softmax is not over the last axis of rank-4 scores";
    return std::nullopt;
  }
  AttentionSite site;
  site.softmax = softmax;

  // Scores: back to MatMul(q, kᵀ).
  Value s = sm.getInput();
  onnx::MatMulOp qk;
  for (int steps = 0; s && steps < 16; ++steps) {
    Operation *op = s.getDefiningOp();
    if (!op)
      break;
    if (auto mm = dyn_cast<onnx::MatMulOp>(op)) {
      qk = mm;
      break;
    }
    if (isa<onnx::AddOp>(op) && !site.mask) {
      // The mask is the operand that does not depend on the activations.
      Value a = op->getOperand(0), b = op->getOperand(1);
      bool aIsScores = !isa_and_nonnull<onnx::WhereOp, onnx::ExpandOp, onnx::SliceOp,
                                        onnx::CastOp, onnx::ReshapeOp>(a.getDefiningOp()) &&
                       !isa<BlockArgument>(a);
      // Prefer the operand that leads back to a MatMul within a few steps.
      auto leadsToMatMul = [](Value v) {
        for (int i = 0; i < 6 && v; ++i) {
          Operation *d = v.getDefiningOp();
          if (!d)
            return false;
          if (isa<onnx::MatMulOp>(d))
            return true;
          if (d->getNumOperands() == 0)
            return false;
          v = d->getOperand(0);
        }
        return false;
      };
      if (leadsToMatMul(a) && !leadsToMatMul(b)) {
        site.mask = b;
        s = a;
      } else if (leadsToMatMul(b) && !leadsToMatMul(a)) {
        site.mask = a;
        s = b;
      } else if (aIsScores) {
        site.mask = b;
        s = a;
      } else {
        site.mask = a;
        s = b;
      }
      continue;
    }
    // Softcap: Mul(Tanh(Div(x, c)), c).
    if (auto mul = dyn_cast<onnx::MulOp>(op)) {
      auto tanh = mul.getA().getDefiningOp<onnx::TanhOp>();
      std::optional<double> c = getScalarConstant(mul.getB());
      if (tanh && c && !site.softcap) {
        auto div = tanh.getInput().getDefiningOp<onnx::DivOp>();
        std::optional<double> c2 = div ? getScalarConstant(div.getB()) : std::nullopt;
        if (c2 && std::abs(*c2 - *c) <= 1e-6 * std::abs(*c)) {
          site.softcap = *c;
          s = div.getA();
          continue;
        }
      }
    }
    if (Value inner = stripScalar(s, site.scale)) {
      s = inner;
      continue;
    }
    break;
  }
  if (!qk) {
    why = "the softmax's scores do not come from a MatMul";
    return std::nullopt;
  }

  // Probabilities: forward to MatMul(p, v), through Where(IsNaN(p), 0, p).
  Value p = sm.getResult();
  onnx::MatMulOp pv;
  for (int steps = 0; steps < 4 && p; ++steps) {
    Operation *user = nullptr;
    for (Operation *u : p.getUsers()) {
      if (isa<onnx::IsNaNOp>(u))
        continue;
      if (user) {
        user = nullptr;
        break;
      }
      user = u;
    }
    if (!user)
      break;
    if (auto mm = dyn_cast<onnx::MatMulOp>(user); mm && mm.getA() == p) {
      pv = mm;
      break;
    }
    if (isa<onnx::WhereOp>(user) && user->getOperand(2) == p) {
      p = user->getResult(0);
      continue;
    }
    break;
  }
  if (!pv) {
    why = "the softmax's probabilities do not feed a MatMul with the values";
    return std::nullopt;
  }
  site.out = pv.getY();

  // Per-head q, k, v.
  int64_t heads;
  double qScale = 1.0;
  Value q = qk.getA();
  while (Value inner = stripScalar(q, qScale))
    q = inner;
  if (!isHeadsTensor(q, -1, heads)) {
    why = "the query is not a [batch, heads, seq, head_dim] tensor with static heads and head_dim";
    return std::nullopt;
  }
  site.q = q;
  site.numHeads = heads;
  site.headDim = cast<RankedTensorType>(q.getType()).getDimSize(3);
  site.scale *= qScale;
  HeadsTrace k = traceHeads(qk.getB(), site.headDim);
  HeadsTrace v = traceHeads(pv.getB(), site.headDim);
  int64_t kHeads = 0, vHeads = 0;
  if (!k.heads || !v.heads || !isHeadsTensor(k.heads, site.headDim, kHeads) ||
      !isHeadsTensor(v.heads, site.headDim, vHeads)) {
    why = "the keys or values do not trace back to [batch, kv_heads, seq, head_dim] tensors";
    return std::nullopt;
  }
  if (kHeads != vHeads || site.numHeads % kHeads != 0) {
    why = "the query, key and value head counts (" + std::to_string(site.numHeads) + ", " +
          std::to_string(kHeads) + ", " + std::to_string(vHeads) + ") do not form GQA";
    return std::nullopt;
  }
  if (bool(k.past) != bool(v.past)) {
    why = "only one of the keys and values concatenates a past";
    return std::nullopt;
  }
  site.k = k.heads;
  site.v = v.heads;
  site.scale *= k.scale * v.scale;
  site.pastK = k.past;
  site.pastV = v.past;
  site.presentK = k.present;
  site.presentV = v.present;
  site.numKvHeads = kHeads;
  return site;
}

std::optional<AttentionSite> raise::matchOnnxAttention(Operation *op, std::string &why) {
  auto att = dyn_cast<onnx::AttentionOp>(op);
  if (!att)
    return std::nullopt;
  if (att.getPastKey() || att.getPastValue() || att.getNonpadKvSeqlen()) {
    why = "the fused Attention takes past keys/values or padding lengths";
    return std::nullopt;
  }
  if (att.getPresentKey() || att.getPresentValue() || att.getQkMatmulOutput()) {
    why = "the fused Attention returns more than its output";
    return std::nullopt;
  }
  AttentionSite site;
  site.softmax = op;
  int64_t heads;
  if (!isHeadsTensor(att.getQ(), -1, heads)) {
    why = "the fused Attention's query is not [batch, heads, seq, head_dim]";
    return std::nullopt;
  }
  site.q = att.getQ();
  site.numHeads = heads;
  site.headDim = cast<RankedTensorType>(att.getQ().getType()).getDimSize(3);
  HeadsTrace k = traceHeads(att.getK(), site.headDim);
  HeadsTrace v = traceHeads(att.getV(), site.headDim);
  int64_t kHeads = 0, vHeads = 0;
  if (!k.heads || !v.heads || k.past || v.past ||
      !isHeadsTensor(k.heads, site.headDim, kHeads) ||
      !isHeadsTensor(v.heads, site.headDim, vHeads) || kHeads != vHeads ||
      site.numHeads % kHeads != 0) {
    why = "the fused Attention's keys and values do not trace back to GQA heads";
    return std::nullopt;
  }
  site.k = k.heads;
  site.v = v.heads;
  site.numKvHeads = kHeads;
  site.scale = (att.getScale() ? att.getScale()->convertToDouble() : 1.0 / std::sqrt(double(site.headDim))) *
               k.scale * v.scale;
  if (double c = att.getSoftcap().convertToDouble(); c > 0)
    site.softcap = c;
  site.causalAttr = att.getIsCausal() != 0;
  if (Value m = att.getAttnMask()) {
    site.mask = m;
    site.boolMask = getElementTypeOrSelf(m.getType()).isInteger(1);
  }
  site.out = att.getY();
  return site;
}

namespace {
/// allowed[i * S + j]: query i may see key j, read off the additive mask
/// evaluated at S tokens (batch 0, head 0).
llvm::Expected<std::vector<bool>> evaluateMask(func::FuncOp func, const AttentionSite &site,
                                               int64_t S) {
  Value mask = site.mask;
  std::vector<bool> allowed(size_t(S * S), true);
  if (site.causalAttr)
    for (int64_t i = 0; i < S; ++i)
      for (int64_t j = i + 1; j < S; ++j)
        allowed[size_t(i * S + j)] = false;
  if (!mask)
    return allowed;
  eval::Evaluator ev;
  if (llvm::Error e = bindProbeInputs(ev, func, S))
    return std::move(e);
  llvm::Expected<rt::Tensor> m = ev.evaluate(mask);
  if (!m)
    return m.takeError();
  rt::Tensor f = m->toF32();
  int64_t rank = f.rank();
  if (rank < 2 || f.dim(-1) != S || (f.dim(-2) != S && f.dim(-2) != 1))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the mask is " + f.describe() + ", not [.., S, S]");
  const float *d = f.data<float>();
  bool rowBroadcast = f.dim(-2) == 1;
  for (int64_t i = 0; i < S; ++i)
    for (int64_t j = 0; j < S; ++j)
      allowed[size_t(i * S + j)] =
          allowed[size_t(i * S + j)] && (site.boolMask ? d[(rowBroadcast ? 0 : i) * S + j] != 0.0f
                                                       : d[(rowBroadcast ? 0 : i) * S + j] > -1e30f);
  return allowed;
}

/// The sliding window W with allowed == causal ∧ (i - j < W), std::nullopt
/// for plain causal, or -1 when the mask is neither.
int64_t classifyCausal(const std::vector<bool> &allowed, int64_t S) {
  int64_t window = 0; // 0: not seen
  for (int64_t i = 0; i < S; ++i) {
    int64_t first = -1;
    for (int64_t j = 0; j < S; ++j) {
      bool a = allowed[size_t(i * S + j)];
      if (j > i && a)
        return -1; // sees the future
      if (j <= i && a && first < 0)
        first = j;
      if (j <= i && !a && first >= 0)
        return -1; // a hole
    }
    if (first < 0)
      return -1; // sees nothing
    int64_t w = i - first + 1;
    if (first > 0) {
      if (window && window != w)
        return -1;
      window = w;
    }
  }
  return window; // 0: plain causal
}
} // namespace

bool raise::proveAttention(func::FuncOp func, AttentionSite &site, std::string &why,
                           llvm::DenseMap<Value, int64_t> *maskWindows) {
  // Mask: causal, maybe with a window that shows only beyond its size.
  const int64_t S = 9;
  llvm::Expected<std::vector<bool>> allowed = evaluateMask(func, site, S);
  if (!allowed) {
    why = "its mask cannot be evaluated: " + llvm::toString(allowed.takeError());
    return false;
  }
  bool cached = false;
  int64_t window = classifyCausal(*allowed, S);
  if (maskWindows && site.mask && !site.causalAttr)
    if (auto it = maskWindows->find(site.mask); it != maskWindows->end()) {
      window = it->second;
      cached = true;
    }
  if (window < 0) {
    why = "its mask is neither causal nor a causal sliding window";
    return false;
  }
  if (window == 0 && site.mask && !cached) {
    // (Only masks computed in the graph can hide a wider window.)
    // A window wider than the probe: try the integer constants the mask
    // subgraph holds, each as a probe length just past it.
    SmallVector<int64_t> candidates;
    SmallVector<Value> work{site.mask};
    llvm::SmallPtrSet<Operation *, 32> seen;
    while (!work.empty()) {
      Operation *op = work.pop_back_val().getDefiningOp();
      if (!op || !seen.insert(op).second)
        continue;
      if (std::optional<double> c = getScalarConstant(op->getResult(0)))
        if (*c >= S && *c <= 8192 && *c == std::floor(*c))
          candidates.push_back(int64_t(*c));
      llvm::append_range(work, op->getOperands());
    }
    for (int64_t c : candidates) {
      int64_t probe = c + 2;
      llvm::Expected<std::vector<bool>> wide = evaluateMask(func, site, probe);
      if (!wide) {
        llvm::consumeError(wide.takeError());
        continue;
      }
      int64_t w = classifyCausal(*wide, probe);
      if (w > 0) {
        window = w;
        break;
      }
    }
  }
  if (maskWindows && site.mask && !site.causalAttr)
    (*maskWindows)[site.mask] = window;
  site.causal = true;
  if (window > 0)
    site.slidingWindow = window;

  // Structure: bind q, k, v and compare the output with a reference.
  eval::Evaluator ev;
  if (llvm::Error e = bindProbeInputs(ev, func, S)) {
    why = llvm::toString(std::move(e));
    return false;
  }
  std::mt19937 rng(1234);
  const int64_t N = site.numHeads, K = site.numKvHeads, D = site.headDim;
  // Aliased inputs (q used as v, say) get the same probe tensor.
  rt::Tensor q = randomTensor({1, N, S, D}, rng);
  rt::Tensor k = site.k == site.q ? q : randomTensor({1, K, S, D}, rng);
  rt::Tensor v = site.v == site.q ? q : site.v == site.k ? k : randomTensor({1, K, S, D}, rng);
  auto asType = [](const rt::Tensor &t, Value like) {
    std::optional<rt::DType> dt =
        eval::toDType(cast<ShapedType>(like.getType()).getElementType());
    return dt ? t.astype(*dt) : t;
  };
  ev.bind(site.q, asType(q, site.q));
  ev.bind(site.k, asType(k, site.k));
  ev.bind(site.v, asType(v, site.v));
  llvm::Expected<rt::Tensor> out = ev.evaluate(site.out);
  if (!out) {
    why = "it cannot be evaluated: " + llvm::toString(out.takeError());
    return false;
  }
  rt::Tensor got = out->toF32();
  if (got.shape() != rt::Shape{1, N, S, D}) {
    why = "its output is " + got.describe() + ", not [1, " + std::to_string(N) + ", " +
          std::to_string(S) + ", " + std::to_string(D) + "]";
    return false;
  }
  const float *qd = q.data<float>(), *kd = k.data<float>(), *vd = v.data<float>();
  const float *gd = got.data<float>();
  double maxErr = 0, maxRef = 0;
  std::vector<double> scores(static_cast<size_t>(S)), ref(static_cast<size_t>(D));
  for (int64_t h = 0; h < N; ++h) {
    int64_t kv = h / (N / K);
    for (int64_t i = 0; i < S; ++i) {
      double mx = -INFINITY;
      for (int64_t j = 0; j < S; ++j) {
        if (!(*allowed)[size_t(i * S + j)]) {
          scores[j] = -INFINITY;
          continue;
        }
        double dot = 0;
        for (int64_t d = 0; d < D; ++d)
          dot += double(qd[(h * S + i) * D + d]) * kd[(kv * S + j) * D + d];
        double sc = dot * site.scale;
        if (site.softcap)
          sc = *site.softcap * std::tanh(sc / *site.softcap);
        scores[j] = sc;
        mx = std::max(mx, sc);
      }
      double sum = 0;
      for (int64_t j = 0; j < S; ++j)
        sum += scores[j] = std::isinf(scores[j]) ? 0 : std::exp(scores[j] - mx);
      std::fill(ref.begin(), ref.end(), 0.0);
      for (int64_t j = 0; j < S; ++j)
        for (int64_t d = 0; d < D; ++d)
          ref[d] += scores[j] / sum * vd[(kv * S + j) * D + d];
      for (int64_t d = 0; d < D; ++d) {
        maxErr = std::max(maxErr, std::abs(ref[d] - gd[(h * S + i) * D + d]));
        maxRef = std::max(maxRef, std::abs(ref[d]));
      }
    }
  }
  if (maxErr > 1e-3 * std::max(maxRef, 1e-3)) {
    why = "its output differs from attention(q, k, v) with scale " +
          std::to_string(site.scale) + " by " + std::to_string(maxErr);
    return false;
  }
  return true;
}

std::optional<AttentionSite> raise::matchGroupQueryAttention(Operation *o, std::string &why) {
  auto op = dyn_cast<onnx::MsGroupQueryAttentionOp>(o);
  if (!op) {
    why = "not a GroupQueryAttention";
    return std::nullopt;
  }
  if (op.getAttentionBias() || op.getHeadSink() || op.getKScale() || op.getVScale()) {
    why = "attention_bias, head_sink or a quantized KV cache is used";
    return std::nullopt;
  }
  if (op.getPositionIds()) {
    why = "explicit position_ids are not supported";
    return std::nullopt;
  }
  if ((op.getSmoothSoftmax() && *op.getSmoothSoftmax() != 0) || op.getQkOutput() != 0 ||
      op.getOutputQk()) {
    why = "smooth_softmax or output_qk is used";
    return std::nullopt;
  }
  auto qt = dyn_cast<RankedTensorType>(op.getQuery().getType());
  if (!qt || qt.getRank() != 3 || qt.isDynamicDim(2)) {
    why = "query is not [batch, seq, hidden] with a static hidden size";
    return std::nullopt;
  }
  AttentionSite s;
  s.gqa = op;
  s.softmax = op;
  s.numHeads = op.getNumHeads();
  s.numKvHeads = op.getKvNumHeads();
  if (s.numHeads <= 0 || s.numKvHeads <= 0 || s.numHeads % s.numKvHeads) {
    why = "num_heads is not a multiple of kv_num_heads";
    return std::nullopt;
  }
  const bool packed = !op.getKey();
  if (!packed != bool(op.getValue())) {
    why = "key and value are not given together";
    return std::nullopt;
  }
  const int64_t width = packed ? s.numHeads + 2 * s.numKvHeads : s.numHeads;
  if (qt.getDimSize(2) % width) {
    why = "the query width does not split into heads";
    return std::nullopt;
  }
  s.headDim = qt.getDimSize(2) / width;
  s.q = op.getQuery();
  s.k = packed ? op.getQuery() : op.getKey();
  s.v = packed ? op.getQuery() : op.getValue();
  for (Value kv : {s.k, s.v}) {
    auto t = dyn_cast<RankedTensorType>(kv.getType());
    if (!t || t.getRank() != 3 || (!packed && t.getDimSize(2) != s.numKvHeads * s.headDim)) {
      why = "key/value are not [batch, seq, kv_num_heads * head_size]";
      return std::nullopt;
    }
  }
  // Past: graph inputs; present: only returned.
  auto func = op->getParentOfType<func::FuncOp>();
  for (auto [past, role] : {std::pair{op.getPastKey(), ArgRole::PastKey},
                            std::pair{op.getPastValue(), ArgRole::PastValue}}) {
    if (!past)
      continue;
    auto arg = dyn_cast<BlockArgument>(past);
    if (!arg || arg.getOwner()->getParentOp() != func.getOperation() ||
        classifyArg(func, arg.getArgNumber()) != role) {
      why = "past_key/past_value are not the graph's past_key_values inputs";
      return std::nullopt;
    }
  }
  if (bool(op.getPastKey()) != bool(op.getPastValue())) {
    why = "past_key and past_value are not given together";
    return std::nullopt;
  }
  s.pastK = op.getPastKey();
  s.pastV = op.getPastValue();
  for (Value present : {op.getPresentKey(), op.getPresentValue()})
    for (Operation *user : present.getUsers())
      if (!isa<func::ReturnOp>(user)) {
        why = "present_key/present_value are used by something other than the graph outputs";
        return std::nullopt;
      }
  s.presentK = op.getPresentKey();
  s.presentV = op.getPresentValue();
  s.scale = op.getScaleAttr() && op.getScaleAttr().getValueAsDouble() != 0.0
                ? op.getScaleAttr().getValueAsDouble()
                : 1.0 / std::sqrt(double(s.headDim));
  const double softcap = op.getSoftcap().convertToDouble();
  if (softcap > 0)
    s.softcap = softcap;
  s.causal = true;
  // The getter is unsigned: -1 (no window) must be read as signed.
  if (int64_t window = int64_t(op.getLocalWindowSize()); window > 0)
    s.slidingWindow = window; // keys (p - W, p], as onnxruntime
  if (op.getDoRotary() != 0) {
    if (!op.getCosCache() || !op.getSinCache()) {
      why = "do_rotary without cos_cache/sin_cache";
      return std::nullopt;
    }
    s.cosCache = op.getCosCache();
    s.sinCache = op.getSinCache();
    s.rotaryInterleaved = op.getRotaryInterleaved() != 0;
  }
  return s;
}

bool raise::proveGroupQueryAttention(func::FuncOp func, AttentionSite &site, std::string &why) {
  auto op = cast<onnx::MsGroupQueryAttentionOp>(site.gqa);
  if (site.cosCache) {
    if (!dependsOnlyOnShapesAnd(site.cosCache, {}) || !dependsOnlyOnShapesAnd(site.sinCache, {})) {
      why = "the rotary cos/sin caches depend on graph inputs";
      return false;
    }
    for (Value t : {site.cosCache, site.sinCache}) {
      auto tt = dyn_cast<RankedTensorType>(t.getType());
      if (!tt || tt.getRank() != 2 || !tt.hasStaticShape() ||
          !isa<FloatType>(tt.getElementType()) || 2 * tt.getDimSize(1) > site.headDim ||
          tt != site.cosCache.getType()) {
        why = "the rotary cos/sin caches are not static [max_position, rotary_dim / 2] tables";
        return false;
      }
    }
  }
  SmallVector<std::pair<int64_t, int64_t>> probes = {{5, 0}, {7, 0}, {1, 6}};
  if (site.pastK)
    probes.push_back({4, 3});
  for (auto [S, P] : probes) {
    if (P > 0 && !site.pastK)
      continue;
    eval::Evaluator ev;
    if (llvm::Error e = bindProbeInputs(ev, func, S, P)) {
      why = llvm::toString(std::move(e));
      return false;
    }
    for (auto [v, want, what] :
         {std::tuple{op.getSeqlensK(), P + S - 1, "seqlens_k"},
          std::tuple{op.getTotalSequenceLength(), P + S, "total_sequence_length"}}) {
      llvm::Expected<rt::Tensor> t = ev.evaluate(v);
      if (!t) {
        why = std::string(what) + " cannot be evaluated: " + llvm::toString(t.takeError());
        return false;
      }
      std::vector<int64_t> got = t->toInt64s();
      if (got.size() != 1 || got[0] != want) {
        why = std::string(what) + " is not " + std::to_string(want) + " for " +
              std::to_string(S) + " new tokens after " + std::to_string(P) +
              " cached ones: the op does not see an unpadded batch over the cache";
        return false;
      }
    }
  }
  return true;
}
