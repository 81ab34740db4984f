//===- Cast.cpp - Cast and CastLike ---------------------------------------===//
//
// Tensor::astype has ONNX Cast semantics (round to nearest even; f8 honours
// `saturate`; float -> int truncates toward zero, then wraps as int -> int
// does: ONNX leaves out-of-range values undefined, see core/Tensor.cpp).
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/onnx/KernelUtil.h"

namespace accel::rt::onnx {

namespace {

Status castTo(KernelContext &ctx, DType to) {
  const bool saturate = ctx.attrInt("saturate", 1) != 0;
  std::string round = ctx.attrString("round_mode", "up");
  if (round != "up")
    return ctx.unsupported("round_mode \"" + round + "\" (only float8e8m0 uses it)");
  StatusOr<Tensor> out = convertTo(*ctx.in(0), to, saturate);
  if (!out)
    return out.status();
  ctx.outputs[0] = std::move(out).value();
  return Status::ok();
}

Status kCast(KernelContext &ctx) {
  if (!ctx.hasAttr("to"))
    return ctx.error("attribute 'to' is required");
  StatusOr<DType> to = dtypeFromOnnx(ctx.attrInt("to", 1));
  if (!to)
    return ctx.unsupported(to.status().message());
  return castTo(ctx, *to);
}

Status kCastLike(KernelContext &ctx) { return castTo(ctx, ctx.in(1)->dtype()); }

} // namespace

void addCastKernels(KernelTable &t) {
  t["Cast"] = {kCast, 1, 1, 1};
  t["CastLike"] = {kCastLike, 2, 2, 1};
}

} // namespace accel::rt::onnx
