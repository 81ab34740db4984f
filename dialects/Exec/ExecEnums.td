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
]>;
def Exec_ArenaKindAttr : Exec_EnumAttr<Exec_ArenaKind, "arena_kind">;


// Where a slice lives in an activations arena. The arena is laid out as
// [fixed bytes][per_token bytes x max tokens][per_seq bytes x max seqs],
// max tokens and max seqs being the runtime's (fixed when it allocates the
// arena), so one plan serves any batch.
def Exec_ArenaRegion : Exec_I32Enum<"ArenaRegion", "a region of an activations arena", [
  // A view of static shape, `offset` bytes into the fixed region.
  I32EnumCase<"fixed", 0>,
  // A view whose one dynamic dimension is the step's token count, at
  // `offset` x max tokens bytes into the token region.
  I32EnumCase<"tokens", 1>,
  // Likewise for the step's sequence count.
  I32EnumCase<"seqs", 2>,
]>;
def Exec_ArenaRegionAttr : Exec_EnumAttr<Exec_ArenaRegion, "arena_region">;


def Exec_ScheduleKind : Exec_I32Enum<"ScheduleKind", "which steps a schedule serves", [
  // Any ragged batch: prefill chunks and decode tokens mixed.
  I32EnumCase<"mixed", 0>,
  // Exactly one query token per sequence (tokens == seqs).
  I32EnumCase<"decode", 1>,
]>;
def Exec_ScheduleKindAttr : Exec_EnumAttr<Exec_ScheduleKind, "schedule_kind">;


def Exec_StepSizeKind : Exec_I32Enum<"StepSizeKind", "a size that varies per step", [
  I32EnumCase<"tokens", 0>,
  I32EnumCase<"seqs", 1>,
]>;
def Exec_StepSizeKindAttr : Exec_EnumAttr<Exec_StepSizeKind, "step_size_kind">;


def Exec_StepInputKind : Exec_I32Enum<"StepInputKind", "per-step data the runtime binds", [
  I32EnumCase<"token_ids", 0>,       // [tokens] i32 or i64
  I32EnumCase<"positions", 1>,       // [tokens] i32 or i64: each token's position
]>;
def Exec_StepInputKindAttr : Exec_EnumAttr<Exec_StepInputKind, "step_input_kind">;


def Exec_StepOutputKind : Exec_I32Enum<"StepOutputKind", "what the runtime reads after a step", [
  I32EnumCase<"logits", 0>,
  I32EnumCase<"hidden_states", 1>,
]>;
def Exec_StepOutputKindAttr : Exec_EnumAttr<Exec_StepOutputKind, "step_output_kind">;


def Exec_KernelImage : I32BitEnum<"KernelImage", "GPU images a kernel has in the plan", [
  I32BitEnumCaseNone<"none">,
  I32BitEnumCaseBit<"ptx", 0>,
  I32BitEnumCaseBit<"cubin", 1>,
]> {
  let cppNamespace = "::accel::exec";
  let separator = "|";
}
def Exec_KernelImageAttr : Exec_EnumAttr<Exec_KernelImage, "kernel_image">;


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
