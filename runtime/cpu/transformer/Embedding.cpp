//===- Embedding.cpp - embedding-table lookup -----------------------------===//
#include "runtime/cpu/transformer/Embedding.h"

#include "runtime/cpu/transformer/KernelSupport.h"
#include "runtime/cpu/transformer/Parallel.h"

#include <cstring>
#include <vector>

namespace accel::rt::cpu::transformer {

using namespace detail;

StatusOr<Tensor> embedding(const Tensor &table, const Tensor &ids, float scale,
                           int64_t vocabOffset, int64_t vocabSize) {
  const char *op = "embedding";
  ACCEL_RT_RETURN_IF_ERROR(requireActivation(op, "table", table));
  ACCEL_RT_RETURN_IF_ERROR(requireRank(op, "table", table, 2));
  std::vector<int64_t> idv;
  ACCEL_RT_ASSIGN_OR_RETURN(idv, readIndices(op, "ids", ids));
  const int64_t rows = table.dim(0), hidden = table.dim(1);
  const bool sharded = vocabSize > 0;
  const int64_t vocab = sharded ? vocabSize : rows;
  // Rows past vocabSize are a padded vocabulary's (never read: ids stop
  // at vocabSize).
  if (sharded && vocabOffset < 0)
    return opError(op, "the table's first row " + std::to_string(vocabOffset) +
                           " is not in the vocabulary");
  for (size_t t = 0; t < idv.size(); ++t)
    if (idv[t] < 0 || idv[t] >= vocab)
      return opError(op, "token " + std::to_string(t) + " has id " +
                             std::to_string(idv[t]) + ", outside the vocabulary of " +
                             std::to_string(vocab) + " entries");
  Tensor out;
  ACCEL_RT_ASSIGN_OR_RETURN(out, Tensor::allocate(table.dtype(), {int64_t(idv.size()), hidden}));
  const size_t rowBytes = size_t(hidden) * dtypeSize(table.dtype());
  const char *src = static_cast<const char *>(table.rawData());
  char *dst = static_cast<char *>(out.rawData());
  parallelFor(int64_t(idv.size()), 64, [&](int64_t b, int64_t e) {
    std::vector<float> row(scale == 1.0f ? 0 : size_t(hidden));
    for (int64_t t = b; t < e; ++t) {
      const int64_t local = idv[size_t(t)] - (sharded ? vocabOffset : 0);
      char *d = dst + size_t(t) * rowBytes;
      if (local < 0 || local >= rows) { // another rank's id: zeros (+0.0)
        std::memset(d, 0, rowBytes);
        continue;
      }
      const char *s = src + size_t(local) * rowBytes;
      if (scale == 1.0f) {
        std::memcpy(d, s, rowBytes);
      } else {
        loadRow(table.dtype(), s, hidden, row.data());
        for (float &x : row)
          x *= scale;
        storeRow(table.dtype(), row.data(), hidden, d);
      }
    }
  });
  return out;
}

} // namespace accel::rt::cpu::transformer
