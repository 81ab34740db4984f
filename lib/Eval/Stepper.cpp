//===- Stepper.cpp - run a token-major function over a sequence -----------===//
#include "accel/Eval/Stepper.h"

#include "accel/Eval/Evaluator.h"
#include "accel/dialects/Transformer/TransformerDialect.h"
#include "runtime/kv/BlockPool.h"
#include "runtime/kv/SequenceKV.h"
#include "runtime/kv/StepMetadata.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"

#include <algorithm>
#include <cstring>

using namespace mlir;
using namespace accel;
namespace tf = accel::transformer;

static llvm::Error error(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

bool eval::isTokenMajor(func::FuncOp func) {
  return llvm::any_of(func.getArgumentTypes(),
                      [](Type t) { return isa<tf::BatchType>(t); });
}

std::optional<unsigned> eval::tokenIdsArgument(func::FuncOp func) {
  std::optional<unsigned> ids;
  for (auto [i, t] : llvm::enumerate(func.getArgumentTypes())) {
    if (!isa<TensorType>(t))
      continue;
    if (ids)
      return std::nullopt;
    ids = unsigned(i);
  }
  return ids;
}

/// The index of the result holding the logits: the one named "logits", or
/// the only one.
static llvm::Expected<unsigned> logitsResult(func::FuncOp func) {
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    if (DictionaryAttr attrs = func.getResultAttrDict(i))
      if (auto name = attrs.getAs<StringAttr>("onnx.name"); name && name == "logits")
        return i;
  if (func.getNumResults() == 1)
    return 0u;
  return error("@" + func.getSymName() + " has " + llvm::Twine(func.getNumResults()) +
               " results and none is named 'logits'");
}

llvm::Expected<rt::Tensor> eval::runSequence(func::FuncOp func, const rt::Tensor &ids,
                                             int64_t chunk,
                                             const Evaluator::Observer &observer) {
  const std::string fn = ("@" + func.getSymName()).str();
  if (chunk < 0)
    return error("the chunk size must be 0 (the whole sequence) or positive, got " +
                 llvm::Twine(chunk));

  // The function's shape: token ids, one batch, one KV cache.
  std::optional<unsigned> idsArg = tokenIdsArgument(func);
  if (!idsArg)
    return error(fn + " must take exactly one tensor argument, the token ids");
  auto idsType = dyn_cast<RankedTensorType>(func.getArgumentTypes()[*idsArg]);
  std::optional<rt::DType> idsDType =
      idsType ? toDType(idsType.getElementType()) : std::nullopt;
  if (!idsType || idsType.getRank() != 1 || !idsDType || !rt::isInteger(*idsDType))
    return error(fn + "'s token ids must be a rank-1 integer tensor");
  tf::KVCacheType cacheType;
  for (Type t : func.getArgumentTypes()) {
    if (auto c = dyn_cast<tf::KVCacheType>(t)) {
      if (cacheType)
        return error(fn + " takes more than one !transformer.kv_cache");
      cacheType = c;
    }
  }
  llvm::Expected<unsigned> resultIndex = logitsResult(func);
  if (!resultIndex)
    return resultIndex.takeError();

  // The sequence.
  if (!rt::isInteger(ids.dtype()) || !(ids.rank() == 1 || (ids.rank() == 2 && ids.dim(0) == 1)))
    return error("the token ids must be one sequence of integers, [S] or [1, S], got " +
                 ids.describe());
  const int64_t seqLen = ids.dim(-1);
  if (seqLen == 0)
    return error("the token ids are empty");
  rt::Tensor tokens = ids.astype(*idsDType);
  if (!tokens.defined())
    return error("cannot allocate the token ids");
  if (chunk == 0)
    chunk = seqLen;

  // A pool with room for the whole sequence (a token-sized one when the
  // function has no cache: the step metadata still needs slots).
  rt::kv::KVCacheConfig config;
  if (cacheType) {
    config.numLayers = cacheType.getLayers();
    config.numKvHeads = cacheType.getKvHeads();
    config.headDim = cacheType.getHeadDim();
    config.blockSize = cacheType.getBlockSize();
    std::optional<rt::DType> dt = toDType(cacheType.getElementType());
    if (!dt)
      return error("the KV cache's element type has no runtime representation");
    config.dtype = *dt;
  }
  config.numBlocks = (seqLen + config.blockSize - 1) / config.blockSize;
  rt::StatusOr<std::unique_ptr<rt::kv::BlockPool>> created = rt::kv::BlockPool::create(config);
  if (!created)
    return error("cannot create the KV cache: " + created.status().message());
  std::unique_ptr<rt::kv::BlockPool> pool = std::move(*created);

  rt::kv::SequenceKV seq;
  rt::Tensor logits; // [1, S, vocab], allocated after the first step
  const size_t idBytes = rt::dtypeSize(tokens.dtype());
  for (int64_t start = 0; start < seqLen; start += chunk) {
    const int64_t n = std::min(chunk, seqLen - start);
    rt::StatusOr<rt::kv::StepMetadata> meta = rt::kv::prepareStep(*pool, {{&seq, n}});
    if (!meta)
      return error("step at token " + llvm::Twine(start) + ": " + meta.status().message());
    std::vector<rt::Tensor> args(func.getNumArguments());
    args[*idsArg] = rt::Tensor::view(
        tokens.dtype(), {n}, static_cast<const char *>(tokens.rawData()) + start * idBytes,
        tokens.owner());
    llvm::Expected<std::vector<rt::Tensor>> results =
        evaluateFunction(func, args, Evaluator::PagedState{pool.get(), &*meta}, observer);
    if (!results)
      return error("step at token " + llvm::Twine(start) + ": " +
                   llvm::toString(results.takeError()));
    const rt::Tensor &out = (*results)[*resultIndex];

    // One row per token: [n, vocab] (or [1, n, vocab] when the graph kept a
    // batch dimension).
    int64_t rows = out.rank() == 2 ? out.dim(0)
                   : out.rank() == 3 && out.dim(0) == 1 ? out.dim(1)
                                                        : -1;
    if (rows != n)
      return error(fn + " returned logits " + out.describe() + " for a step of " +
                   llvm::Twine(n) + " tokens; a row per token is needed" +
                   (rows == 1 ? " (does it select each sequence's last token? run "
                                "one token per step)"
                              : ""));
    const int64_t vocab = out.dim(-1);
    if (!logits.defined()) {
      rt::StatusOr<rt::Tensor> t = rt::Tensor::allocate(out.dtype(), {1, seqLen, vocab});
      if (!t)
        return error("cannot allocate the logits: " + t.status().message());
      logits = std::move(*t);
    } else if (vocab != logits.dim(-1) || out.dtype() != logits.dtype()) {
      return error(fn + " returned logits " + out.describe() + " at token " +
                   llvm::Twine(start) + ", after " + logits.describe());
    }
    std::memcpy(static_cast<char *>(logits.rawData()) + start * vocab *
                                                            rt::dtypeSize(out.dtype()),
                out.rawData(), out.byteSize());
  }
  return logits;
}
