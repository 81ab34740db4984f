//===- OperandSegments.cpp - operand/result groups of onnx ops ------------===//
//
// The importer builds onnx ops generically, by name. An op with several
// optional operands (Slice, Clip, Attention, …) is sized by the
// `operandSegmentSizes` property; its group count is the length of that
// property in the ODS-generated class, read here at compile time for every
// op of the dialect, so ODS stays the one source of truth.
//
//===----------------------------------------------------------------------===//
#include "OperandSegments.h"

#include "accel/dialects/Onnx/OnnxOps.h"

#include "llvm/ADT/StringMap.h"

#include <tuple>
#include <type_traits>
#include <utility>

using namespace mlir;

namespace {
template <typename T, typename = void> struct OperandGroups {
  static constexpr int value = -1;
};
template <typename T>
struct OperandGroups<T, std::void_t<decltype(std::declval<typename T::Properties>()
                                                 .operandSegmentSizes)>> {
  static constexpr int value = std::tuple_size<std::remove_reference_t<decltype(
      std::declval<typename T::Properties>().operandSegmentSizes)>>::value;
};
template <typename T, typename = void> struct ResultGroups {
  static constexpr int value = -1;
};
template <typename T>
struct ResultGroups<T, std::void_t<decltype(std::declval<typename T::Properties>()
                                                .resultSegmentSizes)>> {
  static constexpr int value = std::tuple_size<std::remove_reference_t<decltype(
      std::declval<typename T::Properties>().resultSegmentSizes)>>::value;
};

struct Tables {
  llvm::StringMap<unsigned> operands, results;
  template <typename... Ops> void add() { (addOne<Ops>(), ...); }
  template <typename Op> void addOne() {
    if constexpr (OperandGroups<Op>::value >= 0)
      operands[Op::getOperationName()] = OperandGroups<Op>::value;
    if constexpr (ResultGroups<Op>::value >= 0)
      results[Op::getOperationName()] = ResultGroups<Op>::value;
  }
};

const Tables &tables() {
  static const Tables t = [] {
    Tables t;
    t.add<
#define GET_OP_LIST
#include "dialects/Onnx/OnnxOps.cpp.inc"
        >();
    return t;
  }();
  return t;
}
} // namespace

std::optional<unsigned> accel::import::getNumOperandGroups(StringRef opName) {
  auto it = tables().operands.find(opName);
  if (it == tables().operands.end())
    return std::nullopt;
  return it->second;
}

std::optional<unsigned> accel::import::getNumResultGroups(StringRef opName) {
  auto it = tables().results.find(opName);
  if (it == tables().results.end())
    return std::nullopt;
  return it->second;
}
