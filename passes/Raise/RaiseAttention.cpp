//===- RaiseAttention.cpp - attention → paged transformer.attention -------===//
//
// The step that makes a graph token-major and gives it a KV cache. Every
// attention subgraph is found and proved (AttentionMatch.h); the position
// ids the graph computes (Range over the sequence) or takes as an input are
// found by evaluation too. Then, and only if every site was proved:
//
//   - the function becomes @f(%ids: tensor<?xi64>, %batch, %cache) -> [T, V]:
//     the ragged batch is one row of T tokens;
//   - each attention site becomes transformer.attention on [T, heads, D]
//     over layer l of the paged cache; its mask subgraph dies;
//   - position ids become transformer.positions;
//   - past_key_values inputs and present outputs disappear into the cache.
//
// If a site cannot be proved, nothing is rewritten: the model stays a
// whole-sequence graph (correct, no KV cache) and a warning names the site.
//
//===----------------------------------------------------------------------===//
#include "AttentionMatch.h"
#include "IRBuilders.h"
#include "Probe.h"

#include "accel/dialects/Onnx/OnnxOps.h"
#include "accel/dialects/Transformer/TransformerOps.h"
#include "accel/passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/BitVector.h"

namespace accel {
#define GEN_PASS_DEF_RAISEATTENTION
#include "passes/Passes.h.inc"
} // namespace accel

using namespace mlir;
using namespace accel;
using namespace accel::raise;

namespace {

/// Range ops whose value is the positions of the new tokens (past .. past +
/// S - 1) under every probe.
SmallVector<Operation *> findPositionRanges(func::FuncOp func, bool hasPast) {
  SmallVector<Operation *> ranges;
  func.walk([&](onnx::RangeOp op) { ranges.push_back(op); });
  SmallVector<std::pair<int64_t, int64_t>> probes = {{5, 0}, {7, 0}};
  if (hasPast)
    probes.push_back({4, 3});
  SmallVector<Operation *> found;
  for (Operation *op : ranges) {
    bool all = true;
    for (auto [S, P] : probes) {
      eval::Evaluator ev;
      if (llvm::Error e = bindProbeInputs(ev, func, S, P)) {
        llvm::consumeError(std::move(e));
        all = false;
        break;
      }
      llvm::Expected<rt::Tensor> t = ev.evaluate(op->getResult(0));
      if (!t) {
        llvm::consumeError(t.takeError());
        all = false;
        break;
      }
      std::vector<int64_t> got = t->toInt64s();
      bool ok = int64_t(got.size()) == S;
      for (int64_t i = 0; ok && i < S; ++i)
        ok = got[size_t(i)] == P + i;
      if (!ok) {
        all = false;
        break;
      }
    }
    if (all)
      found.push_back(op);
  }
  return found;
}

/// GroupQueryAttention → [rotary →] transformer.attention on the token-major
/// query (split when packed); its output replaces the op's first result.
void rewriteGroupQueryAttention(OpBuilder &b, const AttentionSite &s, int64_t layer, Value cache,
                                Value batch, Value positions) {
  auto op = cast<onnx::MsGroupQueryAttentionOp>(s.gqa);
  b.setInsertionPoint(op);
  Location l = op.getLoc();
  Type elem = getElementTypeOrSelf(s.q.getType());
  const int64_t qw = s.numHeads * s.headDim, kw = s.numKvHeads * s.headDim;
  auto rows = [&](Value x) {
    int64_t w = cast<RankedTensorType>(x.getType()).getDimSize(2);
    return reshape(b, l, x, {-1, w}, RankedTensorType::get({ShapedType::kDynamic, w}, elem));
  };
  auto heads = [&](Value x, int64_t n) {
    return reshape(b, l, x, {-1, n, s.headDim},
                   RankedTensorType::get({ShapedType::kDynamic, n, s.headDim}, elem));
  };
  Value q, k, v;
  if (!op.getKey()) {
    auto part = [&](int64_t w) { return RankedTensorType::get({ShapedType::kDynamic, w}, elem); };
    OperationState st(l, "transformer.split");
    st.addOperands(rows(s.q));
    st.addTypes({part(qw), part(kw), part(kw)});
    Operation *split = b.create(st);
    q = heads(split->getResult(0), s.numHeads);
    k = heads(split->getResult(1), s.numKvHeads);
    v = heads(split->getResult(2), s.numKvHeads);
  } else {
    q = heads(rows(s.q), s.numHeads);
    k = heads(rows(s.k), s.numKvHeads);
    v = heads(rows(s.v), s.numKvHeads);
  }
  if (s.cosCache) {
    int64_t half = cast<RankedTensorType>(s.cosCache.getType()).getDimSize(1);
    auto rotate = [&](Value x) {
      return buildOp(
          b, l, "transformer.rotary", {x, positions, s.cosCache, s.sinCache}, x.getType(),
          {b.getNamedAttr("style", transformer::RotaryStyleAttr::get(
                                       b.getContext(), s.rotaryInterleaved
                                                           ? transformer::RotaryStyle::Interleaved
                                                           : transformer::RotaryStyle::HalfSplit)),
           b.getNamedAttr("rotary_dim", b.getI64IntegerAttr(2 * half)),
           b.getNamedAttr("operandSegmentSizes", b.getDenseI32ArrayAttr({1, 1, 1, 1}))});
    };
    q = rotate(q);
    k = rotate(k);
  }
  SmallVector<NamedAttribute> attrs = {
      b.getNamedAttr("layer", b.getI64IntegerAttr(layer)),
      b.getNamedAttr("num_heads", b.getI64IntegerAttr(s.numHeads)),
      b.getNamedAttr("num_kv_heads", b.getI64IntegerAttr(s.numKvHeads)),
      b.getNamedAttr("head_dim", b.getI64IntegerAttr(s.headDim)),
      b.getNamedAttr("scale", b.getF64FloatAttr(s.scale)),
      b.getNamedAttr("causal", b.getUnitAttr())};
  if (s.slidingWindow)
    attrs.push_back(b.getNamedAttr("sliding_window", b.getI64IntegerAttr(*s.slidingWindow)));
  if (s.softcap)
    attrs.push_back(b.getNamedAttr("softcap", b.getF64FloatAttr(*s.softcap)));
  Value att = buildOp(b, l, "transformer.attention", {q, k, v, cache, batch}, q.getType(), attrs);
  Value out = reshape(b, l, att, {1, -1, qw}, op.getOutput().getType());
  op.getOutput().replaceAllUsesWith(out);
}

struct RaiseAttentionPass
    : public accel::impl::RaiseAttentionBase<RaiseAttentionPass> {
  using RaiseAttentionBase::RaiseAttentionBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp func;
    for (auto f : module.getOps<func::FuncOp>())
      if (!f.isDeclaration())
        func = f;
    if (!func)
      return;
    bool raised = false;
    func.walk([&](transformer::AttentionOp) { raised = true; });
    if (raised)
      return;

    // Find and prove every site.
    SmallVector<AttentionSite> sites;
    unsigned unproved = 0;
    llvm::DenseMap<Value, int64_t> maskWindows; // layers share their mask
    func.walk([&](Operation *op) {
      if (isa<onnx::MsGroupQueryAttentionOp>(op)) {
        std::string why;
        std::optional<AttentionSite> site = matchGroupQueryAttention(op, why);
        if (!site || !proveGroupQueryAttention(func, *site, why)) {
          op->emitWarning() << "attention subgraph could not be raised: " << why;
          ++unproved;
          return;
        }
        sites.push_back(*site);
        return;
      }
      bool fused = isa<onnx::AttentionOp>(op);
      if (!fused && !isa<onnx::SoftmaxOp>(op))
        return;
      std::string why;
      std::optional<AttentionSite> site =
          fused ? matchOnnxAttention(op, why) : matchAttention(op, why);
      if (!site) {
        if (fused) {
          op->emitWarning() << "attention subgraph could not be raised: " << why;
          ++unproved;
        } else {
          op->emitRemark() << "softmax is not part of an attention: " << why;
        }
        return;
      }
      if (!proveAttention(func, *site, why, &maskWindows)) {
        op->emitWarning() << "attention subgraph could not be raised: " << why;
        ++unproved;
        return;
      }
      sites.push_back(*site);
    });
    if (sites.empty()) {
      func.emitWarning() << "no attention subgraph was recognised; the model keeps "
                            "whole-sequence attention and gets no KV cache";
      return;
    }
    if (unproved) {
      func.emitWarning() << unproved << " of " << (unproved + sites.size())
                         << " attention subgraphs could not be raised; the model keeps "
                            "whole-sequence attention and gets no KV cache";
      return;
    }
    for (const AttentionSite &s : sites)
      if (s.numKvHeads != sites[0].numKvHeads || s.headDim != sites[0].headDim ||
          getElementTypeOrSelf(s.k.getType()) != getElementTypeOrSelf(sites[0].k.getType())) {
        s.softmax->emitError() << "layers disagree on kv heads / head_dim / element type; "
                                  "one paged cache cannot hold them";
        return signalPassFailure();
      }

    // Arguments, by role.
    int idsArg = -1;
    SmallVector<unsigned> positionArgs, maskArgs, pastArgs;
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      switch (classifyArg(func, i)) {
      case ArgRole::InputIds: idsArg = int(i); break;
      case ArgRole::PositionIds: positionArgs.push_back(i); break;
      case ArgRole::AttentionMask: maskArgs.push_back(i); break;
      case ArgRole::PastKey: case ArgRole::PastValue: pastArgs.push_back(i); break;
      case ArgRole::Other:
        func.emitError() << "graph input '" << argName(func, i)
                         << "' has no place in a token-major model (expected input_ids, "
                            "attention_mask, position_ids, past_key_values.*)";
        return signalPassFailure();
      }
    }
    if (idsArg < 0) {
      func.emitError() << "the graph has no input_ids input";
      return signalPassFailure();
    }
    SmallVector<Operation *> positionRanges = findPositionRanges(func, !pastArgs.empty());

    // The new signature: (%ids, %batch, %cache).
    MLIRContext *ctx = &getContext();
    Location loc = func.getLoc();
    Type kvElement = getElementTypeOrSelf(sites[0].k.getType());
    auto cacheType = transformer::KVCacheType::get(ctx, int64_t(sites.size()),
                                                   sites[0].numKvHeads, sites[0].headDim,
                                                   blockSize, kvElement);
    auto batchType = transformer::BatchType::get(ctx);
    auto idsType = RankedTensorType::get({ShapedType::kDynamic}, IntegerType::get(ctx, 64));
    unsigned oldArgs = func.getNumArguments();
    (void)func.insertArgument(oldArgs, idsType, {}, loc);
    (void)func.insertArgument(oldArgs + 1, batchType, {}, loc);
    (void)func.insertArgument(oldArgs + 2, cacheType, {}, loc);
    Value ids = func.getArgument(oldArgs), batch = func.getArgument(oldArgs + 1),
          cache = func.getArgument(oldArgs + 2);

    Block &body = func.getBody().front();
    OpBuilder b(ctx);
    b.setInsertionPointToStart(&body);
    Value positions =
        transformer::PositionsOp::create(b, loc, RankedTensorType::get({ShapedType::kDynamic},
                                                                       b.getI64Type()),
                                         batch);
    // input_ids [B, S] → one row of T tokens.
    Value oldIds = func.getArgument(unsigned(idsArg));
    oldIds.replaceAllUsesWith(reshape(b, loc, castTo(b, loc, ids, oldIds.getType()),
                                      {1, -1}, oldIds.getType()));
    for (unsigned i : positionArgs) {
      Value old = func.getArgument(i);
      old.replaceAllUsesWith(
          reshape(b, loc, castTo(b, loc, positions, old.getType()), {1, -1}, old.getType()));
    }
    for (Operation *range : positionRanges) {
      b.setInsertionPoint(range);
      range->getResult(0).replaceAllUsesWith(
          castTo(b, range->getLoc(), positions, range->getResult(0).getType()));
    }

    // Each site → transformer.attention over its layer of the cache.
    for (auto [layer, s] : llvm::enumerate(sites)) {
      if (s.gqa) {
        rewriteGroupQueryAttention(b, s, int64_t(layer), cache, batch, positions);
        continue;
      }
      Operation *pv = s.out.getDefiningOp();
      b.setInsertionPointAfter(pv);
      Location l = s.softmax->getLoc();
      auto tokens = [&](Value x, int64_t heads) {
        Type elem = getElementTypeOrSelf(x.getType());
        auto tType = RankedTensorType::get(
            {ShapedType::kDynamic, ShapedType::kDynamic, heads, s.headDim}, elem);
        auto rType = RankedTensorType::get({ShapedType::kDynamic, heads, s.headDim}, elem);
        return reshape(b, l, transpose(b, l, x, {0, 2, 1, 3}, tType), {-1, heads, s.headDim},
                       rType);
      };
      Value q = tokens(s.q, s.numHeads), k = tokens(s.k, s.numKvHeads),
            v = tokens(s.v, s.numKvHeads);
      SmallVector<NamedAttribute> attrs = {
          b.getNamedAttr("layer", b.getI64IntegerAttr(int64_t(layer))),
          b.getNamedAttr("num_heads", b.getI64IntegerAttr(s.numHeads)),
          b.getNamedAttr("num_kv_heads", b.getI64IntegerAttr(s.numKvHeads)),
          b.getNamedAttr("head_dim", b.getI64IntegerAttr(s.headDim)),
          b.getNamedAttr("scale", b.getF64FloatAttr(s.scale))};
      if (s.causal)
        attrs.push_back(b.getNamedAttr("causal", b.getUnitAttr()));
      if (s.slidingWindow)
        attrs.push_back(b.getNamedAttr("sliding_window", b.getI64IntegerAttr(*s.slidingWindow)));
      if (s.softcap)
        attrs.push_back(b.getNamedAttr("softcap", b.getF64FloatAttr(*s.softcap)));
      Value att = buildOp(b, l, "transformer.attention", {q, k, v, cache, batch},
                          q.getType(), attrs);
      Type elem = getElementTypeOrSelf(att.getType());
      auto o4 = RankedTensorType::get(
          {ShapedType::kDynamic, ShapedType::kDynamic, s.numHeads, s.headDim}, elem);
      Value back = transpose(b, l, reshape(b, l, att, {1, -1, s.numHeads, s.headDim}, o4),
                             {0, 2, 1, 3}, s.out.getType());
      s.out.replaceAllUsesWith(back);
    }

    // Results: logits [B, S, V] → [T, V]; present keys/values are the cache.
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    llvm::SmallPtrSet<Value, 16> presents;
    for (const AttentionSite &s : sites) {
      if (s.presentK)
        presents.insert(s.presentK);
      if (s.presentV)
        presents.insert(s.presentV);
    }
    SmallVector<Value> results;
    b.setInsertionPoint(ret);
    for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
      if (presents.contains(v))
        continue;
      auto t = dyn_cast<RankedTensorType>(v.getType());
      if (!t || t.getRank() != 3 || t.isDynamicDim(2) || !results.empty()) {
        std::string name = "#" + std::to_string(i);
        if (auto n = func.getResultAttrOfType<StringAttr>(unsigned(i), "onnx.name"))
          name = n.getValue().str();
        func.emitError() << "graph output '" << name
                         << "' is neither the logits [batch, seq, vocab] nor a present "
                            "key/value; a token-major model returns only logits";
        return signalPassFailure();
      }
      results.push_back(reshape(
          b, loc, v, {-1, t.getDimSize(2)},
          RankedTensorType::get({ShapedType::kDynamic, t.getDimSize(2)}, t.getElementType())));
    }
    ret->setOperands(results);
    for (const AttentionSite &s : sites)
      if (s.gqa)
        s.gqa->erase();
    eraseDeadOps(body);

    // The old arguments must be dead now.
    llvm::BitVector erase(func.getNumArguments());
    for (unsigned i = 0; i < oldArgs; ++i) {
      Value old = func.getArgument(i);
      if (!old.use_empty()) {
        Operation *user = *old.getUsers().begin();
        user->emitError() << "graph input '" << argName(func, i)
                          << "' is still used here after attention was raised; the paged "
                             "runtime cannot supply it";
        return signalPassFailure();
      }
      erase.set(i);
    }
    (void)func.eraseArguments(erase);
    func.setType(FunctionType::get(ctx, func.getArgumentTypes(), ret.getOperandTypes()));
    func.setAllResultAttrs(ArrayRef<DictionaryAttr>{});
    func.setResultAttr(0, "onnx.name", b.getStringAttr("logits"));
  }
};
} // namespace
