//===- Npy.cpp - read and write numpy .npy files --------------------------===//
#include "core/Npy.h"

#include "core/RegularFile.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>

namespace accel::rt {

namespace {

constexpr char kMagic[] = "\x93NUMPY";

struct Descr {
  const char *text;
  DType dtype;
};
constexpr Descr kDescrs[] = {
    {"<f4", DType::kF32}, {"<f2", DType::kF16}, {"<f8", DType::kF64},
    {"<i8", DType::kI64}, {"<i4", DType::kI32}, {"<i2", DType::kI16},
    {"<u8", DType::kU64}, {"<u4", DType::kU32}, {"<u2", DType::kU16},
    {"|b1", DType::kI1},  {"|u1", DType::kU8},  {"|i1", DType::kI8},
};

std::optional<DType> dtypeFromDescr(std::string d) {
  // '=' is native order, little-endian on every machine we run on; one-byte
  // types may be spelled with any order character.
  if (!d.empty() && d[0] == '=')
    d[0] = '<';
  if (d.size() == 3 && d[2] == '1' && (d[0] == '<' || d[0] == '>' || d[0] == '='))
    d[0] = '|';
  for (const Descr &e : kDescrs)
    if (d == e.text)
      return e.dtype;
  return std::nullopt;
}

const char *descrFor(DType t) {
  for (const Descr &e : kDescrs)
    if (e.dtype == t)
      return e.text;
  return nullptr;
}

/// The value following 'key': in the header dict, from its first character.
std::optional<size_t> findKey(const std::string &h, const char *key) {
  for (const char q : {'\'', '"'}) {
    std::string k = std::string(1, q) + key + q;
    size_t p = h.find(k);
    if (p == std::string::npos)
      continue;
    p = h.find(':', p + k.size());
    if (p == std::string::npos)
      return std::nullopt;
    ++p;
    while (p < h.size() && h[p] == ' ')
      ++p;
    return p;
  }
  return std::nullopt;
}

Status corrupt(std::string_view name, const std::string &why) {
  return dataLoss("npy '" + std::string(name) + "': " + why);
}

} // namespace

StatusOr<Tensor> parseNpy(const void *data, size_t size, std::string_view name) {
  const auto *b = static_cast<const unsigned char *>(data);
  if (size < 8 || std::memcmp(b, kMagic, 6) != 0)
    return corrupt(name, "not an npy file (bad magic)");
  const int major = b[6];
  size_t headerLen, headerStart;
  if (major == 1) {
    if (size < 10)
      return corrupt(name, "truncated header");
    headerLen = size_t(b[8]) | size_t(b[9]) << 8;
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12)
      return corrupt(name, "truncated header");
    headerLen = size_t(b[8]) | size_t(b[9]) << 8 | size_t(b[10]) << 16 | size_t(b[11]) << 24;
    headerStart = 12;
  } else {
    return Status(StatusCode::kUnimplemented, "npy '" + std::string(name) +
                                                  "': format version " +
                                                  std::to_string(major) + " is not supported");
  }
  if (headerLen > size - headerStart)
    return corrupt(name, "truncated header");
  const std::string h(reinterpret_cast<const char *>(b + headerStart), headerLen);

  // descr
  std::optional<size_t> p = findKey(h, "descr");
  if (!p || *p >= h.size() || (h[*p] != '\'' && h[*p] != '"'))
    return corrupt(name, "header has no 'descr'");
  size_t end = h.find(h[*p], *p + 1);
  if (end == std::string::npos)
    return corrupt(name, "header 'descr' is unterminated");
  const std::string descr = h.substr(*p + 1, end - *p - 1);
  std::optional<DType> dt = dtypeFromDescr(descr);
  if (!dt)
    return Status(StatusCode::kUnimplemented,
                  "npy '" + std::string(name) + "': dtype '" + descr +
                      "' is not supported (little-endian f2/f4/f8, i1-i8, u1-u8, b1)");
  // fortran_order
  p = findKey(h, "fortran_order");
  if (!p)
    return corrupt(name, "header has no 'fortran_order'");
  if (h.compare(*p, 4, "True") == 0)
    return Status(StatusCode::kUnimplemented,
                  "npy '" + std::string(name) + "': Fortran-order arrays are not supported; "
                  "save with np.ascontiguousarray");
  if (h.compare(*p, 5, "False") != 0)
    return corrupt(name, "header 'fortran_order' is neither True nor False");
  // shape
  p = findKey(h, "shape");
  if (!p || *p >= h.size() || h[*p] != '(')
    return corrupt(name, "header has no 'shape' tuple");
  end = h.find(')', *p);
  if (end == std::string::npos)
    return corrupt(name, "header 'shape' is unterminated");
  Shape shape;
  {
    const std::string inner = h.substr(*p + 1, end - *p - 1);
    size_t i = 0;
    while (i < inner.size()) {
      while (i < inner.size() && (inner[i] == ' ' || inner[i] == ','))
        ++i;
      if (i >= inner.size())
        break;
      size_t j = i;
      while (j < inner.size() && inner[j] >= '0' && inner[j] <= '9')
        ++j;
      if (j == i || j - i > 18)
        return corrupt(name, "header 'shape' (" + inner + ") is not a tuple of sizes");
      shape.push_back(std::stoll(inner.substr(i, j - i)));
      i = j;
      if (i < inner.size() && inner[i] == 'L') // Python 2 longs
        ++i;
      if (i < inner.size() && inner[i] != ',' && inner[i] != ' ')
        return corrupt(name, "header 'shape' (" + inner + ") is not a tuple of sizes");
    }
  }
  StatusOr<int64_t> n = checkedNumElements(shape);
  if (!n)
    return corrupt(name, n.status().message());
  const size_t dataStart = headerStart + headerLen;
  const size_t es = dtypeSize(*dt);
  if (uint64_t(*n) > (size - dataStart) / es)
    return corrupt(name, "truncated data: " + shapeToString(shape) + " " + dtypeName(*dt) +
                             " needs " + std::to_string(uint64_t(*n) * es) + " bytes, " +
                             std::to_string(size - dataStart) + " present");
  StatusOr<Tensor> t = Tensor::allocate(*dt, shape);
  if (!t)
    return t.status();
  std::memcpy(t->rawData(), b + dataStart, t->byteSize());
  if (*dt == DType::kI1) {
    auto *v = t->data<uint8_t>();
    for (int64_t i = 0; i < *n; ++i)
      v[i] = v[i] != 0;
  }
  return t;
}

StatusOr<Tensor> readNpy(const std::string &path) {
  // Only a regular file (a FIFO would block), read up to its size.
  StatusOr<std::string> bytes = readRegularFile(path, "npy file");
  if (!bytes)
    return bytes.status();
  return parseNpy(bytes->data(), bytes->size(), path);
}

StatusOr<std::string> encodeNpy(const Tensor &t) {
  const char *descr = descrFor(t.dtype());
  if (!descr)
    return Status(StatusCode::kUnimplemented,
                  std::string("npy: numpy has no dtype for ") + dtypeName(t.dtype()) +
                      "; convert the tensor first (e.g. bf16 to f32)");
  std::string shape = "(";
  for (size_t i = 0; i < t.shape().size(); ++i)
    shape += std::to_string(t.shape()[i]) + (t.shape().size() == 1 ? "," : i + 1 < t.shape().size() ? ", " : "");
  shape += ")";
  std::string header = std::string("{'descr': '") + descr +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad with spaces so the data starts on a 64-byte boundary; end in '\n'.
  size_t prefix = 10;
  if ((header.size() + 1 + prefix + 63) / 64 * 64 - prefix > 65535)
    prefix = 12;
  const size_t total = (prefix + header.size() + 1 + 63) / 64 * 64;
  header.append(total - prefix - header.size() - 1, ' ');
  header += '\n';
  std::string out(kMagic, 6);
  out += char(prefix == 10 ? 1 : 2);
  out += char(0);
  const size_t hl = header.size();
  out += char(hl & 0xff);
  out += char((hl >> 8) & 0xff);
  if (prefix == 12) {
    out += char((hl >> 16) & 0xff);
    out += char((hl >> 24) & 0xff);
  }
  out += header;
  out.append(static_cast<const char *>(t.rawData()), t.byteSize());
  return out;
}

Status writeNpy(const std::string &path, const Tensor &t) {
  StatusOr<std::string> bytes = encodeNpy(t);
  if (!bytes)
    return bytes.status();
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f)
    return notFound("npy '" + path + "': cannot create: " + std::strerror(errno));
  f.write(bytes->data(), std::streamsize(bytes->size()));
  f.close();
  if (!f)
    return dataLoss("npy '" + path + "': write failed");
  return Status::ok();
}

} // namespace accel::rt
