//===- LibraryOps.cpp - library routines: GEMM and attention --------------===//
//
// exec.gemm (cuBLASLt), exec.attention_prefill and exec.attention_decode
// (hand-written kernels in runtime/kernels).
//
//===----------------------------------------------------------------------===//
#include "ExecVerify.h"

using namespace mlir;
using namespace accel::exec;
using namespace accel::exec::detail;

//===----------------------------------------------------------------------===//
// GemmOp
//===----------------------------------------------------------------------===//

/// Checks element types, compute type and scales of a GEMM.
static LogicalResult verifyGemmTypes(GemmOp op) {
  Type ea = viewType(op.getA()).getElementType();
  Type eb = viewType(op.getB()).getElementType();
  Type ec = viewType(op.getC()).getElementType();
  ComputeType compute = op.getCompute();
  // The signature as a formula, "(bf16 x bf16 -> f32)", types unquoted.
  auto describe = [&](InFlightDiagnostic diag) -> InFlightDiagnostic {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << " (" << ea << " x " << eb << " -> " << ec << ")";
    diag << text;
    return diag;
  };
  auto badCompute = [&]() {
    return describe(op.emitOpError()
                    << "compute type " << stringifyComputeType(compute)
                    << " does not fit this GEMM");
  };
  bool hasAnyScale = op.getAScale() || op.getBScale() || op.getCScale();

  if (isWideFloatType(ea) && isWideFloatType(eb)) {
    if (ea != eb)
      return describe(op.emitOpError("A and B must have the same element "
                                     "type"));
    if (ec != ea && !ec.isF32())
      return describe(op.emitOpError() << "C must be " << ea << " or f32");
    bool computeOk =
        compute == ComputeType::f32 ||
        (compute == ComputeType::tf32 && ea.isF32()) ||
        (compute == ComputeType::f16 && ea.isF16() && ec.isF16());
    if (!computeOk)
      return badCompute();
    if (hasAnyScale)
      return op.emitOpError("scales are only for FP8 GEMMs");
    return success();
  }

  if (isFP8Type(ea) && isFP8Type(eb)) {
    if (isa<Float8E5M2Type>(ea) && isa<Float8E5M2Type>(eb))
      return describe(op.emitOpError(
          "cuBLASLt has no GEMM with both operands f8E5M2"));
    if (!isWideFloatType(ec) && !isa<Float8E4M3FNType>(ec))
      return describe(op.emitOpError(
          "C of an FP8 GEMM must be f32, f16, bf16 or f8E4M3FN"));
    if (compute != ComputeType::f32)
      return badCompute();
    if (!op.getAScale() || !op.getBScale())
      return op.emitOpError("an FP8 GEMM needs scale_a and scale_b");
    if (static_cast<bool>(op.getCScale()) != isFP8Type(ec))
      return op.emitOpError("scale_c is needed exactly when C is FP8");
    return success();
  }

  if (ea.isSignlessInteger(8) && eb.isSignlessInteger(8)) {
    if (!ec.isSignlessInteger(32))
      return describe(op.emitOpError("C of an i8 GEMM must be i32"));
    if (compute != ComputeType::i32)
      return badCompute();
    if (op.getBias() || op.getResidual() ||
        op.getActivation() != GemmActivation::none)
      return op.emitOpError("an i8 GEMM has no bias, residual or "
                            "activation; dequantise in a kernel");
    if (hasAnyScale)
      return op.emitOpError("scales are only for FP8 GEMMs");
    return success();
  }

  return describe(op.emitOpError("unsupported GEMM element types"));
}

LogicalResult GemmOp::verify() {
  ScheduleOp schedule = enclosingSchedule(*this);
  for (auto [name, value] : {std::pair<StringRef, Value>{"A", getA()},
                             {"B", getB()},
                             {"C", getC()}})
    if (viewType(value).getRank() != 2)
      return emitOpError() << name << " must be rank 2, got "
                           << value.getType();

  Value a = getA(), b = getB(), c = getC();
  bool ta = getTransposeA(), tb = getTransposeB();
  Extent aM = getExtent(a, ta ? 1 : 0), aK = getExtent(a, ta ? 0 : 1);
  Extent bK = getExtent(b, tb ? 1 : 0), bN = getExtent(b, tb ? 0 : 1);
  Extent cM = getExtent(c, 0), cN = getExtent(c, 1);
  if (!extentsAgree(aK, bK, schedule))
    return emitOpError() << "K of A (" << aK.str() << ") does not match K of B ("
                         << bK.str() << ")";
  if (!extentsAgree(aM, cM, schedule))
    return emitOpError() << "M of A (" << aM.str() << ") does not match M of C ("
                         << cM.str() << ")";
  if (!extentsAgree(bN, cN, schedule))
    return emitOpError() << "N of B (" << bN.str() << ") does not match N of C ("
                         << cN.str() << ")";

  if (failed(verifyGemmTypes(*this)))
    return failure();

  if (Value bias = getBias()) {
    ViewType type = viewType(bias);
    if (type.getRank() != 1 || !isWideFloatType(type.getElementType()))
      return emitOpError() << "bias must be a rank-1 f32, f16 or bf16 view, "
                              "got "
                           << type;
    Extent biasN = getExtent(bias, 0);
    if (!extentsAgree(biasN, cN, schedule))
      return emitOpError() << "bias has " << biasN.str()
                           << " elements but N is " << cN.str();
  }
  if (Value residual = getResidual()) {
    if (residual.getType() != c.getType())
      return emitOpError() << "residual must have C's type " << c.getType()
                           << ", got " << residual.getType();
    if (!extentsAgree(getExtent(residual, 0), cM, schedule))
      return emitOpError() << "residual has " << getExtent(residual, 0).str()
                           << " rows but M is " << cM.str();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Attention: what prefill and decode share
//===----------------------------------------------------------------------===//

namespace {
/// The operands and attributes both attention ops have.
struct AttentionParts {
  Value q;
  Value kScale, vScale;
  float scale;
  std::optional<int64_t> window;
  std::optional<APFloat> softcap;
  FlatSymbolRefAttr pool;
  int64_t layer;
};
} // namespace

/// Checks what does not need the KV pool.
static LogicalResult verifyAttention(Operation *op, const AttentionParts &p) {
  ViewType q = viewType(p.q);
  if (q.getRank() != 3)
    return op->emitOpError() << "q must be [tokens, heads, head_dim], got "
                             << q;
  if (q.isDynamicDim(1) || q.isDynamicDim(2))
    return op->emitOpError() << "q must have static heads and head_dim, got "
                             << q;
  if (!isWideFloatType(q.getElementType()))
    return op->emitOpError() << "q must be f32, f16 or bf16, got "
                             << q.getElementType();
  if (!(p.scale > 0.0f))
    return op->emitOpError() << "scale must be positive";
  if (p.window && *p.window < 1)
    return op->emitOpError("window must be positive");
  if (p.softcap && !(p.softcap->convertToFloat() > 0.0f))
    return op->emitOpError("softcap must be positive");
  if (static_cast<bool>(p.kScale) != static_cast<bool>(p.vScale))
    return op->emitOpError("kv_scales come as a pair (k, v)");
  return success();
}

/// Checks `q` and the scales against the KV pool.
static LogicalResult verifyAttentionPool(Operation *op,
                                         const AttentionParts &p,
                                         SymbolTableCollection &symbolTable) {
  auto pool =
      lookupSymbol<KVPoolOp>(op, symbolTable, p.pool, "an exec.kv_pool");
  if (!pool)
    return failure();
  if (p.layer < 0 || p.layer >= pool.getLayers())
    return op->emitOpError() << "layer " << p.layer << " is out of range for "
                             << "kv pool " << p.pool << " of "
                             << pool.getLayers() << " layers";
  ViewType q = viewType(p.q);
  int64_t heads = q.getDimSize(1), headDim = q.getDimSize(2);
  if (headDim != pool.getHeadDim())
    return op->emitOpError() << "q has head_dim " << headDim << " but kv pool "
                             << p.pool << " has " << pool.getHeadDim();
  if (heads % pool.getKvHeads() != 0)
    return op->emitOpError() << "q has " << heads
                             << " heads, not a multiple of the "
                             << pool.getKvHeads() << " kv heads of kv pool "
                             << p.pool;
  Type cacheType = pool.getDtype();
  if (pool.isFP8()) {
    if (!p.kScale)
      return op->emitOpError() << "reading the FP8 kv pool " << p.pool
                               << " needs kv_scales";
  } else {
    if (cacheType != q.getElementType())
      return op->emitOpError() << "q is " << q.getElementType()
                               << " but kv pool " << p.pool << " holds "
                               << cacheType;
    if (p.kScale)
      return op->emitOpError("kv_scales are only for an FP8 kv pool");
  }
  return success();
}

//===----------------------------------------------------------------------===//
// AttentionPrefillOp
//===----------------------------------------------------------------------===//

static AttentionParts partsOf(AttentionPrefillOp op) {
  return {op.getQ(),          op.getKScale(), op.getVScale(),
          op.getScale().convertToFloat(), op.getWindow(), op.getSoftcap(),
          op.getPoolAttr(),   op.getLayer()};
}

LogicalResult AttentionPrefillOp::verify() {
  return verifyAttention(*this, partsOf(*this));
}

LogicalResult
AttentionPrefillOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyAttentionPool(*this, partsOf(*this), symbolTable);
}

//===----------------------------------------------------------------------===//
// AttentionDecodeOp
//===----------------------------------------------------------------------===//

static AttentionParts partsOf(AttentionDecodeOp op) {
  return {op.getQ(),          op.getKScale(), op.getVScale(),
          op.getScale().convertToFloat(), op.getWindow(), op.getSoftcap(),
          op.getPoolAttr(),   op.getLayer()};
}

LogicalResult AttentionDecodeOp::verify() {
  ScheduleOp schedule = enclosingSchedule(*this);
  if (schedule && schedule.getKind() != ScheduleKind::decode)
    return emitOpError() << "needs a decode schedule (one token per "
                            "sequence); @"
                         << schedule.getSymName() << " is "
                         << stringifyScheduleKind(schedule.getKind());
  if (failed(verifyAttention(*this, partsOf(*this))))
    return failure();
  Extent rows = getExtent(getQ(), 0), seqs = getExtent(getSeqLens(), 0);
  if (!extentsAgree(rows, seqs, schedule))
    return emitOpError() << "q has " << rows.str()
                         << " rows, but decode has one per sequence ("
                         << seqs.str() << ")";
  if (std::optional<int64_t> splits = getSplitKv()) {
    if (*splits < 2)
      return emitOpError() << "split_kv must be at least 2, got " << *splits;
    ViewType ws = viewType(getWorkspace());
    if (!ws.hasStaticShape())
      return emitOpError() << "workspace must have a static shape, got "
                           << ws;
    if (schedule) {
      // f32 partial outputs plus a max and a sum per (seq, head, split).
      ViewType q = viewType(getQ());
      int64_t need = schedule.getMaxSeqs() * q.getDimSize(1) *
                     *splits * (q.getDimSize(2) + 2) *
                     4;
      if (ws.getStaticByteSize() < need)
        return emitOpError() << "workspace of " << ws.getStaticByteSize()
                             << " bytes is too small for split_kv "
                             << *splits << ": it needs " << need
                             << " bytes (max_seqs x heads x splits x "
                                "(head_dim + 2) x 4)";
    }
  } else if (getWorkspace()) {
    return emitOpError("a workspace is only for split_kv");
  }
  return success();
}

LogicalResult
AttentionDecodeOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyAttentionPool(*this, partsOf(*this), symbolTable);
}
