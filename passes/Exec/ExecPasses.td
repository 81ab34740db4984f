//===- ExecPasses.td - passes on the exec dialect ---------*- tablegen -*-===//
//
// What runs between accel-lower-to-exec and the plan writer: buffer
// assignment into the activations arena, and the choice of generated kernels
// for the target.
//
//===----------------------------------------------------------------------===//

#ifndef ACCEL_PASSES_EXEC
#define ACCEL_PASSES_EXEC

include "mlir/Pass/PassBase.td"

def AssignBuffers : Pass<"accel-exec-assign-buffers", "mlir::ModuleOp"> {
  let summary = "places every exec.alloc in one activations arena, packed by liveness";
  let description = [{
    Replaces every `exec.alloc` of the module's schedules by an `exec.slice`
    of one `exec.arena @act activations`, so that the plan carries the whole
    memory plan and the runtime allocates nothing per step.

    A buffer is live from the first step that reads or writes it (through
    any `exec.view` of it) to the last one (`exec.step_output` reads at the
    end). Buffers go to the region their shape calls for: static ones to the
    `fixed` region (bytes), those with a dynamic dimension of the step's
    tokens (sequences) to the `tokens` (`seqs`) region, sized per token (per
    sequence). In each region, buffers are placed largest first (ties:
    earlier start), each at the lowest offset where it overlaps no placed
    buffer whose interval overlaps its own; every size and offset is a
    multiple of `alignment`. A step's outputs never share bytes with its
    inputs (their intervals meet at the step).

    Before:
    ```mlir
    %x = exec.alloc sizes(%t) : !exec.view<?x64xf32>
    exec.rms_norm %h, %w -> %x {epsilon = 1.0e-05 : f64} : ...
    ```
    After:
    ```mlir
    exec.arena @act activations size 0 per_token 512 align 256
    ...
    %x = exec.slice @act[tokens 256] sizes(%t) : !exec.view<?x64xf32>
    ```
    `accelc -print-memory-plan` prints the result and the bytes a buffer
    per value would take.
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", "256",
           "alignment of every buffer, in bytes (a power of two)">,
  ];
}

def RemoveDeadSteps : Pass<"accel-exec-remove-dead-steps", "mlir::ModuleOp"> {
  let summary = "removes steps whose results nothing reads";
  let description = [{
    A step whose every output is a buffer of its own (an `exec.alloc`, seen
    through `exec.view`s) that no other op reads is removed, then the views
    and buffers left without a use; repeated until nothing changes. Steps
    that write the KV cache (`exec.kv_write`, `exec.qkv_rotary_kv_write`)
    and steps that write a buffer another op also touches stay. The lowering
    leaves such steps behind: a value handed to the next pipeline stage only
    for its shape, the reshape of the token ids a shape computation read.

    ```mlir
    %i = exec.alloc sizes(%t) : !exec.view<?xi64>
    exec.pp_transfer %ids -> %i from 0 to 1 : !exec.view<?xi64>   // removed
    ```
  }];
}

def SelectKernels : Pass<"accel-exec-select-kernels", "mlir::ModuleOp"> {
  let summary = "chooses the generated kernel of each step for a GPU target";
  let description = [{
    For a GPU target (`chip`, e.g. `sm_90`), gives every step that a
    generated kernel can run (rms_norm, add_rms_norm, residual_add,
    activation, gated_act, the activation of a gated_mlp with fused gate_up,
    half_split rotary; docs/codegen.md) a `kernel` attribute naming an
    `exec.kernel` specialised for what its types say statically (hidden
    size, intermediate size, heads, head_dim, rotary_dim, tables, position
    type), one declaration per distinct specialisation. A step whose shapes
    are not static enough keeps the runtime's hand-written kernel.

    An `exec.onnx` step has no GPU implementation: the pass refuses the
    module in one sentence naming the operator and the node, since the GPU
    runtime must not run a step on the host. (`accelc` keeps such plans
    for the CPU target; `accelc -allow-host-steps`, `allow-onnx`, keeps them.)
    An `exec.moe` step (a mixture of experts) gets no generated kernel: the
    GPU runtime runs it with its hand-written kernels (docs/gpu-backend.md).
    With `generate=false` the pass only refuses: no step gets a kernel.

    ```mlir
    exec.kernel @rms_norm_h64() sm [90] image none implements "rms_norm" {hidden = 64 : i64}
    exec.schedule @main mixed {
      ...
      exec.rms_norm %x, %w -> %y {epsilon = 1.0e-05 : f64, kernel = @rms_norm_h64} : ...
    ```
  }];
  let options = [
    Option<"chip", "chip", "std::string", "\"sm_90\"", "the target SM (sm_80, sm_90)">,
    Option<"allowOnnx", "allow-onnx", "bool", "false",
           "keep exec.onnx steps (the GPU runtime then runs them on the host)">,
    Option<"generate", "generate", "bool", "true",
           "choose generated kernels; false (accelc -no-codegen, or no libdevice) only "
           "refuses what a GPU cannot run">,
  ];
}

#endif // ACCEL_PASSES_EXEC
