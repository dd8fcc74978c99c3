//===- Npy.cpp - writing .npy files ---------------------------------------===//
//
// Part of fa-mlir.
//
// Format: https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html
// (version 1.0: magic, 2-byte header length, a Python dict literal padded so
// that the data starts on a 64-byte boundary).
//
//===----------------------------------------------------------------------===//

#include "fa/runtime/Npy.h"

#include <cstdio>
#include <cerrno>
#include <cstring>

bool fa::writeNpyF32(const std::string &path,
                     const std::vector<int64_t> &shape,
                     const std::vector<double> &values, std::string &error) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i)
    header += std::to_string(shape[i]) + (shape.size() == 1 ? "," : (i + 1 < shape.size() ? ", " : ""));
  header += "), }";
  size_t unpadded = 10 + header.size() + 1; // magic+version+len, header, '\n'
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';

  std::FILE *file = std::fopen(path.c_str(), "wb");
  if (!file) {
    error = "cannot write " + path + ": " + std::strerror(errno);
    return false;
  }
  const unsigned char magic[8] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  uint16_t length = static_cast<uint16_t>(header.size());
  unsigned char lengthBytes[2] = {static_cast<unsigned char>(length & 0xFF),
                                  static_cast<unsigned char>(length >> 8)};
  bool ok = std::fwrite(magic, 1, 8, file) == 8 &&
            std::fwrite(lengthBytes, 1, 2, file) == 2 &&
            std::fwrite(header.data(), 1, header.size(), file) == header.size();
  for (double value : values) {
    float single = static_cast<float>(value);
    ok = ok && std::fwrite(&single, sizeof(single), 1, file) == 1;
  }
  ok = (std::fclose(file) == 0) && ok;
  if (!ok)
    error = "short write to " + path;
  return ok;
}
