//===- OnnxNormalization.cpp - Softmax and norm verifiers -----------------===//
#include "OnnxVerifyUtils.h"
#include "accel/dialects/Onnx/OnnxOps.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace accel::onnx;

LogicalResult SoftmaxOp::verify() {
  if (std::optional<int64_t> r = rankOf(getInput()))
    return verifyAxis(*this, "attribute 'axis'", asSigned(getAxis()), *r);
  return success();
}

//===----------------------------------------------------------------------===//
// Shared by the norms
//===----------------------------------------------------------------------===//

namespace {
/// A norm's parameter input (scale, bias) and its name in diagnostics.
struct NormParam {
  Value value;
  StringRef name;
};
} // namespace

/// Checks `axis` against X's rank and that every present parameter
/// broadcasts to the normalised shape `X.shape[axis:]`. Returns the
/// normalised axis, nullopt when X is unranked.
static FailureOr<std::optional<int64_t>>
verifyNormAxis(Operation *op, Value x, int64_t axis,
               ArrayRef<NormParam> params) {
  std::optional<ArrayRef<int64_t>> xs = shapeOf(x);
  if (!xs)
    return std::optional<int64_t>();
  if (failed(verifyAxis(op, "attribute 'axis'", axis, xs->size())))
    return failure();
  int64_t a = *normalizeAxis(axis, xs->size());
  for (const NormParam &p : params) {
    if (!p.value)
      continue;
    if (std::optional<ArrayRef<int64_t>> ps = shapeOf(p.value))
      if (failed(verifyUnidirectionalBroadcast(
              op, (Twine("operand '") + p.name + "'").str(), *ps, "normalized",
              xs->drop_front(a))))
        return failure();
  }
  return std::optional<int64_t>(a);
}

/// A saved statistic (mean, inverse std dev): a float tensor of X's rank
/// with the normalised dims (from `axis` on) set to 1.
static LogicalResult verifyNormStat(Operation *op, Value x,
                                    std::optional<int64_t> axis, Value stat,
                                    StringRef name) {
  if (!stat)
    return success();
  if (!isa<FloatType>(elementTypeOf(stat)))
    return op->emitOpError("result '")
           << name << "' must have a floating-point element type, got "
           << elementTypeOf(stat);
  std::optional<ArrayRef<int64_t>> xs = shapeOf(x);
  if (!xs || !axis)
    return success();
  SmallVector<int64_t> expected(xs->take_front(*axis));
  expected.append(xs->size() - *axis, 1);
  return verifyResultShape(op, stat, expected);
}

/// Checks that every present parameter has X's element type.
static LogicalResult verifyParamTypes(Operation *op, Value x, StringRef xName,
                                      ArrayRef<NormParam> params) {
  for (const NormParam &p : params)
    if (p.value && failed(verifySameElementType(
                       op, x, (Twine("operands '") + xName + "'").str(),
                       p.value, (Twine("'") + p.name + "'").str())))
      return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// LayerNormalization, RMSNormalization, ms_SimplifiedLayerNormalization
//===----------------------------------------------------------------------===//

LogicalResult LayerNormalizationOp::verify() {
  NormParam params[] = {{getScale(), "Scale"}, {getB(), "B"}};
  if (failed(verifyParamTypes(*this, getX(), "X", params)) ||
      failed(
          verifySameType(*this, getY(), "result 'Y'", getX(), "operand 'X'")))
    return failure();
  FailureOr<std::optional<int64_t>> axis =
      verifyNormAxis(*this, getX(), asSigned(getAxis()), params);
  if (failed(axis) ||
      failed(verifyNormStat(*this, getX(), *axis, getMean(), "Mean")) ||
      failed(verifyNormStat(*this, getX(), *axis, getInvStdDev(), "InvStdDev")))
    return failure();
  return success();
}

LogicalResult RMSNormalizationOp::verify() {
  // Y takes scale's element type (ONNX's V), X may have another one.
  if (failed(verifyElementType(*this, getY(), "result 'Y'",
                               elementTypeOf(getScale()))))
    return failure();
  if (failed(verifyCompatibleShape(getY().getType(), getX().getType())))
    return emitOpError("result 'Y' type ")
           << getY().getType() << " does not match the shape of operand 'X' "
           << getX().getType();
  NormParam params[] = {{getScale(), "scale"}};
  return failure(
      failed(verifyNormAxis(*this, getX(), asSigned(getAxis()), params)));
}

LogicalResult MsSimplifiedLayerNormalizationOp::verify() {
  NormParam params[] = {{getScale(), "scale"}};
  if (failed(verifyParamTypes(*this, getX(), "X", params)) ||
      failed(
          verifySameType(*this, getY(), "result 'Y'", getX(), "operand 'X'")))
    return failure();
  FailureOr<std::optional<int64_t>> axis =
      verifyNormAxis(*this, getX(), asSigned(getAxis()), params);
  if (failed(axis))
    return failure();
  return verifyNormStat(*this, getX(), *axis, getInvStdVar(), "inv_std_var");
}

//===----------------------------------------------------------------------===//
// ms_SkipLayerNormalization, ms_SkipSimplifiedLayerNormalization
//===----------------------------------------------------------------------===//

/// input [batch, seq, hidden] or [tokens, hidden]; skip broadcasts to it;
/// the parameters are 1-D of size hidden; output and input_skip_bias_sum
/// have input's type; the statistics are float.
static LogicalResult verifySkipNorm(Operation *op, Value input, Value skip,
                                    ArrayRef<NormParam> params, Value output,
                                    Value mean, Value invStdVar, Value sum) {
  if (failed(verifyRank(op, input, "operand 'input'", {2, 3})) ||
      failed(verifySameElementType(op, input, "operands 'input'", skip,
                                   "'skip'")) ||
      failed(verifyParamTypes(op, input, "input", params)) ||
      failed(verifySameType(op, output, "result 'output'", input,
                            "operand 'input'")))
    return failure();
  if (sum && failed(verifySameType(op, sum, "result 'input_skip_bias_sum'",
                                   input, "operand 'input'")))
    return failure();
  for (auto [stat, name] :
       {std::pair{mean, "mean"}, {invStdVar, "inv_std_var"}})
    if (stat && !isa<FloatType>(elementTypeOf(stat)))
      return op->emitOpError("result '")
             << name << "' must have a floating-point element type, got "
             << elementTypeOf(stat);
  std::optional<ArrayRef<int64_t>> in = shapeOf(input);
  if (!in)
    return success();
  if (std::optional<ArrayRef<int64_t>> s = shapeOf(skip))
    if (failed(verifyUnidirectionalBroadcast(op, "operand 'skip'", *s,
                                             "operand 'input'", *in)))
      return failure();
  int64_t hidden = in->back();
  for (const NormParam &p : params) {
    if (!p.value)
      continue;
    std::string what = (Twine("operand '") + p.name + "'").str();
    if (failed(verifyRank(op, p.value, what, {1})))
      return failure();
    if (std::optional<ArrayRef<int64_t>> ps = shapeOf(p.value);
        ps && !dimsAgree(ps->front(), hidden))
      return op->emitOpError() << what << " has size " << ps->front()
                               << ", expected the hidden size " << hidden;
  }
  return success();
}

LogicalResult MsSkipLayerNormalizationOp::verify() {
  NormParam params[] = {
      {getGamma(), "gamma"}, {getBeta(), "beta"}, {getBias(), "bias"}};
  return verifySkipNorm(*this, getInput(), getSkip(), params, getOutput(),
                        getMean(), getInvStdVar(), getInputSkipBiasSum());
}

LogicalResult MsSkipSimplifiedLayerNormalizationOp::verify() {
  NormParam params[] = {{getGamma(), "gamma"}, {getBias(), "bias"}};
  return verifySkipNorm(*this, getInput(), getSkip(), params, getOutput(),
                        getMean(), getInvStdVar(), getInputSkipBiasSum());
}
