//===- PagedAttentionProblem.h - a paged attention case for kernel tests -*- C++ -*-===//
//
// The problems of the attention kernel tests (FlashPrefillTest,
// DecodeAttentionTest): ragged sequences of (query count, context length)
// over a paged KV pool whose blocks sit at shuffled places, slots no
// sequence owns holding NaN (a kernel reading past a context fails); inputs
// rounded to the plan dtype (and the cache optionally to f8E4M3FN with a k
// and a v scale); the reference output in double from the rounded values.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_TEST_GPU_PAGEDATTENTIONPROBLEM_H
#define ACCEL_TEST_GPU_PAGEDATTENTIONPROBLEM_H

#include "GpuTestContext.h"
#include "runtime/cuda/GpuSteps.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace accel::rt::test::paged {

using engine::DeviceTensor;
using engine::GpuRunState;
using gpu::GpuContext;

struct Case {
  std::vector<std::pair<int64_t, int64_t>> seqs; // (query count, context length)
  int64_t heads = 8, kvHeads = 2, d = 128, blockSize = 16;
  bool causal = true;
  int64_t window = 0;
  float softcap = 0.0f;
  float scale = 0.0f; // 0: 1 / sqrt(d)
  DType dtype = DType::kBF16;
  uint32_t seed = 1;
  /// The cache in f8E4M3FN, holding K / kScale and V / vScale (the
  /// reference reads the stored values times the scales).
  bool fp8Cache = false;
  float kScale = 1.0f, vScale = 1.0f;
};

inline std::string describe(const Case &c) {
  std::string s = std::string(dtypeName(c.dtype)) + " d" + std::to_string(c.d) + " heads " +
                  std::to_string(c.heads) + "/" + std::to_string(c.kvHeads) + " bs " +
                  std::to_string(c.blockSize) + " seqs";
  for (auto [n, l] : c.seqs)
    s += " " + std::to_string(n) + "/" + std::to_string(l);
  if (!c.causal)
    s += " non-causal";
  if (c.window)
    s += " window " + std::to_string(c.window);
  if (c.softcap > 0)
    s += " softcap " + std::to_string(c.softcap);
  return s;
}

/// Host data of one case, rounded to the dtype, and its device copies.
struct Problem {
  Case c;
  int64_t tokens = 0, numBlocks = 0, width = 0, group = 1;
  std::vector<int32_t> qsl, lens, tables; // tables [seqs, width]
  std::vector<float> q, k, v;             // rounded values: q [tokens, heads, d], pool
  GpuRunState st;
  kv::StepMetadata meta;
  DeviceTensor dq, dk, dv, dqsl, dlens, dtables;
  std::vector<DeviceTensor> keys, values;
  float scale = 0;
};

/// `values` (f32) rounded to `dt`: the device bytes and the rounded floats.
inline Tensor rounded(const std::vector<float> &values, DType dt, std::vector<float> *back) {
  Tensor t = *Tensor::fromVector<float>({int64_t(values.size())}, values);
  Tensor r = t.astype(dt, /*saturate=*/false);
  Tensor f = r.toF32();
  back->assign(f.data<float>(), f.data<float>() + f.numElements());
  return r;
}

inline Status upload(GpuRunState &st, DeviceTensor *dst, const Tensor &host) {
  ACCEL_RT_ASSIGN_OR_RETURN(*dst, st.empty(host.dtype(), host.shape()));
  return st.gpu->upload(dst->ptr, host.rawData(), host.byteSize());
}

inline StatusOr<std::unique_ptr<Problem>> makeProblem(GpuContext *gpu, const Case &c, float qAmp = 6.0f) {
  auto p = std::make_unique<Problem>();
  p->c = c;
  p->group = c.heads / c.kvHeads;
  p->scale = c.scale > 0 ? c.scale : 1.0f / std::sqrt(float(c.d));
  std::mt19937 rng(c.seed);
  std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
  const int64_t seqs = int64_t(c.seqs.size());
  p->qsl.push_back(0);
  int64_t blocksUsed = 0;
  for (auto [n, l] : c.seqs) {
    p->tokens += n;
    p->qsl.push_back(int32_t(p->tokens));
    p->lens.push_back(int32_t(l));
    const int64_t nb = (l + c.blockSize - 1) / c.blockSize;
    p->width = std::max(p->width, nb);
    blocksUsed += nb;
  }
  p->width = std::max<int64_t>(p->width, 1) + 1; // a padded column
  // Every sequence's blocks at shuffled places in a pool twice as large.
  p->numBlocks = 2 * blocksUsed + 3;
  std::vector<int32_t> perm(size_t(p->numBlocks));
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  p->tables.assign(size_t(seqs * p->width), 0);
  const int64_t rowElems = c.kvHeads * c.d;
  std::vector<float> kf(size_t(p->numBlocks * c.blockSize * rowElems),
                        std::numeric_limits<float>::quiet_NaN());
  std::vector<float> vf = kf;
  size_t next = 0;
  for (int64_t s = 0; s < seqs; ++s) {
    const int64_t l = c.seqs[size_t(s)].second;
    for (int64_t b = 0; b * c.blockSize < l; ++b)
      p->tables[size_t(s * p->width + b)] = perm[next++];
    for (int64_t t = 0; t < l; ++t) {
      const int64_t slot =
          int64_t(p->tables[size_t(s * p->width + t / c.blockSize)]) * c.blockSize +
          t % c.blockSize;
      for (int64_t e = 0; e < rowElems; ++e) {
        kf[size_t(slot * rowElems + e)] = uni(rng);
        vf[size_t(slot * rowElems + e)] = uni(rng);
      }
    }
  }
  std::vector<float> qf(size_t(p->tokens * c.heads * c.d));
  for (float &x : qf)
    x = qAmp * uni(rng);
  Tensor qt = rounded(qf, c.dtype, &p->q), kt, vt;
  if (c.fp8Cache) {
    for (float &x : kf)
      x /= c.kScale;
    for (float &x : vf)
      x /= c.vScale;
    kt = rounded(kf, DType::kF8E4M3FN, &p->k);
    vt = rounded(vf, DType::kF8E4M3FN, &p->v);
    for (float &x : p->k)
      x *= c.kScale;
    for (float &x : p->v)
      x *= c.vScale;
  } else {
    kt = rounded(kf, c.dtype, &p->k);
    vt = rounded(vf, c.dtype, &p->v);
  }

  GpuRunState &st = p->st;
  st.gpu = gpu;
  st.dtype = c.dtype;
  p->meta.numSeqs = seqs;
  p->meta.numTokens = p->tokens;
  p->meta.maxBlocksPerSeq = p->width;
  p->meta.queryStartLoc = *Tensor::fromVector<int32_t>({seqs + 1}, p->qsl);
  p->meta.seqLens = *Tensor::fromVector<int32_t>({seqs}, p->lens);
  p->meta.blockTables = *Tensor::fromVector<int32_t>({seqs, p->width}, p->tables);
  st.meta = &p->meta;
  ACCEL_RT_RETURN_IF_ERROR(upload(st, &p->dq, *qt.reshaped({p->tokens, c.heads, c.d})));
  ACCEL_RT_RETURN_IF_ERROR(
      upload(st, &p->dk, *kt.reshaped({p->numBlocks, c.blockSize, c.kvHeads, c.d})));
  ACCEL_RT_RETURN_IF_ERROR(
      upload(st, &p->dv, *vt.reshaped({p->numBlocks, c.blockSize, c.kvHeads, c.d})));
  ACCEL_RT_RETURN_IF_ERROR(upload(st, &p->dqsl, p->meta.queryStartLoc));
  ACCEL_RT_RETURN_IF_ERROR(upload(st, &p->dlens, p->meta.seqLens));
  ACCEL_RT_RETURN_IF_ERROR(upload(st, &p->dtables, p->meta.blockTables));
  st.queryStartLoc = p->dqsl;
  st.seqLens = p->dlens;
  st.blockTables = p->dtables;
  p->keys = {p->dk};
  p->values = {p->dv};
  st.keys = &p->keys;
  st.values = &p->values;
  st.blockSize = c.blockSize;
  st.numKvHeads = c.kvHeads;
  st.headDim = c.d;
  return p;
}

/// The reference output [tokens, heads, d] in double.
inline std::vector<double> reference(const Problem &p) {
  const Case &c = p.c;
  std::vector<double> out(size_t(p.tokens * c.heads * c.d), 0.0);
  const int64_t rowElems = c.kvHeads * c.d;
  std::vector<double> w;
  for (size_t s = 0; s < c.seqs.size(); ++s) {
    const int64_t n = c.seqs[s].first, l = c.seqs[s].second;
    for (int64_t j = 0; j < n; ++j) {
      const int64_t pos = l - n + j, tok = p.qsl[s] + j;
      const int64_t lo = c.window > 0 ? std::max<int64_t>(0, pos - c.window + 1) : 0;
      const int64_t hi = c.causal ? pos : l - 1;
      for (int64_t h = 0; h < c.heads; ++h) {
        const int64_t kvh = h / p.group;
        const float *qr = &p.q[size_t((tok * c.heads + h) * c.d)];
        w.assign(size_t(std::max<int64_t>(hi - lo + 1, 0)), 0.0);
        double mx = -1e300;
        auto slotOf = [&](int64_t t) {
          return int64_t(p.tables[s * size_t(p.width) + size_t(t / c.blockSize)]) * c.blockSize +
                 t % c.blockSize;
        };
        for (int64_t t = lo; t <= hi; ++t) {
          const float *kr = &p.k[size_t(slotOf(t) * rowElems + kvh * c.d)];
          double dot = 0;
          for (int64_t e = 0; e < c.d; ++e)
            dot += double(qr[e]) * double(kr[e]);
          double sc = dot * double(p.scale);
          if (c.softcap > 0)
            sc = double(c.softcap) * std::tanh(sc / double(c.softcap));
          w[size_t(t - lo)] = sc;
          mx = std::max(mx, sc);
        }
        double sum = 0;
        for (double &x : w)
          sum += (x = std::exp(x - mx));
        double *o = &out[size_t((tok * c.heads + h) * c.d)];
        for (int64_t t = lo; t <= hi; ++t) {
          const float *vr = &p.v[size_t(slotOf(t) * rowElems + kvh * c.d)];
          const double pw = w[size_t(t - lo)] / sum;
          for (int64_t e = 0; e < c.d; ++e)
            o[e] += pw * double(vr[e]);
        }
      }
    }
  }
  return out;
}

inline StatusOr<std::vector<float>> download(Problem &p, const DeviceTensor &t) {
  ACCEL_RT_ASSIGN_OR_RETURN(Tensor h, Tensor::allocate(t.dtype, t.shape));
  ACCEL_RT_RETURN_IF_ERROR(p.st.gpu->download(h.rawData(), t.ptr, h.byteSize()));
  Tensor f = h.toF32();
  return std::vector<float>(f.data<float>(), f.data<float>() + f.numElements());
}

/// max |got - ref| / max |ref| (1e9 for a non-finite value).
inline double relError(const std::vector<float> &got, const std::vector<double> &ref) {
  double mx = 0, err = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (!std::isfinite(got[i]))
      return 1e9;
    mx = std::max(mx, std::fabs(ref[i]));
    err = std::max(err, std::fabs(double(got[i]) - ref[i]));
  }
  return mx > 0 ? err / mx : err;
}

} // namespace accel::rt::test::paged

#endif // ACCEL_TEST_GPU_PAGEDATTENTIONPROBLEM_H
