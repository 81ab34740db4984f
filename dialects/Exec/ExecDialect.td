//===- ExecDialect.td - the exec dialect ------------------*- tablegen -*-===//
//
// The exec dialect is the last level of accel: the bufferized schedule that
// lib/Plan serialises and the runtime executes step by step.
//
//===----------------------------------------------------------------------===//

#ifndef ACCEL_EXEC_DIALECT
#define ACCEL_EXEC_DIALECT

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Exec_Dialect : Dialect {
  let name = "exec";
  let cppNamespace = "::accel::exec";
  let summary = "the bufferized schedule the runtime executes";
  let description = [{
    The last level of accel. `accel-lower-to-exec`
    (passes/Conversion/TransformerToExec) produces it from the transformer
    dialect; `accel-exec-assign-buffers` places its buffers and
    `accel-exec-select-kernels` its generated kernels; lib/Plan serialises it
    one to one into the plan's schedule (each step op is one `StepKind` of
    runtime/plan/Plan.proto), and the runtime (CPU backend, CUDA backend)
    executes it step by step.

    **Module-level declarations** (symbols):

    * `exec.arena`: a byte-addressed memory region: `activations` (the
      step's buffers, packed by liveness into a fixed region and regions of
      bytes per token and per sequence), `weights` (read-only, filled from
      the plan's weights section), `workspace` (scratch for library
      routines).
    * `exec.kv_pool`: the paged KV cache (one rank's KV heads under `-tp`).
      Its block count is chosen by the runtime at load time
      (`--gpu-memory-utilization`), so it is not a byte-sized arena; it is
      addressed through slot mappings and block tables.
    * `exec.kernel`: a generated kernel that steps name in their `kernel`
      attribute (or that `exec.launch` launches).
    * `exec.schedule`: one runtime step (`decode` or `mixed`), its ops in the
      order the runtime executes them.

    **Symbolic sizes.** A step processes a ragged batch: `tokens` query tokens
    from `seqs` sequences. Both vary per step; a view dimension that depends
    on them is dynamic (`?`) and bound to an `exec.step_size` value (k x
    tokens or k x seqs). Buffers are sized per token and per sequence; the
    runtime multiplies by its own bounds (--max-num-batched-tokens,
    --max-num-seqs) once, when it allocates the arena.

    **Views.** `!exec.view<?x4096xbf16>` is a dense, row-major view of
    memory. Views come from `exec.alloc` (a buffer before placement),
    `exec.slice` (a placed buffer of an arena), `exec.weight`,
    `exec.step_input` (token ids, positions) and `exec.view` (another shape
    of the same bytes); these are declarations, not steps. Every other op in
    a schedule body is one runtime step (ExecStepOps.td: embedding, norms,
    pointwise ops, rotary, the KV cache and attention, gemm and logits,
    split and copy, collectives, pp_transfer, onnx, launch); steps take
    their outputs as operands (destination-passing). `exec.step_output`
    tells the runtime where to read the step's result.
  }];
  let extraClassDeclaration = [{
    /// Registers the types; in ExecTypes.cpp, next to their storage.
    void registerTypes();

    /// Enum attributes print as bare words in op assembly; in the generic
    /// form they are `#exec<arena_kind weights>` (ExecDialect.cpp).
    ::mlir::Attribute parseAttribute(::mlir::DialectAsmParser &parser,
                                     ::mlir::Type type) const override;
    void printAttribute(::mlir::Attribute attr,
                        ::mlir::DialectAsmPrinter &printer) const override;
  }];
  let useDefaultTypePrinterParser = 1;
  // Step ops carry the transformer dialect's enum attributes (activation
  // kinds, rotary style and scaling, quantisation granularity).
  let dependentDialects = ["::accel::transformer::TransformerDialect"];
}

// Base class of every exec op.
class Exec_Op<string mnemonic, list<Trait> traits = []>
    : Op<Exec_Dialect, mnemonic, traits>;

// Base class of every exec type.
class Exec_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Exec_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

#endif // ACCEL_EXEC_DIALECT
