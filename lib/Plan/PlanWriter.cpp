//===- PlanWriter.cpp - serialise an exec module as a plan file -----------===//
//
// One-to-one: every view of the exec schedule is a plan value (a constant,
// a step input, an arena slice or a view of another value), every step op a
// plan step of the StepKind of the same name with its operands in order and
// its attributes under the names docs/plan-format.md gives, the kv_pool the
// plan's KV cache and the activations arena its memory plan. Nothing is
// decided here: the exec passes decided it. The file is written to
// `<path>.tmp` and renamed, so a failed compile never leaves a half-written
// plan behind.
//
//===----------------------------------------------------------------------===//
#include "accel/Plan/PlanWriter.h"

#include "PlanWeights.h"

// The writer's helpers, namespace aliases (ex, pb, fmt, ...) and mlir.
using namespace accel::planwriter;

llvm::Error accel::plan::writePlan(ModuleOp module, const PlanOptions &options,
                                   const std::string &path) {
  // The schedule, the KV pool and the arenas the exec passes declared.
  ex::ScheduleOp schedule;
  ex::KVPoolOp pool;
  ex::ArenaOp weights, activations;
  for (Operation &op : module.getBody()->getOperations()) {
    if (auto s = dyn_cast<ex::ScheduleOp>(op)) {
      if (schedule)
        return error("the module has more than one exec.schedule; a plan has one");
      schedule = s;
    } else if (auto p = dyn_cast<ex::KVPoolOp>(op)) {
      if (pool)
        return error("the module has more than one exec.kv_pool; a plan has one");
      pool = p;
    } else if (auto a = dyn_cast<ex::ArenaOp>(op)) {
      ex::ArenaOp &slot = a.getKind() == ex::ArenaKind::weights ? weights : activations;
      if (slot || a.getKind() == ex::ArenaKind::workspace)
        return error("the module declares arena @" + a.getSymName() +
                     ", and a plan has one weights and one activations arena");
      slot = a;
    }
  }
  if (!schedule)
    return error("the module has no exec.schedule: lower it with accel-lower-to-exec first");
  if (!pool)
    return error("the module has no exec.kv_pool");

  pb::PlanMetadata meta;
  meta.set_accelc_version(options.accelcVersion);
  meta.set_target(options.target);
  int64_t tpSize = 1, ppSize = 1;
  if (auto tp = module->getAttrOfType<IntegerAttr>("accel.tp_size"))
    tpSize = tp.getInt();
  if (auto pp = module->getAttrOfType<IntegerAttr>("accel.pp_size"))
    ppSize = pp.getInt();
  if (tpSize < 1 || tpSize > 4096)
    return error("the module has an invalid accel.tp_size of " + llvm::Twine(tpSize));
  if (ppSize < 1 || ppSize > 4096)
    return error("the module has an invalid accel.pp_size of " + llvm::Twine(ppSize));
  meta.set_tp_size(int32_t(tpSize));
  meta.set_pp_size(int32_t(ppSize));
  meta.set_precision(options.precision);
  meta.set_compute_dtype(options.computeDType);

  pb::KVCache *kv = meta.mutable_kv_cache();
  kv->set_num_layers(pool.getLayers());
  kv->set_num_kv_heads(pool.getKvHeads());
  kv->set_head_dim(pool.getHeadDim());
  kv->set_block_size(pool.getBlockSize());
  std::optional<rt::DType> kvType = eval::toDType(pool.getDtype());
  if (!kvType)
    return error("the KV pool's element type has no runtime representation");
  kv->set_dtype(rt::dtypeName(*kvType));
  if (ppSize > 1) {
    std::optional<ArrayRef<int64_t>> stages = pool.getStageLayers();
    if (!stages || int64_t(stages->size()) != ppSize)
      return error("the plan has " + llvm::Twine(ppSize) +
                   " pipeline stages but the KV pool lists no layers for each");
    for (int64_t n : *stages)
      kv->add_stage_layers(n);
  }

  pb::Schedule &s = *meta.mutable_schedule();
  s.set_token_ids(-1);
  s.set_logits(-1);
  s.set_positions(-1);
  if (activations) {
    pb::Arena *arena = s.mutable_arena();
    arena->set_fixed_bytes(uint64_t(activations.getSize()));
    arena->set_bytes_per_token(uint64_t(activations.getPerToken()));
    arena->set_bytes_per_seq(uint64_t(activations.getPerSeq()));
    arena->set_alignment(uint32_t(activations.getAlignment()));
  }
  ScheduleBuilder b(s, weights ? uint64_t(weights.getSize()) : 0);

  for (Operation &op : schedule.getBody().front()) {
    const std::string name = locationName(op.getLoc());
    if (isa<ex::StepSizeOp>(op))
      continue;
    if (auto input = dyn_cast<ex::StepInputOp>(op)) {
      llvm::Expected<pb::Value *> v = b.define(input.getResult(), name);
      if (!v)
        return error(describeOp(&op) + ": " + llvm::toString(v.takeError()));
      (*v)->set_placement(pb::Value::STEP_INPUT);
      if (input.getKind() == ex::StepInputKind::token_ids) {
        (*v)->set_step_input(pb::Value::TOKEN_IDS);
        (*v)->set_name("token_ids");
        s.set_token_ids((*v)->id());
      } else {
        (*v)->set_step_input(pb::Value::POSITIONS);
        (*v)->set_name("positions");
        s.set_positions((*v)->id());
      }
      continue;
    }
    if (auto w = dyn_cast<ex::WeightOp>(op)) {
      llvm::Expected<pb::Value *> v = b.define(w.getResult(), w.getName().str());
      if (!v)
        return error(describeOp(&op) + ": " + llvm::toString(v.takeError()));
      std::vector<ElementsAttr> shards;
      if (std::optional<ArrayAttr> parts = w.getShards()) {
        if (int64_t(parts->size()) != tpSize)
          return error(describeOp(&op) + " has " + llvm::Twine(parts->size()) +
                       " tensor-parallel shards in a plan of " + llvm::Twine(tpSize) + " ranks");
        for (mlir::Attribute a : *parts)
          shards.push_back(cast<ElementsAttr>(a));
      } else if (std::optional<ElementsAttr> value = w.getValue()) {
        shards.push_back(*value);
      } else {
        return error(describeOp(&op) + " (weight '" + w.getName() +
                     "') has no bytes: it was printed with its weights elided");
      }
      // Checked now, computed when written: a runtime dtype, values present.
      uint64_t bytes = 0;
      bool holdBytes = false;
      for (ElementsAttr a : shards) {
        auto type = cast<ShapedType>(a.getType());
        std::optional<rt::DType> dt = eval::toDType(type.getElementType());
        if (!dt || !type.hasStaticShape())
          return error(describeOp(&op) + ": constant of a type that has no runtime representation");
        if (!weights::hasValues(a) && !isa<DenseElementsAttr>(a))
          return error(describeOp(&op) + " (weight '" + w.getName() +
                       "') has no bytes: it was printed with its weights elided");
        holdBytes |= !weights::rowsOf(a);
        bytes = uint64_t(type.getNumElements()) * rt::dtypeSize(*dt);
      }
      if (uint64_t(w.getOffset()) + bytes > b.weightsSize())
        return error(describeOp(&op) + " (weight '" + w.getName() +
                     "') does not fit the weights arena");
      b.weight(**v, uint64_t(w.getOffset()), shards, bytes);
      if (holdBytes) { // sub-byte and boolean weights: as the evaluator reads them
        auto &c = b.constants().back();
        for (ElementsAttr a : shards) {
          llvm::Expected<rt::Tensor> t = eval::toTensor(a);
          if (!t)
            return error(describeOp(&op) + ": " + llvm::toString(t.takeError()));
          c.owned.push_back(std::make_shared<rt::Tensor>(std::move(*t)));
        }
        c.shards.clear();
      }
      continue;
    }
    if (auto slice = dyn_cast<ex::SliceOp>(op)) {
      llvm::Expected<pb::Value *> v = b.define(slice.getResult(), name);
      if (!v)
        return error(describeOp(&op) + ": " + llvm::toString(v.takeError()));
      (*v)->set_placement(pb::Value::ARENA);
      (*v)->set_region(slice.getRegion() == ex::ArenaRegion::fixed    ? pb::Value::FIXED
                       : slice.getRegion() == ex::ArenaRegion::tokens ? pb::Value::TOKENS
                                                                      : pb::Value::SEQS);
      (*v)->set_arena_offset(uint64_t(slice.getOffset()));
      continue;
    }
    if (auto view = dyn_cast<ex::ViewOp>(op)) {
      llvm::Expected<int32_t> source = b.use(view.getSource(), &op);
      if (!source)
        return source.takeError();
      llvm::Expected<pb::Value *> v = b.define(view.getResult(), name);
      if (!v)
        return error(describeOp(&op) + ": " + llvm::toString(v.takeError()));
      (*v)->set_placement(pb::Value::VIEW);
      (*v)->set_view_of(*source);
      continue;
    }
    if (auto out = dyn_cast<ex::StepOutputOp>(op)) {
      llvm::Expected<int32_t> id = b.use(out.getView(), &op);
      if (!id)
        return id.takeError();
      if (out.getKind() != ex::StepOutputKind::logits)
        return error(describeOp(&op) + ": a plan's step outputs logits");
      s.set_logits(*id);
      meta.mutable_model()->set_vocab_size(
          cast<ex::ViewType>(out.getView().getType()).getShape().back());
      continue;
    }
    if (isa<ex::AllocOp>(op))
      return error(describeOp(&op) + " is a buffer without a place: run "
                                     "accel-exec-assign-buffers before writing the plan");
    pb::StepKind kind = stepKindOf(&op);
    if (kind == pb::STEP_KIND_UNSPECIFIED)
      return error(describeOp(&op) + " cannot be written to a plan");
    pb::Step &st = *s.add_steps();
    st.set_kind(kind);
    st.set_location(name);
    if (auto stage = op.getAttrOfType<IntegerAttr>("accel.pp_stage"))
      st.set_stage(int32_t(stage.getInt())); // accelc -pp (passes/Partition)
    // The generated kernel it runs (accel-exec-select-kernels), first.
    if (auto kernel = op.getAttrOfType<FlatSymbolRefAttr>("kernel"))
      setS(st, "kernel", kernel.getValue().str());
    if (llvm::Error e = stepOperands(b, st, &op))
      return e;
  }
  if (s.token_ids() < 0)
    return error("the schedule reads no token ids");
  if (s.logits() < 0)
    return error("the schedule has no logits output (exec.step_output logits)");
  const codegen::GeneratedKernels *kernels =
      options.kernels && !options.kernels->empty() ? options.kernels : nullptr;

  pb::ModelConfig *model = meta.mutable_model();
  model->set_source(options.source);
  if (auto producer = module->getAttrOfType<StringAttr>("onnx.producer"))
    model->set_producer(producer.getValue().str());
  // Without config.json's max positions, a learned position table (GPT-2's
  // wpe: an embedding read with the step's positions) bounds them.
  int64_t maxPosition = options.maxPosition;
  if (maxPosition == 0)
    schedule.walk([&](ex::EmbeddingOp op) {
      auto table = cast<ex::ViewType>(op.getTable().getType());
      // Through the views between them.
      mlir::Value ids = op.getIds();
      while (auto view = ids.getDefiningOp<ex::ViewOp>())
        ids = view.getSource();
      auto input = ids.getDefiningOp<ex::StepInputOp>();
      if (input && input.getKind() == ex::StepInputKind::positions && !table.isDynamicDim(0))
        maxPosition = maxPosition ? std::min(maxPosition, table.getDimSize(0)) : table.getDimSize(0);
    });
  model->set_max_position(maxPosition);
  for (int32_t id : options.eosTokenIds)
    model->add_eos_token_ids(id);
  model->set_bos_token_id(options.bosTokenId);
  if (!options.chatTemplates.empty() || !options.specialTokens.empty()) {
    pb::ChatTemplates *chat = meta.mutable_chat_templates();
    for (const auto &[name, source] : options.chatTemplates) {
      pb::ChatTemplate *t = chat->add_templates();
      t->set_name(name);
      t->set_source(source);
    }
    for (const auto &[name, text] : options.specialTokens)
      (*chat->mutable_special_tokens())[name] = text;
    chat->set_origin(options.chatTemplateOrigin);
  }

  // Layout: header page, weights, tokenizer, metadata.
  // One weights section per rank, all of one layout (constants name rank 0's).
  uint64_t offset = fmt::kSectionAlignment;
  std::vector<int> weightSections;
  for (int64_t rank = 0; rank < tpSize; ++rank) {
    pb::Section *weights = meta.add_sections();
    weights->set_name("weights.rank" + std::to_string(rank));
    weights->set_kind(pb::Section::WEIGHTS);
    weights->set_rank(int32_t(rank));
    weights->set_offset(offset);
    weights->set_size(b.weightsSize());
    weightSections.push_back(meta.sections_size() - 1);
    offset = fmt::alignUp(offset + b.weightsSize(), fmt::kSectionAlignment);
  }
  pb::Section *tokenizer = nullptr;
  if (!options.tokenizerJson.empty()) {
    tokenizer = meta.add_sections();
    tokenizer->set_name("tokenizer.json");
    tokenizer->set_kind(pb::Section::TOKENIZER);
    tokenizer->set_offset(offset);
    tokenizer->set_size(options.tokenizerJson.size());
    tokenizer->set_crc32c(
        fmt::crc32c(options.tokenizerJson.data(), options.tokenizerJson.size()));
    offset = fmt::alignUp(offset + options.tokenizerJson.size(), fmt::kSectionAlignment);
  }
  // Generated kernels: PTX, then the cubin when there is one.
  struct Image {
    pb::Section *section;
    const std::string *bytes;
  };
  std::vector<Image> images;
  if (kernels) {
    auto image = [&](const std::string &bytes, const std::string &name) -> int {
      pb::Section *sec = meta.add_sections();
      sec->set_name(name);
      sec->set_kind(pb::Section::KERNEL_IMAGE);
      sec->set_offset(offset);
      sec->set_size(bytes.size());
      sec->set_crc32c(fmt::crc32c(bytes.data(), bytes.size()));
      offset = fmt::alignUp(offset + bytes.size(), fmt::kSectionAlignment);
      images.push_back({sec, &bytes});
      return meta.sections_size() - 1;
    };
    const int ptx = image(kernels->ptx, "kernels." + kernels->chip + ".ptx");
    const int cubin =
        kernels->cubin.empty() ? -1 : image(kernels->cubin, "kernels." + kernels->chip + ".cubin");
    codegen::recordKernels(*kernels, ptx, cubin, meta);
  }

  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return error("cannot write '" + tmp + "': " + std::strerror(errno));
  auto fail = [&](const std::string &what) {
    ::close(fd);
    std::remove(tmp.c_str());
    return error("cannot write '" + path + "': " + what);
  };
  // Weights, every rank's section, on all cores (WeightsWriter); the
  // padding between tensors is left as holes, which read as zeros.
  {
    WeightsWriter ww(fd, b.constants(), options);
    for (size_t rank = 0; rank < weightSections.size(); ++rank) {
      const pb::Section &weights = meta.sections(weightSections[rank]);
      ww.addSection(rank, weights.offset(), weights.size());
    }
    std::string why;
    std::vector<uint32_t> crcs = ww.run(why);
    if (!why.empty())
      return fail(why);
    for (size_t rank = 0; rank < weightSections.size(); ++rank)
      meta.mutable_sections(weightSections[rank])->set_crc32c(crcs[rank]);
  }
  if (tokenizer && !writeAt(fd, options.tokenizerJson.data(), options.tokenizerJson.size(),
                            tokenizer->offset()))
    return fail(std::strerror(errno));
  for (const Image &img : images)
    if (!writeAt(fd, img.bytes->data(), img.bytes->size(), img.section->offset()))
      return fail(std::strerror(errno));
  std::string metaBytes;
  if (!meta.SerializeToString(&metaBytes))
    return fail("the metadata does not serialise");
  fmt::Header h;
  h.metadataOffset = offset;
  h.metadataSize = metaBytes.size();
  h.metadataCrc = fmt::crc32c(metaBytes.data(), metaBytes.size());
  h.target = options.target;
  h.tpSize = uint32_t(tpSize);
  if (!writeAt(fd, metaBytes.data(), metaBytes.size(), offset))
    return fail(std::strerror(errno));
  h.fileSize = offset + metaBytes.size();
  std::string header = fmt::encodeHeader(h);
  if (!writeAt(fd, header.data(), header.size(), 0))
    return fail(std::strerror(errno));
  if (::close(fd) != 0) {
    std::remove(tmp.c_str());
    return error("cannot write '" + path + "': " + std::strerror(errno));
  }
  if (options.checkWritten) {
    if (std::string refused = options.checkWritten(tmp); !refused.empty()) {
      std::remove(tmp.c_str());
      return error(refused);
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(tmp, path)) {
    std::remove(tmp.c_str());
    return error("cannot write '" + path + "': " + ec.message());
  }
  return llvm::Error::success();
}
