//===- Weights.cpp - weights as handles over mmapped bytes and recipes -----===//
#include "accel/Weights/Weights.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <cstring>
#include <map>
#include <mutex>
#include <set>

using namespace mlir;
using namespace accel;
using namespace accel::weights;

namespace {

/// A lazy weight's recipe: the blob of a lazy dense_resource points at one
/// (with no bytes); the blob's deleter frees it.
struct LazyWeight {
  Rows rows;
  std::vector<ElementsAttr> sources;
  std::mutex mu;
  std::unique_ptr<char[]> cache; // bytes() of the whole tensor
};

std::mutex registryMutex;
std::set<const void *> &liveLazies() {
  static std::set<const void *> s;
  return s;
}
/// Mapped file ranges: start → end.
std::map<uintptr_t, uintptr_t> &fileRanges() {
  static std::map<uintptr_t, uintptr_t> m;
  return m;
}
/// The bytes of imported weights (fromBytes), by their start.
std::multiset<uintptr_t> &importedStarts() {
  static std::multiset<uintptr_t> s;
  return s;
}

LazyWeight *lazyOf(Attribute attr) {
  auto resource = dyn_cast_or_null<DenseResourceElementsAttr>(attr);
  if (!resource)
    return nullptr;
  AsmResourceBlob *blob = resource.getRawHandle().getBlob();
  if (!blob || !blob->getData().empty())
    return nullptr;
  const void *p = blob->getData().data();
  std::lock_guard<std::mutex> lock(registryMutex);
  return liveLazies().count(p) ? const_cast<LazyWeight *>(static_cast<const LazyWeight *>(p))
                               : nullptr;
}

/// How far around a page read the kernel may map pages of the page cache
/// (Linux's fault_around_bytes, 64 KB by default).
constexpr size_t kFaultAround = size_t(64) << 10;

size_t pageSize() {
  static const size_t p = size_t(::sysconf(_SC_PAGESIZE));
  return p;
}

} // namespace

size_t weights::elementBytes(Type elementType) {
  if (auto c = dyn_cast<ComplexType>(elementType))
    return 2 * elementBytes(c.getElementType());
  if (!elementType.isIntOrIndexOrFloat() || elementType.isIndex())
    return elementType.isIndex() ? 8 : 0;
  unsigned bits = elementType.getIntOrFloatBitWidth();
  if (bits == 4 && elementType.isInteger())
    return 1; // i4 / ui4 stored unpacked, one value per byte (as MLIR stores them)
  return bits % 8 == 0 ? bits / 8 : 0;
}

int64_t weights::rowCount(ShapedType type) {
  return type.getRank() == 0 ? 1 : type.getDimSize(0);
}

size_t weights::rowBytes(ShapedType type) {
  size_t n = elementBytes(type.getElementType());
  for (int64_t d : type.getShape().drop_front(type.getRank() == 0 ? 0 : 1))
    n *= size_t(d);
  return n;
}

std::string weights::derivedName(ElementsAttr like, StringRef suffix) {
  if (auto r = dyn_cast<DenseResourceElementsAttr>(like))
    return (r.getRawHandle().getKey() + suffix).str();
  return ("weight" + suffix).str();
}

ElementsAttr weights::fromBytes(RankedTensorType type, StringRef name, ArrayRef<char> bytes,
                                std::shared_ptr<const void> owner, size_t alignment,
                                bool fileBacked) {
  uintptr_t start = reinterpret_cast<uintptr_t>(bytes.data());
  {
    std::lock_guard<std::mutex> lock(registryMutex);
    importedStarts().insert(start);
    if (fileBacked && !bytes.empty())
      fileRanges()[start] = start + bytes.size();
  }
  AsmResourceBlob blob(
      bytes, alignment,
      [owner, fileBacked, start](void *, size_t size, size_t) mutable {
        {
          std::lock_guard<std::mutex> lock(registryMutex);
          auto it = importedStarts().find(start);
          if (it != importedStarts().end())
            importedStarts().erase(it);
          if (fileBacked && size)
            fileRanges().erase(start);
        }
        owner.reset();
      },
      /*dataIsMutable=*/false);
  return DenseResourceElementsAttr::get(type, name, std::move(blob));
}

ElementsAttr weights::lazy(RankedTensorType type, StringRef name, RowFn produce,
                           std::vector<ElementsAttr> sources) {
  auto *lw = new LazyWeight;
  lw->rows.rows = rowCount(type);
  lw->rows.rowBytes = rowBytes(type);
  lw->rows.produce = std::move(produce);
  lw->sources = std::move(sources);
  {
    std::lock_guard<std::mutex> lock(registryMutex);
    liveLazies().insert(lw);
  }
  AsmResourceBlob blob(
      ArrayRef<char>(reinterpret_cast<const char *>(lw), size_t(0)), 1,
      [](void *data, size_t, size_t) {
        {
          std::lock_guard<std::mutex> lock(registryMutex);
          liveLazies().erase(data);
        }
        delete static_cast<LazyWeight *>(data);
      },
      /*dataIsMutable=*/false);
  return DenseResourceElementsAttr::get(type, name, std::move(blob));
}

bool weights::isLazy(Attribute attr) { return lazyOf(attr) != nullptr; }

void weights::dropPages(const void *data, size_t size) {
  if (!size)
    return;
  uintptr_t b = reinterpret_cast<uintptr_t>(data), e = b + size;
  uintptr_t lo, hi;
  {
    std::lock_guard<std::mutex> lock(registryMutex);
    auto &m = fileRanges();
    auto it = m.upper_bound(b);
    if (it == m.begin())
      return;
    --it;
    if (e > it->second)
      return;
    // Round outwards to pages, within the registered range's pages: a page
    // shared with a neighbouring tensor of the same mapping is dropped too
    // (harmless: it is read again from the page cache when needed).
    lo = std::max(b & ~(pageSize() - 1), it->first & ~(pageSize() - 1));
    hi = std::min((e + pageSize() - 1) & ~(pageSize() - 1),
                  (it->second + pageSize() - 1) & ~(pageSize() - 1));
  }
  if (hi > lo)
    ::madvise(reinterpret_cast<void *>(lo), hi - lo, MADV_DONTNEED);
}

bool weights::streamable(ElementsAttr attr) {
  if (lazyOf(attr))
    return true;
  auto r = dyn_cast<DenseResourceElementsAttr>(attr);
  AsmResourceBlob *blob = r ? r.getRawHandle().getBlob() : nullptr;
  if (!blob || !hasValues(attr))
    return false;
  std::lock_guard<std::mutex> lock(registryMutex);
  return importedStarts().count(reinterpret_cast<uintptr_t>(blob->getData().data())) != 0;
}

ElementsAttr weights::materialize(ElementsAttr attr) {
  if (!lazyOf(attr))
    return attr;
  auto r = cast<DenseResourceElementsAttr>(attr);
  auto type = cast<ShapedType>(attr.getType());
  ArrayRef<char> data = *bytes(attr);
  const size_t width = std::max<size_t>(elementBytes(type.getElementType()), 1);
  AsmResourceBlob blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(
      data, std::max<size_t>(width, 64), /*dataIsMutable=*/true);
  // In place: the same attribute now holds bytes (the recipe is freed).
  r.getRawHandle().getResource()->setBlob(std::move(blob));
  return attr;
}

void weights::materializeAll(Operation *root) {
  std::function<Attribute(Attribute)> convert = [&](Attribute a) -> Attribute {
    if (auto e = dyn_cast<ElementsAttr>(a))
      return lazyOf(a) ? Attribute(materialize(e)) : a;
    if (auto arr = dyn_cast<ArrayAttr>(a)) {
      SmallVector<Attribute> out;
      bool changed = false;
      for (Attribute x : arr) {
        out.push_back(convert(x));
        changed |= out.back() != x;
      }
      return changed ? ArrayAttr::get(a.getContext(), out) : a;
    }
    return a;
  };
  root->walk([&](Operation *op) {
    for (NamedAttribute na : op->getAttrs()) {
      Attribute n = convert(na.getValue());
      if (n != na.getValue())
        op->setAttr(na.getName(), n);
    }
  });
}

void weights::elideAll(Operation *root) {
  std::function<void(Attribute)> visit = [&](Attribute a) {
    if (auto arr = dyn_cast<ArrayAttr>(a)) {
      for (Attribute x : arr)
        visit(x);
      return;
    }
    // A placeholder longer than the printer's elision limit (64
    // characters): printed as elided, as a large blob is.
    if (lazyOf(a))
      cast<DenseResourceElementsAttr>(a).getRawHandle().getResource()->setBlob(
          HeapAsmResourceBlob::allocate(64, 64, /*dataIsMutable=*/true));
  };
  root->walk([&](Operation *op) {
    for (NamedAttribute na : op->getAttrs())
      visit(na.getValue());
  });
}

bool weights::hasValues(ElementsAttr attr) {
  if (isa<DenseElementsAttr>(attr))
    return true;
  if (lazyOf(attr))
    return true;
  auto r = dyn_cast<DenseResourceElementsAttr>(attr);
  if (!r)
    return false;
  AsmResourceBlob *blob = r.getRawHandle().getBlob();
  auto type = cast<ShapedType>(attr.getType());
  return blob && blob->getData().size() == size_t(rowCount(type)) * rowBytes(type);
}

std::optional<Rows> weights::rowsOf(ElementsAttr attr) {
  auto type = cast<ShapedType>(attr.getType());
  if (!type.hasStaticShape() || elementBytes(type.getElementType()) == 0 ||
      type.getElementType().isInteger(1))
    return std::nullopt;
  // An inline 4-bit attribute keeps each value in the low nibble of a byte
  // (not sign-extended, as the plan's i4 is): the writer converts it value
  // by value. Lazy and resource 4-bit weights already hold the plan's bytes.
  if (type.getElementType().getIntOrFloatBitWidth() == 4 && isa<DenseElementsAttr>(attr))
    return std::nullopt;
  Rows rows;
  rows.rows = rowCount(type);
  rows.rowBytes = rowBytes(type);
  const size_t rb = rows.rowBytes;
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    ArrayRef<char> raw = dense.getRawData();
    if (dense.isSplat()) {
      const size_t eb = elementBytes(type.getElementType());
      std::vector<char> one(raw.begin(), raw.begin() + eb);
      rows.produce = [one, eb, rb](int64_t b, int64_t e, char *out) {
        for (size_t i = 0, n = size_t(e - b) * rb / eb; i < n; ++i)
          std::memcpy(out + i * eb, one.data(), eb);
      };
      return rows;
    }
    if (raw.size() != rows.bytes())
      return std::nullopt;
    const char *base = raw.data();
    rows.produce = [base, rb](int64_t b, int64_t e, char *out) {
      std::memcpy(out, base + size_t(b) * rb, size_t(e - b) * rb);
    };
    return rows;
  }
  if (LazyWeight *lw = lazyOf(attr)) {
    {
      std::lock_guard<std::mutex> lock(lw->mu);
      if (lw->cache) {
        const char *base = lw->cache.get();
        rows.produce = [base, rb](int64_t b, int64_t e, char *out) {
          std::memcpy(out, base + size_t(b) * rb, size_t(e - b) * rb);
        };
        return rows;
      }
    }
    return lw->rows;
  }
  auto resource = dyn_cast<DenseResourceElementsAttr>(attr);
  if (!resource)
    return std::nullopt;
  AsmResourceBlob *blob = resource.getRawHandle().getBlob();
  if (!blob || blob->getData().size() != rows.bytes())
    return std::nullopt;
  const char *base = blob->getData().data();
  const size_t total = rows.bytes();
  rows.produce = [base, rb, total](int64_t b, int64_t e, char *out) {
    std::memcpy(out, base + size_t(b) * rb, size_t(e - b) * rb);
    // The kernel maps up to 64 KB around each page read ("fault-around"),
    // which can map again pages read and dropped before: drop those too.
    size_t lo = size_t(b) * rb, hi = size_t(e) * rb;
    lo = lo > kFaultAround ? lo - kFaultAround : 0;
    hi = hi == total ? total : hi;
    dropPages(base + lo, hi - lo);
  };
  return rows;
}

std::optional<ArrayRef<char>> weights::bytes(ElementsAttr attr) {
  auto type = cast<ShapedType>(attr.getType());
  if (!type.hasStaticShape())
    return std::nullopt;
  const size_t want = size_t(rowCount(type)) * rowBytes(type);
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    if (dense.isSplat() || dense.getRawData().size() != want)
      return std::nullopt;
    return dense.getRawData();
  }
  if (LazyWeight *lw = lazyOf(attr)) {
    std::lock_guard<std::mutex> lock(lw->mu);
    if (!lw->cache) {
      lw->cache.reset(new char[std::max<size_t>(want, 1)]);
      // In chunks, so that the sources' pages are dropped as they go.
      const int64_t step = std::max<int64_t>(1, int64_t((64u << 20) / std::max<size_t>(lw->rows.rowBytes, 1)));
      for (int64_t b = 0; b < lw->rows.rows; b += step)
        lw->rows.produce(b, std::min(lw->rows.rows, b + step),
                         lw->cache.get() + size_t(b) * lw->rows.rowBytes);
    }
    return ArrayRef<char>(lw->cache.get(), want);
  }
  auto resource = dyn_cast<DenseResourceElementsAttr>(attr);
  if (!resource)
    return std::nullopt;
  AsmResourceBlob *blob = resource.getRawHandle().getBlob();
  if (!blob || blob->getData().size() != want)
    return std::nullopt;
  return blob->getData();
}

void weights::forget(ElementsAttr attr) {
  if (LazyWeight *lw = lazyOf(attr)) {
    std::lock_guard<std::mutex> lock(lw->mu);
    lw->cache.reset();
  }
}

void weights::dropSourcePages(ElementsAttr attr) {
  if (LazyWeight *lw = lazyOf(attr)) {
    for (ElementsAttr s : lw->sources)
      dropSourcePages(s);
    return;
  }
  if (auto r = dyn_cast<DenseResourceElementsAttr>(attr))
    if (AsmResourceBlob *blob = r.getRawHandle().getBlob())
      dropPages(blob->getData().data(), blob->getData().size());
}

namespace {
/// Rows of `rows` in a chunk of about `chunkBytes` (at least one).
int64_t rowsPerChunk(const weights::Rows &rows, size_t chunkBytes) {
  return std::max<int64_t>(1, int64_t(chunkBytes / std::max<size_t>(rows.rowBytes, 1)));
}
} // namespace

bool weights::forEachRowChunk(
    ElementsAttr attr, size_t chunkBytes,
    const std::function<void(int64_t, int64_t, const char *)> &fn) {
  std::optional<Rows> rows = rowsOf(attr);
  if (!rows)
    return false;
  const int64_t step = rowsPerChunk(*rows, chunkBytes);
  std::vector<char> buf(size_t(std::min(step, std::max<int64_t>(rows->rows, 1))) * rows->rowBytes);
  for (int64_t b = 0; b < rows->rows; b += step) {
    int64_t e = std::min(rows->rows, b + step);
    rows->produce(b, e, buf.data());
    fn(b, e, buf.data());
  }
  return true;
}

namespace {
/// out[j][i] = src[i][b + j] over one tile, elements of type T.
template <typename T>
void transposeTile(const char *src, char *out, int64_t r, int64_t c, int64_t b, int64_t i0,
                   int64_t i1, int64_t j0, int64_t j1) {
  const T *s = reinterpret_cast<const T *>(src);
  T *o = reinterpret_cast<T *>(out);
  for (int64_t i = i0; i < i1; ++i) {
    const T *row = s + size_t(i) * size_t(c) + size_t(b);
    for (int64_t j = j0; j < j1; ++j) {
      T v;
      std::memcpy(&v, row + j, sizeof(T));
      std::memcpy(o + size_t(j) * size_t(r) + size_t(i), &v, sizeof(T));
    }
  }
}
} // namespace

bool weights::parallelRowChunks(
    ElementsAttr attr, size_t chunkBytes,
    const std::function<void(int64_t, int64_t, const char *)> &fn) {
  std::optional<Rows> rows = rowsOf(attr);
  if (!rows)
    return false;
  const int64_t step = rowsPerChunk(*rows, chunkBytes);
  const int64_t chunks = (rows->rows + step - 1) / step;
  std::atomic<int64_t> next{0};
  auto work = [&] {
    std::vector<char> buf;
    for (int64_t k; (k = next++) < chunks;) {
      int64_t b = k * step, e = std::min(rows->rows, b + step);
      buf.resize(size_t(e - b) * rows->rowBytes);
      rows->produce(b, e, buf.data());
      fn(b, e, buf.data());
    }
  };
  runOnCores(chunks, work);
  return true;
}

void weights::runOnCores(int64_t maxThreads, const std::function<void()> &work) {
  const int64_t cores = std::max(1u, std::min(std::thread::hardware_concurrency(), 64u));
  const int64_t threads = std::max<int64_t>(1, std::min(maxThreads, cores));
  std::vector<std::thread> pool;
  for (int64_t t = 1; t < threads; ++t)
    pool.emplace_back(work);
  work();
  for (std::thread &t : pool)
    t.join();
}

ElementsAttr weights::transpose(ElementsAttr attr, RankedTensorType resultType, StringRef name) {
  auto type = cast<RankedTensorType>(attr.getType());
  const int64_t r = type.getDimSize(0), c = type.getDimSize(1);
  const size_t w = elementBytes(type.getElementType());
  RowFn produce = [attr, r, c, w](int64_t b, int64_t e, char *out) {
    // Output rows [b, e) are the source's columns [b, e).
    std::optional<ArrayRef<char>> whole;
    const char *base = nullptr;
    auto resource = dyn_cast<DenseResourceElementsAttr>(attr);
    bool mapped = resource && !lazyOf(attr);
    if (mapped) {
      base = resource.getRawHandle().getBlob()->getData().data();
    } else {
      whole = bytes(attr);
      base = whole->data();
    }
    const int64_t n = e - b;
    // Tiles of 32 source rows × 32 columns keep reads and writes in cache.
    for (int64_t i0 = 0; i0 < r; i0 += 32) {
      const int64_t i1 = std::min(r, i0 + 32);
      for (int64_t j0 = 0; j0 < n; j0 += 32) {
        const int64_t j1 = std::min(n, j0 + 32);
        switch (w) {
        case 4: transposeTile<uint32_t>(base, out, r, c, b, i0, i1, j0, j1); break;
        case 2: transposeTile<uint16_t>(base, out, r, c, b, i0, i1, j0, j1); break;
        case 1: transposeTile<uint8_t>(base, out, r, c, b, i0, i1, j0, j1); break;
        case 8: transposeTile<uint64_t>(base, out, r, c, b, i0, i1, j0, j1); break;
        default:
          for (int64_t i = i0; i < i1; ++i)
            for (int64_t j = j0; j < j1; ++j)
              std::memcpy(out + (size_t(j) * size_t(r) + size_t(i)) * w,
                          base + (size_t(i) * size_t(c) + size_t(b + j)) * w, w);
        }
      }
      // Each row's pages up to the band's end: those of the band, and those
      // before it that the kernel's fault-around mapped again (the bands of
      // other chunks; a page another thread still reads is read again).
      if (mapped)
        for (int64_t i = i0; i < i1; ++i) {
          size_t end = size_t(b + n) * w;
          if (b + n == c)
            end += kFaultAround; // into the next row, done long ago
          const size_t rowStart = size_t(i) * size_t(c) * w;
          dropPages(base + rowStart, std::min(end, size_t(r) * size_t(c) * w - rowStart));
        }
    }
  };
  return lazy(resultType, name, std::move(produce), {attr});
}

ElementsAttr weights::concat(ArrayRef<ElementsAttr> parts, RankedTensorType resultType,
                             StringRef name) {
  std::vector<ElementsAttr> ps(parts.begin(), parts.end());
  std::vector<int64_t> starts;
  int64_t at = 0;
  for (ElementsAttr p : ps) {
    starts.push_back(at);
    at += rowCount(cast<ShapedType>(p.getType()));
  }
  starts.push_back(at);
  const size_t rb = rowBytes(resultType);
  RowFn produce = [ps, starts, rb](int64_t b, int64_t e, char *out) {
    for (size_t k = 0; k < ps.size(); ++k) {
      int64_t lo = std::max(b, starts[k]), hi = std::min(e, starts[k + 1]);
      if (lo >= hi)
        continue;
      std::optional<Rows> rows = rowsOf(ps[k]);
      rows->produce(lo - starts[k], hi - starts[k], out + size_t(lo - b) * rb);
    }
  };
  return lazy(resultType, name, std::move(produce), ps);
}

ElementsAttr weights::mapRows(
    ElementsAttr attr, RankedTensorType resultType, StringRef name,
    std::function<void(int64_t, int64_t, const char *, char *)> map) {
  const size_t inRow = rowBytes(cast<ShapedType>(attr.getType()));
  RowFn produce = [attr, inRow, map = std::move(map)](int64_t b, int64_t e, char *out) {
    std::vector<char> in(size_t(e - b) * inRow);
    rowsOf(attr)->produce(b, e, in.data());
    map(b, e, in.data(), out);
  };
  return lazy(resultType, name, std::move(produce), {attr});
}
