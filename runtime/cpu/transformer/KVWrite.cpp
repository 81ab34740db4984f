//===- KVWrite.cpp - storing this step's K and V in the paged cache -------===//
#include "runtime/cpu/transformer/KVWrite.h"

#include "runtime/cpu/transformer/KernelSupport.h"

#include <vector>

namespace accel::rt::cpu::transformer {

using namespace detail;

Status kvWrite(kv::BlockPool &pool, int64_t layer, const Tensor &k,
               const Tensor &v, const Tensor &slotMapping, KVScales scales) {
  const char *op = "kv_write";
  if (layer < 0 || layer >= pool.numLayers())
    return opError(op, "layer " + std::to_string(layer) + " is not in the KV pool of " +
                           std::to_string(pool.numLayers()) + " layers");
  for (const Tensor *t : {&k, &v}) {
    const char *what = t == &k ? "k" : "v";
    ACCEL_RT_RETURN_IF_ERROR(requireActivation(op, what, *t));
    if (t->rank() != 3 || t->dim(1) != pool.numKvHeads() || t->dim(2) != pool.headDim())
      return opError(op, std::string(what) + " " + t->describe() + " must be [tokens, " +
                             std::to_string(pool.numKvHeads()) + ", " +
                             std::to_string(pool.headDim()) + "], the KV pool's heads");
  }
  if (v.dim(0) != k.dim(0))
    return opError(op, "k " + k.describe() + " and v " + v.describe() +
                           " differ in token count");
  const bool fp8 = pool.dtype() == DType::kF8E4M3FN || pool.dtype() == DType::kF8E5M2;
  if (fp8)
    if (std::string bad = scales.check(pool.numKvHeads()); !bad.empty())
      return opError(op, bad);
  std::vector<int64_t> slots;
  ACCEL_RT_ASSIGN_OR_RETURN(slots, readIndices(op, "slot_mapping", slotMapping));
  if (int64_t(slots.size()) != k.dim(0))
    return opError(op, "slot_mapping " + slotMapping.describe() +
                           " must have one entry per token of k " + k.describe());
  for (size_t t = 0; t < slots.size(); ++t)
    if (slots[t] >= pool.numSlots())
      return opError(op, "token " + std::to_string(t) + " has slot " +
                             std::to_string(slots[t]) + ", past the " +
                             std::to_string(pool.numSlots()) + " slots of the KV pool");
  const int64_t row = pool.config().rowElements();
  const int64_t kvHeads = pool.numKvHeads(), d = pool.headDim();
  const size_t headBytes = size_t(d) * dtypeSize(pool.dtype());
  std::vector<float> buf(static_cast<size_t>(row));
  // By position, not by address: k and v may be the same tensor (MQA-style
  // graphs that share one projection).
  for (int which = 0; which < 2; ++which) {
    const bool isK = which == 0;
    const Tensor *t = isK ? &k : &v;
    const char *src = static_cast<const char *>(t->rawData());
    const size_t srcRow = size_t(row) * dtypeSize(t->dtype());
    for (size_t i = 0; i < slots.size(); ++i) {
      if (slots[i] < 0)
        continue;
      char *dst = static_cast<char *>(isK ? pool.keyRow(layer, slots[i])
                                          : pool.valueRow(layer, slots[i]));
      loadRow(t->dtype(), src + i * srcRow, row, buf.data());
      for (int64_t h = 0; h < kvHeads; ++h) { // one scale per head (or one for all)
        const float scale = fp8 ? (isK ? scales.kFor(h) : scales.vFor(h)) : 1.0f;
        storeRow(pool.dtype(), buf.data() + h * d, d, dst + size_t(h) * headBytes, scale);
      }
    }
  }
  return Status::ok();
}

std::string KVScales::check(int64_t kvHeads) const {
  for (const std::vector<float> *list : {&kHeads, &vHeads})
    if (!list->empty() && int64_t(list->size()) != kvHeads)
      return std::string("the per-head ") + (list == &kHeads ? "k" : "v") + " scales have " +
             std::to_string(list->size()) + " entries for " + std::to_string(kvHeads) +
             " KV heads";
  for (int64_t h = 0; h < kvHeads; ++h)
    if (!(kFor(h) > 0.0f) || !(vFor(h) > 0.0f))
      return "an FP8 KV pool needs positive k and v scales (KV head " + std::to_string(h) + ")";
  return "";
}

} // namespace accel::rt::cpu::transformer
