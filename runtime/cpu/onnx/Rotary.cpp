//===- Rotary.cpp - RotaryEmbedding (opset 23 and com.microsoft) ----------===//
//
// X is [B, H, S, D] (4-D) or [B, S, H*D] (3-D, num_heads given). The first
// `rot` (rotary_embedding_dim, default D) dims of each head rotate as pairs
// (x1, x2): interleaved pairs are (2i, 2i+1), otherwise (i, i + rot/2):
//   x1' = cos * x1 - sin * x2,   x2' = sin * x1 + cos * x2.
// cos/sin: with position_ids [B, S] they are [max_pos, rot/2] tables
// gathered by position; without, they are [B, S, rot/2] (a batch of 1, or a
// 2-D [S, rot/2], broadcasts over the input batch, as real exports produce).
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/onnx/ElementwiseUtil.h"

namespace accel::rt::onnx {

namespace {

struct RotaryArgs {
  const Tensor *x, *cos, *sin, *pos;
  /// com.microsoft: a position_ids of one element is the start offset.
  bool scalarPosIsOffset = false;
};

Status rotary(KernelContext &ctx, const RotaryArgs &a) {
  const Tensor &x0 = *a.x;
  ACCEL_RT_RETURN_IF_ERROR(checkAllowed(ctx, x0, kAllowFloat));
  const bool interleaved = ctx.attrInt("interleaved", 0) != 0;
  int64_t b, h, s, dh;
  const bool fourD = x0.rank() == 4;
  if (fourD) {
    b = x0.dim(0), h = x0.dim(1), s = x0.dim(2), dh = x0.dim(3);
  } else if (x0.rank() == 3) {
    h = ctx.attrInt("num_heads", 0);
    if (h <= 0) {
      // Without num_heads the head size must come from the tables.
      const int64_t half = a.cos->dim(-1);
      const int64_t rotAttr = ctx.attrInt("rotary_embedding_dim", 0);
      if (rotAttr > 0 || half <= 0 || x0.dim(2) % (2 * half))
        return ctx.error("3-D input " + x0.describe() + " needs attribute num_heads");
      h = x0.dim(2) / (2 * half);
    }
    if (x0.dim(2) % h)
      return ctx.error("hidden size " + std::to_string(x0.dim(2)) +
                       " is not divisible by num_heads " + std::to_string(h));
    b = x0.dim(0), s = x0.dim(1), dh = x0.dim(2) / h;
  } else {
    return ctx.error("input must be 3-D or 4-D, got " + x0.describe());
  }
  int64_t rot = ctx.attrInt("rotary_embedding_dim", 0);
  if (rot == 0)
    rot = dh;
  if (rot < 0 || rot > dh || rot % 2)
    return ctx.error("rotary_embedding_dim " + std::to_string(rot) +
                     " must be even and at most the head size " + std::to_string(dh));
  const int64_t half = rot / 2;
  const Tensor &cosT = *a.cos, &sinT = *a.sin;
  if (cosT.shape() != sinT.shape())
    return ctx.error("cos_cache " + cosT.describe() + " and sin_cache " + sinT.describe() +
                     " differ in shape");
  if (cosT.rank() < 2 || cosT.dim(-1) != half)
    return ctx.error("cos_cache " + cosT.describe() + " must end in rotary_embedding_dim/2 = " +
                     std::to_string(half));

  // Row of the cos/sin table for (batch bi, position si).
  std::vector<int64_t> rows(static_cast<size_t>(b * s));
  if (a.pos) {
    if (cosT.rank() != 2)
      return ctx.error("with position_ids, cos_cache must be [max_position, " +
                       std::to_string(half) + "], got " + cosT.describe());
    std::vector<int64_t> p;
    ACCEL_RT_ASSIGN_OR_RETURN(p, readIndexTensor(ctx, *a.pos, "position_ids"));
    const int64_t maxPos = cosT.dim(0);
    const bool offset = a.scalarPosIsOffset && p.size() == 1;
    const bool batchOne = a.pos->rank() == 2 && a.pos->dim(0) == 1 && a.pos->dim(1) == s;
    if (!offset && !batchOne && a.pos->shape() != Shape{b, s})
      return ctx.error("position_ids " + a.pos->describe() + " must be [" + std::to_string(b) +
                       ", " + std::to_string(s) + "]");
    for (int64_t bi = 0; bi < b; ++bi)
      for (int64_t si = 0; si < s; ++si) {
        const int64_t v = offset ? p[0] + si : p[size_t((batchOne ? 0 : bi) * s + si)];
        if (v < 0 || v >= maxPos)
          return ctx.error("position id " + std::to_string(v) +
                           " is outside the cos/sin table of " + std::to_string(maxPos) +
                           " positions");
        rows[size_t(bi * s + si)] = v;
      }
  } else {
    const int64_t cb = cosT.rank() == 3 ? cosT.dim(0) : 1;
    const int64_t cs = cosT.dim(-2);
    if (cosT.rank() > 3 || (cb != b && cb != 1) || cs != s)
      return ctx.error("without position_ids, cos_cache must be [batch, seq, rot/2] = [" +
                       std::to_string(b) + ", " + std::to_string(s) + ", " +
                       std::to_string(half) + "] (or batch 1), got " + cosT.describe());
    for (int64_t bi = 0; bi < b; ++bi)
      for (int64_t si = 0; si < s; ++si)
        rows[size_t(bi * s + si)] = (cb == 1 ? 0 : bi) * s + si;
  }

  Tensor x, c, sn, y;
  ACCEL_RT_ASSIGN_OR_RETURN(x, widen(x0));
  const DType ct = x.dtype();
  ACCEL_RT_ASSIGN_OR_RETURN(c, convertTo(cosT, ct));
  ACCEL_RT_ASSIGN_OR_RETURN(sn, convertTo(sinT, ct));
  ACCEL_RT_ASSIGN_OR_RETURN(y, Tensor::allocate(ct, x0.shape()));
  dispatchAllowed<kAllowFloat>(ct, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *px = x.data<T>(), *pc = c.data<T>(), *ps = sn.data<T>();
    T *py = y.data<T>();
    for (int64_t bi = 0; bi < b; ++bi)
      for (int64_t hi = 0; hi < h; ++hi)
        for (int64_t si = 0; si < s; ++si) {
          const int64_t off = fourD ? ((bi * h + hi) * s + si) * dh : ((bi * s + si) * h + hi) * dh;
          const T *in = px + off;
          T *out = py + off;
          const T *cr = pc + rows[size_t(bi * s + si)] * half;
          const T *sr = ps + rows[size_t(bi * s + si)] * half;
          for (int64_t i = 0; i < half; ++i) {
            const int64_t i1 = interleaved ? 2 * i : i;
            const int64_t i2 = interleaved ? 2 * i + 1 : i + half;
            const T x1 = in[i1], x2 = in[i2];
            out[i1] = cr[i] * x1 - sr[i] * x2;
            out[i2] = sr[i] * x1 + cr[i] * x2;
          }
          for (int64_t i = rot; i < dh; ++i)
            out[i] = in[i];
        }
  });
  ACCEL_RT_ASSIGN_OR_RETURN(ctx.outputs[0], convertTo(y, x0.dtype()));
  return Status::ok();
}

/// ONNX RotaryEmbedding(X, cos_cache, sin_cache, position_ids?).
Status kRotary(KernelContext &ctx) {
  return rotary(ctx, {ctx.in(0), ctx.in(1), ctx.in(2), ctx.in(3)});
}

/// com.microsoft RotaryEmbedding(input, position_ids, cos_cache, sin_cache).
Status kMsRotary(KernelContext &ctx) {
  if (ctx.attrInt("is_packed_batching", 0) != 0)
    return ctx.unsupported("is_packed_batching=1");
  if (ctx.attrFloat("scale", 1.0f) != 1.0f)
    return ctx.unsupported("scale other than 1");
  RotaryArgs a{ctx.in(0), ctx.in(2), ctx.in(3), ctx.in(1)};
  a.scalarPosIsOffset = true;
  return rotary(ctx, a);
}

} // namespace

void addRotaryKernels(KernelTable &t) { t["RotaryEmbedding"] = {kRotary, 3, 4, 1}; }

void addMicrosoftRotaryKernel(KernelTable &ms) { ms["RotaryEmbedding"] = {kMsRotary, 4, 4, 1}; }

} // namespace accel::rt::onnx
