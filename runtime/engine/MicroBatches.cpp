//===- MicroBatches.cpp - one engine step as micro-batches ----------------===//
#include "runtime/engine/MicroBatches.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <string>

namespace accel::rt::engine {

namespace {

Status badMeta(const std::string &what) {
  return invalidArgument("cannot split the step into micro-batches: " + what);
}

/// `t` is i32 of `shape`, or why not.
Status checkI32(const Tensor &t, const char *name, const Shape &shape) {
  if (!t.defined() || t.dtype() != DType::kI32 || t.shape() != shape)
    return badMeta(std::string("its ") + name + " is " + (t.defined() ? t.describe() : "undefined") +
                   ", not i32" + shapeToString(shape));
  return Status::ok();
}

/// Rows [begin, end) of `t` (rows along dim 0) as a view sharing its bytes.
Tensor rowsOf(const Tensor &t, int64_t begin, int64_t end) {
  Shape shape = t.shape();
  const int64_t perRow = t.dim(0) > 0 ? t.numElements() / t.dim(0) : 0;
  shape[0] = end - begin;
  const char *base = static_cast<const char *>(t.rawData());
  return Tensor::view(t.dtype(), std::move(shape),
                      base + size_t(begin * perRow) * dtypeSize(t.dtype()), t.owner());
}

std::vector<int64_t> allRows(int64_t n) {
  std::vector<int64_t> rows(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    rows[size_t(i)] = i;
  return rows;
}

MicroBatch wholeStep(const Tensor &tokenIds, const kv::StepMetadata &meta) {
  MicroBatch m;
  m.tokenIds = tokenIds;
  m.meta = meta;
  m.keepRows = allRows(meta.lastRowsOnly ? meta.numLogitsRows() : meta.numTokens);
  return m;
}

} // namespace

StatusOr<std::vector<MicroBatch>> splitStep(const Tensor &tokenIds, const kv::StepMetadata &meta,
                                            int parts, int64_t minTokens) {
  ACCEL_RT_RETURN_IF_ERROR(kv::checkStepTokenIds(tokenIds, meta));
  if (minTokens < 1)
    return invalidArgument("a micro-batch needs at least 1 token, not " +
                           std::to_string(minTokens));
  const int64_t T = meta.numTokens, S = meta.numSeqs;
  if (parts <= 1 || T < 2 * minTokens)
    return std::vector<MicroBatch>{wholeStep(tokenIds, meta)};
  ACCEL_RT_RETURN_IF_ERROR(checkI32(meta.queryStartLoc, "query_start_loc", {S + 1}));
  ACCEL_RT_RETURN_IF_ERROR(checkI32(meta.seqLens, "seq_lens", {S}));
  ACCEL_RT_RETURN_IF_ERROR(checkI32(meta.positions, "positions", {T}));
  ACCEL_RT_RETURN_IF_ERROR(checkI32(meta.slotMapping, "slot_mapping", {T}));
  ACCEL_RT_RETURN_IF_ERROR(checkI32(meta.blockTables, "block_tables", {S, meta.maxBlocksPerSeq}));
  const int32_t *qsl = meta.queryStartLoc.data<int32_t>();
  const int32_t *lens = meta.seqLens.data<int32_t>();
  if (qsl[0] != 0 || qsl[S] != T)
    return badMeta("its query_start_loc runs from " + std::to_string(qsl[0]) + " to " +
                   std::to_string(qsl[S]) + ", not from 0 to its " + std::to_string(T) +
                   " tokens");
  for (int64_t i = 0; i < S; ++i)
    if (qsl[i + 1] <= qsl[i] || lens[i] < qsl[i + 1] - qsl[i])
      return badMeta("sequence " + std::to_string(i) + " brings tokens [" +
                     std::to_string(qsl[i]) + ", " + std::to_string(qsl[i + 1]) +
                     ") with seq_len " + std::to_string(lens[i]));

  // Where a part may end: anywhere, or (rows picked by logitsRowEnds) only
  // at a sequence's end that is also a row's end.
  std::set<int64_t> rowEnds;
  const bool seqCutsOnly = meta.logitsRowEnds.defined();
  if (seqCutsOnly) {
    const int64_t rows = meta.logitsRowEnds.numElements() - 1;
    ACCEL_RT_RETURN_IF_ERROR(checkI32(meta.logitsRowEnds, "logits_row_ends", {rows + 1}));
    const int32_t *e = meta.logitsRowEnds.data<int32_t>();
    if (rows < 1 || e[0] != 0 || e[rows] != T)
      return badMeta("its logits row ends do not run from 0 to its " + std::to_string(T) +
                     " tokens");
    for (int64_t j = 0; j < rows; ++j) {
      if (e[j + 1] <= e[j])
        return badMeta("its logits row ends do not increase at row " + std::to_string(j));
      rowEnds.insert(e[j + 1]);
    }
  }
  std::vector<int64_t> candidates;
  if (seqCutsOnly) {
    for (int64_t i = 1; i < S; ++i)
      if (rowEnds.count(qsl[i]))
        candidates.push_back(qsl[i]);
  }
  const int64_t want = std::min<int64_t>(parts, T / minTokens);
  std::vector<int64_t> bounds = {0};
  for (int64_t k = 1; k < want; ++k) {
    const int64_t target = k * T / want;
    int64_t cut = -1;
    if (!seqCutsOnly) {
      cut = target;
    } else {
      // The candidate nearest the target (the earlier on a tie).
      auto it = std::lower_bound(candidates.begin(), candidates.end(), target);
      int64_t best = -1;
      if (it != candidates.end())
        best = *it;
      if (it != candidates.begin() && (best < 0 || target - *(it - 1) <= best - target))
        best = *(it - 1);
      cut = best;
    }
    if (cut - bounds.back() >= minTokens && T - cut >= minTokens)
      bounds.push_back(cut);
  }
  bounds.push_back(T);
  if (bounds.size() == 2)
    return std::vector<MicroBatch>{wholeStep(tokenIds, meta)};

  std::vector<MicroBatch> out;
  int64_t first = 0; // the first sequence with tokens at or after `a`
  for (size_t p = 0; p + 1 < bounds.size(); ++p) {
    const int64_t a = bounds[p], b = bounds[p + 1];
    while (qsl[first + 1] <= a)
      ++first;
    int64_t last = first; // the last sequence with tokens before `b`
    while (last + 1 < S && qsl[last + 1] < b)
      ++last;
    const int64_t n = last - first + 1;
    MicroBatch m;
    m.tokenIds = rowsOf(tokenIds, a, b);
    kv::StepMetadata &md = m.meta;
    md.numSeqs = n;
    md.numTokens = b - a;
    md.maxBlocksPerSeq = meta.maxBlocksPerSeq;
    md.lastRowsOnly = meta.lastRowsOnly;
    md.greedy = meta.greedy;
    md.positions = rowsOf(meta.positions, a, b);
    md.slotMapping = rowsOf(meta.slotMapping, a, b);
    md.blockTables = rowsOf(meta.blockTables, first, last + 1);
    ACCEL_RT_ASSIGN_OR_RETURN(md.queryStartLoc, Tensor::allocate(DType::kI32, {n + 1}));
    ACCEL_RT_ASSIGN_OR_RETURN(md.seqLens, Tensor::allocate(DType::kI32, {n}));
    int32_t *q = md.queryStartLoc.data<int32_t>();
    int32_t *l = md.seqLens.data<int32_t>();
    q[0] = 0;
    for (int64_t i = first; i <= last; ++i) {
      const int64_t end = std::min<int64_t>(b, qsl[i + 1]);
      q[i - first + 1] = int32_t(end - a);
      // The tokens of this sequence after this piece are not in its cache yet.
      l[i - first] = int32_t(lens[i] - (qsl[i + 1] - end));
    }
    if (seqCutsOnly) {
      std::vector<int32_t> ends = {0};
      for (auto it = rowEnds.upper_bound(a); it != rowEnds.end() && *it <= b; ++it)
        ends.push_back(int32_t(*it - a));
      ACCEL_RT_ASSIGN_OR_RETURN(md.logitsRowEnds,
                                Tensor::fromVector<int32_t>({int64_t(ends.size())}, ends));
    }
    if (!meta.lastRowsOnly) {
      m.keepRows = allRows(b - a);
    } else {
      m.keepRows = allRows(md.numLogitsRows());
      // Only the last sequence of a part can go on in the next part: its
      // row here is not its last token's.
      if (!seqCutsOnly && qsl[last + 1] > b)
        m.keepRows.pop_back();
    }
    out.push_back(std::move(m));
  }
  return out;
}

StatusOr<Tensor> joinParts(const std::vector<MicroBatch> &parts,
                           const std::vector<Tensor> &outputs) {
  if (parts.size() != outputs.size() || parts.empty())
    return invalidArgument("joinParts got " + std::to_string(outputs.size()) + " outputs for " +
                           std::to_string(parts.size()) + " micro-batches");
  // The row axis: 0, or 1 of [1, rows, vocab].
  auto rowAxis = [](const Tensor &t) -> int64_t {
    return t.rank() == 3 && t.dim(0) == 1 ? 1 : 0;
  };
  const Tensor &head = outputs[0];
  for (size_t p = 0; p < parts.size(); ++p) {
    const Tensor &o = outputs[p];
    if (!o.defined() || o.rank() < 1)
      return invalidArgument("micro-batch " + std::to_string(p) + " returned " +
                             (o.defined() ? o.describe() : "no output"));
    Shape a = o.shape(), h = head.shape();
    a[size_t(rowAxis(o))] = 0;
    h[size_t(rowAxis(head))] = 0;
    if (o.dtype() != head.dtype() || a != h)
      return invalidArgument("micro-batch " + std::to_string(p) + " returned " + o.describe() +
                             " and micro-batch 0 " + head.describe());
    const int64_t rows = o.dim(rowAxis(o));
    for (int64_t r : parts[p].keepRows)
      if (r < 0 || r >= rows)
        return invalidArgument("micro-batch " + std::to_string(p) + " keeps row " +
                               std::to_string(r) + " of its output " + o.describe());
  }
  if (parts.size() == 1 && parts[0].keepRows == allRows(head.dim(rowAxis(head))))
    return head;
  int64_t total = 0;
  for (const MicroBatch &m : parts)
    total += int64_t(m.keepRows.size());
  Shape shape = head.shape();
  const int64_t axis = rowAxis(head);
  shape[size_t(axis)] = total;
  ACCEL_RT_ASSIGN_OR_RETURN(Tensor joined, Tensor::allocate(head.dtype(), shape));
  size_t rowBytes = dtypeSize(head.dtype());
  for (int64_t d = axis + 1; d < head.rank(); ++d)
    rowBytes *= size_t(head.dim(d));
  char *dst = static_cast<char *>(joined.rawData());
  for (size_t p = 0; p < parts.size(); ++p) {
    const char *src = static_cast<const char *>(outputs[p].rawData());
    for (int64_t r : parts[p].keepRows) {
      std::memcpy(dst, src + size_t(r) * rowBytes, rowBytes);
      dst += rowBytes;
    }
  }
  return joined;
}

} // namespace accel::rt::engine
