//===- ExecTypes.td - exec dialect types ------------------*- tablegen -*-===//

#ifndef ACCEL_EXEC_TYPES
#define ACCEL_EXEC_TYPES

include "ExecDialect.td"
include "mlir/IR/BuiltinTypeInterfaces.td"

//===----------------------------------------------------------------------===//
// ViewType
//===----------------------------------------------------------------------===//

def Exec_ViewType : Exec_Type<"View", "view", [ShapedTypeInterface]> {
  let summary = "a dense row-major view of arena memory";
  let description = [{
    A typed view of a range of bytes in an arena: a shape and an element type,
    laid out dense and row-major (the last dimension is contiguous; no
    strides). A dimension is either static or `?`; a `?` dimension is bound
    to a per-step size (`exec.step_size`) by the op that creates the view, and
    its extent is at most the schedule's bound for that size.

    Element types: `f32`, `f16`, `bf16`, `f8E4M3FN`, `f8E5M2`, `i8`, `i4`,
    `i32`, `i64` (integers are signless). `i4` is packed two per byte, the
    element with the even index in the low nibble; a view of `n` `i4`
    elements takes `ceil(n / 2)` bytes. A rank-0 view is a scalar (e.g. a
    per-tensor FP8 scale `!exec.view<f32>`).

    ```mlir
    !exec.view<?x4096xbf16>      // [tokens, hidden]
    !exec.view<14336x4096xf8E4M3FN>
    !exec.view<?x64xi32>         // block tables [seqs, max_blocks_per_seq]
    !exec.view<f32>              // a scalar
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,
                        "::mlir::Type":$elementType);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    TypeBuilderWithInferredContext<(ins "::llvm::ArrayRef<int64_t>":$shape,
                                        "::mlir::Type":$elementType), [{
      return $_get(elementType.getContext(), shape, elementType);
    }]>,
  ];
  let extraClassDeclaration = [{
    // ShapedTypeInterface.
    bool hasRank() const { return true; }
    ::mlir::ShapedType cloneWith(std::optional<::llvm::ArrayRef<int64_t>> shape,
                                 ::mlir::Type elementType) const;

    /// Whether `type` may be the element type of a view.
    static bool isSupportedElementType(::mlir::Type type);
    /// Size in bits of one element (4 for i4, 8 for f8E4M3FN, ...).
    static unsigned getElementBits(::mlir::Type type);

    /// Bytes taken by this view when every `?` dimension has the extent given
    /// in `dynamicExtents` (one per dynamic dimension, in order).
    int64_t getByteSize(::llvm::ArrayRef<int64_t> dynamicExtents) const;
    /// Bytes taken by a view with a static shape.
    int64_t getStaticByteSize() const { return getByteSize({}); }
  }];
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

// The constraints below keep the C++ type generic (::mlir::Type) so that op
// assembly prints views in full (`!exec.view<...>`), not stripped (`<...>`).
def Exec_AnyView : Type<Exec_ViewType.predicate, "exec view">;

// A per-tensor scale: `!exec.view<f32>`.
def Exec_ScaleView : Type<
    And<[Exec_ViewType.predicate,
         CPred<"::llvm::cast<::accel::exec::ViewType>($_self).getRank() == 0">,
         CPred<"::llvm::cast<::accel::exec::ViewType>($_self).getElementType().isF32()">]>,
    "rank-0 f32 view (a scale)">,
  BuildableType<"::accel::exec::ViewType::get($_builder.getContext(), {}, "
                "$_builder.getF32Type())">;

// Step metadata indexed by token or sequence: `!exec.view<?xi32>`.
def Exec_MetadataVector : Type<
    And<[Exec_ViewType.predicate,
         CPred<"::llvm::cast<::accel::exec::ViewType>($_self).getRank() == 1">,
         CPred<"::llvm::cast<::accel::exec::ViewType>($_self).isDynamicDim(0)">,
         CPred<"::llvm::cast<::accel::exec::ViewType>($_self).getElementType()"
               ".isSignlessInteger(32)">]>,
    "1-D dynamic i32 view (step metadata)">,
  BuildableType<"::accel::exec::ViewType::get($_builder.getContext(), "
                "{::mlir::ShapedType::kDynamic}, $_builder.getI32Type())">;

// Block tables: `!exec.view<?xNxi32>`.
def Exec_BlockTableView : Type<
    And<[Exec_ViewType.predicate,
         CPred<"::llvm::cast<::accel::exec::ViewType>($_self).getRank() == 2">,
         CPred<"::llvm::cast<::accel::exec::ViewType>($_self).isDynamicDim(0)">,
         CPred<"!::llvm::cast<::accel::exec::ViewType>($_self).isDynamicDim(1)">,
         CPred<"::llvm::cast<::accel::exec::ViewType>($_self).getElementType()"
               ".isSignlessInteger(32)">]>,
    "2-D i32 view [?, max_blocks_per_seq] (block tables)">;

#endif // ACCEL_EXEC_TYPES
