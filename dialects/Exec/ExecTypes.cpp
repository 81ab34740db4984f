//===- ExecTypes.cpp - exec dialect types -------------------------------===//
#include "accel/dialects/Exec/ExecDialect.h"

#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;
using namespace accel::exec;

#define GET_TYPEDEF_CLASSES
#include "dialects/Exec/ExecTypes.cpp.inc"

void ExecDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "dialects/Exec/ExecTypes.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// ViewType
//===----------------------------------------------------------------------===//

bool ViewType::isSupportedElementType(Type type) {
  if (type.isF32() || type.isF16() || type.isBF16())
    return true;
  if (isa<Float8E4M3FNType, Float8E5M2Type>(type))
    return true;
  if (auto integer = dyn_cast<IntegerType>(type)) {
    unsigned width = integer.getWidth();
    return integer.isSignless() &&
           (width == 4 || width == 8 || width == 32 || width == 64);
  }
  return false;
}

unsigned ViewType::getElementBits(Type type) {
  if (auto integer = dyn_cast<IntegerType>(type))
    return integer.getWidth();
  return cast<FloatType>(type).getWidth();
}

int64_t ViewType::getByteSize(ArrayRef<int64_t> dynamicExtents) const {
  // Saturates at INT64_MAX, which no arena can hold.
  constexpr int64_t saturated = std::numeric_limits<int64_t>::max();
  int64_t bits = getElementBits(getElementType());
  unsigned nextDynamic = 0;
  for (int64_t dim : getShape()) {
    int64_t extent = ShapedType::isDynamic(dim) ? dynamicExtents[nextDynamic++]
                                                : dim;
    std::optional<int64_t> product = llvm::checkedMul(bits, extent);
    if (!product)
      return saturated;
    bits = *product;
  }
  assert(nextDynamic == dynamicExtents.size() && "one extent per ? dimension");
  return llvm::divideCeil(bits, 8);
}

ShapedType ViewType::cloneWith(std::optional<ArrayRef<int64_t>> shape,
                               Type elementType) const {
  return ViewType::get(getContext(), shape.value_or(getShape()), elementType);
}

LogicalResult ViewType::verify(function_ref<InFlightDiagnostic()> emitError,
                               ArrayRef<int64_t> shape, Type elementType) {
  if (!isSupportedElementType(elementType))
    return emitError() << "element type " << elementType
                       << " is not supported by exec views (expected f32, "
                          "f16, bf16, f8E4M3FN, f8E5M2, i8, i4, i32 or i64)";
  // The largest static part of the view must be addressable in bytes with
  // room to spare for dynamic extents and the element size.
  int64_t elements = 1;
  for (int64_t dim : shape) {
    if (ShapedType::isDynamic(dim))
      continue;
    if (dim < 0)
      return emitError() << "view dimensions must be non-negative, got "
                         << dim;
    std::optional<int64_t> product = llvm::checkedMul(elements, dim);
    if (!product || *product > (int64_t(1) << 48))
      return emitError() << "view has more than 2^48 elements";
    elements = *product;
  }
  return success();
}

Type ViewType::parse(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  SmallVector<int64_t> shape;
  Type elementType;
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/true,
                                /*withTrailingX=*/true) ||
      parser.parseType(elementType) || parser.parseGreater())
    return {};
  return parser.getChecked<ViewType>(loc, parser.getContext(), shape,
                                     elementType);
}

void ViewType::print(AsmPrinter &printer) const {
  printer << '<';
  for (int64_t dim : getShape()) {
    if (ShapedType::isDynamic(dim))
      printer << '?';
    else
      printer << dim;
    printer << 'x';
  }
  printer << getElementType() << '>';
}
