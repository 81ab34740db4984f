//===- PointwiseOps.cpp - element-wise, rotary and data-movement steps ----===//
//
// exec.embedding, exec.residual_add, exec.activation, exec.gated_act,
// exec.gated_mlp, exec.rotary, exec.qkv_rotary, exec.split.
//
//===----------------------------------------------------------------------===//
#include "ExecVerify.h"

using namespace mlir;
using namespace accel::exec;
using namespace accel::exec::detail;

static int64_t lastDim(Value v) {
  ViewType t = viewType(v);
  return t.getRank() == 0 ? 1 : t.getDimSize(t.getRank() - 1);
}

//===----------------------------------------------------------------------===//
// EmbeddingOp
//===----------------------------------------------------------------------===//

LogicalResult EmbeddingOp::verify() {
  ViewType table = viewType(getTable()), ids = viewType(getIds()), out = viewType(getOut());
  if (table.getRank() != 2 || !table.hasStaticShape())
    return emitOpError() << "the table must be a static [rows, hidden], got " << table;
  if (ids.getRank() != 1 || !ids.getElementType().isSignlessInteger())
    return emitOpError() << "the ids must be a vector of integers, got " << ids;
  if (out.getRank() != 2 || out.getDimSize(1) != table.getDimSize(1))
    return emitOpError() << "out must be [tokens, " << table.getDimSize(1) << "], got " << out;
  if (failed(verifySameRows(*this, getIds(), "ids", getOut(), "out")))
    return failure();
  if (getVocabShards() && *getVocabShards() < 1)
    return emitOpError("vocab_shards must be positive");
  if (getVocabSize() && *getVocabSize() < 1)
    return emitOpError("vocab_size must be positive");
  return success();
}

//===----------------------------------------------------------------------===//
// ResidualAddOp, ActivationOp, GatedActOp, GatedMlpOp
//===----------------------------------------------------------------------===//

LogicalResult ResidualAddOp::verify() {
  if (failed(verifySameType(*this, getResidual(), "residual", getOut(), "out")))
    return failure();
  return verifySameType(*this, getBranch(), "branch", getOut(), "out");
}

LogicalResult ResidualAddOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return verifyKernelRef(*this, symbols, getKernelAttr());
}

LogicalResult ActivationOp::verify() {
  if (!isWideFloatType(viewType(getOut()).getElementType()))
    return emitOpError() << "activations are f32, f16 or bf16, got " << getOut().getType();
  return verifySameType(*this, getInput(), "input", getOut(), "out");
}

LogicalResult ActivationOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return verifyKernelRef(*this, symbols, getKernelAttr());
}

LogicalResult GatedActOp::verify() {
  ViewType in = viewType(getInput()), out = viewType(getOut());
  if (in.getRank() != 2 || out.getRank() != 2 || in.getElementType() != out.getElementType() ||
      lastDim(getInput()) < 2 || lastDim(getInput()) != 2 * lastDim(getOut()))
    return emitOpError() << "takes [rows, 2I] to [rows, I] of one element type, got " << in
                         << " -> " << out;
  return verifySameRows(*this, getInput(), "input", getOut(), "out");
}

LogicalResult GatedActOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return verifyKernelRef(*this, symbols, getKernelAttr());
}

LogicalResult GatedMlpOp::verify() {
  bool fused = static_cast<bool>(getGateUp());
  bool separate = getGate() && getUp();
  if (fused == separate || (!fused && (getGate() || getUp()) && !separate))
    return emitOpError("takes gate_up, or gate and up");
  if (failed(verifySameType(*this, getX(), "x", getOut(), "out")) ||
      failed(verifyRank(*this, getX(), "x", {2})) ||
      failed(verifyStaticDim(*this, getX(), 1, "x", "hidden size")))
    return failure();
  int64_t hidden = lastDim(getX());
  ViewType down = viewType(getDown());
  if (down.getRank() != 2 || down.getDimSize(0) != hidden)
    return emitOpError() << "down must be [" << hidden << ", I], got " << down;
  int64_t inter = down.getDimSize(1);
  auto check = [&](Value w, int64_t rows, StringRef name) -> LogicalResult {
    ViewType t = viewType(w);
    if (t.getRank() != 2 || t.getDimSize(0) != rows || t.getDimSize(1) != hidden)
      return emitOpError() << name << " must be [" << rows << ", " << hidden << "], got " << t;
    return success();
  };
  if (fused)
    return check(getGateUp(), 2 * inter, "gate_up");
  if (failed(check(getGate(), inter, "gate")))
    return failure();
  return check(getUp(), inter, "up");
}

LogicalResult GatedMlpOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return verifyKernelRef(*this, symbols, getKernelAttr());
}

//===----------------------------------------------------------------------===//
// RotaryOp, QkvRotaryOp
//===----------------------------------------------------------------------===//

LogicalResult accel::exec::detail::verifyRotation(Operation *op, Value rows, StringRef rowsName,
                                                  Value positions,
                                                  Value cos, Value sin, int64_t rotaryDim,
                                                  int64_t headDim, std::optional<APFloat> theta) {
  ViewType pos = viewType(positions);
  if (pos.getRank() != 1 || !pos.getElementType().isSignlessInteger())
    return op->emitOpError() << "positions must be a vector of integers, got " << pos;
  if (failed(verifySameRows(op, rows, rowsName, positions, "positions")))
    return failure();
  if (static_cast<bool>(cos) != static_cast<bool>(sin))
    return op->emitOpError("the cos and sin tables come as a pair");
  if (rotaryDim < 2 || rotaryDim % 2 || rotaryDim > headDim)
    return op->emitOpError() << "rotary_dim must be even and in [2, " << headDim << "], got "
                             << rotaryDim;
  if (!cos && !theta)
    return op->emitOpError("needs theta or cos/sin tables");
  if (cos) {
    ViewType c = viewType(cos), s = viewType(sin);
    if (c != s)
      return op->emitOpError() << "the cos table " << c << " and the sin table " << s
                               << " differ in type";
    if (c.getRank() != 2 || c.isDynamicDim(0) || c.getDimSize(1) != rotaryDim / 2 ||
        !isWideFloatType(c.getElementType()))
      return op->emitOpError() << "the cos and sin tables must be [positions, " << rotaryDim / 2
                               << "] of f32, f16 or bf16 (rotary_dim / 2 columns), got " << c;
  }
  return success();
}

LogicalResult RotaryOp::verify() {
  if (failed(verifySameType(*this, getInput(), "input", getOut(), "out")))
    return failure();
  ViewType in = viewType(getInput());
  if (in.getRank() != 3 || in.isDynamicDim(2))
    return emitOpError() << "input must be [tokens, heads, head_dim], got " << in;
  return verifyRotation(*this, getInput(), "input", getPositions(), getCos(), getSin(), getRotaryDim(),
                        in.getDimSize(2), getTheta());
}

LogicalResult RotaryOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return verifyKernelRef(*this, symbols, getKernelAttr());
}

LogicalResult QkvRotaryOp::verify() {
  ViewType qkv = viewType(getQkv());
  int64_t h = getNumHeads(), kvh = getNumKvHeads(), d = getHeadDim();
  if (h < 1 || kvh < 1 || d < 1)
    return emitOpError("num_heads, num_kv_heads and head_dim must be positive");
  if (qkv.getRank() != 2 || lastDim(getQkv()) != (h + 2 * kvh) * d)
    return emitOpError() << "qkv must be [tokens, " << (h + 2 * kvh) * d << "], got " << qkv;
  for (auto [v, name, heads] : {std::tuple<Value, StringRef, int64_t>{getQ(), "q", h},
                                {getK(), "k", kvh},
                                {getV(), "v", kvh}}) {
    ViewType t = viewType(v);
    if (t.getRank() != 3 || t.getDimSize(1) != heads || t.getDimSize(2) != d ||
        t.getElementType() != qkv.getElementType())
      return emitOpError() << name << " must be [tokens, " << heads << ", " << d << "] of "
                           << qkv.getElementType() << ", got " << t;
    if (failed(verifySameRows(*this, getQkv(), "qkv", v, name)))
      return failure();
  }
  return verifyRotation(*this, getQkv(), "qkv", getPositions(), getCos(), getSin(), getRotaryDim(), d,
                        getTheta());
}

//===----------------------------------------------------------------------===//
// SplitOp
//===----------------------------------------------------------------------===//

LogicalResult SplitOp::verify() {
  ViewType in = viewType(getInput());
  if (getOutputs().empty())
    return emitOpError("needs at least one output");
  if (in.getRank() < 1 || failed(verifyStaticDim(*this, getInput(), in.getRank() - 1, "input",
                                                 "last dimension")))
    return in.getRank() < 1 ? emitOpError("cannot split a rank-0 input") : failure();
  int64_t total = 0;
  for (Value out : getOutputs()) {
    ViewType t = viewType(out);
    if (t.getRank() != in.getRank() || t.getElementType() != in.getElementType())
      return emitOpError() << "every output has the input's rank and element type, got " << t;
    if (failed(verifyStaticDim(*this, out, t.getRank() - 1, "every output", "last dimension")))
      return failure();
    for (unsigned d = 0; d + 1 < t.getRank(); ++d)
      if (!extentsAgree(getExtent(out, d), getExtent(getInput(), d), enclosingSchedule(*this)))
        return emitOpError() << "output " << t << " differs from the input " << in
                             << " before the last dimension";
    total += lastDim(out);
  }
  if (total != lastDim(getInput()))
    return emitOpError() << "the outputs' last dimensions sum to " << total << ", not the input's "
                         << lastDim(getInput());
  return success();
}

LogicalResult accel::exec::detail::verifyStaticDim(Operation *op, Value value, unsigned dim,
                                                   StringRef name, StringRef what) {
  ViewType t = viewType(value);
  if (dim >= t.getRank() || t.isDynamicDim(dim))
    return op->emitOpError() << name << " must have a static " << what << ", got " << t;
  return success();
}
