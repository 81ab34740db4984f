//===- LaunchOps.cpp - exec.kernel and exec.launch ------------------------===//
#include "ExecAssembly.h"
#include "ExecVerify.h"

using namespace mlir;
using namespace accel::exec;
using namespace accel::exec::detail;

//===----------------------------------------------------------------------===//
// SM architectures
//===----------------------------------------------------------------------===//

namespace {
struct SMInfo {
  int32_t sm;
  /// Largest dynamic shared memory per block, with the opt-in attribute.
  int64_t maxSharedMemory;
};
} // namespace

// CUDA C++ Programming Guide, "Technical Specifications per Compute
// Capability": maximum shared memory per thread block.
static constexpr SMInfo kKnownSMs[] = {
    {70, 96 * 1024},  {75, 64 * 1024},  {80, 163 * 1024},
    {86, 99 * 1024},  {87, 163 * 1024}, {89, 99 * 1024},
    {90, 227 * 1024}, {100, 227 * 1024}, {120, 99 * 1024},
};

static const SMInfo *lookupSM(int32_t sm) {
  for (const SMInfo &info : kKnownSMs)
    if (info.sm == sm)
      return &info;
  return nullptr;
}

//===----------------------------------------------------------------------===//
// KernelOp
//===----------------------------------------------------------------------===//

int64_t KernelOp::getMaxSharedMemory() {
  int64_t limit = std::numeric_limits<int64_t>::max();
  for (int32_t sm : getSm())
    if (const SMInfo *info = lookupSM(sm))
      limit = std::min(limit, info->maxSharedMemory);
  return limit;
}

LogicalResult KernelOp::verify() {
  ArrayRef<int32_t> sms = getSm();
  for (auto [index, sm] : llvm::enumerate(sms)) {
    if (!lookupSM(sm)) {
      InFlightDiagnostic diag = emitOpError()
                                << "unknown SM architecture " << sm
                                << " (known:";
      for (const SMInfo &info : kKnownSMs)
        diag << " " << info.sm;
      return diag << ")";
    }
    if (index > 0 && sms[index - 1] >= sm)
      return emitOpError("SM architectures must be sorted and unique");
  }
  if (getImage() != KernelImage::none && sms.empty())
    return emitOpError("a kernel with a GPU image names at least one SM");
  if (getImage() == KernelImage::none && !getReference())
    return emitOpError("has no GPU image and no reference implementation; "
                       "nothing could run it");
  for (auto [index, attr] : llvm::enumerate(getArgTypes())) {
    auto typeAttr = dyn_cast<TypeAttr>(attr);
    if (!typeAttr || !isa<ViewType, IndexType>(typeAttr.getValue()))
      return emitOpError() << "argument #" << index
                           << " must be an exec view or index, got " << attr;
  }
  return success();
}

ParseResult accel::exec::parseArgTypes(OpAsmParser &parser,
                                       ArrayAttr &argTypes) {
  SmallVector<Attribute> types;
  if (parser.parseCommaSeparatedList(
          OpAsmParser::Delimiter::Paren, [&]() -> ParseResult {
            Type type;
            if (parser.parseType(type))
              return failure();
            types.push_back(TypeAttr::get(type));
            return success();
          }))
    return failure();
  argTypes = parser.getBuilder().getArrayAttr(types);
  return success();
}

void accel::exec::printArgTypes(OpAsmPrinter &printer, Operation *,
                                ArrayAttr argTypes) {
  printer << '(';
  llvm::interleaveComma(argTypes, printer, [&](Attribute attr) {
    if (auto typeAttr = dyn_cast<TypeAttr>(attr))
      printer << typeAttr.getValue();
    else
      printer << attr;
  });
  printer << ')';
}

//===----------------------------------------------------------------------===//
// Grid and block dimensions
//===----------------------------------------------------------------------===//

ParseResult accel::exec::parseGridDims(
    OpAsmParser &parser, SmallVectorImpl<OpAsmParser::UnresolvedOperand> &sizes,
    DenseI64ArrayAttr &staticGrid, DenseI64ArrayAttr &divisors) {
  SmallVector<int64_t, 3> grid, divs;
  if (parser.parseCommaSeparatedList(
          OpAsmParser::Delimiter::Paren, [&]() -> ParseResult {
            OpAsmParser::UnresolvedOperand operand;
            OptionalParseResult hasOperand =
                parser.parseOptionalOperand(operand);
            if (hasOperand.has_value()) {
              if (failed(*hasOperand))
                return failure();
              sizes.push_back(operand);
              grid.push_back(ShapedType::kDynamic);
              int64_t divisor = 1;
              if (succeeded(parser.parseOptionalKeyword("ceildiv")) &&
                  parser.parseInteger(divisor))
                return failure();
              divs.push_back(divisor);
              return success();
            }
            int64_t value;
            if (parser.parseInteger(value))
              return failure();
            grid.push_back(value);
            divs.push_back(1);
            return success();
          }))
    return failure();
  staticGrid = parser.getBuilder().getDenseI64ArrayAttr(grid);
  divisors = parser.getBuilder().getDenseI64ArrayAttr(divs);
  return success();
}

void accel::exec::printGridDims(OpAsmPrinter &printer, Operation *,
                                OperandRange sizes,
                                DenseI64ArrayAttr staticGrid,
                                DenseI64ArrayAttr divisors) {
  printer << '(';
  unsigned nextSize = 0;
  for (auto [index, dim] : llvm::enumerate(staticGrid.asArrayRef())) {
    if (index > 0)
      printer << ", ";
    if (!ShapedType::isDynamic(dim)) {
      printer << dim;
      continue;
    }
    if (nextSize < sizes.size())
      printer << sizes[nextSize];
    else
      printer << "<<missing size>>";
    ++nextSize;
    if (static_cast<int64_t>(index) < divisors.size() && divisors[index] != 1)
      printer << " ceildiv " << divisors[index];
  }
  printer << ')';
}

ParseResult accel::exec::parseBlockDims(OpAsmParser &parser,
                                        DenseI64ArrayAttr &block) {
  SmallVector<int64_t, 3> dims;
  if (parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Paren,
                                     [&]() -> ParseResult {
                                       return parser.parseInteger(
                                           dims.emplace_back());
                                     }))
    return failure();
  block = parser.getBuilder().getDenseI64ArrayAttr(dims);
  return success();
}

void accel::exec::printBlockDims(OpAsmPrinter &printer, Operation *,
                                 DenseI64ArrayAttr block) {
  printer << '(';
  llvm::interleaveComma(block.asArrayRef(), printer);
  printer << ')';
}

//===----------------------------------------------------------------------===//
// LaunchOp
//===----------------------------------------------------------------------===//

LogicalResult LaunchOp::verify() {
  ArrayRef<int64_t> grid = getStaticGrid(), divisors = getGridDivisors();
  if (grid.size() != 3 || divisors.size() != 3)
    return emitOpError("grid has three dimensions (x, y, z)");
  int64_t numDynamic = llvm::count_if(grid, ShapedType::isDynamic);
  if (numDynamic != static_cast<int64_t>(getGridSizes().size()))
    return emitOpError() << "grid has " << numDynamic
                         << " dynamic dimension(s) but "
                         << getGridSizes().size() << " size operand(s)";
  // Largest grid per dimension (CUDA: x < 2^31, y and z <= 65535).
  static constexpr int64_t kMaxGrid[] = {(int64_t(1) << 31) - 1, 65535, 65535};
  static constexpr char kAxes[] = {'x', 'y', 'z'};
  for (unsigned i = 0; i < 3; ++i) {
    if (ShapedType::isDynamic(grid[i])) {
      if (divisors[i] < 1)
        return emitOpError() << "grid " << kAxes[i]
                             << " divisor must be positive, got "
                             << divisors[i];
      continue;
    }
    if (divisors[i] != 1)
      return emitOpError() << "only a dynamic grid dimension has a divisor";
    if (grid[i] < 1 || grid[i] > kMaxGrid[i])
      return emitOpError() << "grid " << kAxes[i] << " must be in [1, "
                           << kMaxGrid[i] << "], got " << grid[i];
  }
  for (auto [index, size] : llvm::enumerate(getGridSizes()))
    if (!size.getDefiningOp<StepSizeOp>())
      return emitOpError() << "dynamic grid size #" << index
                           << " must be an exec.step_size";

  ArrayRef<int64_t> block = getBlock();
  if (block.size() != 3)
    return emitOpError("block has three dimensions (x, y, z)");
  int64_t threads = 1;
  for (unsigned i = 0; i < 3; ++i) {
    if (block[i] < 1 || block[i] > 1024)
      return emitOpError() << "block " << kAxes[i] << " must be in [1, 1024], "
                           << "got " << block[i];
    threads *= block[i];
  }
  if (threads > 1024)
    return emitOpError() << "block has " << threads
                         << " threads; at most 1024 are allowed";
  if (getSmem() < 0)
    return emitOpError() << "smem must be non-negative, got " << getSmem();
  return success();
}

LogicalResult LaunchOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto kernel = lookupSymbol<KernelOp>(*this, symbolTable, getKernelAttr(),
                                       "an exec.kernel");
  if (!kernel)
    return failure();
  ArrayAttr expected = kernel.getArgTypes();
  if (expected.size() != getArgs().size())
    return emitOpError() << "kernel " << getKernelAttr() << " takes "
                         << expected.size() << " argument(s), got "
                         << getArgs().size();
  for (auto [index, arg, attr] : llvm::enumerate(getArgs(), expected)) {
    Type want = cast<TypeAttr>(attr).getValue();
    if (arg.getType() != want)
      return emitOpError() << "argument #" << index << " has type "
                           << arg.getType() << " but kernel "
                           << getKernelAttr() << " expects " << want;
  }
  int64_t smemLimit = kernel.getMaxSharedMemory();
  if (getSmem() > smemLimit)
    return emitOpError() << "smem " << getSmem() << " exceeds the "
                         << smemLimit << " bytes that every SM of kernel "
                         << getKernelAttr() << " allows";
  return success();
}

void LaunchOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  // The kernel may read and write every view it is given.
  for (OpOperand &operand : getArgsMutable()) {
    if (!isa<ViewType>(operand.get().getType()))
      continue;
    effects.emplace_back(MemoryEffects::Read::get(), &operand);
    effects.emplace_back(MemoryEffects::Write::get(), &operand);
  }
}
