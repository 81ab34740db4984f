//===- PagedAttention.cpp - attention over the paged KV cache -------------===//
//
// Work is split into items (sequence, KV head, chunk of up to kQueryChunk
// query tokens). An item gathers the keys and values its queries can see
// from the pool into f32 buffers once, then serves every query head of the
// KV head's group. Each output row is computed by one item in a fixed order,
// so results do not depend on the thread count.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/transformer/PagedAttention.h"

#include "runtime/cpu/transformer/KernelSupport.h"
#include "runtime/cpu/transformer/Parallel.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace accel::rt::cpu::transformer {

using namespace detail;

namespace {

constexpr int64_t kQueryChunk = 16;

struct WorkItem {
  int64_t seq, kvHead, qBegin, qEnd; // query rows [qBegin, qEnd) of q
};

StatusOr<std::vector<int64_t>> readTable(const char *op, const Tensor &t) {
  if (t.dtype() != DType::kI32 && t.dtype() != DType::kI64)
    return opError(op, "block_tables " + t.describe() + " must be i32 or i64");
  if (t.rank() != 2)
    return opError(op, "block_tables " + t.describe() + " must be [seqs, max_blocks]");
  std::vector<int64_t> v(size_t(t.numElements()));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = t.dtype() == DType::kI32 ? t.data<int32_t>()[i] : t.data<int64_t>()[i];
  return v;
}

} // namespace

StatusOr<Tensor> pagedAttention(const Tensor &q, const kv::BlockPool &pool,
                                const Tensor &queryStartLoc,
                                const Tensor &seqLens, const Tensor &blockTables,
                                const PagedAttentionParams &p) {
  const char *op = "paged_attention";
  ACCEL_RT_RETURN_IF_ERROR(requireActivation(op, "q", q));
  if (q.rank() != 3)
    return opError(op, "q " + q.describe() + " must be [tokens, heads, head_dim]");
  const int64_t tokens = q.dim(0), heads = q.dim(1), d = q.dim(2);
  const int64_t kvHeads = pool.numKvHeads(), bs = pool.blockSize();
  if (d != pool.headDim())
    return opError(op, "q " + q.describe() + " has head_dim " + std::to_string(d) +
                           ", the KV pool " + std::to_string(pool.headDim()));
  if (heads % kvHeads != 0)
    return opError(op, "q's " + std::to_string(heads) + " heads are not a multiple of the " +
                           std::to_string(kvHeads) + " KV heads");
  if (p.layer < 0 || p.layer >= pool.numLayers())
    return opError(op, "layer " + std::to_string(p.layer) + " is not in the KV pool of " +
                           std::to_string(pool.numLayers()) + " layers");
  if (p.slidingWindow < 0)
    return opError(op, "sliding window " + std::to_string(p.slidingWindow) + " is negative");
  if (p.softcap < 0.0f || p.scale < 0.0f)
    return opError(op, "scale and softcap must not be negative");
  const bool fp8 = pool.dtype() == DType::kF8E4M3FN || pool.dtype() == DType::kF8E5M2;
  if (fp8)
    if (std::string bad = p.kvScales.check(kvHeads); !bad.empty())
      return opError(op, bad);

  // Step metadata.
  std::vector<int64_t> qsl, lens, table;
  ACCEL_RT_ASSIGN_OR_RETURN(qsl, readIndices(op, "query_start_loc", queryStartLoc));
  ACCEL_RT_ASSIGN_OR_RETURN(lens, readIndices(op, "seq_lens", seqLens));
  ACCEL_RT_ASSIGN_OR_RETURN(table, readTable(op, blockTables));
  if (qsl.empty())
    return opError(op, "query_start_loc is empty; it needs seqs + 1 entries");
  const int64_t seqs = int64_t(qsl.size()) - 1;
  if (int64_t(lens.size()) != seqs || blockTables.dim(0) != seqs)
    return opError(op, "query_start_loc " + queryStartLoc.describe() + ", seq_lens " +
                           seqLens.describe() + " and block_tables " + blockTables.describe() +
                           " disagree on the number of sequences");
  if (qsl[0] != 0 || qsl[size_t(seqs)] != tokens)
    return opError(op, "query_start_loc must run from 0 to the " + std::to_string(tokens) +
                           " tokens of q, got " + std::to_string(qsl[0]) + " .. " +
                           std::to_string(qsl[size_t(seqs)]));
  const int64_t width = blockTables.dim(1);
  for (int64_t i = 0; i < seqs; ++i) {
    const std::string seq = "sequence " + std::to_string(i);
    const int64_t n = qsl[size_t(i + 1)] - qsl[size_t(i)], len = lens[size_t(i)];
    if (n < 0)
      return opError(op, "query_start_loc decreases at " + seq);
    if (len < n)
      return opError(op, seq + " has " + std::to_string(n) + " query tokens but seq_len " +
                             std::to_string(len));
    const int64_t blocks = (len + bs - 1) / bs;
    if (blocks > width)
      return opError(op, seq + " of " + std::to_string(len) + " tokens needs " +
                             std::to_string(blocks) + " blocks; block_tables has " +
                             std::to_string(width) + " columns");
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t id = table[size_t(i * width + b)];
      if (id < 0 || id >= pool.numBlocks())
        return opError(op, seq + " lists block " + std::to_string(id) + " at entry " +
                               std::to_string(b) + "; the KV pool has " +
                               std::to_string(pool.numBlocks()) + " blocks");
    }
  }

  Tensor qf, out;
  ACCEL_RT_ASSIGN_OR_RETURN(qf, asF32(op, q));
  ACCEL_RT_ASSIGN_OR_RETURN(out, newF32(op, q.shape()));
  const float *qs = qf.data<float>();
  float *os = out.data<float>();
  const float scale = p.scale > 0.0f ? p.scale : 1.0f / std::sqrt(float(d));
  const int64_t group = heads / kvHeads;

  std::vector<WorkItem> items;
  for (int64_t i = 0; i < seqs; ++i)
    for (int64_t g = 0; g < kvHeads; ++g)
      for (int64_t b = qsl[size_t(i)]; b < qsl[size_t(i + 1)]; b += kQueryChunk)
        items.push_back({i, g, b, std::min(b + kQueryChunk, qsl[size_t(i + 1)])});

  parallelFor(int64_t(items.size()), 1, [&](int64_t ib, int64_t ie) {
    std::vector<float> keys, vals, scores;
    for (int64_t it = ib; it < ie; ++it) {
      const WorkItem &w = items[size_t(it)];
      const int64_t len = lens[size_t(w.seq)];
      const int64_t n = qsl[size_t(w.seq + 1)] - qsl[size_t(w.seq)];
      const int64_t firstPos = len - n + (w.qBegin - qsl[size_t(w.seq)]);
      const int64_t lastPos = firstPos + (w.qEnd - w.qBegin) - 1;
      auto lowKey = [&](int64_t pos) {
        return p.slidingWindow > 0 ? std::max<int64_t>(0, pos - p.slidingWindow + 1) : 0;
      };
      auto highKey = [&](int64_t pos) { return p.causal ? pos : len - 1; };
      // Gather the keys the chunk can see: [lowKey(first), highKey(last)].
      const int64_t k0 = lowKey(firstPos), k1 = highKey(lastPos);
      const int64_t nk = std::max<int64_t>(0, k1 - k0 + 1);
      keys.resize(size_t(nk * d));
      vals.resize(size_t(nk * d));
      scores.resize(size_t(nk));
      const int64_t elem = int64_t(dtypeSize(pool.dtype()));
      for (int64_t j = 0; j < nk; ++j) {
        const int64_t pos = k0 + j;
        const int64_t slot = table[size_t(w.seq * width + pos / bs)] * bs + pos % bs;
        const char *kr = static_cast<const char *>(pool.keyRow(p.layer, slot)) + w.kvHead * d * elem;
        const char *vr = static_cast<const char *>(pool.valueRow(p.layer, slot)) + w.kvHead * d * elem;
        loadRow(pool.dtype(), kr, d, keys.data() + j * d, fp8 ? p.kvScales.kFor(w.kvHead) : 1.0f);
        loadRow(pool.dtype(), vr, d, vals.data() + j * d, fp8 ? p.kvScales.vFor(w.kvHead) : 1.0f);
      }
      for (int64_t t = w.qBegin; t < w.qEnd; ++t) {
        const int64_t pos = firstPos + (t - w.qBegin);
        const int64_t lo = lowKey(pos) - k0, hi = highKey(pos) - k0;
        for (int64_t h = w.kvHead * group; h < (w.kvHead + 1) * group; ++h) {
          const float *qr = qs + (t * heads + h) * d;
          float *orow = os + (t * heads + h) * d;
          std::fill(orow, orow + d, 0.0f);
          if (hi < lo)
            continue;
          float mx = -std::numeric_limits<float>::infinity();
          for (int64_t j = lo; j <= hi; ++j) {
            const float *kr = keys.data() + j * d;
            float dot = 0.0f;
            for (int64_t c = 0; c < d; ++c)
              dot += qr[c] * kr[c];
            float s = dot * scale;
            if (p.softcap > 0.0f)
              s = p.softcap * std::tanh(s / p.softcap);
            scores[size_t(j)] = s;
            mx = std::max(mx, s);
          }
          float sum = 0.0f;
          for (int64_t j = lo; j <= hi; ++j) {
            const float e = std::exp(scores[size_t(j)] - mx);
            scores[size_t(j)] = e;
            sum += e;
          }
          const float inv = 1.0f / sum;
          for (int64_t j = lo; j <= hi; ++j) {
            const float wgt = scores[size_t(j)] * inv;
            const float *vr = vals.data() + j * d;
            for (int64_t c = 0; c < d; ++c)
              orow[c] += wgt * vr[c];
          }
        }
      }
    }
  });
  return fromF32(op, std::move(out), q.dtype());
}

StatusOr<Tensor> attention(const Tensor &q, const Tensor &k, const Tensor &v,
                           kv::BlockPool &pool, const kv::StepMetadata &step,
                           const PagedAttentionParams &params) {
  ACCEL_RT_RETURN_IF_ERROR(
      kvWrite(pool, params.layer, k, v, step.slotMapping, params.kvScales));
  return pagedAttention(q, pool, step.queryStartLoc, step.seqLens,
                        step.blockTables, params);
}

} // namespace accel::rt::cpu::transformer
