//===- RotaryKernels.cpp - half_split rotary embedding as gpu.func ---------===//
//
// x [tokens, heads, head_dim] rotated by each token's position (HF's
// rotate_half, runtime/cuda/kernels/Rotary.cu's semantics): for j < rotary_dim / 2
// the pair (j, j + rotary_dim / 2) of every head becomes
//   (x1 c - x2 s, x2 c + x1 s),  c, s = cos, sin(float(pos) * inv_freq[j])
// or c, s read from f32 tables [max_position, rotary_dim / 2] at row pos.
// Channels past rotary_dim pass through. One block per token; heads, head_dim
// and rotary_dim are specialised, pairs are walked V at a time (16 bytes of
// activations when rotary_dim / 2 and the pass-through width divide into V).
// inv_freq (theta, linear / llama3 / yarn scaling) is computed by the runtime
// with the CPU's function, as for the hand-written kernel.
//
//===----------------------------------------------------------------------===//
#include "IRWriter.h"

namespace accel::codegen {

std::string emitRotaryKernel(const KernelSpec &spec, const KernelVariant &v) {
  IRWriter w(v);
  const std::string &VT = w.vecT(), &VF = w.vecF(), &T = w.elem();
  const unsigned V = v.vectorWidth;
  const int64_t half = spec.rotaryDim / 2, rest = spec.headDim - spec.rotaryDim;
  const int64_t hv = half / V, rv = rest / V;
  const std::string p = "!llvm.ptr<1>";

  std::string tid = w.def("gpu.thread_id x");
  std::string t = w.toI64(w.def("gpu.block_id x"));
  const char *posType = spec.positions64 ? "i64" : "i32";
  std::string pos = w.load(w.gep("%positions", t, posType), posType, spec.positions64 ? 8 : 4);
  if (!spec.positions64)
    pos = w.def("arith.extsi " + pos + " : i32 to i64");
  std::string tokenBase =
      w.def("arith.muli " + t + ", " + w.i64(spec.heads * spec.headDim) + " : i64");
  std::string step = w.index(v.blockSize);

  // Rotated pairs.
  w.line("scf.for %i = " + tid + " to " + w.index(spec.heads * hv) + " step " + step + " {");
  std::string i = w.toI64("%i");
  std::string h = w.def("arith.divui " + i + ", " + w.i64(hv) + " : i64");
  std::string j = w.def("arith.muli " + w.def("arith.remui " + i + ", " + w.i64(hv) + " : i64") +
                        ", " + w.i64(V) + " : i64"); // first channel of the vector
  std::string c, s;
  if (spec.tables) {
    std::string row = w.def("arith.muli " + pos + ", " + w.i64(half) + " : i64");
    std::string at = w.def("arith.addi " + row + ", " + j + " : i64");
    c = w.load(w.gep("%cos", at, "f32"), VF, w.alignF());
    s = w.load(w.gep("%sin", at, "f32"), VF, w.alignF());
  } else {
    std::string posF = w.def("arith.sitofp " + pos + " : i64 to f32");
    std::string freq = w.load(w.gep("%inv_freq", j, "f32"), VF, w.alignF());
    std::string angle = w.def("arith.mulf " + w.def("vector.broadcast " + posF + " : f32 to " +
                                                    VF) +
                              ", " + freq + " : " + VF);
    c = w.def("math.cos " + angle + " : " + VF);
    s = w.def("math.sin " + angle + " : " + VF);
  }
  std::string e1 = w.def("arith.addi " + tokenBase + ", " +
                         w.def("arith.addi " + w.def("arith.muli " + h + ", " +
                                                     w.i64(spec.headDim) + " : i64") +
                               ", " + j + " : i64") +
                         " : i64");
  std::string e2 = w.def("arith.addi " + e1 + ", " + w.i64(half) + " : i64");
  std::string x1 = w.extend(w.load(w.gep("%x", e1, T), VT, w.alignT()));
  std::string x2 = w.extend(w.load(w.gep("%x", e2, T), VT, w.alignT()));
  auto mul = [&](const std::string &a, const std::string &b) {
    return w.def("arith.mulf " + a + ", " + b + " : " + VF);
  };
  std::string o1 = w.truncate(w.def("arith.subf " + mul(x1, c) + ", " + mul(x2, s) + " : " + VF));
  std::string o2 = w.truncate(w.def("arith.addf " + mul(x2, c) + ", " + mul(x1, s) + " : " + VF));
  w.store(o1, w.gep("%out", e1, T), VT, w.alignT());
  w.store(o2, w.gep("%out", e2, T), VT, w.alignT());
  w.line("}");

  // Pass-through channels.
  if (rest > 0) {
    w.line("scf.for %k = " + tid + " to " + w.index(spec.heads * rv) + " step " + step + " {");
    std::string k = w.toI64("%k");
    std::string hh = w.def("arith.divui " + k + ", " + w.i64(rv) + " : i64");
    std::string cc = w.def("arith.muli " + w.def("arith.remui " + k + ", " + w.i64(rv) +
                                                 " : i64") +
                           ", " + w.i64(V) + " : i64");
    std::string e = w.def(
        "arith.addi " + tokenBase + ", " +
        w.def("arith.addi " + w.def("arith.muli " + hh + ", " + w.i64(spec.headDim) + " : i64") +
              ", " + w.def("arith.addi " + cc + ", " + w.i64(spec.rotaryDim) + " : i64") +
              " : i64") +
        " : i64");
    std::string val = w.load(w.gep("%x", e, T), VT, w.alignT());
    w.store(val, w.gep("%out", e, T), VT, w.alignT());
    w.line("}");
  }

  std::string sig = "(%x: " + p + ", %out: " + p + ", %positions: " + p;
  sig += spec.tables ? ", %cos: " + p + ", %sin: " + p + ")" : ", %inv_freq: " + p + ")";
  return w.finish(sig, false);
}

} // namespace accel::codegen
