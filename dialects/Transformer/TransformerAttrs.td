//===- TransformerAttrs.td - transformer dialect attributes -*- tablegen -*-===//
//
// Structured attributes of the transformer dialect (enum attributes live in
// TransformerEnums.td).
//
//===----------------------------------------------------------------------===//

#ifndef ACCEL_TRANSFORMER_ATTRS
#define ACCEL_TRANSFORMER_ATTRS

include "TransformerDialect.td"
include "TransformerEnums.td"

/// An f64 parameter, printed so that it round-trips exactly.
class Transformer_F64Parameter<string desc> : APFloatParameter<desc> {
  let parser = [{ [&]() -> ::mlir::FailureOr<::llvm::APFloat> {
    ::llvm::APFloat value(0.0);
    if ($_parser.parseFloat(::llvm::APFloat::IEEEdouble(), value))
      return ::mlir::failure();
    return value;
  }() }];
  let printer = [{ $_printer.printFloat($_self) }];
}

/// An optional f64 parameter (omitted from `struct(...)` when absent).
class Transformer_OptionalF64Parameter<string desc>
    : OptionalParameter<"std::optional<::llvm::APFloat>", desc> {
  let parser = [{ [&]() -> ::mlir::FailureOr<std::optional<::llvm::APFloat>> {
    ::llvm::APFloat value(0.0);
    if ($_parser.parseFloat(::llvm::APFloat::IEEEdouble(), value))
      return ::mlir::failure();
    return std::optional<::llvm::APFloat>(value);
  }() }];
  let printer = [{ $_printer.printFloat(*$_self) }];
  let comparator = [{ ($_lhs.has_value() == $_rhs.has_value() &&
                       (!$_lhs || $_lhs->bitwiseIsEqual(*$_rhs))) }];
}

/// An optional `int64_t` parameter.
class Transformer_OptionalI64Parameter<string desc>
    : OptionalParameter<"std::optional<int64_t>", desc> {
  let printer = [{ $_printer << *$_self }];
}

//===----------------------------------------------------------------------===//
// #transformer.rope_scaling
//===----------------------------------------------------------------------===//

def Transformer_RopeScalingAttr : Transformer_Attr<"RopeScaling", "rope_scaling"> {
  let summary = "context-extension scaling of rotary frequencies";
  let description = [{
    HF's `rope_scaling` dictionary, typed. `factor` is always present; the
    other parameters belong to particular kinds:

    | kind | needs | may have |
    |---|---|---|
    | `linear` | `factor` | |
    | `dynamic_ntk` | `factor`, `original_max_position` | |
    | `llama3` | `factor`, `original_max_position`, `low_freq_factor`, `high_freq_factor` | |
    | `yarn` | `factor`, `original_max_position` | `beta_fast`, `beta_slow` |

    Scalings that are not formulas of theta (Phi3's LongRoPE with per-channel
    factor lists) are given to `transformer.rotary` as explicit cos/sin tables
    instead.

    ```mlir
    #transformer.rope_scaling<linear, factor = 4.0>
    #transformer.rope_scaling<llama3, factor = 8.0, original_max_position = 8192,
                              low_freq_factor = 1.0, high_freq_factor = 4.0>
    #transformer.rope_scaling<yarn, factor = 4.0, original_max_position = 32768,
                              beta_fast = 32.0, beta_slow = 1.0>
    ```
  }];
  let parameters = (ins
    EnumParameter<Transformer_RopeScalingKind>:$kind,
    Transformer_F64Parameter<"frequency scaling factor">:$factor,
    Transformer_OptionalI64Parameter<"context length the model was trained with">:$original_max_position,
    Transformer_OptionalF64Parameter<"llama3: low-frequency wavelength factor">:$low_freq_factor,
    Transformer_OptionalF64Parameter<"llama3: high-frequency wavelength factor">:$high_freq_factor,
    Transformer_OptionalF64Parameter<"yarn: fast-rotating boundary">:$beta_fast,
    Transformer_OptionalF64Parameter<"yarn: slow-rotating boundary">:$beta_slow
  );
  let assemblyFormat = [{
    `<` $kind `,` struct($factor, $original_max_position, $low_freq_factor,
                         $high_freq_factor, $beta_fast, $beta_slow) `>`
  }];
  let genVerifyDecl = 1;
}

#endif // ACCEL_TRANSFORMER_ATTRS
