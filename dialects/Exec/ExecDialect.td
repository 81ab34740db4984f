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
    The last level of accel. A module in the exec dialect is what the Layout
    pass produces, what lib/Plan serialises into the plan's schedule and memory
    plan, and what the runtime (CPU backend, CUDA backend) executes.

    **Module-level declarations** (symbols):

    * `exec.arena`: a byte-addressed memory region: `activations` (per-step
      temporaries packed by liveness), `weights` (read-only, filled from the
      plan's weight section), `workspace` (scratch for library routines),
      `step_inputs` (per-step metadata the runtime writes before each step).
    * `exec.kv_pool`: the paged KV cache. Its block count is chosen by the
      runtime at load time (`--gpu-memory-utilization`), so it is not a
      byte-sized arena; it is addressed through slot mappings and block tables.
    * `exec.kernel`: a generated kernel the schedule launches.
    * `exec.schedule`: one runtime step (`decode` or `mixed`), its ops in the
      order the runtime executes them.

    **Symbolic sizes.** A step processes a ragged batch: `tokens` query tokens
    from `seqs` sequences. Both vary per step; the schedule declares their
    upper bounds (`max_tokens`, `max_seqs`). A view dimension that depends on
    them is dynamic (`?`) and bound to an `exec.step_size` value; every byte
    size the verifiers check (and the Layout pass reserves) uses the bound.

    **Views.** `!exec.view<?x4096xbf16>` is a dense, row-major view of arena
    memory. Views come only from `exec.slice`, `exec.weight` and
    `exec.step_input`, which are declarations, not steps. Every other op in a
    schedule body is one runtime step: `exec.launch`, `exec.gemm`,
    `exec.attention_prefill`, `exec.attention_decode`, `exec.kv_write`,
    `exec.collective`, `exec.copy`. `exec.step_output` tells the runtime where
    to read the step's result.
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
