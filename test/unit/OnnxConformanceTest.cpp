// The ONNX backend node tests (and onnxruntime contrib-op cases) run through
// runOp. The cases are exported by export_onnx_cases.py into a directory:
//
//   python3 test/unit/export_onnx_cases.py /tmp/onnx-cases
//   ACCEL_ONNX_CASES=/tmp/onnx-cases build/bin/accel-kernel-tests \
//       --gtest_filter='OnnxConformance.*'
//
// Without ACCEL_ONNX_CASES the test is skipped. Cases of operators runOp
// does not support are counted, not failed.
#include "core/Npy.h"

#include "KernelTestUtil.h"

#include <algorithm>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <sstream>

using namespace kt;

namespace {

/// Cases whose semantics the CPU kernels deliberately do not implement.
bool knownUnsupported(const std::string &name) {
  return name.rfind("test_training_dropout", 0) == 0; // random, training only
}

Tensor loadCase(const std::string &dir, const std::string &file, const std::string &dt,
                std::string &err) {
  StatusOr<Tensor> t = readNpy(dir + "/" + file);
  if (!t) {
    err = t.status().toString();
    return Tensor();
  }
  std::optional<DType> want = dtypeFromName(dt);
  if (!want) {
    err = "unknown dtype " + dt;
    return Tensor();
  }
  if (*want == t->dtype())
    return *t;
  // bf16 / f8 / i4 arrive as their storage integers.
  if (dtypeSize(*want) != dtypeSize(t->dtype())) {
    err = "dtype " + dt + " does not match " + t->describe();
    return Tensor();
  }
  return Tensor::view(*want, t->shape(), t->rawData(), t->owner());
}

/// Runs one case directory; "" when it passes, else why not.
std::string runCase(const std::string &dir, bool &unsupported) {
  std::ifstream f(dir + "/case.txt");
  if (!f)
    return "no case.txt";
  std::string line, op, domain, err;
  size_t nout = 1;
  AttrMap attrs;
  std::vector<Tensor> ins, outs;
  double rtol = 1e-3, atol = 1e-7;
  while (std::getline(f, line)) {
    std::istringstream ss(line);
    std::string kind;
    ss >> kind;
    if (kind == "op") {
      ss >> op >> domain;
      if (domain == "-")
        domain.clear();
    } else if (kind == "nout") {
      ss >> nout;
    } else if (kind == "tol") {
      ss >> rtol >> atol;
    } else if (kind == "in" || kind == "out") {
      int i;
      std::string file, dt;
      ss >> i >> file >> dt;
      Tensor t = file == "-" ? Tensor() : loadCase(dir, file, dt, err);
      (kind == "in" ? ins : outs).push_back(t);
    } else if (kind == "attr") {
      std::string name, type;
      ss >> name >> type;
      if (type == "int") {
        int64_t v;
        ss >> v;
        attrs[name] = v;
      } else if (type == "float") {
        double v;
        ss >> v;
        attrs[name] = float(v);
      } else if (type == "ints" || type == "floats") {
        size_t n;
        ss >> n;
        std::vector<int64_t> iv;
        std::vector<float> fv;
        for (size_t k = 0; k < n; ++k) {
          double v;
          ss >> v;
          iv.push_back(int64_t(v));
          fv.push_back(float(v));
        }
        if (type == "ints")
          attrs[name] = iv;
        else
          attrs[name] = fv;
      } else if (type == "string") {
        std::string hex, s;
        ss >> hex;
        if (hex != "-")
          for (size_t k = 0; k + 1 < hex.size(); k += 2)
            s += char(std::stoi(hex.substr(k, 2), nullptr, 16));
        attrs[name] = s;
      } else if (type == "tensor") {
        std::string file, dt;
        ss >> file >> dt;
        attrs[name] = loadCase(dir, file, dt, err);
      }
    }
  }
  if (!err.empty())
    return err;
  if (!onnx::isSupported(op, domain)) {
    unsupported = true;
    return "";
  }
  std::vector<Tensor> got;
  Status s = runStatus(op, attrs, ins, got, nout, domain);
  if (!s.isOk())
    return s.toString();
  for (size_t i = 0; i < outs.size(); ++i) {
    if (!outs[i].defined())
      continue;
    const Tensor &w = outs[i], &g = got[i];
    if (g.dtype() != w.dtype())
      return "output " + std::to_string(i) + " is " + g.describe() + ", want " + w.describe();
    double tol = 0;
    if (isNarrowFloat(w.dtype()))
      tol = 1e-2;
    ::testing::AssertionResult r =
        near(g, w.shape(), w.toDoubles(), isFloat(w.dtype()) ? std::max({rtol, atol, tol}) : 0.0);
    if (!r)
      return "output " + std::to_string(i) + ": " + r.message();
  }
  return "";
}

} // namespace

TEST(OnnxConformance, NodeTests) {
  const char *root = std::getenv("ACCEL_ONNX_CASES");
  if (!root)
    GTEST_SKIP() << "set ACCEL_ONNX_CASES to a directory from export_onnx_cases.py";
  DIR *d = opendir(root);
  ASSERT_NE(d, nullptr) << root;
  std::vector<std::string> names;
  while (dirent *e = readdir(d))
    if (e->d_name[0] != '.')
      names.push_back(e->d_name);
  closedir(d);
  std::sort(names.begin(), names.end());
  int pass = 0, skipped = 0;
  std::vector<std::string> failures;
  for (const std::string &name : names) {
    bool unsupported = false;
    std::string why = runCase(std::string(root) + "/" + name, unsupported);
    if (unsupported || knownUnsupported(name))
      ++skipped;
    else if (why.empty())
      ++pass;
    else
      failures.push_back(name + ": " + why);
  }
  for (const std::string &f : failures)
    ADD_FAILURE() << f;
  std::cout << "[ conformance ] " << pass << " passed, " << failures.size() << " failed, "
            << skipped << " unsupported\n";
  EXPECT_GT(pass, 0);
}
