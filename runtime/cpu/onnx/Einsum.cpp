//===- Einsum.cpp - Einsum ------------------------------------------------===//
//
// Two operands whose labels are distinct within each term become one batched
// MatMul (transposes around it); everything else (one or three+ operands,
// diagonals, broadcast ellipsis dims) runs as a direct loop over all labels.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/Gemm.h"
#include "runtime/cpu/onnx/ElementwiseUtil.h"

#include <map>

namespace accel::rt::onnx {

namespace {

/// Labels are ints: letters as themselves, ellipsis dims as 256 + position.
struct Equation {
  std::vector<std::vector<int>> inputs;
  std::vector<int> output;
  std::map<int, int64_t> size;
};

StatusOr<Equation> parse(const KernelContext &ctx, std::string eq,
                         const std::vector<const Tensor *> &ops) {
  Equation e;
  std::string lhs = eq, rhs;
  bool explicitOut = false;
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  if (size_t arrow = eq.find("->"); arrow != std::string::npos) {
    lhs = eq.substr(0, arrow);
    rhs = eq.substr(arrow + 2);
    explicitOut = true;
  } else {
    lhs = eq;
  }
  std::vector<std::string> terms;
  size_t start = 0;
  for (size_t i = 0; i <= lhs.size(); ++i)
    if (i == lhs.size() || lhs[i] == ',') {
      terms.push_back(lhs.substr(start, i - start));
      start = i + 1;
    }
  if (terms.size() != ops.size())
    return ctx.error("equation '" + eq + "' has " + std::to_string(terms.size()) +
                     " terms for " + std::to_string(ops.size()) + " inputs");
  int64_t ellipsisRank = 0;
  std::vector<int64_t> ellipsisDims;
  auto labelsOf = [&](const std::string &term, int64_t rank,
                      std::vector<int> &labels) -> Status {
    size_t dots = term.find("...");
    int64_t named = int64_t(term.size()) - (dots == std::string::npos ? 0 : 3);
    int64_t ell = dots == std::string::npos ? 0 : rank - named;
    if (ell < 0 || (dots == std::string::npos && named != rank))
      return ctx.error("term '" + term + "' does not match an input of rank " +
                       std::to_string(rank));
    for (size_t i = 0; i < term.size(); ++i) {
      if (i == dots) {
        for (int64_t k = 0; k < ell; ++k)
          labels.push_back(256 + int(ellipsisRank - ell + k));
        i += 2;
        continue;
      }
      if (!std::isalpha(static_cast<unsigned char>(term[i])))
        return ctx.error("equation '" + eq + "' has an invalid character '" +
                         std::string(1, term[i]) + "'");
      labels.push_back(term[i]);
    }
    return Status::ok();
  };
  // Ellipsis dims right-align across operands, numpy style.
  for (size_t t = 0; t < terms.size(); ++t) {
    size_t dots = terms[t].find("...");
    if (dots != std::string::npos)
      ellipsisRank = std::max(ellipsisRank, ops[t]->rank() - int64_t(terms[t].size() - 3));
  }
  for (size_t t = 0; t < terms.size(); ++t) {
    std::vector<int> labels;
    ACCEL_RT_RETURN_IF_ERROR(labelsOf(terms[t], ops[t]->rank(), labels));
    for (size_t i = 0; i < labels.size(); ++i) {
      const int64_t d = ops[t]->dim(int64_t(i));
      auto [it, fresh] = e.size.emplace(labels[i], d);
      if (!fresh && it->second != d) {
        if (labels[i] >= 256 && (it->second == 1 || d == 1))
          it->second = std::max(it->second, d);
        else
          return ctx.error("label '" + std::string(1, char(labels[i] < 256 ? labels[i] : '.')) +
                           "' has sizes " + std::to_string(it->second) + " and " +
                           std::to_string(d));
      }
    }
    e.inputs.push_back(labels);
  }
  if (explicitOut) {
    std::string r = rhs;
    size_t dots = r.find("...");
    for (size_t i = 0; i < r.size(); ++i) {
      if (i == dots) {
        for (int64_t k = 0; k < ellipsisRank; ++k)
          e.output.push_back(256 + int(k));
        i += 2;
        continue;
      }
      if (!e.size.count(r[i]))
        return ctx.error("output label '" + std::string(1, r[i]) + "' is not in any input");
      e.output.push_back(r[i]);
    }
  } else {
    for (int64_t k = 0; k < ellipsisRank; ++k)
      e.output.push_back(256 + int(k));
    std::map<int, int> count;
    for (auto &in : e.inputs)
      for (int l : in)
        ++count[l];
    for (auto [l, c] : count)
      if (l < 256 && c == 1)
        e.output.push_back(l);
  }
  return e;
}

/// out[labels of `outL`] = sum over the rest of prod inputs, by brute force.
template <typename T>
void loopEinsum(const Equation &e, const std::vector<Tensor> &ins, T *out) {
  std::vector<int> all(e.output);
  for (auto &[l, s] : e.size)
    if (std::find(all.begin(), all.end(), l) == all.end())
      all.push_back(l);
  const size_t n = all.size();
  std::vector<int64_t> dims(n);
  for (size_t i = 0; i < n; ++i)
    dims[i] = e.size.at(all[i]);
  // Per input, the stride each label contributes (0 for a broadcast dim).
  std::vector<std::vector<int64_t>> st(ins.size(), std::vector<int64_t>(n, 0));
  for (size_t t = 0; t < ins.size(); ++t) {
    int64_t s = 1;
    for (size_t i = e.inputs[t].size(); i-- > 0;) {
      const size_t pos = size_t(std::find(all.begin(), all.end(), e.inputs[t][i]) - all.begin());
      if (ins[t].dim(int64_t(i)) != 1)
        st[t][pos] += s;
      s *= ins[t].dim(int64_t(i));
    }
  }
  std::vector<int64_t> outSt(n, 0);
  int64_t s = 1;
  for (size_t i = e.output.size(); i-- > 0;) {
    outSt[i] = s;
    s *= dims[i];
  }
  std::fill(out, out + s, T(0));
  int64_t total = 1;
  for (int64_t d : dims)
    total *= d;
  if (total == 0)
    return;
  std::vector<int64_t> idx(n, 0), off(ins.size(), 0);
  int64_t o = 0;
  for (int64_t it = 0; it < total; ++it) {
    T p = T(1);
    for (size_t t = 0; t < ins.size(); ++t)
      p = wrapMul(p, ins[t].data<T>()[off[t]]);
    out[o] = wrapAdd(out[o], p);
    for (size_t k = n; k-- > 0;) {
      if (++idx[k] < dims[k]) {
        for (size_t t = 0; t < ins.size(); ++t)
          off[t] += st[t][k];
        o += outSt[k];
        break;
      }
      for (size_t t = 0; t < ins.size(); ++t)
        off[t] -= st[t][k] * (dims[k] - 1);
      o -= outSt[k] * (dims[k] - 1);
      idx[k] = 0;
    }
  }
}

bool distinct(const std::vector<int> &v) {
  std::vector<int> s(v);
  std::sort(s.begin(), s.end());
  return std::adjacent_find(s.begin(), s.end()) == s.end();
}

/// Two operands as batch x m x k times batch x k x n; false when the shape
/// of the problem does not fit (then the loop runs).
template <typename T>
bool matmulEinsum(const Equation &e, const std::vector<Tensor> &ins, Tensor &out) {
  if constexpr (!std::is_floating_point_v<T>) {
    return false;
  } else {
    const auto &a = e.inputs[0], &b = e.inputs[1], &o = e.output;
    if (!distinct(a) || !distinct(b) || !distinct(o))
      return false;
    auto has = [](const std::vector<int> &v, int l) {
      return std::find(v.begin(), v.end(), l) != v.end();
    };
    std::vector<int> batch, m, n, k;
    for (int l : a) {
      if (has(b, l) && has(o, l)) batch.push_back(l);
      else if (has(b, l)) k.push_back(l);
      else if (has(o, l)) m.push_back(l);
      else return false; // summed over A alone
    }
    for (int l : b)
      if (!has(a, l)) {
        if (has(o, l)) n.push_back(l);
        else return false;
      }
    for (size_t t = 0; t < 2; ++t)
      for (size_t i = 0; i < e.inputs[t].size(); ++i)
        if (ins[t].dim(int64_t(i)) != e.size.at(e.inputs[t][i]))
          return false; // a broadcast ellipsis dim
    auto prod = [&](const std::vector<int> &ls) {
      int64_t p = 1;
      for (int l : ls) p *= e.size.at(l);
      return p;
    };
    auto permute = [&](const Tensor &t, const std::vector<int> &from,
                       std::vector<int> to) -> Tensor {
      std::vector<int64_t> perm;
      for (int l : to)
        perm.push_back(int64_t(std::find(from.begin(), from.end(), l) - from.begin()));
      Tensor r = Tensor::zeros(t.dtype(), {t.numElements()});
      if (r.defined())
        transposeBytes(t.rawData(), t.shape(), perm, r.rawData(), sizeof(T));
      return r;
    };
    std::vector<int> aOrder(batch), bOrder(batch), cOrder(batch);
    aOrder.insert(aOrder.end(), m.begin(), m.end());
    aOrder.insert(aOrder.end(), k.begin(), k.end());
    bOrder.insert(bOrder.end(), k.begin(), k.end());
    bOrder.insert(bOrder.end(), n.begin(), n.end());
    cOrder.insert(cOrder.end(), m.begin(), m.end());
    cOrder.insert(cOrder.end(), n.begin(), n.end());
    Tensor pa = permute(ins[0], a, aOrder), pb = permute(ins[1], b, bOrder);
    const int64_t B = prod(batch), M = prod(m), N = prod(n), K = prod(k);
    Tensor c = Tensor::zeros(dtypeOf<T>(), {B * M * N});
    if (!pa.defined() || !pb.defined() || !c.defined())
      return false;
    for (int64_t i = 0; i < B; ++i) {
      if constexpr (std::is_same_v<T, float>)
        cpu::gemmF32(false, false, M, N, K, 1.0f, pa.data<T>() + i * M * K, K,
                     pb.data<T>() + i * K * N, N, 0.0f, c.data<T>() + i * M * N, N);
      else
        cpu::gemmF64(false, false, M, N, K, 1.0, pa.data<T>() + i * M * K, K,
                     pb.data<T>() + i * K * N, N, 0.0, c.data<T>() + i * M * N, N);
    }
    Shape cShape;
    for (int l : cOrder)
      cShape.push_back(e.size.at(l));
    Tensor cv = c.reshaped(cShape).value();
    Tensor r = permute(cv, cOrder, o);
    if (!r.defined())
      return false;
    out = r;
    return true;
  }
}

Status kEinsum(KernelContext &ctx) {
  if (!ctx.hasAttr("equation"))
    return ctx.error("attribute 'equation' is required");
  const std::string eq = ctx.attrString("equation", "");
  std::vector<const Tensor *> ops;
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    if (!ctx.in(i))
      return ctx.error("input " + std::to_string(i) + " is missing");
    if (ctx.in(i)->dtype() != ctx.in(0)->dtype())
      return ctx.error("inputs must share a type, got " + ctx.in(0)->describe() + " and " +
                       ctx.in(i)->describe());
    ACCEL_RT_RETURN_IF_ERROR(checkAllowed(ctx, *ctx.in(i), kAllowNumeric));
    ops.push_back(ctx.in(i));
  }
  Equation e;
  ACCEL_RT_ASSIGN_OR_RETURN(e, parse(ctx, eq, ops));
  std::vector<Tensor> ins;
  for (const Tensor *t : ops) {
    Tensor w;
    ACCEL_RT_ASSIGN_OR_RETURN(w, widen(*t));
    ins.push_back(w);
  }
  Shape outShape;
  for (int l : e.output)
    outShape.push_back(e.size.at(l));
  const DType ct = ins[0].dtype();
  Tensor out;
  ACCEL_RT_ASSIGN_OR_RETURN(out, Tensor::allocate(ct, outShape));
  dispatchAllowed<kAllowNumeric>(ct, [&](auto tag) {
    using T = typename decltype(tag)::type;
    Tensor mm;
    if (ins.size() == 2 && matmulEinsum<T>(e, ins, mm))
      std::memcpy(out.rawData(), mm.rawData(), out.byteSize());
    else
      loopEinsum<T>(e, ins, out.data<T>());
  });
  ACCEL_RT_ASSIGN_OR_RETURN(ctx.outputs[0], convertTo(out, ops[0]->dtype()));
  return Status::ok();
}

} // namespace

void addEinsumKernels(KernelTable &t) { t["Einsum"] = {kEinsum, 1, -1, 1}; }

} // namespace accel::rt::onnx
