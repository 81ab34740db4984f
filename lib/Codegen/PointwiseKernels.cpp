//===- PointwiseKernels.cpp - residual_add, activation, gated_act ----------===//
//
// Grid-stride loops over vectors of V elements (16 bytes when the
// specialised last dimension divides into them, else V = 1):
//   residual_add  out = a + b                        (n elements)
//   activation    out = kind(x)                      (n elements)
//   gated_act     out[r, j] = kind(x[r, j]) * x[r, I + j]   (x [rows, 2I], gate first)
// Arithmetic in f32, rounded once to the activation dtype. The activation
// formulas are the CPU's and runtime/cuda/kernels/Common.cuh's; exp, erf and tanh
// are libdevice's (__nv_expf, ...), as nvcc uses for the hand-written kernels.
//
//===----------------------------------------------------------------------===//
#include "IRWriter.h"

namespace accel::codegen {

bool isKnownActivation(const std::string &k) {
  return k == "silu" || k == "gelu" || k == "gelu_tanh" || k == "quick_gelu" || k == "relu" ||
         k == "relu_squared" || k == "sigmoid" || k == "tanh";
}

std::string emitActivation(IRWriter &w, const std::string &kind, const std::string &x) {
  const std::string &VF = w.vecF();
  auto mul = [&](const std::string &a, const std::string &b) {
    return w.def("arith.mulf " + a + ", " + b + " : " + VF);
  };
  auto addf = [&](const std::string &a, const std::string &b) {
    return w.def("arith.addf " + a + ", " + b + " : " + VF);
  };
  // 1 / (1 + exp(-v))
  auto sigmoid = [&](const std::string &v) {
    std::string e = w.def("math.exp " + w.def("arith.negf " + v + " : " + VF) + " : " + VF);
    return w.def("arith.divf " + w.splat(1.0) + ", " + addf(w.splat(1.0), e) + " : " + VF);
  };
  // x > 0 ? then : 0 (NaN gives 0, as the CUDA and CPU kernels' comparison does).
  auto positive = [&](const std::string &then) {
    std::string gt = w.def("arith.cmpf ogt, " + x + ", " + w.splat(0.0) + " : " + VF);
    return w.def("arith.select " + gt + ", " + then + ", " + w.splat(0.0) + " : vector<" +
                 std::to_string(w.width()) + "xi1>, " + VF);
  };
  if (kind == "silu")
    return mul(x, sigmoid(x));
  if (kind == "gelu") {
    std::string e = w.def("math.erf " + mul(x, w.splat(0.70710678118654752)) + " : " + VF);
    return mul(mul(w.splat(0.5), x), addf(w.splat(1.0), e));
  }
  if (kind == "gelu_tanh") {
    std::string cube = mul(mul(mul(w.splat(0.044715), x), x), x);
    std::string t =
        w.def("math.tanh " + mul(w.splat(0.79788456080286536), addf(x, cube)) + " : " + VF);
    return mul(mul(w.splat(0.5), x), addf(w.splat(1.0), t));
  }
  if (kind == "quick_gelu")
    return mul(x, sigmoid(mul(w.splat(1.702), x)));
  if (kind == "relu")
    return positive(x);
  if (kind == "relu_squared")
    return positive(mul(x, x));
  if (kind == "sigmoid")
    return sigmoid(x);
  if (kind == "tanh")
    return w.def("math.tanh " + x + " : " + VF);
  return "";
}

std::string emitPointwiseKernel(const KernelSpec &spec, const KernelVariant &v) {
  IRWriter w(v);
  const std::string &VT = w.vecT(), &VF = w.vecF();
  const unsigned V = v.vectorWidth;
  const std::string p = "!llvm.ptr<1>";

  // The first vector of this thread and the grid's stride.
  std::string tid = w.def("gpu.thread_id x");
  std::string bid = w.def("gpu.block_id x");
  std::string blocks = w.def("gpu.grid_dim x");
  std::string bsz = w.index(v.blockSize);
  std::string start =
      w.def("arith.addi " + w.def("arith.muli " + bid + ", " + bsz + " : index") + ", " + tid +
            " : index");
  std::string stride = w.def("arith.muli " + blocks + ", " + bsz + " : index");
  std::string count; // vectors in all
  if (spec.family == Family::GatedAct) {
    count = w.def("arith.muli %rows, " + w.i64(spec.hidden / V) + " : i64");
  } else {
    count = V == 1 ? "%n" : w.def("arith.divui %n, " + w.i64(V) + " : i64");
  }
  w.line("scf.for %i = " + start + " to " + w.toIndex(count) + " step " + stride + " {");
  std::string i = w.toI64("%i");
  std::string sig;
  switch (spec.family) {
  case Family::ResidualAdd: {
    std::string a = w.extend(w.load(w.gep("%a", i, VT), VT, w.alignT()));
    std::string b = w.extend(w.load(w.gep("%b", i, VT), VT, w.alignT()));
    std::string s = w.truncate(w.def("arith.addf " + a + ", " + b + " : " + VF));
    w.store(s, w.gep("%out", i, VT), VT, w.alignT());
    sig = "(%a: " + p + ", %b: " + p + ", %out: " + p + ", %n: i64)";
    break;
  }
  case Family::Activation: {
    std::string x = w.extend(w.load(w.gep("%x", i, VT), VT, w.alignT()));
    std::string y = w.truncate(emitActivation(w, spec.activation, x));
    w.store(y, w.gep("%out", i, VT), VT, w.alignT());
    sig = "(%x: " + p + ", %out: " + p + ", %n: i64)";
    break;
  }
  case Family::GatedAct: {
    const int64_t per = spec.hidden / V; // vectors of one output row
    std::string r = w.def("arith.divui " + i + ", " + w.i64(per) + " : i64");
    std::string j = w.def("arith.remui " + i + ", " + w.i64(per) + " : i64");
    std::string gOff = w.def("arith.addi " + w.def("arith.muli " + r + ", " + w.i64(2 * per) +
                                                   " : i64") +
                             ", " + j + " : i64");
    std::string uOff = w.def("arith.addi " + gOff + ", " + w.i64(per) + " : i64");
    std::string g = w.extend(w.load(w.gep("%x", gOff, VT), VT, w.alignT()));
    std::string u = w.extend(w.load(w.gep("%x", uOff, VT), VT, w.alignT()));
    std::string y =
        w.truncate(w.def("arith.mulf " + emitActivation(w, spec.activation, g) + ", " + u +
                         " : " + VF));
    w.store(y, w.gep("%out", i, VT), VT, w.alignT());
    sig = "(%x: " + p + ", %out: " + p + ", %rows: i64)";
    break;
  }
  default:
    break;
  }
  w.line("}");
  return w.finish(sig, false);
}

} // namespace accel::codegen
