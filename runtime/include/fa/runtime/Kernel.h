//===- Kernel.h - a generated kernel: manifest, load, launch ----*- C++ -*-===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#ifndef FA_RUNTIME_KERNEL_H
#define FA_RUNTIME_KERNEL_H

#include "fa/runtime/Cuda.h"
#include "fa/runtime/Spec.h"

#include <memory>
#include <string>
#include <vector>

namespace fa {

/// What fa-compile wrote in NAME.json.
struct Manifest {
  std::string kernelName, ptxFile, target, generator, dtypeName;
  AttentionSpec spec; ///< d, dv, dtype, mask, softcap, scale, block_m/n
  int64_t stages = 2, warps = 4, blockThreads = 128;
  int64_t dynamicSharedMemory = 0;
  std::vector<std::string> params; ///< in launch order

  /// Reads and checks a manifest; false with a reason.
  static bool read(const std::string &path, Manifest &out, std::string &error);
};

/// Where the tensors are and how they are laid out. Strides are in
/// elements, innermost dimension contiguous; [B,S,H,D] and [B,H,S,D] are
/// both just strides.
struct ForwardArgs {
  cuda::CUdeviceptr q = 0, k = 0, v = 0, o = 0, lse = 0;
  int64_t batch = 1, queryHeads = 1, kvHeads = 1, queryLen = 1, keyLen = 1;
  int64_t qStride[3] = {0, 0, 0}; ///< batch, head, sequence
  int64_t kStride[3] = {0, 0, 0};
  int64_t vStride[3] = {0, 0, 0};
  int64_t oStride[3] = {0, 0, 0};
  int64_t lseStride[2] = {0, 0}; ///< batch, head (sequence stride is 1)
  /// ALiBi: f32 slopes, or 0 for none.
  cuda::CUdeviceptr alibiSlopes = 0;
  int64_t alibiStrideB = 0; // 0 for [Hq] slopes, Hq for [B, Hq]
};

/// A loaded forward kernel.
class Kernel {
public:
  /// Loads `manifestPath` and the PTX next to it; null with a reason.
  /// `noDevice` is set when there is no GPU at all.
  static std::unique_ptr<Kernel> load(const std::string &manifestPath,
                                      std::string &error, bool &noDevice);
  ~Kernel();

  /// Launches on `stream` (null: the default stream). False with a reason
  /// (bad sizes, a driver error); nothing aborts.
  bool forward(const ForwardArgs &args, cuda::CUstream stream,
               std::string &error) const;

  const Manifest &manifest() const { return info; }
  int registers() const { return numRegisters; }
  cuda::Driver &driver() const { return *cu; }

private:
  Kernel() = default;
  Manifest info;
  cuda::Driver *cu = nullptr;
  cuda::CUmodule module = nullptr;
  cuda::CUfunction function = nullptr;
  int numRegisters = 0;
};

} // namespace fa

#endif // FA_RUNTIME_KERNEL_H
