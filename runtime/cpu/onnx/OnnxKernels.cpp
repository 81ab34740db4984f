//===- OnnxKernels.cpp - dispatch from an op type to its kernel -----------===//
#include "runtime/cpu/onnx/OnnxKernels.h"
#include "runtime/cpu/onnx/KernelUtil.h"

#include <algorithm>

namespace accel::rt::onnx {

namespace {

struct Registry {
  KernelTable onnx, microsoft;
  Registry() {
    addElementwiseKernels(onnx, microsoft);
    addCastKernels(onnx);
    addMatMulKernels(onnx);
    addReduceKernels(onnx);
    addShapeKernels(onnx);
    addGatherKernels(onnx);
    addNormKernels(onnx, microsoft);
    addAttentionKernels(onnx);
    addRotaryKernels(onnx);
    addMicrosoftRotaryKernel(microsoft);
    addMicrosoftAttentionKernels(microsoft);
    addQuantizeKernels(onnx);
    addGenerateKernels(onnx);
    addEinsumKernels(onnx);
    addMatMulNBitsKernel(microsoft);
  }
};

const Registry &registry() {
  static const Registry r;
  return r;
}

const KernelTable *tableFor(std::string_view domain) {
  if (domain.empty() || domain == "ai.onnx")
    return &registry().onnx;
  if (domain == "com.microsoft")
    return &registry().microsoft;
  return nullptr;
}

std::string plural(int n, const char *what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

} // namespace

bool isSupported(std::string_view opType, std::string_view domain) {
  const KernelTable *t = tableFor(domain);
  return t && t->find(opType) != t->end();
}

std::vector<std::string> supportedOps() {
  std::vector<std::string> ops;
  for (auto &[name, info] : registry().onnx)
    ops.push_back(name);
  for (auto &[name, info] : registry().microsoft)
    ops.push_back("com.microsoft." + name);
  std::sort(ops.begin(), ops.end());
  return ops;
}

Status runOp(std::string_view opType, std::string_view domain,
             const AttrMap &attrs, const std::vector<const Tensor *> &inputs,
             size_t numOutputs, std::vector<Tensor> &outputs) {
  const std::string op(opType);
  const KernelTable *table = tableFor(domain);
  if (!table)
    return unimplemented(op + ": operator domain '" + std::string(domain) +
                         "' is not supported by the CPU kernels");
  auto it = table->find(opType);
  if (it == table->end())
    return unimplemented(
        op + ": no CPU kernel for this operator" +
        (domain.empty() ? std::string() : " in domain '" + std::string(domain) + "'"));
  const KernelInfo &info = it->second;

  // Trailing absent inputs do not count.
  size_t given = inputs.size();
  while (given > 0 && inputs[given - 1] == nullptr)
    --given;
  if (int(given) < info.minInputs || (info.maxInputs >= 0 && int(given) > info.maxInputs)) {
    std::string want =
        info.maxInputs < 0 ? "at least " + plural(info.minInputs, "input")
        : info.minInputs == info.maxInputs
            ? plural(info.minInputs, "input")
            : std::to_string(info.minInputs) + " to " +
                  plural(info.maxInputs, "input");
    return invalidArgument(op + ": expects " + want + ", got " +
                           std::to_string(given));
  }
  for (size_t i = 0; i < given; ++i) {
    if (int(i) < info.minInputs && inputs[i] == nullptr)
      return invalidArgument(op + ": required input " + std::to_string(i) +
                             " is missing");
    if (inputs[i] && !inputs[i]->defined())
      return invalidArgument(op + ": input " + std::to_string(i) +
                             " is an undefined tensor");
  }
  if (numOutputs == 0)
    numOutputs = 1;
  if (info.maxOutputs >= 0 && numOutputs > size_t(info.maxOutputs))
    return invalidArgument(op + ": produces at most " +
                           plural(info.maxOutputs, "output") + ", " +
                           std::to_string(numOutputs) + " asked for");
  outputs.assign(numOutputs, Tensor());
  std::vector<const Tensor *> trimmed(inputs.begin(), inputs.begin() + long(given));
  KernelContext ctx(opType, attrs, trimmed, numOutputs, outputs);
  Status s = info.fn(ctx);
  if (!ctx.attrStatus().isOk())
    return ctx.attrStatus();
  if (!s.isOk())
    return s;
  for (size_t i = 0; i < numOutputs; ++i)
    if (!outputs[i].defined())
      return internalError(op + ": kernel left output " + std::to_string(i) +
                           " unset");
  return Status::ok();
}

} // namespace accel::rt::onnx
