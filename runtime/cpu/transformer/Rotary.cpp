//===- Rotary.cpp - rotary position embedding -----------------------------===//
#include "runtime/cpu/transformer/Rotary.h"

#include "runtime/cpu/transformer/KernelSupport.h"
#include "runtime/cpu/transformer/Parallel.h"

#include <cmath>

namespace accel::rt::cpu::transformer {

using namespace detail;

StatusOr<Tensor> rotary(const Tensor &x, const Tensor &positions,
                        const RotaryParams &p) {
  const char *op = "rotary";
  ACCEL_RT_RETURN_IF_ERROR(requireActivation(op, "input", x));
  if (x.rank() != 3)
    return opError(op, "input " + x.describe() + " must be [tokens, heads, head_dim]");
  const int64_t tokens = x.dim(0), heads = x.dim(1), d = x.dim(2);
  const int64_t rot = p.rotaryDim == 0 ? d : p.rotaryDim;
  if (rot <= 0 || rot % 2 != 0 || rot > d)
    return opError(op, "rotary_dim " + std::to_string(rot) +
                           " must be even, positive and at most head_dim " +
                           std::to_string(d));
  const int64_t half = rot / 2;
  std::vector<int64_t> pos;
  ACCEL_RT_ASSIGN_OR_RETURN(pos, readIndices(op, "positions", positions));
  if (int64_t(pos.size()) != tokens)
    return opError(op, "positions " + positions.describe() + " must have one entry per token of " +
                           x.describe());
  for (size_t t = 0; t < pos.size(); ++t)
    if (pos[t] < 0)
      return opError(op, "token " + std::to_string(t) + " has negative position " +
                             std::to_string(pos[t]));

  const bool tables = p.cosTable || p.sinTable;
  std::vector<float> inv;
  if (tables) {
    if (!p.cosTable || !p.sinTable)
      return opError(op, "explicit tables need both cos and sin");
    for (const Tensor *tab : {p.cosTable, p.sinTable}) {
      ACCEL_RT_RETURN_IF_ERROR(requireActivation(op, "cos/sin table", *tab));
      if (tab->rank() != 2 || tab->dim(1) != half)
        return opError(op, "cos/sin table " + tab->describe() + " must be [max_position, " +
                               std::to_string(half) + "]");
    }
    if (p.cosTable->shape() != p.sinTable->shape())
      return opError(op, "cos table " + p.cosTable->describe() + " and sin table " +
                             p.sinTable->describe() + " differ in shape");
    for (size_t t = 0; t < pos.size(); ++t)
      if (pos[t] >= p.cosTable->dim(0))
        return opError(op, "token " + std::to_string(t) + " has position " +
                               std::to_string(pos[t]) + ", past the " +
                               std::to_string(p.cosTable->dim(0)) + " rows of the cos/sin tables");
  } else {
    ACCEL_RT_ASSIGN_OR_RETURN(inv, rotaryInvFreq(rot, p.theta, p.scaling));
  }

  Tensor xf, out;
  ACCEL_RT_ASSIGN_OR_RETURN(xf, asF32(op, x));
  ACCEL_RT_ASSIGN_OR_RETURN(out, newF32(op, x.shape()));
  const float *xs = xf.data<float>();
  float *ys = out.data<float>();
  const size_t tabRow = tables ? size_t(half) * dtypeSize(p.cosTable->dtype()) : 0;
  parallelFor(tokens, 8, [&](int64_t b, int64_t e) {
    std::vector<float> c(static_cast<size_t>(half)), s(static_cast<size_t>(half));
    for (int64_t t = b; t < e; ++t) {
      if (tables) {
        loadRow(p.cosTable->dtype(),
                static_cast<const char *>(p.cosTable->rawData()) + size_t(pos[size_t(t)]) * tabRow,
                half, c.data());
        loadRow(p.sinTable->dtype(),
                static_cast<const char *>(p.sinTable->rawData()) + size_t(pos[size_t(t)]) * tabRow,
                half, s.data());
      } else {
        const float pf = float(pos[size_t(t)]);
        for (int64_t j = 0; j < half; ++j) {
          const float angle = pf * inv[size_t(j)];
          c[size_t(j)] = std::cos(angle);
          s[size_t(j)] = std::sin(angle);
        }
      }
      for (int64_t h = 0; h < heads; ++h) {
        const float *xr = xs + (t * heads + h) * d;
        float *yr = ys + (t * heads + h) * d;
        for (int64_t j = 0; j < half; ++j) {
          const int64_t i1 = p.style == RotaryStyle::kHalfSplit ? j : 2 * j;
          const int64_t i2 = p.style == RotaryStyle::kHalfSplit ? j + half : 2 * j + 1;
          const float x1 = xr[i1], x2 = xr[i2];
          yr[i1] = x1 * c[size_t(j)] - x2 * s[size_t(j)];
          yr[i2] = x2 * c[size_t(j)] + x1 * s[size_t(j)];
        }
        for (int64_t i = rot; i < d; ++i)
          yr[i] = xr[i];
      }
    }
  });
  return fromF32(op, std::move(out), x.dtype());
}

} // namespace accel::rt::cpu::transformer
