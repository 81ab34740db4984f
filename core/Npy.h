//===- Npy.h - read and write numpy .npy files ------------------*- C++ -*-===//
//
// The .npy format (versions 1.0, 2.0 and 3.0 headers), little-endian, C
// order: '<f4' '<f2' '<f8' '<i8' '<i4' '<i2' '<u2' '<u4' '<u8' '|b1' '|u1'
// '|i1'. numpy has no bf16/f8/i4 dtype: tensors of those types cannot be
// written. Every failure is one sentence naming the file and the problem.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CORE_NPY_H
#define ACCEL_RUNTIME_CORE_NPY_H

#include "core/Status.h"
#include "core/Tensor.h"

#include <cstddef>
#include <string>
#include <string_view>

namespace accel::rt {

/// Reads a .npy file into an owned tensor. kNotFound when the file cannot
/// be opened; kDataLoss when it is not an npy file or is truncated;
/// kUnimplemented for an unsupported dtype, big-endian data or Fortran order.
StatusOr<Tensor> readNpy(const std::string &path);
/// Parses .npy bytes; `name` labels errors.
StatusOr<Tensor> parseNpy(const void *data, size_t size, std::string_view name = "<memory>");

/// Encodes a tensor as .npy bytes (format 1.0, or 2.0 for a huge header).
StatusOr<std::string> encodeNpy(const Tensor &t);
/// Writes a tensor to `path` as .npy.
Status writeNpy(const std::string &path, const Tensor &t);

} // namespace accel::rt

#endif // ACCEL_RUNTIME_CORE_NPY_H
