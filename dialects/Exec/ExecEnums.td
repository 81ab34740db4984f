//===- ExecEnums.td - exec dialect enums ------------------*- tablegen -*-===//
//
// Every enum is stored as an attribute of the exec dialect and printed as a
// bare word in op assembly (`exec.arena @act activations ...`).
//
//===----------------------------------------------------------------------===//

#ifndef ACCEL_EXEC_ENUMS
#define ACCEL_EXEC_ENUMS

include "ExecDialect.td"
include "mlir/IR/EnumAttr.td"

class Exec_I32Enum<string name, string summary, list<EnumCase> cases>
    : I32Enum<name, summary, cases> {
  let cppNamespace = "::accel::exec";
}

class Exec_EnumAttr<EnumInfo info, string mnemonic>
    : EnumAttr<Exec_Dialect, info, mnemonic> {
  // A bare word in op assembly; the empty literal drops the leading space.
  let assemblyFormat = "`` $value";
}

//===----------------------------------------------------------------------===//
// ArenaKind
//===----------------------------------------------------------------------===//

def Exec_ArenaKind : Exec_I32Enum<"ArenaKind", "what an arena holds", [
  I32EnumCase<"activations", 0>,
  I32EnumCase<"weights", 1>,
  I32EnumCase<"workspace", 2>,
  I32EnumCase<"step_inputs", 3>,
]>;
def Exec_ArenaKindAttr : Exec_EnumAttr<Exec_ArenaKind, "arena_kind">;

//===----------------------------------------------------------------------===//
// ScheduleKind
//===----------------------------------------------------------------------===//

def Exec_ScheduleKind : Exec_I32Enum<"ScheduleKind", "which steps a schedule serves", [
  // Any ragged batch: prefill chunks and decode tokens mixed.
  I32EnumCase<"mixed", 0>,
  // Exactly one query token per sequence (tokens == seqs).
  I32EnumCase<"decode", 1>,
]>;
def Exec_ScheduleKindAttr : Exec_EnumAttr<Exec_ScheduleKind, "schedule_kind">;

//===----------------------------------------------------------------------===//
// StepSizeKind
//===----------------------------------------------------------------------===//

def Exec_StepSizeKind : Exec_I32Enum<"StepSizeKind", "a size that varies per step", [
  I32EnumCase<"tokens", 0>,
  I32EnumCase<"seqs", 1>,
]>;
def Exec_StepSizeKindAttr : Exec_EnumAttr<Exec_StepSizeKind, "step_size_kind">;

//===----------------------------------------------------------------------===//
// StepInputKind
//===----------------------------------------------------------------------===//

def Exec_StepInputKind : Exec_I32Enum<"StepInputKind", "per-step metadata the runtime writes", [
  I32EnumCase<"token_ids", 0>,       // [tokens] i32
  I32EnumCase<"positions", 1>,       // [tokens] i32
  I32EnumCase<"slot_mapping", 2>,    // [tokens] i32: block * block_size + offset
  I32EnumCase<"seq_lens", 3>,        // [seqs] i32: context length incl. this step
  I32EnumCase<"query_start_loc", 4>, // [seqs + 1] i32: prefix sum of query lens
  I32EnumCase<"block_tables", 5>,    // [seqs, max_blocks_per_seq] i32
  I32EnumCase<"logits_indices", 6>,  // [seqs] i32: row of each sequence's last token
]>;
def Exec_StepInputKindAttr : Exec_EnumAttr<Exec_StepInputKind, "step_input_kind">;

//===----------------------------------------------------------------------===//
// StepOutputKind
//===----------------------------------------------------------------------===//

def Exec_StepOutputKind : Exec_I32Enum<"StepOutputKind", "what the runtime reads after a step", [
  I32EnumCase<"logits", 0>,
  I32EnumCase<"hidden_states", 1>,
]>;
def Exec_StepOutputKindAttr : Exec_EnumAttr<Exec_StepOutputKind, "step_output_kind">;

//===----------------------------------------------------------------------===//
// KernelImage
//===----------------------------------------------------------------------===//

def Exec_KernelImage : I32BitEnum<"KernelImage", "GPU images a kernel has in the plan", [
  I32BitEnumCaseNone<"none">,
  I32BitEnumCaseBit<"ptx", 0>,
  I32BitEnumCaseBit<"cubin", 1>,
]> {
  let cppNamespace = "::accel::exec";
  let separator = "|";
}
def Exec_KernelImageAttr : Exec_EnumAttr<Exec_KernelImage, "kernel_image">;

//===----------------------------------------------------------------------===//
// GemmActivation
//===----------------------------------------------------------------------===//

// The activations cuBLASLt fuses into its epilogue. SiLU is not among them:
// gated MLPs use a generated kernel for silu(gate) * up.
def Exec_GemmActivation : Exec_I32Enum<"GemmActivation", "activation fused into a GEMM epilogue", [
  I32EnumCase<"none", 0>,
  I32EnumCase<"relu", 1>,
  I32EnumCase<"gelu_tanh", 2>,
]>;
def Exec_GemmActivationAttr : Exec_EnumAttr<Exec_GemmActivation, "gemm_activation">;

//===----------------------------------------------------------------------===//
// ComputeType
//===----------------------------------------------------------------------===//

def Exec_ComputeType : Exec_I32Enum<"ComputeType", "GEMM accumulation type", [
  I32EnumCase<"f32", 0>,
  I32EnumCase<"tf32", 1>,  // f32 inputs, TF32 tensor cores
  I32EnumCase<"f16", 2>,
  I32EnumCase<"i32", 3>,
]>;
def Exec_ComputeTypeAttr : Exec_EnumAttr<Exec_ComputeType, "compute_type">;

//===----------------------------------------------------------------------===//
// CollectiveKind, ReduceKind
//===----------------------------------------------------------------------===//

def Exec_CollectiveKind : Exec_I32Enum<"CollectiveKind", "NCCL collective", [
  I32EnumCase<"all_reduce", 0>,
  I32EnumCase<"all_gather", 1>,
  I32EnumCase<"reduce_scatter", 2>,
]>;
def Exec_CollectiveKindAttr : Exec_EnumAttr<Exec_CollectiveKind, "collective_kind">;

def Exec_ReduceKind : Exec_I32Enum<"ReduceKind", "reduction of a collective", [
  I32EnumCase<"sum", 0>,
  I32EnumCase<"max", 1>,
  I32EnumCase<"min", 2>,
]>;
def Exec_ReduceKindAttr : Exec_EnumAttr<Exec_ReduceKind, "reduce_kind">;

#endif // ACCEL_EXEC_ENUMS
