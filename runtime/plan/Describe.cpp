//===- Describe.cpp - a plan as readable text ------------------------------===//
#include "runtime/plan/Describe.h"

#include <algorithm>

#include <cinttypes>
#include <cstdio>
#include <sstream>

namespace accel::rt::plan {

namespace pb = accel::plan;

namespace {

const char *kindName(pb::Section::Kind k) {
  switch (k) {
  case pb::Section::WEIGHTS:
    return "weights";
  case pb::Section::KERNEL_IMAGE:
    return "kernel_image";
  case pb::Section::TOKENIZER:
    return "tokenizer";
  default:
    return "unknown";
  }
}

std::string typeOf(const pb::Value &v) {
  std::string s = v.dtype() + "[";
  for (int i = 0; i < v.shape_size(); ++i)
    s += (i ? ", " : "") + (v.shape(i) < 0 ? std::string("?") : std::to_string(v.shape(i)));
  return s + "]";
}

std::string attrValue(const pb::Attribute &a) {
  std::ostringstream os;
  switch (a.value_case()) {
  case pb::Attribute::kI:
    os << a.i();
    break;
  case pb::Attribute::kF:
    os << a.f();
    break;
  case pb::Attribute::kS:
    os << '"' << a.s() << '"';
    break;
  case pb::Attribute::kInts:
    os << '[';
    for (int i = 0; i < a.ints().values_size(); ++i)
      os << (i ? ", " : "") << a.ints().values(i);
    os << ']';
    break;
  case pb::Attribute::kFloats:
    os << '[';
    for (int i = 0; i < a.floats().values_size(); ++i)
      os << (i ? ", " : "") << a.floats().values(i);
    os << ']';
    break;
  case pb::Attribute::kStrings:
    os << '[';
    for (int i = 0; i < a.strings().values_size(); ++i)
      os << (i ? ", " : "") << '"' << a.strings().values(i) << '"';
    os << ']';
    break;
  case pb::Attribute::kTensor:
    os << '%' << a.tensor();
    break;
  default:
    os << "<none>";
  }
  return os.str();
}

} // namespace

std::string describePlan(const PlanFile &plan) {
  std::ostringstream os;
  const Header &h = plan.header();
  const pb::PlanMetadata &m = plan.metadata();
  os << "plan " << plan.path() << ": format " << h.major << "." << h.minor << ", target "
     << h.target << ", tp " << h.tpSize << ", " << h.fileSize << " bytes\n";
  os << "producer: " << m.accelc_version() << "\n";
  if (!m.precision().empty())
    os << "precision: " << m.precision() << " (GPU compute dtype "
       << (m.compute_dtype().empty() ? "f32" : m.compute_dtype()) << ")\n";
  const pb::ModelConfig &c = m.model();
  os << "model: " << c.source() << " (" << c.producer() << "), vocab " << c.vocab_size()
     << ", max positions " << c.max_position() << ", bos " << c.bos_token_id() << ", eos [";
  for (int i = 0; i < c.eos_token_ids_size(); ++i)
    os << (i ? ", " : "") << c.eos_token_ids(i);
  os << "]\n";
  if (m.has_chat_templates()) {
    const pb::ChatTemplates &ct = m.chat_templates();
    os << "chat templates: ";
    for (int i = 0; i < ct.templates_size(); ++i)
      os << (i ? ", " : "") << ct.templates(i).name() << " (" << ct.templates(i).source().size()
         << " bytes)";
    if (ct.templates_size() == 0)
      os << "none";
    os << " from " << ct.origin() << "; special tokens";
    std::vector<std::pair<std::string, std::string>> specials(ct.special_tokens().begin(),
                                                              ct.special_tokens().end());
    std::sort(specials.begin(), specials.end());
    for (const auto &[name, text] : specials)
      os << " " << name << "=" << text;
    if (specials.empty())
      os << " none";
    os << "\n";
  }
  const pb::KVCache &kv = m.kv_cache();
  if (m.tp_size() > 1)
    os << "tensor parallel: " << m.tp_size()
       << " ranks, each with its weights section and its KV cache shard (the kv heads below "
          "are per rank)\n";
  if (plan.ppSize() > 1) {
    os << "pipeline parallel: " << plan.ppSize() << " stages of [";
    for (int i = 0; i < kv.stage_layers_size(); ++i)
      os << (i ? ", " : "") << kv.stage_layers(i);
    os << "] layers, each stage with its own KV cache of its layers\n";
  }
  os << "kv cache: " << kv.num_layers() << " layers, " << kv.num_kv_heads() << " kv heads, head dim "
     << kv.head_dim() << ", block size " << kv.block_size() << ", " << kv.dtype() << "\n";
  os << "sections:\n";
  for (int i = 0; i < m.sections_size(); ++i) {
    const pb::Section &s = m.sections(i);
    char crc[16];
    std::snprintf(crc, sizeof(crc), "%08" PRIx32, s.crc32c());
    os << "  " << i << " " << s.name() << ": " << kindName(s.kind()) << ", offset " << s.offset()
       << ", " << s.size() << " bytes, crc32c " << crc << "\n";
  }
  if (m.kernels_size()) {
    // Generated kernels (docs/codegen.md): one line each, with its variants.
    const pb::KernelModule &km = m.kernel_module();
    auto sec = [&](int i) { return i < 0 ? std::string("none") : "section " + std::to_string(i); };
    os << "kernels: " << m.kernels_size() << " generated for " << km.sm() << " (PTX "
       << sec(km.ptx_section()) << ", cubin " << sec(km.cubin_section())
       << (km.dependent_launch() ? "; dependent launch" : "") << ")\n";
    for (const pb::Kernel &k : m.kernels()) {
      os << "  " << k.name() << ": " << k.family() << ", "
         << (k.grid() == pb::Kernel::ROWS ? "a block per row" : "grid-stride") << ", (";
      for (int i = 0; i < k.params_size(); ++i)
        os << (i ? ", " : "") << k.params(i);
      os << ")";
      for (const pb::KernelVariant &v : k.variants())
        os << "; " << v.dtype() << " " << v.symbol() << " x" << v.vector_width() << " "
           << v.block_size() << " threads";
      os << "\n";
    }
  }
  const pb::Schedule &sc = m.schedule();
  int64_t constants = 0;
  uint64_t constantBytes = 0;
  for (const pb::Value &v : sc.values())
    if (v.is_constant()) {
      ++constants;
      constantBytes += v.size();
    }
  os << "values: " << sc.values_size() << " (" << constants << " constants, " << constantBytes
     << " bytes)\n";
  const pb::Arena &arena = sc.arena();
  os << "activations arena: " << arena.fixed_bytes() << " bytes + " << arena.bytes_per_token()
     << " per token + " << arena.bytes_per_seq() << " per sequence, aligned to "
     << arena.alignment() << "\n";
  os << "schedule: " << sc.steps_size() << " steps, token ids %" << sc.token_ids();
  if (sc.positions() >= 0)
    os << ", positions %" << sc.positions();
  os << ", logits %" << sc.logits() << "\n";
  // Where each value written or read lives: "%12 @tokens+512", "%13 = view %12".
  auto place = [&](int32_t id) {
    const pb::Value &v = sc.values(id);
    switch (v.placement()) {
    case pb::Value::CONSTANT:
      return std::string(":const");
    case pb::Value::STEP_INPUT:
      return std::string(":input");
    case pb::Value::VIEW:
      return ":view(%" + std::to_string(v.view_of()) + ")";
    case pb::Value::ARENA:
      return "@" +
             std::string(v.region() == pb::Value::FIXED    ? "fixed"
                         : v.region() == pb::Value::TOKENS ? "tokens"
                                                           : "seqs") +
             "+" + std::to_string(v.arena_offset());
    default:
      return std::string();
    }
  };
  for (const pb::Step &st : sc.steps()) {
    os << "  ";
    if (plan.ppSize() > 1)
      os << "[stage " << st.stage() << "] ";
    for (int i = 0; i < st.outputs_size(); ++i)
      os << (i ? ", " : "")
         << (st.outputs(i) < 0 ? std::string("_")
                               : "%" + std::to_string(st.outputs(i)) + place(st.outputs(i)));
    if (st.outputs_size())
      os << " = ";
    os << stepKindName(st.kind());
    if (st.kind() == pb::ONNX)
      os << " " << (st.onnx_domain().empty() ? "" : st.onnx_domain() + ".") << st.onnx_op();
    // A collective reads as its kind (collective all_reduce); the attribute
    // that says it is not repeated below.
    auto shown = [&](const pb::Attribute &a) {
      return !(st.kind() == pb::COLLECTIVE && a.name() == "collective" &&
               a.value_case() == pb::Attribute::kI);
    };
    for (const pb::Attribute &a : st.attributes())
      if (!shown(a))
        os << " "
           << (a.i() == kAllReduce       ? std::string("all_reduce")
               : a.i() == kAllGather     ? std::string("all_gather")
               : a.i() == kReduceScatter ? std::string("reduce_scatter")
                                         : "kind " + std::to_string(a.i()));
    os << "(";
    for (int i = 0; i < st.inputs_size(); ++i) {
      int32_t in = st.inputs(i);
      os << (i ? ", " : "") << (in < 0 ? std::string("none") : "%" + std::to_string(in));
      if (in >= 0)
        os << place(in);
    }
    os << ")";
    bool first = true;
    for (const pb::Attribute &a : st.attributes()) {
      if (!shown(a))
        continue;
      os << (first ? " {" : ", ") << a.name() << " = " << attrValue(a);
      first = false;
    }
    if (!first)
      os << "}";
    os << " : ";
    for (int i = 0; i < st.outputs_size(); ++i)
      os << (i ? ", " : "") << (st.outputs(i) < 0 ? "none" : typeOf(sc.values(st.outputs(i))));
    if (!st.location().empty())
      os << "  // " << st.location();
    os << "\n";
  }
  return os.str();
}

} // namespace accel::rt::plan
