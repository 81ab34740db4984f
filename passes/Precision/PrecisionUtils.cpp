//===- PrecisionUtils.cpp - helpers shared by the precision passes --------===//
#include "PrecisionUtils.h"

#include "accel/Eval/Stepper.h"
#include "accel/Weights/Weights.h"
#include "accel/dialects/Transformer/TransformerOps.h"
#include "core/Npy.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Threading.h"

#include <algorithm>
#include <cstring>

using namespace mlir;
using namespace accel;
namespace tf = accel::transformer;

onnx::ConstantOp precision::f32Constant(Value v) {
  auto c = v ? v.getDefiningOp<onnx::ConstantOp>() : nullptr;
  if (!c)
    return {};
  ElementsAttr value = c.getValueAttr();
  if (!value || !isa<DenseElementsAttr, DenseResourceElementsAttr>(value))
    return {};
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape() || type != c.getType() || !type.getElementType().isF32())
    return {};
  return c;
}

llvm::MapVector<onnx::ConstantOp, SmallVector<OpOperand *>>
precision::selectF32Weights(func::FuncOp func, const WeightSelection &which) {
  llvm::MapVector<onnx::ConstantOp, SmallVector<OpOperand *>> out;
  auto add = [&](OpOperand &operand) {
    if (onnx::ConstantOp c = f32Constant(operand.get()))
      out[c].push_back(&operand);
  };
  auto addRange = [&](MutableOperandRange range) {
    for (unsigned i = 0; i < range.size(); ++i)
      add(range[i]);
  };
  auto f32 = [](Value v) {
    return cast<ShapedType>(v.getType()).getElementType().isF32();
  };
  func.walk([&](Operation *op) {
    if (auto l = dyn_cast<tf::LinearOp>(op)) {
      if (which.linear && f32(l.getX()) && !l.getWeightScale())
        add(l.getWeightMutable());
    } else if (auto m = dyn_cast<tf::GatedMlpOp>(op)) {
      if (which.gatedMlp && f32(m.getX())) {
        addRange(m.getGateUpMutable());
        addRange(m.getGateMutable());
        addRange(m.getUpMutable());
        add(m.getDownMutable());
      }
    } else if (auto m = dyn_cast<tf::MoeOp>(op)) {
      // The experts' and the shared expert's GEMM weights (the router and
      // the shared expert's gate stay f32: they decide the routing).
      if (which.gatedMlp && f32(m.getX())) {
        addRange(m.getGateUpMutable());
        addRange(m.getGateMutable());
        addRange(m.getUpMutable());
        add(m.getDownMutable());
        addRange(m.getSharedGateUpMutable());
        addRange(m.getSharedDownMutable());
      }
    } else if (auto g = dyn_cast<tf::LogitsOp>(op)) {
      if (which.lmHead && f32(g.getHidden()))
        add(g.getLmHeadMutable());
    } else if (auto e = dyn_cast<tf::EmbeddingOp>(op)) {
      if (which.embedding && f32(e.getResult()))
        add(e.getTableMutable());
    }
  });
  return out;
}

std::optional<ArrayRef<float>> precision::readF32(ElementsAttr attr,
                                                  SmallVectorImpl<float> &storage) {
  auto type = cast<RankedTensorType>(attr.getType());
  const int64_t n = type.getNumElements();
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    storage.resize(size_t(n));
    if (dense.isSplat()) {
      std::fill(storage.begin(), storage.end(), dense.getSplatValue<float>());
    } else {
      ArrayRef<char> raw = dense.getRawData();
      std::memcpy(storage.data(), raw.data(), size_t(n) * sizeof(float));
    }
    return ArrayRef<float>(storage);
  }
  // A lazy weight (accel/Weights/Weights.h) is computed into `storage`,
  // not cached.
  if (weights::isLazy(attr)) {
    std::optional<weights::Rows> rows = weights::rowsOf(attr);
    if (!rows || rows->bytes() != size_t(n) * sizeof(float))
      return std::nullopt;
    storage.resize(size_t(n));
    if (rows->rows)
      rows->produce(0, rows->rows, reinterpret_cast<char *>(storage.data()));
    return ArrayRef<float>(storage);
  }
  std::optional<ArrayRef<char>> bytes = weights::bytes(attr);
  if (!bytes || bytes->size() != size_t(n) * sizeof(float))
    return std::nullopt;
  ArrayRef<char> data = *bytes;
  if (reinterpret_cast<uintptr_t>(data.data()) % alignof(float) != 0) {
    storage.resize(size_t(n));
    std::memcpy(storage.data(), data.data(), data.size());
    return ArrayRef<float>(storage);
  }
  return ArrayRef<float>(reinterpret_cast<const float *>(data.data()), size_t(n));
}

ElementsAttr precision::makeElements(RankedTensorType type, ElementsAttr like, StringRef suffix,
                                     function_ref<void(MutableArrayRef<char>)> fill) {
  const size_t bytes =
      size_t(type.getNumElements()) * (size_t(type.getElementTypeBitWidth() + 7) / 8);
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(like)) {
    std::string key = (resource.getRawHandle().getKey() + suffix).str();
    if (!resource.getRawHandle().getBlob()) {
      auto &manager = DenseResourceElementsHandle::getManagerInterface(type.getContext());
      return DenseResourceElementsAttr::get(type, manager.insert(key));
    }
    AsmResourceBlob blob = HeapAsmResourceBlob::allocate(bytes, 64, /*dataIsMutable=*/true);
    fill(blob.getMutableData());
    return DenseResourceElementsAttr::get(type, key, std::move(blob));
  }
  SmallVector<char> raw(bytes);
  fill(raw);
  return DenseElementsAttr::getFromRawBuffer(type, raw);
}

ElementsAttr precision::mapWeightRows(
    RankedTensorType type, ElementsAttr like, StringRef suffix,
    std::function<void(int64_t, int64_t, const char *, char *)> map) {
  if (isa<DenseResourceElementsAttr>(like) && weights::streamable(like))
    return weights::mapRows(like, type, weights::derivedName(like, suffix), std::move(map));
  const size_t outRow = weights::rowBytes(type);
  return makeElements(type, like, suffix, [&](MutableArrayRef<char> out) {
    std::optional<weights::Rows> rows = weights::rowsOf(like);
    if (!rows)
      return;
    std::vector<char> in(rows->bytes());
    rows->produce(0, rows->rows, in.data());
    if (rows->rows)
      map(0, rows->rows, in.data(), out.data());
    (void)outRow;
  });
}

bool precision::forEachF32Rows(ElementsAttr attr,
                               const std::function<void(int64_t, int64_t, const float *)> &fn) {
  const bool read = weights::parallelRowChunks(attr, size_t(16) << 20,
                                               [&](int64_t b, int64_t e, const char *rows) {
                                                 fn(b, e, reinterpret_cast<const float *>(rows));
                                               });
  // A whole weight was read (for its scales or statistics); the plan writer
  // reads it again later. Its mapped pages leave this process now, or a pass
  // over every weight would keep them all resident (12 GB on the 8B model
  // with w8a8-fp8 from ONNX, docs/performance.md).
  if (read)
    weights::dropSourcePages(attr);
  return read;
}

Value precision::createConstant(Operation *before, Location loc, ElementsAttr value) {
  OpBuilder b(before);
  return onnx::ConstantOp::create(b, loc, cast<RankedTensorType>(value.getType()), value,
                                  FloatAttr(), DenseF32ArrayAttr(), IntegerAttr(),
                                  DenseI64ArrayAttr())
      .getResult();
}

DenseMap<void *, unsigned> precision::countBlobHolders(func::FuncOp func) {
  DenseMap<void *, unsigned> holders;
  func.walk([&](onnx::ConstantOp c) {
    if (auto r = dyn_cast_or_null<DenseResourceElementsAttr>(c.getValueAttr()))
      ++holders[r.getRawHandle().getResource()];
  });
  return holders;
}

void precision::releaseBlob(ElementsAttr attr, const DenseMap<void *, unsigned> &holders) {
  auto r = dyn_cast_or_null<DenseResourceElementsAttr>(attr);
  if (!r)
    return;
  auto *entry = r.getRawHandle().getResource();
  auto it = holders.find(entry);
  if (it == holders.end() || it->second != 1 || !entry->getBlob())
    return;
  entry->setBlob(AsmResourceBlob()); // runs the old blob's deleter
}

void precision::replaceWeight(onnx::ConstantOp c, ArrayRef<OpOperand *> uses, ElementsAttr value,
                              const DenseMap<void *, unsigned> &holders_) {
  // A lazy value reads the old one when the plan is written: keep it.
  DenseMap<void *, unsigned> none;
  const DenseMap<void *, unsigned> &holders = weights::isLazy(value) ? none : holders_;
  Value result = c.getResult();
  bool exclusive = llvm::all_of(result.getUses(), [&](OpOperand &u) {
    return llvm::is_contained(uses, &u);
  });
  if (exclusive) {
    ElementsAttr old = c.getValueAttr();
    c.setValueAttr(value);
    result.setType(cast<RankedTensorType>(value.getType()));
    releaseBlob(old, holders);
    return;
  }
  Value copy = createConstant(c, c.getLoc(), value);
  for (OpOperand *u : uses)
    u->set(copy);
}

void precision::parallelChunks(MLIRContext *ctx, int64_t n,
                               function_ref<void(int64_t, int64_t)> fn) {
  const int64_t chunk = 1 << 20;
  const int64_t chunks = (n + chunk - 1) / chunk;
  if (chunks <= 1) {
    fn(0, n);
    return;
  }
  mlir::parallelFor(ctx, 0, size_t(chunks), [&](size_t i) {
    int64_t b = int64_t(i) * chunk;
    fn(b, std::min(n, b + chunk));
  });
}

void precision::splitGatedMlps(func::FuncOp func) {
  SmallVector<tf::GatedMlpOp> mlps;
  func.walk([&](tf::GatedMlpOp m) { mlps.push_back(m); });
  for (tf::GatedMlpOp m : mlps) {
    auto xType = cast<RankedTensorType>(m.getX().getType());
    if (!xType.getElementType().isF32())
      continue;
    if (!m.getGateUp()) {
      m.emitRemark("a gated MLP with separate gate and up weights is not quantised "
                   "(it stays in a float type)");
      continue;
    }
    if (!m.getGateUp().getDefiningOp<onnx::ConstantOp>() ||
        !m.getDown().getDefiningOp<onnx::ConstantOp>())
      continue;
    OpBuilder b(m);
    auto gu = cast<RankedTensorType>(m.getGateUp().getType());
    Type f32 = b.getF32Type();
    int64_t tokens = xType.getDimSize(0), inter = gu.getDimSize(0) / 2;
    auto guType = RankedTensorType::get({tokens, gu.getDimSize(0)}, f32);
    auto actType = RankedTensorType::get({tokens, inter}, f32);
    Value guOut = tf::LinearOp::create(b, m.getLoc(), guType, m.getX(), m.getGateUp(), Value(),
                                       Value(), Value(), Value(), nullptr, nullptr, nullptr);
    Value act = tf::GatedActOp::create(b, m.getLoc(), actType, guOut, m.getKindAttr());
    Value y = tf::LinearOp::create(b, m.getLoc(), m.getType(), act, m.getDown(), Value(),
                                   Value(), Value(), Value(), nullptr, nullptr, nullptr);
    m.getResult().replaceAllUsesWith(y);
    m.erase();
  }
}

LogicalResult precision::runCalibration(
    func::FuncOp func, StringRef pass, StringRef tokensPath,
    const std::function<void(Operation *, ArrayRef<const rt::Tensor *>)> &observer) {
  if (tokensPath.empty()) {
    func.emitError(pass) << ": no calibration tokens (tokens=<file.npy>)";
    return failure();
  }
  if (!eval::isTokenMajor(func)) {
    func.emitError(pass) << ": @" << func.getSymName()
                         << " is not token-major (run it after raising)";
    return failure();
  }
  rt::StatusOr<rt::Tensor> ids = rt::readNpy(tokensPath.str());
  if (!ids) {
    func.emitError(pass) << ": " << ids.status().message();
    return failure();
  }
  if (!rt::isInteger(ids->dtype()) || ids->rank() < 1 || ids->rank() > 2 || ids->dim(-1) < 1 ||
      ids->numElements() == 0) {
    func.emitError(pass) << ": " << tokensPath
                         << ": the tokens must be integers of shape [S] or [N, S], got "
                         << ids->describe();
    return failure();
  }
  const int64_t seqLen = ids->dim(-1), numSeqs = ids->rank() == 2 ? ids->dim(0) : 1;
  const std::vector<int64_t> all = ids->toInt64s();
  for (int64_t s = 0; s < numSeqs; ++s) {
    rt::StatusOr<rt::Tensor> seq = rt::Tensor::allocate(rt::DType::kI64, {seqLen});
    if (!seq) {
      func.emitError(pass) << ": " << seq.status().message();
      return failure();
    }
    std::copy(all.begin() + s * seqLen, all.begin() + (s + 1) * seqLen, seq->data<int64_t>());
    llvm::Expected<rt::Tensor> logits = eval::runSequence(func, *seq, /*chunk=*/0, observer);
    if (!logits) {
      func.emitError(pass) << ": sequence " << s << " of " << tokensPath << ": "
                           << llvm::toString(logits.takeError());
      return failure();
    }
  }
  return success();
}
