//===- RaiseQuantizedLinear.cpp - QDQ / MatMulNBits → quantised linear ----===//
//
// Weights that arrive already quantised, as ONNX quantisation tools write
// them: `MatMul(x, DequantizeLinear(W_q, scale, zero_point))` (per tensor,
// per axis, or blocked along K with opset 21's `block_size`; the weight
// `[in, out]`, or `[out, in]` under a `Transpose {perm = [1, 0]}`), and
// onnxruntime's `com.microsoft.MatMulNBits` (packed 4- or 8-bit blocks).
// Both become a transformer.linear that keeps the integer / fp8 weight and
// its scales: nothing is dequantised at compile time.
//
// Unsigned weights become signed exactly: `(q - zp) = (q - 2^(b-1)) - (zp -
// 2^(b-1))`, so ui8 / ui4 weights and zero points are shifted into i8 / i4,
// and a zero point that becomes all zeros is dropped (symmetric).
//
//===----------------------------------------------------------------------===//
#include "RaiseUtils.h"

#include "accel/dialects/Onnx/OnnxOps.h"
#include "accel/dialects/Transformer/TransformerOps.h"
#include "accel/passes/Passes.h"
#include "accel/passes/RaisePatterns.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace accel {
#define GEN_PASS_DEF_RAISEQUANTIZEDLINEAR
#include "passes/Passes.h.inc"
} // namespace accel

using namespace mlir;
using namespace accel;
using namespace accel::raise;

namespace {

using transformer::QuantGranularity;

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

/// A stored weight element type and what it becomes on the linear.
struct QuantType {
  Type target;        ///< i8, i4, f8E4M3FN or f8E5M2
  unsigned bits = 8;  ///< 8 or 4
  bool isUnsigned = false;
  bool isFloat = false;
  /// Subtracted from unsigned values (2^(bits-1)); 0 for signed and float.
  unsigned shift() const { return isUnsigned ? 1u << (bits - 1) : 0; }
};

static std::optional<QuantType> getQuantType(Type type) {
  MLIRContext *ctx = type.getContext();
  if (auto i = dyn_cast<IntegerType>(type)) {
    unsigned w = i.getWidth();
    if (w != 8 && w != 4)
      return std::nullopt;
    return QuantType{IntegerType::get(ctx, w), w, i.isUnsigned(), false};
  }
  if (isa<Float8E4M3FNType, Float8E5M2Type>(type))
    return QuantType{type, 8, false, true};
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Constants in the linear's layout
//===----------------------------------------------------------------------===//

/// The element at flat position `i` of a 2-D `[rows, cols]` source read as
/// the `[cols, rows]` transpose (or directly).
static int64_t sourceIndex(int64_t i, int64_t rows, int64_t cols,
                           bool transpose) {
  if (!transpose)
    return i;
  int64_t r = i % rows, c = i / rows; // destination is [cols, rows]
  return r * cols + c;
}

/// `src` (a 2-D or flat constant of byte-sized elements) as `type`, read
/// row-major or, with `transpose`, as the transpose of a `[rows, cols]`
/// source; the top bit of every byte flipped with `flipTop` (u8 - 128 as
/// i8). A dense_resource source gives a new blob named after it + `suffix`
/// (elided when the source is), an inline one an inline value. Null when the
/// data is unreadable.
static ElementsAttr relayoutBytes(ElementsAttr src, RankedTensorType type,
                                  int64_t rows, int64_t cols, bool transpose,
                                  bool flipTop, StringRef suffix) {
  auto srcType = cast<ShapedType>(src.getType());
  size_t width = (srcType.getElementTypeBitWidth() + 7) / 8;
  uint8_t flip = flipTop ? 0x80 : 0x00;
  auto fill = [&](ArrayRef<char> in, MutableArrayRef<char> out) {
    int64_t n = type.getNumElements();
    for (int64_t i = 0; i < n; ++i) {
      int64_t s = sourceIndex(i, rows, cols, transpose);
      for (size_t b = 0; b < width; ++b)
        out[i * width + b] = in[s * width + b];
      if (width == 1)
        out[i] = char(uint8_t(out[i]) ^ flip);
    }
  };
  if (auto dense = dyn_cast<DenseElementsAttr>(src); dense && dense.isSplat()) {
    SmallVector<char> one(dense.getRawData().begin(), dense.getRawData().end());
    if (width == 1)
      one[0] = char(uint8_t(one[0]) ^ flip);
    return DenseElementsAttr::getFromRawBuffer(type, one);
  }
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(src)) {
    std::string key = (resource.getRawHandle().getKey() + suffix).str();
    std::optional<ArrayRef<char>> in = getRawData(src);
    if (!in) {
      if (resource.getRawHandle().getBlob())
        return {};
      auto &manager =
          DenseResourceElementsHandle::getManagerInterface(type.getContext());
      return DenseResourceElementsAttr::get(type, manager.insert(key));
    }
    AsmResourceBlob blob = HeapAsmResourceBlob::allocate(
        in->size(), std::max<size_t>(width, 64), /*dataIsMutable=*/true);
    fill(*in, blob.getMutableData());
    return DenseResourceElementsAttr::get(type, key, std::move(blob));
  }
  std::optional<ArrayRef<char>> in = getRawData(src);
  if (!in)
    return {};
  SmallVector<char> out(in->size());
  fill(*in, out);
  return DenseElementsAttr::getFromRawBuffer(type, out);
}

/// The same for 4-bit integers (inline dense values, as the importer makes
/// them): each value minus `shift`, as i4.
static ElementsAttr relayoutNibbles(ElementsAttr src, RankedTensorType type,
                                    int64_t rows, int64_t cols, bool transpose,
                                    unsigned shift) {
  auto dense = dyn_cast<DenseElementsAttr>(src);
  if (!dense)
    return {};
  SmallVector<APInt> values;
  values.reserve(dense.getNumElements());
  for (const APInt &v : dense.getValues<APInt>())
    values.push_back(APInt(4, (v.getZExtValue() - shift) & 0xF));
  if (dense.isSplat())
    return DenseElementsAttr::get(type, values.front());
  SmallVector<APInt> out(type.getNumElements(), APInt(4, 0));
  for (int64_t i = 0, n = out.size(); i < n; ++i)
    out[i] = values[sourceIndex(i, rows, cols, transpose)];
  return DenseElementsAttr::get(type, out);
}

/// True when every value of an i8 / i4 / fp8 constant is zero (+0 or -0
/// for fp8).
static bool isAllZero(ElementsAttr attr) {
  auto type = cast<ShapedType>(attr.getType());
  Type elem = type.getElementType();
  if (auto dense = dyn_cast<DenseElementsAttr>(attr); dense && elem.isInteger(4))
    return llvm::all_of(dense.getValues<APInt>(),
                        [](const APInt &v) { return v.isZero(); });
  std::optional<ArrayRef<char>> raw;
  SmallVector<char> splat;
  if (auto dense = dyn_cast<DenseElementsAttr>(attr); dense && dense.isSplat()) {
    splat.assign(dense.getRawData().begin(), dense.getRawData().end());
    raw = ArrayRef<char>(splat);
  } else {
    raw = getRawData(attr);
  }
  if (!raw)
    return false;
  uint8_t mask = isa<FloatType>(elem) ? 0x7F : 0xFF;
  return llvm::all_of(*raw, [&](char c) { return (uint8_t(c) & mask) == 0; });
}

static Value createConstant(PatternRewriter &rewriter, Location loc,
                            ElementsAttr value) {
  return onnx::ConstantOp::create(
      rewriter, loc, cast<RankedTensorType>(value.getType()), value,
      FloatAttr(), DenseF32ArrayAttr(), IntegerAttr(), DenseI64ArrayAttr());
}

/// Integer data (weight or zero point) in the linear's layout and type:
/// unsigned values shifted into the signed range.
static ElementsAttr relayoutInts(ElementsAttr src, const QuantType &q,
                                 ArrayRef<int64_t> shape, int64_t rows,
                                 int64_t cols, bool transpose, StringRef suffix) {
  auto type = RankedTensorType::get(shape, q.target);
  if (q.bits == 4)
    return relayoutNibbles(src, type, rows, cols, transpose, q.shift());
  return relayoutBytes(src, type, rows, cols, transpose, q.isUnsigned, suffix);
}

//===----------------------------------------------------------------------===//
// The rewrite
//===----------------------------------------------------------------------===//

/// The operands of a quantised transformer.linear, already built.
struct LinearWeight {
  Value weight, scale, zeroPoint;
  QuantGranularity granularity = QuantGranularity::PerTensor;
  int64_t groupSize = 0;
};

/// The forms all-forms=false keeps (the CPU GEMM decodes them in place):
/// i8 or f8E4M3FN weights with per-tensor or per-channel scales and no zero
/// point.
static bool isRunnableToday(Type weightElem, QuantGranularity g, bool hasZp) {
  return (weightElem.isInteger(8) || isa<Float8E4M3FNType>(weightElem)) &&
         g != QuantGranularity::PerGroup && !hasZp;
}

static Value buildLinear(PatternRewriter &rewriter, Location loc, Value x,
                         const LinearWeight &w, Value bias) {
  auto xType = cast<RankedTensorType>(x.getType());
  auto wType = cast<RankedTensorType>(w.weight.getType());
  auto type = RankedTensorType::get({xType.getDimSize(0), wType.getDimSize(0)},
                                    xType.getElementType());
  MLIRContext *ctx = rewriter.getContext();
  return transformer::LinearOp::create(
      rewriter, loc, type, x, w.weight, bias, w.scale, w.zeroPoint,
      /*input_scale=*/Value(),
      transformer::QuantGranularityAttr::get(ctx, w.granularity),
      w.groupSize ? rewriter.getI64IntegerAttr(w.groupSize) : IntegerAttr(),
      /*activation=*/transformer::ActivationKindAttr());
}

/// Erases `op` and the ops feeding it that nothing else reads (the
/// DequantizeLinear, its Transpose and their constants).
static void eraseDeadChain(PatternRewriter &rewriter, Operation *op) {
  if (!op || !op->use_empty())
    return;
  SmallVector<Operation *> inputs;
  for (Value v : op->getOperands())
    if (Operation *def = v.getDefiningOp())
      inputs.push_back(def);
  rewriter.eraseOp(op);
  for (Operation *def : inputs)
    if (isa<onnx::ConstantOp, onnx::TransposeOp, onnx::DequantizeLinearOp>(def))
      eraseDeadChain(rewriter, def);
}

/// `MatMul(x, DequantizeLinear(W_q, s, zp))`, or with
/// `Transpose(DequantizeLinear(..)) {perm = [1, 0]}` as the weight.
struct DequantizedMatMulToLinear : OpRewritePattern<onnx::MatMulOp> {
  DequantizedMatMulToLinear(MLIRContext *ctx, bool allForms)
      : OpRewritePattern(ctx), allForms(allForms) {}

  LogicalResult matchAndRewrite(onnx::MatMulOp matmul,
                                PatternRewriter &rewriter) const override {
    // The dequantised weight (and its Transpose) may be unranked: exporters
    // and quantisation tools often write no value_info for them. Shapes come
    // from the quantised constant.
    Value x = matmul.getA(), b = matmul.getB();
    auto xType = dyn_cast<RankedTensorType>(x.getType());
    auto yType = dyn_cast<RankedTensorType>(matmul.getType());
    if (!xType || !yType || xType.getRank() < 2 ||
        yType.getRank() != xType.getRank() ||
        !isFloatElement(xType.getElementType()) ||
        getElementTypeOrSelf(b.getType()) != xType.getElementType())
      return rewriter.notifyMatchFailure(matmul, "not x @ a float weight");

    // torch layout ([out, in] under a Transpose) or ONNX's [in, out].
    bool torchLayout = false;
    auto transpose = b.getDefiningOp<onnx::TransposeOp>();
    if (transpose) {
      std::optional<ArrayRef<int64_t>> perm = transpose.getPerm();
      if (perm && !(perm->size() == 2 && (*perm)[0] == 1 && (*perm)[1] == 0))
        return rewriter.notifyMatchFailure(matmul, "not a 2-D transpose");
      torchLayout = true;
      b = transpose.getData();
    }
    auto dq = b.getDefiningOp<onnx::DequantizeLinearOp>();
    if (!dq)
      return rewriter.notifyMatchFailure(matmul, "weight is not dequantised");
    auto qType = dyn_cast<RankedTensorType>(dq.getX().getType());
    if (!qType || qType.getRank() != 2 || !qType.hasStaticShape())
      return rewriter.notifyMatchFailure(matmul, "not a static 2-D weight");
    int64_t in = qType.getDimSize(torchLayout ? 1 : 0);
    int64_t out = qType.getDimSize(torchLayout ? 0 : 1);
    auto bType = dyn_cast<RankedTensorType>(matmul.getB().getType());
    if (xType.getShape().back() != in || yType.getShape().back() != out ||
        (bType && bType.getShape() != ArrayRef<int64_t>{in, out}))
      return rewriter.notifyMatchFailure(matmul, "shapes do not fit x @ [in, out]");
    if (isLmHead(matmul.getResult(), out))
      return rewriter.notifyMatchFailure(
          matmul, "the lm head: transformer.logits takes no scales");

    FailureOr<LinearWeight> weight =
        convertDequantize(rewriter, dq, torchLayout, in, out);
    if (failed(weight))
      return failure();
    Location loc = matmul.getLoc();
    Value flat = flattenTokens(rewriter, loc, x);
    Value linear = buildLinear(rewriter, loc, flat, *weight, Value());
    rewriter.replaceOp(matmul, unflattenTokens(rewriter, loc, linear, x, yType));
    eraseDeadChain(rewriter, transpose ? transpose.getOperation()
                                       : dq.getOperation());
    return success();
  }

  /// The linear's weight, scale and zero point for `dq`, whose result is
  /// `[out, in]` (torchLayout) or `[in, out]`.
  FailureOr<LinearWeight> convertDequantize(PatternRewriter &rewriter,
                                            onnx::DequantizeLinearOp dq,
                                            bool torchLayout, int64_t in,
                                            int64_t out) const {
    auto fail = [&](const Twine &why) {
      return rewriter.notifyMatchFailure(dq, why);
    };
    ElementsAttr q = getConstant(dq.getX());
    ElementsAttr s = getConstant(dq.getXScale());
    ElementsAttr zp = dq.getXZeroPoint() ? getConstant(dq.getXZeroPoint())
                                         : ElementsAttr();
    if (!q || !s || (dq.getXZeroPoint() && !zp))
      return fail("weight, scale or zero point not constant");
    auto qType = cast<RankedTensorType>(q.getType());
    auto sType = cast<RankedTensorType>(s.getType());
    Type resultElem = getElementTypeOrSelf(dq.getType());
    std::optional<QuantType> qt = getQuantType(qType.getElementType());
    if (!qt)
      return fail("weight type is not i8, ui8, i4, ui4, f8E4M3FN or f8E5M2");
    if (qType.getRank() != 2 || !qType.hasStaticShape() ||
        !sType.hasStaticShape() ||
        sType.getElementType() != resultElem ||
        !isFloatElement(sType.getElementType()))
      return fail("not a static 2-D weight with a float scale of the result type");
    if (zp && cast<ShapedType>(zp.getType()).getElementType() !=
                  qType.getElementType())
      return fail("zero point type differs from the weight's");
    if (qt->isFloat && zp && !isAllZero(zp))
      return fail("an fp8 weight with a nonzero zero point");

    int64_t rows = qType.getDimSize(0), cols = qType.getDimSize(1);
    int64_t outAxis = torchLayout ? 0 : 1, inAxis = 1 - outAxis;
    std::optional<int64_t> axis =
        normalizeAxis(dq.getAxisAttr().getInt(), qType.getRank());
    int64_t blockSize = dq.getBlockSizeAttr().getInt();

    LinearWeight w;
    SmallVector<int64_t> scaleShape;
    bool scaleTranspose = false;
    if (blockSize == 0 && sType.getNumElements() == 1 && sType.getRank() <= 1) {
      w.granularity = QuantGranularity::PerTensor;
    } else if (blockSize == 0 && sType.getRank() == 1 && axis &&
               sType.getDimSize(0) == qType.getDimSize(*axis)) {
      if (*axis != outAxis)
        return fail("per-axis scales along in_features: the linear scales "
                    "output channels");
      w.granularity = QuantGranularity::PerChannel;
      scaleShape = {out};
    } else if (blockSize > 0 && axis && sType.getRank() == 2) {
      if (*axis != inAxis)
        return fail("blocks along out_features: the linear groups in_features");
      if (in % blockSize != 0)
        return fail("block_size does not divide in_features (a partial block)");
      SmallVector<int64_t> expect(qType.getShape());
      expect[*axis] = in / blockSize;
      if (sType.getShape() != ArrayRef<int64_t>(expect))
        return fail("blocked scale shape does not fit the weight");
      w.granularity = QuantGranularity::PerGroup;
      w.groupSize = blockSize;
      scaleShape = {out, in / blockSize};
      scaleTranspose = !torchLayout;
    } else {
      return fail("scale shape fits no granularity");
    }

    // The zero point, shifted; dropped when all zeros after the shift.
    Location loc = dq.getLoc();
    auto sRows = sType.getRank() == 2 ? sType.getDimSize(0) : 1;
    auto sCols = sType.getRank() == 2 ? sType.getDimSize(1) : 1;
    ElementsAttr zpValue;
    if (!qt->isFloat && (zp || qt->isUnsigned)) {
      if (zp) {
        zpValue = relayoutInts(zp, *qt, scaleShape, sRows, sCols,
                               scaleTranspose, ".zp");
      } else {
        // An unsigned weight without a zero point: zero point 0, i.e.
        // -2^(bits-1) once shifted.
        auto type = RankedTensorType::get(scaleShape, qt->target);
        zpValue = DenseElementsAttr::get(
            type, APInt(qt->bits, -int64_t(qt->shift()), /*isSigned=*/true));
      }
      if (!zpValue)
        return fail("zero point data unreadable");
      if (isAllZero(zpValue))
        zpValue = {};
    }
    if (!allForms &&
        !isRunnableToday(qt->target, w.granularity, bool(zpValue)))
      return fail("all-forms=false: i4, f8E5M2, blocked scales and zero points "
                  "stay on the ONNX path");

    ElementsAttr weight = relayoutInts(q, *qt, {out, in}, rows, cols,
                                       !torchLayout, torchLayout ? ".q" : ".qT");
    if (!weight)
      return fail("weight data unreadable");
    ElementsAttr scale = relayoutBytes(
        s, RankedTensorType::get(scaleShape, sType.getElementType()), sRows,
        sCols, scaleTranspose, /*flipTop=*/false, ".s");
    if (!scale)
      return fail("scale data unreadable");

    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(dq);
    w.weight = createConstant(rewriter, loc, weight);
    w.scale = createConstant(rewriter, loc, scale);
    if (zpValue)
      w.zeroPoint = createConstant(rewriter, loc, zpValue);
    return w;
  }

  bool allForms;
};

/// The bytes of a constant, a splat expanded to every element (a single
/// scale, or uniform zero points, are splats).
static std::optional<SmallVector<char>> rawBytes(ElementsAttr attr) {
  if (auto dense = dyn_cast<DenseElementsAttr>(attr); dense && dense.isSplat()) {
    ArrayRef<char> one = dense.getRawData();
    int64_t count = cast<ShapedType>(attr.getType()).getNumElements();
    SmallVector<char> out;
    out.reserve(size_t(count) * one.size());
    for (int64_t i = 0; i < count; ++i)
      out.append(one.begin(), one.end());
    return out;
  }
  std::optional<ArrayRef<char>> raw = getRawData(attr);
  if (!raw)
    return std::nullopt;
  return SmallVector<char>(raw->begin(), raw->end());
}

/// onnxruntime's `MatMulNBits(A, B, scales, [zero_points], [g_idx], [bias])`:
/// B `[N, K / block, block * bits / 8]` packed ui8, low bits first.
struct MatMulNBitsToLinear : OpRewritePattern<onnx::MsMatMulNBitsOp> {
  MatMulNBitsToLinear(MLIRContext *ctx, bool allForms)
      : OpRewritePattern(ctx), allForms(allForms) {}

  LogicalResult matchAndRewrite(onnx::MsMatMulNBitsOp op,
                                PatternRewriter &rewriter) const override {
    auto fail = [&](const Twine &why) {
      return rewriter.notifyMatchFailure(op, why);
    };
    Value x = op.getA();
    auto xType = dyn_cast<RankedTensorType>(x.getType());
    auto yType = dyn_cast<RankedTensorType>(op.getType());
    int64_t k = op.getKAttr().getInt(), n = op.getNAttr().getInt();
    int64_t bits = op.getBitsAttr().getInt();
    int64_t block = op.getBlockSizeAttr().getInt();
    if (!xType || !yType || xType.getRank() < 2 ||
        !isFloatElement(xType.getElementType()) ||
        xType.getShape().back() != k || yType.getShape().back() != n ||
        yType.getElementType() != xType.getElementType())
      return fail("not x [.., K] -> [.., N] in a float type");
    if (bits != 4 && bits != 8)
      return fail("bits other than 4 or 8");
    if (block <= 0 || k % block != 0)
      return fail("block_size does not divide K (a padded last block)");
    if (op.getGIdx())
      return fail("g_idx (act-order) reorders K: not a plain group");
    int64_t kb = k / block, blob = block * bits / 8;
    ElementsAttr b = getConstant(op.getB());
    ElementsAttr s = getConstant(op.getScales());
    if (!b || !s)
      return fail("B or scales not constant");
    auto bType = cast<RankedTensorType>(b.getType());
    auto sType = cast<RankedTensorType>(s.getType());
    if (!bType.getElementType().isUnsignedInteger(8) ||
        bType.getShape() != ArrayRef<int64_t>{n, kb, blob} ||
        sType.getNumElements() != n * kb ||
        sType.getElementType() != xType.getElementType())
      return fail("B or scales shaped or typed unlike K, N, bits, block_size");
    Value bias = op.getBias();
    if (bias) {
      auto biasType = dyn_cast<RankedTensorType>(bias.getType());
      if (!biasType || biasType.getRank() != 1 || biasType.getDimSize(0) != n ||
          biasType.getElementType() != xType.getElementType())
        return fail("bias is not [N]");
    }
    if (isLmHead(op.getResult(), n))
      return fail("the lm head: transformer.logits takes no scales");

    std::optional<SmallVector<char>> packed = rawBytes(b);
    std::optional<SmallVector<char>> scaleData = rawBytes(s);
    if (!packed || !scaleData)
      return fail("B or scales data unreadable");
    // Zero points: packed ui8 (bits per value, each row padded to a byte),
    // default 2^(bits-1), i.e. 0 once shifted. Float zero points are not
    // integers on the grid: left alone.
    unsigned shift = 1u << (bits - 1);
    SmallVector<uint8_t> zps(n * kb, shift);
    if (Value zpValue = op.getZeroPoints()) {
      ElementsAttr zp = getConstant(zpValue);
      if (!zp || !cast<ShapedType>(zp.getType()).getElementType().isUnsignedInteger(8))
        return fail("zero points not a packed ui8 constant");
      std::optional<SmallVector<char>> raw = rawBytes(zp);
      int64_t rowBytes = (kb * bits + 7) / 8;
      if (!raw || int64_t(raw->size()) != n * rowBytes)
        return fail("packed zero points not [N * ceil(K / block * bits / 8)]");
      for (int64_t r = 0; r < n; ++r)
        for (int64_t j = 0; j < kb; ++j) {
          uint8_t byte = uint8_t((*raw)[r * rowBytes + j * bits / 8]);
          zps[r * kb + j] = bits == 8 ? byte : (j % 2 ? byte >> 4 : byte & 0xF);
        }
    }
    bool symmetric = llvm::all_of(zps, [&](uint8_t z) { return z == shift; });
    QuantGranularity granularity =
        kb == 1 ? QuantGranularity::PerChannel : QuantGranularity::PerGroup;
    Type target = IntegerType::get(rewriter.getContext(), bits);
    if (!allForms && !isRunnableToday(target, granularity, !symmetric))
      return fail("all-forms=false: i4, blocked scales and zero points stay on "
                  "the ONNX path");

    // Unpack into [N, K] (shifted to signed) and the scales into
    // [N, K / block] ([N] for a single block).
    auto wType = RankedTensorType::get({n, k}, target);
    SmallVector<int64_t> scaleShape =
        kb == 1 ? SmallVector<int64_t>{n} : SmallVector<int64_t>{n, kb};
    ElementsAttr weight;
    if (bits == 8) {
      SmallVector<char> bytes(packed->begin(), packed->end());
      for (char &c : bytes)
        c = char(uint8_t(c) ^ 0x80);
      weight = DenseElementsAttr::getFromRawBuffer(wType, bytes);
    } else {
      SmallVector<APInt> values;
      values.reserve(n * k);
      for (int64_t i = 0; i < n * k; ++i) {
        uint8_t byte = uint8_t((*packed)[i / 2]);
        unsigned v = i % 2 ? byte >> 4 : byte & 0xF;
        values.push_back(APInt(4, (v - shift) & 0xF));
      }
      weight = DenseElementsAttr::get(wType, values);
    }
    auto scaleType = RankedTensorType::get(scaleShape, sType.getElementType());
    ElementsAttr scale = DenseElementsAttr::getFromRawBuffer(scaleType, *scaleData);
    ElementsAttr zeroPoint;
    if (!symmetric) {
      auto zpType = RankedTensorType::get(scaleShape, target);
      SmallVector<APInt> values;
      for (uint8_t z : zps)
        values.push_back(APInt(bits, (z - shift) & ((1u << bits) - 1)));
      zeroPoint = DenseElementsAttr::get(zpType, values);
    }

    Location loc = op.getLoc();
    LinearWeight w;
    w.weight = createConstant(rewriter, loc, weight);
    w.scale = createConstant(rewriter, loc, scale);
    if (zeroPoint)
      w.zeroPoint = createConstant(rewriter, loc, zeroPoint);
    w.granularity = granularity;
    w.groupSize = granularity == QuantGranularity::PerGroup ? block : 0;
    Value flat = flattenTokens(rewriter, loc, x);
    Value linear = buildLinear(rewriter, loc, flat, w, bias);
    SmallVector<Operation *> inputs;
    for (Value v : {op.getB(), op.getScales(), op.getZeroPoints()})
      if (v && v.getDefiningOp())
        inputs.push_back(v.getDefiningOp());
    rewriter.replaceOp(op, unflattenTokens(rewriter, loc, linear, x, yType));
    for (Operation *def : inputs)
      eraseDeadChain(rewriter, def);
    return success();
  }

  bool allForms;
};

struct RaiseQuantizedLinearPass
    : accel::impl::RaiseQuantizedLinearBase<RaiseQuantizedLinearPass> {
  using RaiseQuantizedLinearBase::RaiseQuantizedLinearBase;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateRaiseQuantizedLinearPatterns(patterns, allForms);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void accel::populateRaiseQuantizedLinearPatterns(RewritePatternSet &patterns,
                                                 bool allForms) {
  patterns.add<DequantizedMatMulToLinear, MatMulNBitsToLinear>(
      patterns.getContext(), allForms);
}
