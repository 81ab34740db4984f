//===- NormKernels.cpp - rms_norm and add_rms_norm as gpu.func -------------===//
//
// One block per row of [rows, hidden], hidden specialised. Each thread walks
// the row in vectors of V elements (16 bytes when hidden % V == 0), summing
// squares in f32; the block sum gives inv = 1 / sqrt(mean + eps); a second
// walk writes (x * inv) * (w + offset) (Gemma's offset = 1). add_rms_norm
// first rounds x + residual to the activation dtype, writes it (the next
// residual) and normalises the rounded values, as the CPU kernels and
// runtime/cuda/kernels/Norm.cu do; the second walk reads back the values the
// same thread wrote.
//
//===----------------------------------------------------------------------===//
#include "IRWriter.h"

namespace accel::codegen {

std::string emitNormKernel(const KernelSpec &spec, const KernelVariant &v) {
  IRWriter w(v);
  const bool add = spec.family == Family::AddRmsNorm;
  const int64_t vectors = spec.hidden / v.vectorWidth;
  const std::string &VT = w.vecT(), &VF = w.vecF();

  std::string tid = w.def("gpu.thread_id x");
  std::string row = w.toI64(w.def("gpu.block_id x"));
  std::string rowOff = w.def("arith.muli " + row + ", " + w.i64(vectors) + " : i64");
  std::string xRow = w.gep("%x", rowOff, VT);
  std::string rRow = add ? w.gep("%residual", rowOff, VT) : "";
  std::string sRow = add ? w.gep("%sum", rowOff, VT) : "";
  std::string oRow = w.gep("%out", rowOff, VT);
  std::string step = w.index(v.blockSize), end = w.index(vectors);

  // Sum of squares (of the rounded sum for add_rms_norm).
  std::string acc = w.fresh();
  w.line(acc + " = scf.for %i = " + tid + " to " + end + " step " + step +
         " iter_args(%a = " + w.splat(0.0) + ") -> (" + VF + ") {");
  std::string i = w.toI64("%i");
  std::string x = w.extend(w.load(w.gep(xRow, i, VT), VT, w.alignT()));
  if (add) {
    std::string r = w.extend(w.load(w.gep(rRow, i, VT), VT, w.alignT()));
    std::string s = w.truncate(w.def("arith.addf " + x + ", " + r + " : " + VF));
    w.store(s, w.gep(sRow, i, VT), VT, w.alignT());
    x = w.extend(s);
  }
  std::string a = w.def("math.fma " + x + ", " + x + ", %a : " + VF);
  w.line("scf.yield " + a + " : " + VF);
  w.line("}");
  std::string part = w.def("vector.reduction <add>, " + acc + " : " + VF + " into f32");
  std::string total = w.blockSum(part, "%scratch");
  std::string mean = w.def("arith.divf " + total + ", " + w.f32(double(spec.hidden)) + " : f32");
  std::string var = w.def("arith.addf " + mean + ", %eps : f32");
  std::string root = w.def("math.sqrt " + var + " : f32");
  std::string inv = w.def("arith.divf " + w.f32(1.0) + ", " + root + " : f32");
  std::string invV = w.def("vector.broadcast " + inv + " : f32 to " + VF);
  std::string offV = w.def("vector.broadcast %offset : f32 to " + VF);

  // Normalise and scale.
  w.line("scf.for %j = " + tid + " to " + end + " step " + step + " {");
  std::string j = w.toI64("%j");
  std::string y = w.extend(w.load(w.gep(add ? sRow : xRow, j, VT), VT, w.alignT()));
  std::string wt = w.load(w.gep("%weight", j, VF), VF, w.alignF());
  std::string scaled = w.def("arith.mulf " + y + ", " + invV + " : " + VF);
  std::string gain = w.def("arith.addf " + wt + ", " + offV + " : " + VF);
  std::string out = w.truncate(w.def("arith.mulf " + scaled + ", " + gain + " : " + VF));
  w.store(out, w.gep(oRow, j, VT), VT, w.alignT());
  w.line("}");

  const std::string p = "!llvm.ptr<1>";
  std::string sig = add ? "(%x: " + p + ", %residual: " + p + ", %weight: " + p + ", %out: " + p +
                              ", %sum: " + p + ", %eps: f32, %offset: f32)"
                        : "(%x: " + p + ", %weight: " + p + ", %out: " + p +
                              ", %eps: f32, %offset: f32)";
  return w.finish(sig, v.blockSize > 32);
}

} // namespace accel::codegen
