//===- AssignBuffers.cpp - accel-exec-assign-buffers ----------------------===//
//
// Liveness over the step order of each schedule, then a best-fit placement
// per arena region (fixed bytes, bytes per token, bytes per sequence), then
// every exec.alloc becomes an exec.slice of @act.
//
//===----------------------------------------------------------------------===//
#include "accel/passes/ExecPasses.h"
#include "accel/passes/Passes.h"

#include "accel/dialects/Exec/ExecOps.h"
#include "accel/dialects/Exec/ExecUtils.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

namespace accel {
#define GEN_PASS_DEF_ASSIGNBUFFERS
#include "passes/Passes.h.inc"
} // namespace accel

using namespace mlir;
namespace ex = accel::exec;

namespace accel::execpasses {

namespace {

struct Buffer {
  ex::AllocOp alloc;
  ex::ArenaRegion region = ex::ArenaRegion::fixed;
  int64_t bytes = 0; // per unit of the region, aligned
  int64_t start = -1, end = -1;
  int64_t offset = 0;
  unsigned order = 0;
};

/// The alloc a view is carved from (through exec.view), or null.
ex::AllocOp rootAlloc(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto alloc = dyn_cast<ex::AllocOp>(def))
      return alloc;
    auto view = dyn_cast<ex::ViewOp>(def);
    if (!view)
      return nullptr;
    v = view.getSource();
  }
  return nullptr;
}

/// Places `buffers` (one region) best-fit, largest first; returns the
/// region's size.
int64_t place(SmallVectorImpl<Buffer *> &buffers) {
  std::stable_sort(buffers.begin(), buffers.end(), [](const Buffer *a, const Buffer *b) {
    if (a->bytes != b->bytes)
      return a->bytes > b->bytes;
    if (a->start != b->start)
      return a->start < b->start;
    return a->order < b->order;
  });
  SmallVector<Buffer *> placed;
  int64_t size = 0;
  for (Buffer *buf : buffers) {
    // The placed buffers whose lifetimes overlap, by offset.
    SmallVector<Buffer *> live;
    for (Buffer *p : placed)
      if (p->start <= buf->end && buf->start <= p->end)
        live.push_back(p);
    llvm::sort(live, [](const Buffer *a, const Buffer *b) { return a->offset < b->offset; });
    // The smallest gap that fits, else above them all.
    int64_t best = -1, bestGap = 0, cursor = 0;
    for (Buffer *p : live) {
      int64_t gap = p->offset - cursor;
      if (gap >= buf->bytes && (best < 0 || gap < bestGap)) {
        best = cursor;
        bestGap = gap;
      }
      cursor = std::max(cursor, p->offset + p->bytes);
    }
    buf->offset = best >= 0 ? best : cursor;
    size = std::max(size, buf->offset + buf->bytes);
    placed.push_back(buf);
  }
  return size;
}

} // namespace

FailureOr<MemoryPlanSummary> assignBuffers(ModuleOp module, int64_t alignment) {
  MemoryPlanSummary summary;
  if (alignment < 1 || !llvm::isPowerOf2_64(alignment))
    return module.emitError() << "accel-exec-assign-buffers needs a power-of-two alignment, got "
                              << alignment;
  SmallVector<ex::ScheduleOp> schedules(module.getOps<ex::ScheduleOp>());
  if (schedules.empty())
    return summary;
  SmallVector<Buffer> buffers;
  for (ex::ScheduleOp schedule : schedules) {
    llvm::DenseMap<Operation *, size_t> index;
    Block &body = schedule.getBody().front();
    int64_t position = 0, last = 0;
    for (Operation &op : body) {
      if (auto alloc = dyn_cast<ex::AllocOp>(op)) {
        Buffer b;
        b.alloc = alloc;
        b.order = unsigned(buffers.size());
        auto type = cast<ex::ViewType>(alloc.getType());
        std::optional<int64_t> bytes = ex::getBytesPerUnit(type);
        if (!bytes)
          return alloc.emitError() << "is a buffer of type " << type
                                   << " with more than one dynamic dimension; no arena region "
                                      "holds it";
        b.bytes = llvm::alignTo(std::max<int64_t>(*bytes, 1), alignment);
        if (type.getNumDynamicDims() == 1)
          b.region = alloc.getSizes()[0].getDefiningOp<ex::StepSizeOp>().getKind() ==
                             ex::StepSizeKind::tokens
                         ? ex::ArenaRegion::tokens
                         : ex::ArenaRegion::seqs;
        index[alloc] = buffers.size();
        buffers.push_back(b);
      }
      ++position;
    }
    last = position;
    // Liveness: every step that reads or writes a view of the buffer.
    position = 0;
    auto touch = [&](Value v, int64_t at) {
      if (ex::AllocOp root = rootAlloc(v)) {
        Buffer &b = buffers[index[root]];
        b.start = b.start < 0 ? at : std::min(b.start, at);
        b.end = std::max(b.end, at);
      }
    };
    for (Operation &op : body) {
      if (ex::isStep(&op))
        for (Value v : op.getOperands())
          touch(v, position);
      if (auto out = dyn_cast<ex::StepOutputOp>(op))
        touch(out.getView(), last);
      ++position;
    }
    for (auto &[op, i] : index)
      if (buffers[i].start < 0) {
        // Written by nothing, read by nothing: a point at its declaration.
        int64_t at = 0;
        for (Operation &o : body) {
          if (&o == op)
            break;
          ++at;
        }
        buffers[i].start = buffers[i].end = at;
      }
  }

  // Place each region; schedules share the arena (they never run at once).
  SmallVector<Buffer *> fixed, tokens, seqs;
  for (Buffer &b : buffers) {
    (b.region == ex::ArenaRegion::fixed    ? fixed
     : b.region == ex::ArenaRegion::tokens ? tokens
                                           : seqs)
        .push_back(&b);
    (b.region == ex::ArenaRegion::fixed    ? summary.naiveFixed
     : b.region == ex::ArenaRegion::tokens ? summary.naivePerToken
                                           : summary.naivePerSeq) += b.bytes;
  }
  summary.fixed = place(fixed);
  summary.perToken = place(tokens);
  summary.perSeq = place(seqs);
  summary.buffers = int64_t(buffers.size());

  // The arena (replacing one a previous run declared) and the slices.
  OpBuilder b(module.getContext());
  for (auto old : llvm::make_early_inc_range(module.getOps<ex::ArenaOp>()))
    if (old.getKind() == ex::ArenaKind::activations)
      old.erase();
  b.setInsertionPoint(schedules.front());
  ex::ArenaOp::create(b, module.getLoc(), "act", ex::ArenaKind::activations, summary.fixed,
                      summary.perToken, summary.perSeq, alignment, StringAttr());
  for (Buffer &buf : buffers) {
    b.setInsertionPoint(buf.alloc);
    auto slice = ex::SliceOp::create(b, buf.alloc.getLoc(), buf.alloc.getType(), "act",
                                     buf.region, buf.offset, buf.alloc.getSizes(), IntegerAttr());
    buf.alloc.getResult().replaceAllUsesWith(slice.getResult());
    buf.alloc.erase();
  }
  return summary;
}

} // namespace accel::execpasses

namespace {

struct AssignBuffersPass : accel::impl::AssignBuffersBase<AssignBuffersPass> {
  using AssignBuffersBase::AssignBuffersBase;
  void runOnOperation() override {
    if (failed(accel::execpasses::assignBuffers(getOperation(), alignment)))
      signalPassFailure();
  }
};

} // namespace
