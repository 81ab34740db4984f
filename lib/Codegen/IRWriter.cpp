//===- IRWriter.cpp - writes one gpu.func of a generated kernel ------------===//
#include "IRWriter.h"

#include <cstdio>

namespace accel::codegen {

namespace {
const char *kPtr = "!llvm.ptr<1>";

std::string vec(unsigned n, const std::string &elem) {
  return "vector<" + std::to_string(n) + "x" + elem + ">";
}

std::string floatLiteral(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.9e", v);
  return buf;
}
} // namespace

IRWriter::IRWriter(const KernelVariant &v)
    : v_(v), elem_(elemTypeName(v.dtype)), vecT_(vec(v.vectorWidth, elem_)),
      vecF_(vec(v.vectorWidth, "f32")) {}

unsigned IRWriter::alignT() const { return v_.vectorWidth * elemTypeBytes(v_.dtype); }
unsigned IRWriter::alignF() const { return std::min(16u, v_.vectorWidth * 4); }

void IRWriter::line(const std::string &text) { body_ += "      " + text + "\n"; }

std::string IRWriter::fresh() { return "%v" + std::to_string(next_++); }

std::string IRWriter::def(const std::string &rhs) {
  std::string n = fresh();
  line(n + " = " + rhs);
  return n;
}

std::string IRWriter::constant(const std::string &key, const std::string &rhs) {
  auto it = constCache_.find(key);
  if (it != constCache_.end())
    return it->second;
  std::string n = "%c" + std::to_string(constCache_.size());
  consts_ += "      " + n + " = " + rhs + "\n";
  constCache_[key] = n;
  return n;
}

std::string IRWriter::index(int64_t v) {
  return constant("index" + std::to_string(v), "arith.constant " + std::to_string(v) + " : index");
}
std::string IRWriter::i64(int64_t v) {
  return constant("i64" + std::to_string(v), "arith.constant " + std::to_string(v) + " : i64");
}
std::string IRWriter::f32(double v) {
  std::string lit = floatLiteral(v);
  return constant("f32" + lit, "arith.constant " + lit + " : f32");
}
std::string IRWriter::splat(double v) {
  std::string lit = floatLiteral(v);
  return constant("vf" + lit, "arith.constant dense<" + lit + "> : " + vecF_);
}

std::string IRWriter::toI64(const std::string &idx) {
  return def("arith.index_cast " + idx + " : index to i64");
}
std::string IRWriter::toIndex(const std::string &v) {
  return def("arith.index_cast " + v + " : i64 to index");
}

std::string IRWriter::gep(const std::string &base, const std::string &off,
                          const std::string &elemType) {
  return def("llvm.getelementptr inbounds " + base + "[" + off + "] : (" + kPtr +
             ", i64) -> " + kPtr + ", " + elemType);
}

std::string IRWriter::load(const std::string &ptr, const std::string &type, unsigned align) {
  return def("llvm.load " + ptr + " {alignment = " + std::to_string(align) + " : i64} : " +
             kPtr + " -> " + type);
}

void IRWriter::store(const std::string &value, const std::string &ptr, const std::string &type,
                     unsigned align) {
  line("llvm.store " + value + ", " + ptr + " {alignment = " + std::to_string(align) +
       " : i64} : " + type + ", " + kPtr);
}

std::string IRWriter::extend(const std::string &vt) {
  if (v_.dtype == ElemType::F32)
    return vt;
  return def("arith.extf " + vt + " : " + vecT_ + " to " + vecF_);
}

std::string IRWriter::truncate(const std::string &vf) {
  if (v_.dtype == ElemType::F32)
    return vf;
  return def("arith.truncf " + vf + " : " + vecF_ + " to " + vecT_);
}

std::string IRWriter::blockSum(const std::string &value, const std::string &scratch) {
  const std::string width = constant("i32_32", "arith.constant 32 : i32");
  auto warpSum = [&](std::string v) {
    for (int offset : {16, 8, 4, 2, 1}) {
      std::string off = constant("i32_" + std::to_string(offset),
                                 "arith.constant " + std::to_string(offset) + " : i32");
      std::string other = fresh(), valid = fresh();
      line(other + ", " + valid + " = gpu.shuffle xor " + v + ", " + off + ", " + width +
           " : f32");
      v = def("arith.addf " + v + ", " + other + " : f32");
    }
    return v;
  };
  std::string s = warpSum(value);
  const unsigned warps = v_.blockSize / 32;
  if (warps <= 1)
    return s;
  const std::string mem = "memref<32xf32, #gpu.address_space<workgroup>>";
  std::string tid = def("gpu.thread_id x");
  std::string lane = def("arith.remui " + tid + ", " + index(32) + " : index");
  std::string warp = def("arith.divui " + tid + ", " + index(32) + " : index");
  std::string first = def("arith.cmpi eq, " + lane + ", " + index(0) + " : index");
  line("scf.if " + first + " {");
  line("  memref.store " + s + ", " + scratch + "[" + warp + "] : " + mem);
  line("}");
  line("gpu.barrier");
  std::string inRange = def("arith.cmpi ult, " + lane + ", " + index(warps) + " : index");
  std::string part = fresh();
  line(part + " = scf.if " + inRange + " -> (f32) {");
  std::string loaded = fresh();
  line("  " + loaded + " = memref.load " + scratch + "[" + lane + "] : " + mem);
  line("  scf.yield " + loaded + " : f32");
  line("} else {");
  line("  scf.yield " + f32(0.0) + " : f32");
  line("}");
  return warpSum(part);
}

std::string IRWriter::finish(const std::string &signature, bool scratch) const {
  std::string s = "    gpu.func @" + v_.symbol + signature;
  if (scratch)
    s += "\n        workgroup(%scratch : memref<32xf32, #gpu.address_space<workgroup>>)";
  s += "\n        kernel attributes {known_block_size = array<i32: " +
       std::to_string(v_.blockSize) + ", 1, 1>} {\n";
  // Programmatic dependent launch: let the next kernel start at once (a
  // GEMV after a norm puts its blocks on the idle SMs and its first weight
  // loads in flight), then wait for the previous kernel's results before
  // the first load.
  const std::string pdl = v_.dependentLaunch ? "      nvvm.griddepcontrol launch_dependents\n"
                                               "      nvvm.griddepcontrol wait\n"
                                             : "";
  s += consts_ + pdl + body_ + "      gpu.return\n    }\n";
  return s;
}

} // namespace accel::codegen
