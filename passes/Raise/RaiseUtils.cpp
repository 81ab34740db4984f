//===- RaiseUtils.cpp - helpers shared by the raising patterns ------------===//
#include "RaiseUtils.h"

#include "accel/Weights/Weights.h"

#include "accel/dialects/Onnx/OnnxDialect.h"
#include "accel/dialects/Onnx/OnnxOps.h"
#include "accel/dialects/Transformer/TransformerOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cmath>
#include <cstring>

using namespace mlir;
using namespace accel;

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

ElementsAttr accel::raise::getConstant(Value v) {
  if (!v)
    return {};
  if (auto c = v.getDefiningOp<onnx::ConstantOp>()) {
    if (ElementsAttr value = c.getValueAttr())
      return value;
    auto type = dyn_cast<RankedTensorType>(c.getType());
    if (!type)
      return {};
    if (auto f = c.getValueFloatAttr())
      return DenseElementsAttr::get(type, ArrayRef<Attribute>(f));
    if (auto i = c.getValueIntAttr())
      return DenseElementsAttr::get(type, ArrayRef<Attribute>(i));
    if (auto fs = c.getValueFloatsAttr())
      return DenseElementsAttr::get(type, fs.asArrayRef());
    if (auto is = c.getValueIntsAttr())
      return DenseElementsAttr::get(type, is.asArrayRef());
    return {};
  }
  if (auto c = v.getDefiningOp<arith::ConstantOp>())
    return dyn_cast<ElementsAttr>(c.getValue());
  return {};
}

std::optional<double> accel::raise::getScalarConstant(Value v) {
  auto dense = dyn_cast_or_null<DenseElementsAttr>(getConstant(v));
  if (!dense || dense.getNumElements() != 1)
    return std::nullopt;
  Type t = dense.getElementType();
  if (isa<FloatType>(t))
    return (*dense.getValues<APFloat>().begin()).convertToDouble();
  if (auto i = dyn_cast<IntegerType>(t))
    return i.isUnsigned() ? double((*dense.getValues<APInt>().begin()).getZExtValue())
                          : double((*dense.getValues<APInt>().begin()).getSExtValue());
  return std::nullopt;
}

bool accel::raise::approxEqual(double a, double b, double relTol) {
  double scale = std::max(std::fabs(a), std::fabs(b));
  return std::fabs(a - b) <= relTol * scale;
}

bool accel::raise::isScalarConstant(Value v, double expected, double relTol) {
  std::optional<double> c = getScalarConstant(v);
  return c && approxEqual(*c, expected, relTol);
}

bool accel::raise::isFloatElement(Type type) {
  return type.isF32() || type.isF16() || type.isBF16();
}

bool accel::raise::isFloatTensor(Type type) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  return ranked && isFloatElement(ranked.getElementType());
}

/// The byte width of an element type, if it is a whole number of bytes.
static std::optional<size_t> byteWidth(Type type) {
  if (!type.isIntOrFloat())
    return std::nullopt;
  unsigned bits = type.getIntOrFloatBitWidth();
  if (bits == 0 || bits % 8 != 0)
    return std::nullopt;
  return bits / 8;
}

std::optional<ArrayRef<char>> accel::raise::getRawData(ElementsAttr attr) {
  auto type = cast<ShapedType>(attr.getType());
  std::optional<size_t> width = byteWidth(type.getElementType());
  if (!width || !type.hasStaticShape())
    return std::nullopt;
  size_t bytes = *width * type.getNumElements();
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    if (dense.isSplat() || dense.getRawData().size() != bytes)
      return std::nullopt;
    return dense.getRawData();
  }
  if (isa<DenseResourceElementsAttr>(attr)) {
    // A blob's bytes, or a lazy weight's computed (accel/Weights/Weights.h).
    std::optional<ArrayRef<char>> data = weights::bytes(attr);
    if (!data || data->size() != bytes)
      return std::nullopt;
    return data;
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Weights
//===----------------------------------------------------------------------===//

/// A 2-D float constant, or null.
static ElementsAttr getFloatMatrix(Value v) {
  ElementsAttr attr = raise::getConstant(v);
  if (!attr)
    return {};
  auto type = dyn_cast<RankedTensorType>(attr.getType());
  if (!type || type.getRank() != 2 || !type.hasStaticShape() ||
      !raise::isFloatElement(type.getElementType()))
    return {};
  return attr;
}

FailureOr<Value> accel::raise::getConstantMatrix(Value weight) {
  if (!getFloatMatrix(weight))
    return failure();
  return weight;
}

/// `src` ([rows, cols] of `width`-byte elements) transposed into `dst`.
static void transposeBytes(ArrayRef<char> src, MutableArrayRef<char> dst,
                           int64_t rows, int64_t cols, size_t width) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      std::memcpy(dst.data() + (c * rows + r) * width,
                  src.data() + (r * cols + c) * width, width);
}

/// An existing onnx.Constant in `block` holding the dense_resource `key`
/// with `type`.
static Value findResourceConstant(Block *block, StringRef key, Type type) {
  for (auto c : block->getOps<onnx::ConstantOp>()) {
    auto resource =
        dyn_cast_or_null<DenseResourceElementsAttr>(c.getValueAttr());
    if (resource && c.getType() == type &&
        resource.getRawHandle().getKey() == key)
      return c.getResult();
  }
  return {};
}

FailureOr<Value> accel::raise::getTorchLayoutWeight(RewriterBase &rewriter,
                                                    Value weight) {
  // Transpose(%c) {perm = [1, 0]} of a [out, in] constant: %c itself.
  if (auto transpose = weight.getDefiningOp<onnx::TransposeOp>()) {
    std::optional<ArrayRef<int64_t>> perm = transpose.getPerm();
    bool swaps = !perm || (perm->size() == 2 && (*perm)[0] == 1 &&
                           (*perm)[1] == 0);
    if (swaps && getFloatMatrix(transpose.getData()))
      return transpose.getData();
    return failure();
  }
  ElementsAttr attr = getFloatMatrix(weight);
  auto constant = weight.getDefiningOp<onnx::ConstantOp>();
  if (!attr || !constant)
    return failure();
  auto type = cast<RankedTensorType>(attr.getType());
  int64_t in = type.getDimSize(0), out = type.getDimSize(1);
  auto newType = RankedTensorType::get({out, in}, type.getElementType());
  size_t width = *byteWidth(type.getElementType());

  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointAfter(constant);
  Location loc = constant.getLoc();
  if (auto name = dyn_cast<NameLoc>(loc))
    loc = NameLoc::get(rewriter.getStringAttr(name.getName().str() + ".T"),
                       name.getChildLoc());

  ElementsAttr transposed;
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    if (dense.isSplat()) {
      transposed = dense.resizeSplat(newType);
    } else {
      ArrayRef<char> src = dense.getRawData();
      SmallVector<char> dst(src.size());
      transposeBytes(src, dst, in, out, width);
      transposed = DenseElementsAttr::getFromRawBuffer(newType, dst);
    }
  } else if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
    std::string key = resource.getRawHandle().getKey().str() + ".T";
    if (Value existing =
            findResourceConstant(constant->getBlock(), key, newType))
      return existing;
    if (weights::streamable(attr)) {
      // Transposed when the plan writer reads it, a band of rows at a time.
      transposed = weights::transpose(attr, newType, key);
    } else if (std::optional<ArrayRef<char>> src = getRawData(attr)) {
      AsmResourceBlob blob = HeapAsmResourceBlob::allocate(
          src->size(), std::max<size_t>(width, 64), /*dataIsMutable=*/true);
      transposeBytes(*src, blob.getMutableData(), in, out, width);
      transposed = DenseResourceElementsAttr::get(newType, key, std::move(blob));
    } else {
      // The blob is elided (printed IR without weights): the transposed
      // weight is an elided blob as well.
      auto &manager =
          DenseResourceElementsHandle::getManagerInterface(rewriter.getContext());
      transposed =
          DenseResourceElementsAttr::get(newType, manager.insert(key));
    }
  } else {
    return failure();
  }
  auto result = onnx::ConstantOp::create(
      rewriter, loc, newType, transposed, FloatAttr(), DenseF32ArrayAttr(),
      IntegerAttr(), DenseI64ArrayAttr());
  return result.getResult();
}

FailureOr<Value> accel::raise::permuteRows(RewriterBase &rewriter, Value value,
                                           ArrayRef<int64_t> order, StringRef suffix) {
  ElementsAttr attr = getConstant(value);
  auto constant = value.getDefiningOp<onnx::ConstantOp>();
  if (!attr || !constant)
    return failure();
  auto type = dyn_cast<RankedTensorType>(attr.getType());
  if (!type || (type.getRank() != 1 && type.getRank() != 2) || !type.hasStaticShape() ||
      !isFloatElement(type.getElementType()) || type.getDimSize(0) != int64_t(order.size()))
    return failure();
  SmallVector<bool> seen(order.size(), false);
  for (int64_t i : order) {
    if (i < 0 || i >= int64_t(order.size()) || seen[size_t(i)])
      return failure();
    seen[size_t(i)] = true;
  }
  const size_t rowBytes =
      *byteWidth(type.getElementType()) * size_t(type.getRank() == 2 ? type.getDimSize(1) : 1);
  auto permute = [&](ArrayRef<char> src, MutableArrayRef<char> dst) {
    for (auto [i, from] : llvm::enumerate(order))
      std::memcpy(dst.data() + i * rowBytes, src.data() + size_t(from) * rowBytes, rowBytes);
  };

  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointAfter(constant);
  Location loc = constant.getLoc();
  if (auto name = dyn_cast<NameLoc>(loc))
    loc = NameLoc::get(rewriter.getStringAttr(name.getName().str() + suffix.str()),
                       name.getChildLoc());
  ElementsAttr permuted;
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    if (dense.isSplat())
      return value; // every row is the same
    ArrayRef<char> src = dense.getRawData();
    SmallVector<char> dst(src.size());
    permute(src, dst);
    permuted = DenseElementsAttr::getFromRawBuffer(type, dst);
  } else if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
    std::string key = resource.getRawHandle().getKey().str() + suffix.str();
    if (Value existing = findResourceConstant(constant->getBlock(), key, type))
      return existing;
    if (weights::streamable(attr)) {
      // Rows read from the source when the plan writer reads them.
      std::vector<int64_t> rows(order.begin(), order.end());
      weights::RowFn produce = [attr, rows, rowBytes](int64_t b, int64_t e, char *out) {
        // The span of source rows these come from, in one call (a lazy
        // source computes a band at once), then each row picked.
        int64_t lo = rows[size_t(b)], hi = lo;
        for (int64_t i = b; i < e; ++i) {
          lo = std::min(lo, rows[size_t(i)]);
          hi = std::max(hi, rows[size_t(i)]);
        }
        std::vector<char> span(size_t(hi + 1 - lo) * rowBytes);
        weights::rowsOf(attr)->produce(lo, hi + 1, span.data());
        for (int64_t i = b; i < e; ++i)
          std::memcpy(out + size_t(i - b) * rowBytes,
                      span.data() + size_t(rows[size_t(i)] - lo) * rowBytes, rowBytes);
      };
      permuted = weights::lazy(type, key, std::move(produce), {attr});
    } else if (std::optional<ArrayRef<char>> src = getRawData(attr)) {
      AsmResourceBlob blob = HeapAsmResourceBlob::allocate(
          src->size(), std::max<size_t>(*byteWidth(type.getElementType()), 64),
          /*dataIsMutable=*/true);
      permute(*src, blob.getMutableData());
      permuted = DenseResourceElementsAttr::get(type, key, std::move(blob));
    } else {
      // An elided blob (IR printed without weights): so is the result.
      auto &manager = DenseResourceElementsHandle::getManagerInterface(rewriter.getContext());
      permuted = DenseResourceElementsAttr::get(type, manager.insert(key));
    }
  } else {
    return failure();
  }
  return onnx::ConstantOp::create(rewriter, loc, type, permuted, FloatAttr(),
                                  DenseF32ArrayAttr(), IntegerAttr(), DenseI64ArrayAttr())
      .getResult();
}

bool accel::raise::isTransposeOf(Value weight, Value table) {
  ElementsAttr w = getFloatMatrix(weight), t = getFloatMatrix(table);
  if (!w || !t)
    return false;
  auto wType = cast<RankedTensorType>(w.getType());
  auto tType = cast<RankedTensorType>(t.getType());
  if (wType.getElementType() != tType.getElementType() ||
      wType.getDimSize(0) != tType.getDimSize(1) ||
      wType.getDimSize(1) != tType.getDimSize(0))
    return false;
  std::optional<ArrayRef<char>> wData = getRawData(w), tData = getRawData(t);
  if (!wData || !tData)
    return false;
  int64_t rows = wType.getDimSize(0), cols = wType.getDimSize(1);
  size_t width = *byteWidth(wType.getElementType());
  bool same = true;
  for (int64_t r = 0; r < rows && same; ++r)
    for (int64_t c = 0; c < cols; ++c)
      if (std::memcmp(wData->data() + (r * cols + c) * width,
                      tData->data() + (c * rows + r) * width, width) != 0) {
        same = false;
        break;
      }
  // The pages read need not stay resident.
  weights::dropSourcePages(w);
  weights::dropSourcePages(t);
  return same;
}

//===----------------------------------------------------------------------===//
// Token-major views
//===----------------------------------------------------------------------===//

/// An existing `flatten_tokens %x` of type `type` that dominates the
/// builder's insertion point (same block, earlier), so that raising several
/// ops that read one batch-major value flattens it once.
static Value findFlatten(OpBuilder &b, Value x, Type type) {
  Block *block = b.getInsertionBlock();
  if (!block)
    return {};
  Block::iterator point = b.getInsertionPoint();
  for (Operation *user : x.getUsers()) {
    auto flatten = dyn_cast<transformer::FlattenTokensOp>(user);
    if (!flatten || flatten.getType() != type || flatten->getBlock() != block)
      continue;
    if (point == block->end() || flatten->isBeforeInBlock(&*point))
      return flatten.getResult();
  }
  return {};
}

Value accel::raise::flattenTokens(OpBuilder &b, Location loc, Value x) {
  auto type = cast<RankedTensorType>(x.getType());
  if (type.getRank() == 2)
    return x;
  int64_t tokens = 1;
  for (int64_t d : type.getShape().drop_back())
    tokens = ShapedType::isDynamic(d) || ShapedType::isDynamic(tokens)
                 ? ShapedType::kDynamic
                 : tokens * d;
  auto flat = RankedTensorType::get({tokens, type.getShape().back()},
                                    type.getElementType());
  if (Value existing = findFlatten(b, x, flat))
    return existing;
  return transformer::FlattenTokensOp::create(b, loc, flat, x);
}

Value accel::raise::flattenIds(OpBuilder &b, Location loc, Value ids) {
  auto type = cast<RankedTensorType>(ids.getType());
  if (type.getRank() == 1)
    return ids;
  int64_t tokens = 1;
  for (int64_t d : type.getShape())
    tokens = ShapedType::isDynamic(d) || ShapedType::isDynamic(tokens)
                 ? ShapedType::kDynamic
                 : tokens * d;
  auto flat = RankedTensorType::get({tokens}, type.getElementType());
  if (Value existing = findFlatten(b, ids, flat))
    return existing;
  return transformer::FlattenTokensOp::create(b, loc, flat, ids);
}

Value accel::raise::unflattenTokens(OpBuilder &b, Location loc, Value r,
                                    Value like, Type resultType) {
  if (r.getType() == resultType)
    return r;
  return transformer::UnflattenTokensOp::create(b, loc, resultType, r, like);
}

Value accel::raise::peelUnflatten(Value v, Value *like) {
  if (auto unflatten = v.getDefiningOp<transformer::UnflattenTokensOp>()) {
    auto input = cast<RankedTensorType>(unflatten.getInput().getType());
    if (input.getRank() != 2)
      return {};
    if (like)
      *like = unflatten.getLike();
    return unflatten.getInput();
  }
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || type.getRank() != 2)
    return {};
  if (like)
    *like = v;
  return v;
}

Value accel::raise::getTokenOrigin(Value r) {
  for (int step = 0; step < 64 && r; ++step) {
    Operation *op = r.getDefiningOp();
    if (!op)
      return {};
    if (auto flatten = dyn_cast<transformer::FlattenTokensOp>(op)) {
      if (cast<RankedTensorType>(flatten.getType()).getRank() != 2)
        return {};
      return flatten.getInput();
    }
    // Token-wise ops keep the token dimension of their first operand.
    if (isa<transformer::LinearOp, transformer::ActivationOp,
            transformer::RmsNormOp, transformer::LayerNormOp,
            transformer::GatedMlpOp, transformer::ResidualAddOp>(op)) {
      r = op->getOperand(0);
      continue;
    }
    if (auto logits = dyn_cast<transformer::LogitsOp>(op)) {
      if (logits.getBatch())
        return {};
      r = logits.getHidden();
      continue;
    }
    return {};
  }
  return {};
}

//===----------------------------------------------------------------------===//
// Symbolic dimensions
//===----------------------------------------------------------------------===//

std::optional<int64_t> accel::raise::normalizeAxis(int64_t axis,
                                                   int64_t rank) {
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return std::nullopt;
  return axis;
}

/// The `onnx.dim_params` name of dimension `dim` of function argument `arg`.
static StringRef dimParamName(BlockArgument arg, int64_t dim) {
  auto func = dyn_cast_or_null<FunctionOpInterface>(
      arg.getOwner()->getParentOp());
  if (!func || arg.getOwner() != &func.getFunctionBody().front())
    return {};
  auto names = func.getArgAttrOfType<ArrayAttr>(
      arg.getArgNumber(), onnx::OnnxDialect::kDimParamsAttrName);
  if (!names || dim >= static_cast<int64_t>(names.size()))
    return {};
  auto name = dyn_cast<StringAttr>(names[dim]);
  return name ? name.getValue() : StringRef();
}

bool accel::raise::sameDim(const std::optional<DimSource> &a,
                           const std::optional<DimSource> &b) {
  if (!a || !b)
    return false;
  if (a->isStatic() || b->isStatic())
    return a->isStatic() && b->isStatic() && a->size == b->size;
  if (a->value == b->value && a->dim == b->dim)
    return true;
  auto argA = dyn_cast<BlockArgument>(a->value);
  auto argB = dyn_cast<BlockArgument>(b->value);
  if (!argA || !argB)
    return false;
  StringRef nameA = dimParamName(argA, a->dim);
  return !nameA.empty() && nameA == dimParamName(argB, b->dim);
}

static std::optional<raise::DimSource> traceDimImpl(Value v, int64_t d,
                                                    int depth);

/// Dimension `d` of the broadcast result of `operands`: the agreed source of
/// the operands whose aligned dimension is not statically 1.
static std::optional<raise::DimSource>
traceBroadcast(ValueRange operands, int64_t resultRank, int64_t d, int depth) {
  std::optional<raise::DimSource> found;
  for (Value operand : operands) {
    auto type = dyn_cast<RankedTensorType>(operand.getType());
    if (!type)
      return std::nullopt;
    int64_t aligned = d - (resultRank - type.getRank());
    if (aligned < 0 || type.getDimSize(aligned) == 1)
      continue;
    std::optional<raise::DimSource> source =
        traceDimImpl(operand, aligned, depth + 1);
    if (!source)
      continue;
    if (found && !raise::sameDim(found, source))
      return std::nullopt;
    if (!found)
      found = source;
  }
  return found;
}

/// The dims of `Reshape(data, shape)`: dim `d` from the shape pieces, a -1
/// resolved when every other dim provably equals the data's.
static std::optional<raise::DimSource> traceReshape(onnx::ReshapeOp reshape,
                                                    int64_t d, int depth) {
  std::optional<SmallVector<raise::ShapePiece>> pieces =
      raise::getShapePieces(reshape.getShape());
  if (!pieces || d >= static_cast<int64_t>(pieces->size()))
    return std::nullopt;
  const raise::ShapePiece &piece = (*pieces)[d];
  bool allowZero = reshape.getAllowzeroAttr().getInt() != 0;
  if (piece.source)
    return piece.source;
  if (!piece.constant)
    return std::nullopt;
  if (*piece.constant > 0)
    return raise::DimSource{*piece.constant, Value(), -1};
  if (*piece.constant == 0 && !allowZero)
    return traceDimImpl(reshape.getData(), d, depth + 1);
  if (*piece.constant != -1)
    return std::nullopt;
  auto dataType = dyn_cast<RankedTensorType>(reshape.getData().getType());
  if (!dataType || dataType.getRank() != static_cast<int64_t>(pieces->size()))
    return std::nullopt;
  for (auto [i, other] : llvm::enumerate(*pieces)) {
    if (static_cast<int64_t>(i) == d)
      continue;
    std::optional<raise::DimSource> dataDim =
        traceDimImpl(reshape.getData(), i, depth + 1);
    std::optional<raise::DimSource> otherDim = other.source;
    if (!otherDim && other.constant && *other.constant > 0)
      otherDim = raise::DimSource{*other.constant, Value(), -1};
    if (!otherDim && other.constant && *other.constant == 0 && !allowZero)
      continue;
    if (!raise::sameDim(dataDim, otherDim))
      return std::nullopt;
  }
  return traceDimImpl(reshape.getData(), d, depth + 1);
}

static std::optional<raise::DimSource> traceDimImpl(Value v, int64_t d,
                                                    int depth) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || d < 0 || d >= type.getRank() || depth > 64)
    return std::nullopt;
  if (!type.isDynamicDim(d))
    return raise::DimSource{type.getDimSize(d), Value(), -1};
  raise::DimSource self{ShapedType::kDynamic, v, d};
  Operation *op = v.getDefiningOp();
  if (!op)
    return self;
  int64_t rank = type.getRank();

  // Elementwise: unary ops and broadcasting binary ops.
  if (isa<onnx::SqrtOp, onnx::ReciprocalOp, onnx::NegOp, onnx::TanhOp,
          onnx::SigmoidOp, onnx::ErfOp, onnx::ReluOp, onnx::AbsOp, onnx::ExpOp,
          onnx::LogOp, onnx::IdentityOp, onnx::CastOp, onnx::GeluOp,
          onnx::SoftmaxOp, onnx::LayerNormalizationOp,
          onnx::RMSNormalizationOp, onnx::MsSimplifiedLayerNormalizationOp,
          onnx::MsSkipLayerNormalizationOp,
          onnx::MsSkipSimplifiedLayerNormalizationOp>(op))
    return traceDimImpl(op->getOperand(0), d, depth + 1);
  if (isa<onnx::AddOp, onnx::SubOp, onnx::MulOp, onnx::DivOp, onnx::PowOp,
          onnx::WhereOp>(op))
    return traceBroadcast(op->getOperands(), rank, d, depth);
  if (auto matmul = dyn_cast<onnx::MatMulOp>(op)) {
    auto a = dyn_cast<RankedTensorType>(matmul.getA().getType());
    auto b = dyn_cast<RankedTensorType>(matmul.getB().getType());
    if (!a || !b || a.getRank() < 2 || b.getRank() < 2)
      return self;
    if (d == rank - 1)
      return traceDimImpl(matmul.getB(), b.getRank() - 1, depth + 1);
    if (d == rank - 2)
      return traceDimImpl(matmul.getA(), a.getRank() - 2, depth + 1);
    // Batch dims broadcast; the matrix dims are not part of it.
    std::optional<raise::DimSource> found;
    for (auto [operand, opType] :
         {std::pair{matmul.getA(), a}, std::pair{matmul.getB(), b}}) {
      int64_t aligned = d - (rank - opType.getRank());
      if (aligned < 0 || opType.getDimSize(aligned) == 1)
        continue;
      std::optional<raise::DimSource> s =
          traceDimImpl(operand, aligned, depth + 1);
      if (!s)
        continue;
      if (found && !raise::sameDim(found, s))
        return self;
      found = s;
    }
    return found ? found : self;
  }
  if (auto gather = dyn_cast<onnx::GatherOp>(op)) {
    auto data = dyn_cast<RankedTensorType>(gather.getData().getType());
    auto indices = dyn_cast<RankedTensorType>(gather.getIndices().getType());
    if (!data || !indices)
      return self;
    std::optional<int64_t> axis =
        raise::normalizeAxis(gather.getAxisAttr().getInt(), data.getRank());
    if (!axis)
      return self;
    if (d < *axis)
      return traceDimImpl(gather.getData(), d, depth + 1);
    if (d < *axis + indices.getRank())
      return traceDimImpl(gather.getIndices(), d - *axis, depth + 1);
    return traceDimImpl(gather.getData(), d - indices.getRank() + 1,
                        depth + 1);
  }
  if (auto transpose = dyn_cast<onnx::TransposeOp>(op)) {
    std::optional<ArrayRef<int64_t>> perm = transpose.getPerm();
    int64_t source = perm ? (d < static_cast<int64_t>(perm->size())
                                 ? (*perm)[d]
                                 : -1)
                          : rank - 1 - d;
    if (source < 0)
      return self;
    return traceDimImpl(transpose.getData(), source, depth + 1);
  }
  if (auto unsqueeze = dyn_cast<onnx::UnsqueezeOp>(op)) {
    SmallVector<int64_t> axes;
    if (std::optional<ArrayRef<int64_t>> attr = unsqueeze.getAxes()) {
      axes.assign(attr->begin(), attr->end());
    } else if (auto c = dyn_cast_or_null<DenseIntElementsAttr>(
                   raise::getConstant(unsqueeze.getAxesInput()))) {
      for (const APInt &a : c.getValues<APInt>())
        axes.push_back(a.getSExtValue());
    } else {
      return self;
    }
    int64_t source = d;
    for (int64_t &a : axes) {
      std::optional<int64_t> n = raise::normalizeAxis(a, rank);
      if (!n || *n == d)
        return self;
      a = *n;
    }
    for (int64_t a : axes)
      if (a < d)
        --source;
    return traceDimImpl(unsqueeze.getData(), source, depth + 1);
  }
  if (auto reshape = dyn_cast<onnx::ReshapeOp>(op)) {
    std::optional<raise::DimSource> s = traceReshape(reshape, d, depth);
    return s ? s : self;
  }
  // Range(0, n, 1) has n elements: positions `arange(S)` with S a dim
  // read by Shape (and Squeezed to a scalar).
  if (auto range = dyn_cast<onnx::RangeOp>(op)) {
    Value limit = range.getLimit();
    if (auto squeeze = limit.getDefiningOp<onnx::SqueezeOp>())
      limit = squeeze.getData();
    std::optional<SmallVector<raise::ShapePiece>> pieces =
        raise::getShapePieces(limit);
    if (raise::isScalarConstant(range.getStart(), 0.0) &&
        raise::isScalarConstant(range.getDelta(), 1.0) && pieces &&
        pieces->size() == 1 && (*pieces)[0].source)
      return (*pieces)[0].source;
    return self;
  }
  if (auto unflatten = dyn_cast<transformer::UnflattenTokensOp>(op)) {
    if (d < unflatten.getNumTokenDims())
      return traceDimImpl(unflatten.getLike(), d, depth + 1);
    return self;
  }
  return self;
}

std::optional<raise::DimSource> accel::raise::traceDim(Value v, int64_t d) {
  return traceDimImpl(v, d, 0);
}

std::optional<SmallVector<raise::ShapePiece>>
accel::raise::getShapePieces(Value shape) {
  auto type = dyn_cast<RankedTensorType>(shape.getType());
  if (!type || type.getRank() != 1 || !type.getElementType().isInteger(64))
    return std::nullopt;
  SmallVector<ShapePiece> pieces;
  if (auto c = dyn_cast_or_null<DenseIntElementsAttr>(getConstant(shape))) {
    for (const APInt &v : c.getValues<APInt>())
      pieces.push_back(ShapePiece{v.getSExtValue(), std::nullopt});
    return pieces;
  }
  Operation *op = shape.getDefiningOp();
  if (auto concat = dyn_cast_or_null<onnx::ConcatOp>(op)) {
    for (Value input : concat.getInputs()) {
      std::optional<SmallVector<ShapePiece>> part = getShapePieces(input);
      if (!part)
        return std::nullopt;
      pieces.append(part->begin(), part->end());
    }
    return pieces;
  }
  if (auto shapeOp = dyn_cast_or_null<onnx::ShapeOp>(op)) {
    auto data = dyn_cast<RankedTensorType>(shapeOp.getData().getType());
    if (!data)
      return std::nullopt;
    int64_t rank = data.getRank();
    auto clamp = [&](int64_t i) {
      if (i < 0)
        i += rank;
      return std::clamp<int64_t>(i, 0, rank);
    };
    int64_t start = clamp(shapeOp.getStartAttr().getInt());
    int64_t end = shapeOp.getEndAttr() ? clamp(shapeOp.getEndAttr().getInt())
                                       : rank;
    for (int64_t i = start; i < end; ++i)
      pieces.push_back(ShapePiece{std::nullopt, traceDim(shapeOp.getData(), i)});
    return pieces;
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Small matchers
//===----------------------------------------------------------------------===//

bool accel::raise::isLastAxisMean(Operation *op) {
  auto mean = dyn_cast_or_null<onnx::ReduceMeanOp>(op);
  if (!mean || mean.getKeepdimsAttr().getInt() != 1)
    return false;
  auto type = dyn_cast<RankedTensorType>(mean.getData().getType());
  if (!type || type.getRank() == 0)
    return false;
  SmallVector<int64_t> axes;
  if (std::optional<ArrayRef<int64_t>> attr = mean.getAxes()) {
    axes.assign(attr->begin(), attr->end());
  } else if (Value input = mean.getAxesInput()) {
    auto c = dyn_cast_or_null<DenseIntElementsAttr>(getConstant(input));
    if (!c)
      return false;
    for (const APInt &a : c.getValues<APInt>())
      axes.push_back(a.getSExtValue());
  } else {
    // No axes: every axis, which is the last one only for rank 1.
    return type.getRank() == 1;
  }
  return axes.size() == 1 &&
         normalizeAxis(axes[0], type.getRank()) == type.getRank() - 1;
}

Value accel::raise::stripFloatCast(Value v) {
  if (auto cast = v.getDefiningOp<onnx::CastOp>())
    if (isFloatTensor(cast.getInput().getType()))
      return cast.getInput();
  return v;
}

bool accel::raise::matchSquare(Value v, Value &x) {
  if (auto pow = v.getDefiningOp<onnx::PowOp>()) {
    if (!isScalarConstant(pow.getY(), 2.0))
      return false;
    x = pow.getX();
    return true;
  }
  if (auto mul = v.getDefiningOp<onnx::MulOp>()) {
    if (mul.getA() != mul.getB())
      return false;
    x = mul.getA();
    return true;
  }
  return false;
}

bool accel::raise::matchRsqrt(Value v, Value &s) {
  if (auto reciprocal = v.getDefiningOp<onnx::ReciprocalOp>()) {
    auto sqrt = reciprocal.getX().getDefiningOp<onnx::SqrtOp>();
    if (!sqrt)
      return false;
    s = sqrt.getX();
    return true;
  }
  if (auto pow = v.getDefiningOp<onnx::PowOp>()) {
    if (!isScalarConstant(pow.getY(), -0.5))
      return false;
    s = pow.getX();
    return true;
  }
  if (auto div = v.getDefiningOp<onnx::DivOp>()) {
    auto sqrt = div.getB().getDefiningOp<onnx::SqrtOp>();
    if (!sqrt || !isScalarConstant(div.getA(), 1.0))
      return false;
    s = sqrt.getX();
    return true;
  }
  return false;
}

bool accel::raise::matchMeanPlusEps(Value v, Value &meanInput, double &eps) {
  auto add = v.getDefiningOp<onnx::AddOp>();
  if (!add)
    return false;
  for (auto [m, e] : {std::pair{add.getA(), add.getB()},
                      std::pair{add.getB(), add.getA()}}) {
    std::optional<double> c = getScalarConstant(e);
    Operation *mean = m.getDefiningOp();
    if (!c || !(*c > 0.0) || !isLastAxisMean(mean))
      continue;
    meanInput = cast<onnx::ReduceMeanOp>(mean).getData();
    eps = *c;
    return true;
  }
  return false;
}

SmallVector<Value> accel::raise::findEmbeddingTables(Operation *scope) {
  SmallVector<Value> tables;
  auto add = [&](Value table) {
    auto type = dyn_cast<RankedTensorType>(table.getType());
    if (type && type.getRank() == 2 && getConstant(table) &&
        !llvm::is_contained(tables, table))
      tables.push_back(table);
  };
  scope->walk([&](Operation *op) {
    if (auto embedding = dyn_cast<transformer::EmbeddingOp>(op))
      add(embedding.getTable());
    if (auto gather = dyn_cast<onnx::GatherOp>(op)) {
      auto indices = dyn_cast<RankedTensorType>(gather.getIndices().getType());
      if (gather.getAxisAttr().getInt() == 0 && indices &&
          isa<IntegerType>(indices.getElementType()) &&
          isFloatTensor(gather.getData().getType()))
        add(gather.getData());
    }
  });
  return tables;
}

bool accel::raise::isTokenFlattenReshape(Operation *op) {
  auto reshape = dyn_cast_or_null<onnx::ReshapeOp>(op);
  if (!reshape)
    return false;
  auto type = dyn_cast<RankedTensorType>(reshape.getData().getType());
  std::optional<SmallVector<ShapePiece>> pieces =
      getShapePieces(reshape.getShape());
  return type && type.getRank() >= 2 && !type.isDynamicDim(type.getRank() - 1) &&
         pieces && pieces->size() == 2 && (*pieces)[0].constant == -1 &&
         (*pieces)[1].constant == type.getShape().back();
}

bool accel::raise::flowsToGraphOutput(Value v) {
  if (!v.hasOneUse())
    return false;
  Operation *user = *v.getUsers().begin();
  if (isa<func::ReturnOp>(user))
    return true;
  if (auto cast = dyn_cast<onnx::CastOp>(user))
    return isFloatTensor(cast.getType()) && flowsToGraphOutput(cast);
  // [.., V] -> [-1, V]: the token-major logits of a raised function.
  if (isTokenFlattenReshape(user))
    return flowsToGraphOutput(user->getResult(0));
  // Gemma 2: softcap * tanh(logits / softcap).
  auto div = dyn_cast<onnx::DivOp>(user);
  if (!div || div.getA() != v || !div->hasOneUse())
    return false;
  std::optional<double> cap = getScalarConstant(div.getB());
  auto tanh = dyn_cast<onnx::TanhOp>(*div->getUsers().begin());
  if (!cap || !tanh || !tanh->hasOneUse())
    return false;
  auto mul = dyn_cast<onnx::MulOp>(*tanh->getUsers().begin());
  if (!mul)
    return false;
  Value other = mul.getA() == tanh.getResult() ? mul.getB() : mul.getA();
  return isScalarConstant(other, *cap) && flowsToGraphOutput(mul);
}

bool accel::raise::isLmHead(Value v, int64_t outFeatures) {
  if (!flowsToGraphOutput(v))
    return false;
  Operation *scope = v.getParentRegion()->getParentOp();
  SmallVector<Value> tables = findEmbeddingTables(scope);
  return llvm::any_of(tables, [&](Value table) {
           return cast<RankedTensorType>(table.getType()).getDimSize(0) ==
                  outFeatures;
         });
}
