//===- Weights.h - weights as handles over mmapped bytes and recipes -*- C++ -*-===//
//
// The one representation of weights between the importers and the plan
// writer (docs/architecture.md, "Weights"). An imported weight is a
// dense_resource blob over the bytes of the mmapped file (fromFile); a pass
// that transforms a weight (transpose, cast, concatenate, slice, pad,
// quantise, permute rows) does not compute it: it makes a *lazy* weight, a
// dense_resource whose blob holds no bytes but a recipe that produces any
// range of the tensor's rows (along dimension 0) from its sources. The plan
// writer evaluates each weight a bounded chunk of rows at a time and writes
// it; nothing holds a whole model.
//
// Reading: rowsOf() gives a row producer for any weight (inline dense, blob,
// lazy); bytes() materialises a whole weight (for the evaluator and passes
// that need every value at once), caching it in a lazy weight's recipe.
// Pages of a mapped file that have been read can be handed back to the OS
// (dropPages), so that reading a model does not keep it resident.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_WEIGHTS_WEIGHTS_H
#define ACCEL_WEIGHTS_WEIGHTS_H

#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace accel::weights {

/// Writes rows [begin, end) of a tensor (row-major bytes, `rowBytes` each)
/// to `out`. Must be callable from several threads at once.
using RowFn = std::function<void(int64_t begin, int64_t end, char *out)>;

/// A tensor as rows along dimension 0 (a scalar is one row).
struct Rows {
  int64_t rows = 0;
  size_t rowBytes = 0;
  RowFn produce;
  size_t bytes() const { return size_t(rows) * rowBytes; }
};

/// Bytes of one element of `type`'s element type (0 for sub-byte types).
size_t elementBytes(mlir::Type elementType);
/// Rows and bytes of a row of `type`.
int64_t rowCount(mlir::ShapedType type);
size_t rowBytes(mlir::ShapedType type);

/// A weight over `bytes` that `owner` keeps alive (the importers' one way of
/// making a weight): a dense_resource blob named `name` (made unique).
/// `fileBacked`: the bytes are a read-only mapping of a file, whose pages
/// may be dropped once read.
mlir::ElementsAttr fromBytes(mlir::RankedTensorType type, llvm::StringRef name,
                             llvm::ArrayRef<char> bytes, std::shared_ptr<const void> owner,
                             size_t alignment, bool fileBacked);

/// A lazy weight of `type` named `name` whose rows `produce` writes.
/// `sources` are the weights it reads (kept for dropping their pages).
mlir::ElementsAttr lazy(mlir::RankedTensorType type, llvm::StringRef name, RowFn produce,
                        std::vector<mlir::ElementsAttr> sources = {});

/// Whether `attr` is a lazy weight.
bool isLazy(mlir::Attribute attr);

/// Whether a transformation of `attr` is made lazy: `attr` is a lazy
/// weight, or a blob an importer made (fromBytes). Blobs parsed from IR text
/// (small, as lit tests write them) and inline constants are transformed
/// at once, so that printed IR shows the values.
bool streamable(mlir::ElementsAttr attr);

/// `attr` with its values: a lazy weight is computed and its blob replaced,
/// in place, by the bytes (aligned to 64); anything else is left as it is.
mlir::ElementsAttr materialize(mlir::ElementsAttr attr);

/// Materialises every lazy weight in the attributes of `root`'s ops (for
/// printing IR with its weights: accelc -print-weights).
void materializeAll(mlir::Operation *root);

/// Replaces the recipes of every lazy weight in `root`'s attributes by a
/// placeholder that the printer elides as it does a large blob (accelc's IR
/// output without -print-weights; the module cannot be compiled further).
void elideAll(mlir::Operation *root);

/// Whether `attr`'s values can be read: an inline dense, a blob with its
/// bytes, or a lazy weight (not an elided blob).
bool hasValues(mlir::ElementsAttr attr);

/// A row producer for `attr` (inline dense, splat, blob or lazy weight);
/// nullopt when its values are elided or its element type is sub-byte.
std::optional<Rows> rowsOf(mlir::ElementsAttr attr);

/// The bytes of the whole of `attr`: a view of a blob's or a dense's bytes,
/// or a lazy weight computed (and cached until forget()). nullopt when
/// elided.
std::optional<llvm::ArrayRef<char>> bytes(mlir::ElementsAttr attr);

/// Drops the cached bytes of a lazy weight that bytes() computed.
void forget(mlir::ElementsAttr attr);

/// Hands the pages of [data, data + size) back to the OS when they lie in a
/// mapped file registered by fromBytes (a no-op otherwise): they are read
/// again from the page cache if needed.
void dropPages(const void *data, size_t size);

/// Drops the mapped pages `attr` reads (recursively through lazy weights).
void dropSourcePages(mlir::ElementsAttr attr);

/// A lazy transpose of the 2-D `attr` ([r, c] → [c, r]).
mlir::ElementsAttr transpose(mlir::ElementsAttr attr, mlir::RankedTensorType resultType,
                             llvm::StringRef name);

/// A lazy concatenation of `parts` along dimension 0.
mlir::ElementsAttr concat(llvm::ArrayRef<mlir::ElementsAttr> parts,
                          mlir::RankedTensorType resultType, llvm::StringRef name);

/// Runs `fn(begin, end, rows)` over `attr`'s rows in chunks of about
/// `chunkBytes`, the rows produced into a reused buffer, dropping the mapped
/// pages read after each chunk. False when the values are elided.
bool forEachRowChunk(mlir::ElementsAttr attr, size_t chunkBytes,
                     const std::function<void(int64_t begin, int64_t end, const char *rows)> &fn);

/// Runs `work` on up to `maxThreads` threads at once (the calling one
/// among them; at most the machine's cores, and 64) and waits for all: the
/// plan writer's and parallelRowChunks' workers, which take their items from
/// a shared counter.
void runOnCores(int64_t maxThreads, const std::function<void()> &work);

/// As forEachRowChunk, the chunks on all cores (in any order): `fn` must be
/// safe to call from several threads at once.
bool parallelRowChunks(mlir::ElementsAttr attr, size_t chunkBytes,
                       const std::function<void(int64_t begin, int64_t end, const char *rows)> &fn);

/// A row producer over a whole tensor computed by `source` of a row chunk:
/// `map(begin, end, in, out)` turns rows of `attr` into rows of the result,
/// row for row (`outRowBytes` each).
mlir::ElementsAttr mapRows(mlir::ElementsAttr attr, mlir::RankedTensorType resultType,
                           llvm::StringRef name,
                           std::function<void(int64_t begin, int64_t end, const char *in,
                                              char *out)>
                               map);

/// A suffixed key for a weight derived from `like` (its blob's key, or
/// "weight" for an inline dense).
std::string derivedName(mlir::ElementsAttr like, llvm::StringRef suffix);

} // namespace accel::weights

#endif // ACCEL_WEIGHTS_WEIGHTS_H
