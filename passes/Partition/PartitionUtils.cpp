//===- PartitionUtils.cpp - shared by the tensor-parallel rules -----------===//
#include "PartitionUtils.h"

#include "accel/Weights/Weights.h"

#include "../Fusion/FusionUtils.h"

#include "accel/dialects/Onnx/OnnxOps.h"
#include "accel/dialects/Transformer/TransformerOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <algorithm>
#include <cstring>

using namespace mlir;
using namespace accel;
using namespace accel::partition;

/// Whether `v` is defined by a constant that is already sharded.
static bool sharded(Value v) {
  Operation *def = v ? v.getDefiningOp() : nullptr;
  return def && def->hasAttr(kShardsAttr);
}

ElementsAttr accel::partition::floatConstant(Value v) {
  return sharded(v) ? ElementsAttr() : fusion::getFloatConstant(v);
}

/// floatConstant, or an 8-bit (i8, fp8) or 4-bit (i4, ui4: one value per
/// byte, as plans store them) one: what shardConstant slices.
static ElementsAttr shardableConstant(Value v) {
  if (sharded(v))
    return {};
  return fusion::getConstant(v, [](Type t) {
    return t.isF32() || t.isF16() || t.isBF16() ||
           (t.isIntOrFloat() && (t.getIntOrFloatBitWidth() == 8 ||
                                 (t.isInteger() && t.getIntOrFloatBitWidth() == 4)));
  });
}

/// Bytes per element as constants hold them: 4-bit values take one each.
static size_t storedWidth(Type t) {
  return std::max<size_t>(1, t.getIntOrFloatBitWidth() / 8);
}


using accel::fusion::makeValue;

static Location suffixed(Location loc, StringRef suffix) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return NameLoc::get(StringAttr::get(loc.getContext(), name.getName().str() + suffix.str()),
                        name.getChildLoc());
  return loc;
}

/// A new onnx.Constant of `type` with one value per rank.
static Value createSharded(Context &ctx, Location loc, RankedTensorType type,
                           ArrayRef<Attribute> shards) {
  auto constant = onnx::ConstantOp::create(ctx.rewriter, loc, type,
                                           cast<ElementsAttr>(shards.front()), FloatAttr(),
                                           DenseF32ArrayAttr(), IntegerAttr(),
                                           DenseI64ArrayAttr());
  constant->setAttr(kShardsAttr, ctx.rewriter.getArrayAttr(shards));
  return constant.getResult();
}

FailureOr<Value> accel::partition::shardConstant(Context &ctx, Operation *user, Value weight,
                                                 int64_t axis, const RankRanges &ranges,
                                                 StringRef what) {
  ElementsAttr attr = shardableConstant(weight);
  if (!attr)
    return user->emitError() << "tensor parallelism needs the " << what
                             << " to be a constant (f32, f16, bf16, or 8- or 4-bit quantised) "
                                "that it can slice per rank",
           failure();
  auto type = cast<RankedTensorType>(attr.getType());
  if (axis >= type.getRank() || type.getRank() > 3)
    return user->emitError() << "internal error: cannot shard a rank-" << type.getRank()
                             << " " << what << " along axis " << axis,
           failure();
  for (const SmallVector<Range> &rank : ranges)
    for (Range range : rank)
      if (range.first < 0 || range.first > range.second ||
          (axis != 0 && range.second > type.getDimSize(axis)))
        return user->emitError() << "internal error: a shard of the " << what
                                 << " reaches outside it",
               failure();
  size_t width = storedWidth(type.getElementType());
  // A blob's shards are sliced when the plan writer reads them (lazy
  // weights, accel/Weights/Weights.h); an inline constant's, or a stacked
  // rank-3 one's (transformer.moe's experts), now.
  const bool lazy = isa<DenseResourceElementsAttr>(attr) && weights::streamable(attr) &&
                    type.getRank() <= 2;
  std::optional<SmallVector<char>> bytes =
      lazy ? std::nullopt : fusion::rawBytes(attr, width, type.getNumElements());
  const int64_t rows = type.getDimSize(0);
  const int64_t cols = type.getRank() == 2 ? type.getDimSize(1) : 1;
  // The constant as [outer, along, inner] around `axis` (a stacked [E, rows,
  // cols] weight of transformer.moe is cut along axis 1 or 2 per expert).
  const int64_t along = type.getDimSize(axis);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= type.getDimSize(d);
  for (int64_t d = axis + 1; d < type.getRank(); ++d)
    inner *= type.getDimSize(d);
  const bool blob = isa<DenseResourceElementsAttr>(attr);
  std::string key = blob ? cast<DenseResourceElementsAttr>(attr).getRawHandle().getKey().str()
                         : std::string();

  SmallVector<Attribute> shards;
  RankedTensorType shardType;
  for (size_t r = 0; r < ranges.size(); ++r) {
    int64_t size = 0;
    for (Range range : ranges[r])
      size += range.second - range.first;
    SmallVector<int64_t> shape(type.getShape());
    shape[size_t(axis)] = size;
    auto t = RankedTensorType::get(shape, type.getElementType());
    if (shardType && t != shardType)
      return user->emitError() << "internal error: the shards of the " << what
                               << " differ in shape",
             failure();
    shardType = t;
    if (lazy) {
      std::vector<Range> mine(ranges[r].begin(), ranges[r].end());
      const size_t rowBytes = weights::rowBytes(t);
      weights::RowFn produce = [attr, mine, axis, rows, cols, width, rowBytes](
                                   int64_t b, int64_t e, char *out) {
        std::optional<weights::Rows> src = weights::rowsOf(attr);
        if (axis == 0) {
          // Output row i is the i-th row of the ranges, one after another;
          // rows past the source's last are padding (zeros).
          int64_t at = 0;
          for (Range range : mine) {
            const int64_t n = range.second - range.first;
            const int64_t lo = std::max(b, at), hi = std::min(e, at + n);
            for (int64_t i = lo; i < hi;) {
              const int64_t row = range.first + (i - at);
              char *dst = out + size_t(i - b) * rowBytes;
              if (row >= rows) {
                std::memset(dst, 0, size_t(hi - i) * rowBytes);
                break;
              }
              const int64_t take = std::min(hi - i, rows - row);
              src->produce(row, row + take, dst);
              i += take;
            }
            at += n;
          }
          return;
        }
        // The source's rows [b, e) in one call (a lazy source computes a
        // band of rows at once), then each row's column ranges.
        std::vector<char> rowsIn(size_t(e - b) * size_t(cols) * width);
        src->produce(b, e, rowsIn.data());
        for (int64_t i = b; i < e; ++i) {
          const char *row = rowsIn.data() + size_t(i - b) * size_t(cols) * width;
          char *dst = out + size_t(i - b) * rowBytes;
          for (Range range : mine) {
            const size_t n = size_t(range.second - range.first) * width;
            std::memcpy(dst, row + size_t(range.first) * width, n);
            dst += n;
          }
        }
      };
      shards.push_back(weights::lazy(t, key + ".tp" + std::to_string(r), std::move(produce),
                                     {attr}));
      continue;
    }
    std::optional<SmallVector<char>> out;
    if (bytes) {
      out.emplace();
      for (int64_t o = 0; o < outer; ++o)
        for (Range range : ranges[r]) {
          // Along axis 0, rows past the last are padding: zeros.
          int64_t end = std::min(range.second, along);
          if (range.first < end)
            out->append(bytes->begin() + ((o * along + range.first) * inner) * width,
                        bytes->begin() + ((o * along + end) * inner) * width);
          out->append(size_t(range.second - std::max(range.first, end)) * inner * width, 0);
        }
    }
    shards.push_back(makeValue(ctx.rewriter.getContext(), t, blob,
                               key + ".tp" + std::to_string(r), out));
  }
  return createSharded(ctx, suffixed(weight.getLoc(), ".tp"), shardType, shards);
}

LogicalResult accel::partition::shardLinearWeight(Context &ctx, Operation *op, int64_t axis,
                                                  const RankRanges &ranges, StringRef what) {
  auto linear = cast<transformer::LinearOp>(op);
  auto shard = [&](OpOperand &operand, int64_t ax, const RankRanges &rr,
                   const Twine &name) -> LogicalResult {
    Value old = operand.get();
    ctx.rewriter.setInsertionPoint(linear);
    FailureOr<Value> v = shardConstant(ctx, linear, old, ax, rr, name.str());
    if (failed(v))
      return failure();
    operand.set(*v);
    eraseIfDead(ctx.rewriter, old);
    return success();
  };
  if (failed(shard(linear.getWeightMutable(), axis, ranges, what)))
    return failure();
  // The scale and zero point: [] per tensor, [N] per channel, [N, K / g]
  // per group.
  SmallVector<std::pair<OpOperand *, const char *>> quant;
  if (linear.getWeightScale())
    quant.push_back({&linear.getWeightScaleMutable()[0], " scale"});
  if (linear.getWeightZeroPoint())
    quant.push_back({&linear.getWeightZeroPointMutable()[0], " zero point"});
  for (auto [operand, suffix] : quant) {
    const int64_t rank = cast<RankedTensorType>(operand->get().getType()).getRank();
    const std::string name = (what + suffix).str();
    if (rank == 0 || (rank == 1 && axis == 1))
      continue; // per tensor, or per channel of a row-parallel weight: whole
    if (axis == 0) {
      if (failed(shard(*operand, 0, ranges, name)))
        return failure();
      continue;
    }
    // Per group, row-parallel: the groups of the rank's columns.
    const int64_t g = int64_t(linear.getGroupSize().value_or(0));
    RankRanges groups = ranges;
    for (auto &rr : groups)
      for (Range &r : rr) {
        if (g <= 0 || r.first % g || r.second % g)
          return linear.emitError() << "tensor parallelism cannot split the " << what
                                    << "'s groups of " << g << " input columns across -tp="
                                    << ctx.tp << " ranks: columns [" << r.first << ", "
                                    << r.second << ") of a rank are not whole groups";
        r = {r.first / g, r.second / g};
      }
    if (failed(shard(*operand, 1, groups, name)))
      return failure();
  }
  return success();
}

FailureOr<Value> accel::partition::rankZeroConstant(Context &ctx, Operation *user, Value bias) {
  ElementsAttr attr = floatConstant(bias);
  if (!attr)
    return user->emitError() << "tensor parallelism needs the bias to be a float constant "
                                "(f32, f16 or bf16)",
           failure();
  auto type = cast<RankedTensorType>(attr.getType());
  size_t width = type.getElementType().getIntOrFloatBitWidth() / 8;
  bool blob = isa<DenseResourceElementsAttr>(attr);
  std::string key = blob ? cast<DenseResourceElementsAttr>(attr).getRawHandle().getKey().str()
                         : std::string();
  SmallVector<Attribute> shards{attr};
  std::optional<SmallVector<char>> zeros = SmallVector<char>(width * type.getNumElements(), 0);
  for (int64_t r = 1; r < ctx.tp; ++r)
    shards.push_back(
        makeValue(ctx.rewriter.getContext(), type, blob, key + ".tp" + std::to_string(r), zeros));
  return createSharded(ctx, suffixed(bias.getLoc(), ".tp"), type, shards);
}

int64_t accel::partition::paddedVocab(int64_t tp, int64_t vocab) {
  return (vocab + tp - 1) / tp * tp;
}

RankRanges accel::partition::evenBlocks(int64_t tp, int64_t size, int64_t offset) {
  RankRanges ranges(static_cast<size_t>(tp));
  int64_t block = size / tp;
  for (int64_t r = 0; r < tp; ++r)
    ranges[size_t(r)].push_back({offset + r * block, offset + (r + 1) * block});
  return ranges;
}

RankRanges accel::partition::gateUpRows(int64_t tp, int64_t inter) {
  RankRanges ranges = evenBlocks(tp, inter);
  append(ranges, evenBlocks(tp, inter, inter));
  return ranges;
}

void accel::partition::append(RankRanges &into, const RankRanges &more) {
  if (into.empty())
    into.resize(more.size());
  for (size_t r = 0; r < more.size(); ++r)
    into[r].append(more[r].begin(), more[r].end());
}

void accel::partition::allReduceAfter(Context &ctx, Operation *op) {
  Value partial = op->getResult(0);
  ctx.rewriter.setInsertionPointAfter(op);
  auto reduce = transformer::AllReduceOp::create(
      ctx.rewriter, op->getLoc(), partial.getType(), partial, transformer::ReduceKind::Sum,
      static_cast<uint64_t>(ctx.tp));
  Value sum = reduce.getResult();
  auto linear = dyn_cast<transformer::LinearOp>(op);
  if (transformer::ActivationKindAttr kind = linear ? linear.getActivationAttr() : nullptr) {
    linear.removeActivationAttr();
    sum = transformer::ActivationOp::create(ctx.rewriter, op->getLoc(), sum.getType(), sum, kind);
  }
  partial.replaceAllUsesExcept(sum, reduce);
}

RankedTensorType accel::partition::withDim(Type type, int64_t dim, int64_t size) {
  auto t = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape(t.getShape());
  shape[size_t(dim < 0 ? dim + t.getRank() : dim)] = size;
  return RankedTensorType::get(shape, t.getElementType(), t.getEncoding());
}

void accel::partition::eraseIfDead(RewriterBase &rewriter, Value v) {
  Operation *op = v ? v.getDefiningOp() : nullptr;
  if (op && op->use_empty() && isMemoryEffectFree(op))
    rewriter.eraseOp(op);
}
