//===- Npy.h - writing .npy files -------------------------------*- C++ -*-===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#ifndef FA_RUNTIME_NPY_H
#define FA_RUNTIME_NPY_H

#include <cstdint>
#include <string>
#include <vector>

namespace fa {

/// Writes `values` as a little-endian float32 .npy array of `shape` (every
/// value fa-run dumps is exactly representable in float32). Returns false
/// with a reason on an I/O error.
bool writeNpyF32(const std::string &path, const std::vector<int64_t> &shape,
                 const std::vector<double> &values, std::string &error);

} // namespace fa

#endif // FA_RUNTIME_NPY_H
