//===- Onnx.cpp - the ONNX glue on the GPU --------------------------------===//
//
// The ONNX operators raising leaves (`launch onnx.<Op>`): shape arithmetic
// on the device shape, Split/Slice/Concat of device tensors as device
// copies, everything else on the CPU kernels (runtime/cpu/onnx), its
// inputs brought to the host (a fallback, logged once per operator).
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/ops/Ops.h"

#include "runtime/cpu/onnx/OnnxKernels.h"

namespace accel::rt::engine::ops {

namespace {

/// A host tensor with `like`'s dtype and shape whose data must never be
/// read: the CPU kernels of shape-only and view operators take it.
Tensor shapeProxy(const DeviceTensor &like) {
  static const unsigned char dummy[64] = {0};
  return Tensor::view(like.dtype, like.shape, dummy, nullptr);
}

bool anyOnDeviceOnly(const Inputs &in) {
  for (GpuValue *v : in)
    if (v && !v->host.defined() && v->dev.defined())
      return true;
  return false;
}

int64_t normAxis(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

/// The ONNX op on the host: inputs brought to the host (a fallback, logged,
/// when one had to be downloaded), the CPU kernel, host outputs.
Status runOnHost(GpuRunState &st, const std::string &name, const std::string &type,
                 const std::string &domain, const onnx::AttrMap &attrs, int64_t numOutputs,
                 Inputs &in, Outputs &out) {
  std::vector<Tensor> hosts(in.size());
  std::vector<const Tensor *> ptrs(in.size(), nullptr);
  bool anyCopied = false;
  for (size_t i = 0; i < in.size(); ++i) {
    if (!in[i])
      continue;
    bool copied = false;
    ACCEL_RT_ASSIGN_OR_RETURN(hosts[i], st.toHost(*in[i], &copied));
    anyCopied |= copied;
    ptrs[i] = &hosts[i];
  }
  if (anyCopied)
    st.noteFallback(name);
  while (!ptrs.empty() && !ptrs.back())
    ptrs.pop_back();
  std::vector<Tensor> results;
  ACCEL_RT_RETURN_IF_ERROR(onnx::runOp(type, domain, attrs, ptrs, size_t(numOutputs), results));
  results.resize(size_t(numOutputs));
  for (Tensor &t : results) {
    GpuValue v;
    v.host = std::move(t);
    out.push_back(std::move(v));
  }
  return Status::ok();
}

} // namespace

StatusOr<GpuKernel> prepareOnnx(const plan::PlanFile &, const pb::Step &step, const Attrs &a) {
  const std::string type = step.onnx_op(), domain = step.onnx_domain();
  const std::string name = "onnx." + (domain.empty() ? "" : domain + ".") + type;
  if (!onnx::isSupported(type, domain))
    return Status(StatusCode::kUnimplemented,
                  "the GPU backend has no kernel for ONNX operator '" + name.substr(5) +
                      "' (nor has its CPU fallback)");
  ACCEL_RT_ASSIGN_OR_RETURN(onnx::AttrMap attrs, a.onnxAttrs());
  ACCEL_RT_ASSIGN_OR_RETURN(int64_t numOutputs, a.i("accel.num_outputs", step.outputs_size()));
  const bool isView = domain.empty() && (type == "Reshape" || type == "Flatten" ||
                                         type == "Squeeze" || type == "Unsqueeze" ||
                                         type == "Identity");
  const bool isShape = domain.empty() && (type == "Shape" || type == "Size");
  auto intAttr = [attrs](const char *key, int64_t dflt) {
    auto it = attrs.find(key);
    return it != attrs.end() && std::holds_alternative<int64_t>(it->second)
               ? std::get<int64_t>(it->second)
               : dflt;
  };

  return GpuKernel([=](GpuRunState &st, Inputs &in, Outputs &out) -> Status {
    GpuValue *x = at(in, 0);
    // Shape arithmetic: only the shape of the data input matters.
    if ((isShape || isView) && x && !x->host.defined() && x->dev.defined()) {
      Tensor proxy = shapeProxy(x->dev);
      std::vector<Tensor> hosts(in.size());
      std::vector<const Tensor *> ptrs(in.size(), nullptr);
      ptrs[0] = &proxy;
      for (size_t i = 1; i < in.size(); ++i)
        if (in[i]) {
          ACCEL_RT_ASSIGN_OR_RETURN(hosts[i], st.toHost(*in[i]));
          ptrs[i] = &hosts[i];
        }
      while (!ptrs.empty() && !ptrs.back())
        ptrs.pop_back();
      std::vector<Tensor> results;
      ACCEL_RT_RETURN_IF_ERROR(onnx::runOp(type, domain, attrs, ptrs, size_t(numOutputs), results));
      results.resize(size_t(numOutputs));
      GpuValue v;
      if (isShape)
        v.host = std::move(results[0]);
      else
        v.dev = viewAs(x->dev, results[0].shape());
      out.push_back(std::move(v));
      return Status::ok();
    }
    // Data movement of device tensors: copies on the device.
    if (anyOnDeviceOnly(in) && domain.empty()) {
      if (type == "Split" && x) {
        const DeviceTensor &d = x->dev;
        const int64_t axis = normAxis(intAttr("axis", 0), d.rank());
        if (axis >= 0 && axis < d.rank()) {
          std::vector<int64_t> sizes;
          if (GpuValue *sv = at(in, 1)) {
            ACCEL_RT_ASSIGN_OR_RETURN(Tensor s, st.toHost(*sv));
            sizes = s.toInt64s();
          } else {
            const int64_t n = intAttr("num_outputs", numOutputs), dim = d.dim(axis);
            const int64_t chunk = n > 0 ? (dim + n - 1) / n : 0;
            for (int64_t i = 0; i < n; ++i)
              sizes.push_back(std::max<int64_t>(0, std::min(chunk, dim - i * chunk)));
          }
          int64_t total = 0;
          for (int64_t s : sizes)
            total += s;
          if (total == d.dim(axis) && int64_t(sizes.size()) == numOutputs) {
            int64_t begin = 0;
            for (int64_t s : sizes) {
              GpuValue v;
              ACCEL_RT_ASSIGN_OR_RETURN(v.dev, sliceAxis(st, d, axis, begin, s));
              out.push_back(std::move(v));
              begin += s;
            }
            return Status::ok();
          }
        }
      } else if (type == "Slice" && x && x->dev.defined() && in.size() >= 3) {
        const DeviceTensor &d = x->dev;
        std::vector<int64_t> starts, ends, axes, steps;
        ACCEL_RT_ASSIGN_OR_RETURN(Tensor ts, st.toHost(*in[1]));
        ACCEL_RT_ASSIGN_OR_RETURN(Tensor te, st.toHost(*in[2]));
        starts = ts.toInt64s();
        ends = te.toInt64s();
        if (GpuValue *av = at(in, 3)) {
          ACCEL_RT_ASSIGN_OR_RETURN(Tensor t, st.toHost(*av));
          axes = t.toInt64s();
        } else {
          for (size_t i = 0; i < starts.size(); ++i)
            axes.push_back(int64_t(i));
        }
        if (GpuValue *sv = at(in, 4)) {
          ACCEL_RT_ASSIGN_OR_RETURN(Tensor t, st.toHost(*sv));
          steps = t.toInt64s();
        } else {
          steps.assign(starts.size(), 1);
        }
        bool ok = starts.size() == ends.size() && axes.size() == starts.size() &&
                  steps.size() == starts.size();
        int64_t cutAxis = -1, cutBegin = 0, cutLen = 0, cuts = 0;
        for (size_t i = 0; ok && i < starts.size(); ++i) {
          const int64_t ax = normAxis(axes[i], d.rank());
          if (ax < 0 || ax >= d.rank() || steps[i] != 1) {
            ok = false;
            break;
          }
          const int64_t dim = d.dim(ax);
          int64_t b = starts[i] < 0 ? starts[i] + dim : starts[i];
          int64_t e = ends[i] < 0 ? ends[i] + dim : ends[i];
          b = std::clamp<int64_t>(b, 0, dim);
          e = std::clamp<int64_t>(e, 0, dim);
          const int64_t len = std::max<int64_t>(0, e - b);
          if (b == 0 && len == dim)
            continue;
          ++cuts;
          cutAxis = ax;
          cutBegin = b;
          cutLen = len;
        }
        if (ok && cuts <= 1) {
          GpuValue v;
          if (cuts == 0)
            v.dev = d;
          else {
            ACCEL_RT_ASSIGN_OR_RETURN(v.dev, sliceAxis(st, d, cutAxis, cutBegin, cutLen));
          }
          out.push_back(std::move(v));
          return Status::ok();
        }
      } else if (type == "Concat") {
        // Every input on the device (or brought there), one float dtype.
        std::vector<DeviceTensor> parts;
        bool ok = !in.empty();
        for (GpuValue *v : in) {
          if (!v) {
            ok = false;
            break;
          }
          std::optional<DType> want;
          if (v->dev.defined())
            want = v->dev.dtype;
          else if (isFloat(v->host.dtype()))
            want = st.dtype;
          ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor t, st.toDevice(*v, want));
          parts.push_back(t);
        }
        if (ok) {
          const DeviceTensor &p0 = parts[0];
          const int64_t axis = normAxis(intAttr("axis", 0), p0.rank());
          int64_t total = 0;
          for (const DeviceTensor &p : parts) {
            if (p.dtype != p0.dtype || p.rank() != p0.rank() || axis < 0 || axis >= p0.rank()) {
              ok = false;
              break;
            }
            for (int64_t i = 0; i < p0.rank(); ++i)
              if (i != axis && p.dim(i) != p0.dim(i))
                ok = false;
            total += p.dim(axis);
          }
          if (ok) {
            Shape shape = p0.shape;
            shape[size_t(axis)] = total;
            GpuValue v;
            ACCEL_RT_ASSIGN_OR_RETURN(v.dev, st.empty(p0.dtype, shape));
            int64_t begin = 0;
            for (const DeviceTensor &p : parts) {
              ACCEL_RT_RETURN_IF_ERROR(copyAlongAxis(st, v.dev, begin, p, 0, p.dim(axis), axis));
              begin += p.dim(axis);
            }
            out.push_back(std::move(v));
            return Status::ok();
          }
        }
      }
    }
    // Everything else, and anything whose data is on the host: the CPU.
    return runOnHost(st, name, type, domain, attrs, numOutputs, in, out);
  });
}

} // namespace accel::rt::engine::ops
