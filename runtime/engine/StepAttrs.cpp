//===- StepAttrs.cpp - reading a plan step's operands and attributes ------===//
#include "runtime/engine/StepAttrs.h"

#include <algorithm>
#include <map>

namespace accel::rt::engine {

namespace pb = accel::plan;
namespace tk = accel::rt::cpu::transformer;

namespace {
Status invalid(const std::string &msg) { return Status(StatusCode::kDataLoss, msg); }
} // namespace

StepAttrs::StepAttrs(const plan::PlanFile &plan, const pb::Step &step, int tpRank)
    : plan_(plan), tpRank_(tpRank) {
  for (const pb::Attribute &a : step.attributes())
    map_.emplace(a.name(), &a);
}

int64_t StepAttrs::tpSize() const { return std::max<int64_t>(plan_.metadata().tp_size(), 1); }

const pb::Attribute *StepAttrs::get(const std::string &name) const {
  auto it = map_.find(name);
  return it == map_.end() ? nullptr : it->second;
}

StatusOr<int64_t> StepAttrs::i(const std::string &name, std::optional<int64_t> dflt) const {
  const pb::Attribute *a = get(name);
  if (!a) {
    if (dflt)
      return *dflt;
    return invalid("attribute '" + name + "' is missing");
  }
  if (a->value_case() != pb::Attribute::kI)
    return invalid("attribute '" + name + "' is not an integer");
  return a->i();
}

StatusOr<double> StepAttrs::f(const std::string &name, std::optional<double> dflt) const {
  const pb::Attribute *a = get(name);
  if (!a) {
    if (dflt)
      return *dflt;
    return invalid("attribute '" + name + "' is missing");
  }
  if (a->value_case() != pb::Attribute::kF)
    return invalid("attribute '" + name + "' is not a float");
  return a->f();
}

StatusOr<std::string> StepAttrs::s(const std::string &name,
                                   std::optional<std::string> dflt) const {
  const pb::Attribute *a = get(name);
  if (!a) {
    if (dflt)
      return *dflt;
    return invalid("attribute '" + name + "' is missing");
  }
  if (a->value_case() != pb::Attribute::kS)
    return invalid("attribute '" + name + "' is not a string");
  return a->s();
}

StatusOr<std::vector<int64_t>> StepAttrs::ints(const std::string &name) const {
  const pb::Attribute *a = get(name);
  if (!a || a->value_case() != pb::Attribute::kInts)
    return invalid("attribute '" + name + "' is missing or not a list of integers");
  return std::vector<int64_t>(a->ints().values().begin(), a->ints().values().end());
}

StatusOr<cpu::transformer::KVScales> readKvScales(const StepAttrs &a) {
  cpu::transformer::KVScales s;
  ACCEL_RT_ASSIGN_OR_RETURN(double k, a.f("k_scale", 1.0));
  ACCEL_RT_ASSIGN_OR_RETURN(double v, a.f("v_scale", 1.0));
  s.k = float(k);
  s.v = float(v);
  const pb::Attribute *kh = a.get("k_head_scales"), *vh = a.get("v_head_scales");
  if (!kh && !vh)
    return s;
  if (!kh || !vh || kh->value_case() != pb::Attribute::kFloats ||
      vh->value_case() != pb::Attribute::kFloats)
    return invalid("attributes 'k_head_scales' and 'v_head_scales' must both be lists of floats");
  s.kHeads.assign(kh->floats().values().begin(), kh->floats().values().end());
  s.vHeads.assign(vh->floats().values().begin(), vh->floats().values().end());
  const int64_t ranks = a.tpSize();
  if (ranks > 1) {
    // Every rank's heads, rank-major: this rank's part.
    if (s.kHeads.size() != s.vHeads.size() || s.kHeads.size() % size_t(ranks) != 0 ||
        a.tpRank() < 0 || a.tpRank() >= ranks)
      return invalid("attributes 'k_head_scales' and 'v_head_scales' of a plan for " +
                     std::to_string(ranks) + " tensor-parallel ranks must list each rank's KV "
                     "heads, got " + std::to_string(s.kHeads.size()) + " and " +
                     std::to_string(s.vHeads.size()) + " entries");
    const size_t per = s.kHeads.size() / size_t(ranks), first = per * size_t(a.tpRank());
    s.kHeads = std::vector<float>(s.kHeads.begin() + long(first),
                                  s.kHeads.begin() + long(first + per));
    s.vHeads = std::vector<float>(s.vHeads.begin() + long(first),
                                  s.vHeads.begin() + long(first + per));
  }
  if (s.kHeads.size() != s.vHeads.size() || s.kHeads.empty())
    return invalid("attributes 'k_head_scales' and 'v_head_scales' must have one entry per KV "
                   "head each, got " +
                   std::to_string(s.kHeads.size()) + " and " + std::to_string(s.vHeads.size()));
  if (std::string bad = s.check(int64_t(s.kHeads.size())); !bad.empty())
    return invalid(bad);
  return s;
}

StatusOr<DType> StepAttrs::dtype(const std::string &name) const {
  ACCEL_RT_ASSIGN_OR_RETURN(std::string n, s(name));
  if (std::optional<DType> d = dtypeFromName(n))
    return *d;
  return invalid("attribute '" + name + "' names unknown element type '" + n + "'");
}

StatusOr<onnx::AttrMap> StepAttrs::onnxAttrs() const {
  onnx::AttrMap out;
  for (auto &[name, a] : map_) {
    if (name.rfind("accel.", 0) == 0)
      continue; // the plan's own bookkeeping, not an ONNX attribute
    switch (a->value_case()) {
    case pb::Attribute::kI:
      out[name] = a->i();
      break;
    case pb::Attribute::kF:
      out[name] = float(a->f());
      break;
    case pb::Attribute::kS:
      out[name] = a->s();
      break;
    case pb::Attribute::kInts:
      out[name] = std::vector<int64_t>(a->ints().values().begin(), a->ints().values().end());
      break;
    case pb::Attribute::kFloats:
      out[name] = std::vector<float>(a->floats().values().begin(), a->floats().values().end());
      break;
    case pb::Attribute::kStrings:
      out[name] =
          std::vector<std::string>(a->strings().values().begin(), a->strings().values().end());
      break;
    case pb::Attribute::kTensor:
      out[name] = plan_.constant(a->tensor());
      break;
    default:
      return invalid("attribute '" + name + "' has no value");
    }
  }
  return out;
}

Status needInputs(const pb::Step &step, size_t required, size_t max) {
  size_t n = size_t(step.inputs_size());
  if (n < required || n > max)
    return invalid("it has " + std::to_string(n) + " operands, " +
                   (required == max ? std::to_string(required)
                                    : std::to_string(required) + " to " + std::to_string(max)) +
                   " expected");
  for (size_t i = 0; i < required; ++i)
    if (step.inputs(int(i)) < 0)
      return invalid("operand " + std::to_string(i) + " is required");
  return Status::ok();
}

Status needOutputs(const pb::Step &step, size_t n) {
  if (size_t(step.outputs_size()) != n)
    return invalid("it has " + std::to_string(step.outputs_size()) + " results, " +
                   std::to_string(n) + " expected");
  return Status::ok();
}

StatusOr<tk::RotaryParams> readRotaryParams(const StepAttrs &a) {
  tk::RotaryParams p;
  ACCEL_RT_ASSIGN_OR_RETURN(std::string style, a.s("style"));
  if (style == "half_split")
    p.style = tk::RotaryStyle::kHalfSplit;
  else if (style == "interleaved")
    p.style = tk::RotaryStyle::kInterleaved;
  else
    return invalid("unknown rotary style '" + style + "'");
  ACCEL_RT_ASSIGN_OR_RETURN(p.rotaryDim, a.i("rotary_dim"));
  ACCEL_RT_ASSIGN_OR_RETURN(p.theta, a.f("theta", 10000.0));
  ACCEL_RT_ASSIGN_OR_RETURN(std::string kind, a.s("scaling.kind", std::string("none")));
  static const std::map<std::string, tk::RopeScalingKind> kinds = {
      {"none", tk::RopeScalingKind::kNone},
      {"linear", tk::RopeScalingKind::kLinear},
      {"dynamic_ntk", tk::RopeScalingKind::kDynamicNtk},
      {"llama3", tk::RopeScalingKind::kLlama3},
      {"yarn", tk::RopeScalingKind::kYarn}};
  auto it = kinds.find(kind);
  if (it == kinds.end())
    return invalid("unknown rope scaling '" + kind + "'");
  tk::RopeScaling &sc = p.scaling;
  sc.kind = it->second;
  ACCEL_RT_ASSIGN_OR_RETURN(double factor, a.f("scaling.factor", 1.0));
  ACCEL_RT_ASSIGN_OR_RETURN(sc.originalMaxPosition, a.i("scaling.original_max_position", 0));
  ACCEL_RT_ASSIGN_OR_RETURN(double lo, a.f("scaling.low_freq_factor", sc.lowFreqFactor));
  ACCEL_RT_ASSIGN_OR_RETURN(double hi, a.f("scaling.high_freq_factor", sc.highFreqFactor));
  ACCEL_RT_ASSIGN_OR_RETURN(double bf, a.f("scaling.beta_fast", sc.betaFast));
  ACCEL_RT_ASSIGN_OR_RETURN(double bs, a.f("scaling.beta_slow", sc.betaSlow));
  sc.factor = float(factor);
  sc.lowFreqFactor = float(lo);
  sc.highFreqFactor = float(hi);
  sc.betaFast = float(bf);
  sc.betaSlow = float(bs);
  // Refuse at load what the kernel would refuse at every step.
  if (sc.kind != tk::RopeScalingKind::kNone)
    ACCEL_RT_RETURN_IF_ERROR(tk::rotaryInvFreq(p.rotaryDim, p.theta, sc).status());
  return p;
}

StatusOr<CollectiveParams> readCollectiveParams(const plan::PlanFile &plan, const pb::Step &step,
                                                const StepAttrs &a, bool allowSingle) {
  CollectiveParams p;
  ACCEL_RT_ASSIGN_OR_RETURN(p.group, a.i("group_size"));
  const int64_t ranks = plan.metadata().tp_size();
  if (p.group != ranks && !(allowSingle && p.group == 1))
    return invalid("a collective over " + std::to_string(p.group) + " ranks in a plan for " +
                   std::to_string(ranks));
  ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 1, 1));
  ACCEL_RT_RETURN_IF_ERROR(needOutputs(step, 1));
  ACCEL_RT_ASSIGN_OR_RETURN(int64_t collective, a.i("collective"));
  if (collective != plan::kAllReduce && collective != plan::kAllGather)
    return Status(StatusCode::kUnimplemented,
                  "collective " + std::to_string(collective) +
                      " is neither an all_reduce nor an all_gather");
  ACCEL_RT_ASSIGN_OR_RETURN(p.axis, a.i("axis", 0));
  ACCEL_RT_ASSIGN_OR_RETURN(std::string reduce, a.s("kind", std::string("sum")));
  if (reduce != "sum")
    return Status(StatusCode::kUnimplemented, "all_reduce '" + reduce + "' is not supported");
  p.gather = collective == plan::kAllGather;
  return p;
}

bool selectsLastRows(const plan::PlanFile &plan) {
  for (const accel::plan::Step &step : plan.schedule().steps())
    if (step.kind() == accel::plan::LOGITS)
      for (const accel::plan::Attribute &a : step.attributes())
        if (a.name() == "select_last" && a.i() != 0)
          return true;
  return false;
}

} // namespace accel::rt::engine
