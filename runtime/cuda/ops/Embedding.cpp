//===- Embedding.cpp - the embedding lookup on the GPU --------------------===//
//
// The embedding lookup of a step's token ids (kernels/Embedding.cu). The
// step's positions are a step input the executor binds (GpuExecutor.cpp).
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/ops/Ops.h"

namespace accel::rt::engine::ops {

/// `launch embedding` (vocabulary-parallel with vocab_shards > 1).
StatusOr<GpuKernel> prepareEmbedding(const plan::PlanFile &plan, const pb::Step &step,
                                     const Attrs &a, const GpuPrepareContext &ctx) {
  const DType cdt = ctx.dtype;
  ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 2, 2));
  ACCEL_RT_ASSIGN_OR_RETURN(double scale, a.f("scale", 1.0));
  // Vocabulary-parallel (accelc -tp=N): the table is this rank's block of
  // rows, whose first row is rank * rows; other ids give zero rows, and
  // the all_reduce after the step sums the ranks' lookups.
  ACCEL_RT_ASSIGN_OR_RETURN(int64_t vocabShards, a.i("vocab_shards", 1));
  if (vocabShards < 1 || (vocabShards != 1 && vocabShards != plan.metadata().tp_size()))
    return badInput("a vocabulary-parallel embedding over " + std::to_string(vocabShards) +
                    " ranks in a plan for " + std::to_string(plan.metadata().tp_size()));
  // A padded vocabulary: the last rows are padding, ids stop at vocab_size.
  ACCEL_RT_ASSIGN_OR_RETURN(int64_t realVocab, a.i("vocab_size", 0));
  ACCEL_RT_ASSIGN_OR_RETURN(CuFunction fn, computeKernel(ctx, "embedding"));
  return one([=](GpuRunState &st, Inputs &in) -> StatusOr<DeviceTensor> {
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor table, st.toDevice(*in[0], cdt));
    if (table.rank() != 2)
      return badInput("the embedding table " + table.describe() + " must be [vocab, hidden]");
    int64_t first = 0, vocabSize = table.dim(0);
    if (vocabShards > 1) {
      const int ranks = st.comm ? st.comm->size() : st.p2p ? st.p2p->size() : 1;
      if (ranks != vocabShards)
        return Status(StatusCode::kInternal,
                      "a vocabulary-parallel embedding over " + std::to_string(vocabShards) +
                          " ranks needs every rank running (the tensor-parallel executor)");
      first = int64_t(st.comm ? st.comm->rank() : st.p2pRank) * table.dim(0);
      vocabSize = vocabShards * table.dim(0);
    }
    if (realVocab > 0)
      vocabSize = std::min(vocabSize, realVocab);
    GpuValue &idv = *in[1];
    if (idv.host.defined()) {
      if (!isInteger(idv.host.dtype()))
        return badInput("the ids " + idv.host.describe() + " must be integers");
      std::vector<int64_t> ids = idv.host.toInt64s();
      for (size_t t = 0; t < ids.size(); ++t)
        if (ids[t] < 0 || ids[t] >= vocabSize)
          return badInput("token " + std::to_string(t) + " has id " + std::to_string(ids[t]) +
                          ", outside the vocabulary of " + std::to_string(vocabSize) +
                          " entries");
      if (idv.host.dtype() != DType::kI64 && idv.host.dtype() != DType::kI32)
        idv.host = idv.host.astype(DType::kI64);
    }
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor ids, st.toDevice(idv));
    if (ids.dtype != DType::kI64 && ids.dtype != DType::kI32)
      return badInput("the ids " + ids.describe() + " must be i32 or i64");
    const int64_t tokens = ids.numElements(), hidden = table.dim(1);
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor out, st.output(0, cdt, {tokens, hidden}));
    if (tokens)
      ACCEL_RT_RETURN_IF_ERROR(st.gpu->launch(fn, Dim3{unsigned(tokens), 1, 1},
                                              Dim3{rowThreads(hidden), 1, 1}, 0, table.ptr,
                                              ids.ptr, int(ids.dtype == DType::kI64), out.ptr,
                                              i64(hidden), i64(table.dim(0)), i64(first),
                                              float(scale)));
    return out;
  });
}

} // namespace accel::rt::engine::ops
