//===- KernelAbi.h - the forward kernel's parameters, once ------*- C++ -*-===//
//
// Part of fa-mlir.
//
// The one home of the kernel ABI. The compiler builds the gpu.func
// signature from `forwardKernelParams` and writes the same list into the
// manifest; the runtime reads the list back from the manifest and binds
// each name to its value with `forwardParamValue`. Nothing else states
// the parameters, their order or their count.
//
// No MLIR here: the runtime builds on machines without LLVM.
//
//===----------------------------------------------------------------------===//

#ifndef FA_RUNTIME_KERNELABI_H
#define FA_RUNTIME_KERNELABI_H

#include "fa/runtime/Cuda.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fa {

/// Where the tensors are and how they are laid out, for one launch. Strides
/// are in elements, innermost dimension contiguous; [B,S,H,D] and [B,H,S,D]
/// are both just strides.
struct ForwardArgs {
  cuda::CUdeviceptr q = 0, k = 0, v = 0, o = 0, lse = 0;
  int64_t batch = 1, queryHeads = 1, kvHeads = 1, queryLen = 1, keyLen = 1;
  int64_t qStride[3] = {0, 0, 0}; ///< batch, head, sequence
  int64_t kStride[3] = {0, 0, 0};
  int64_t vStride[3] = {0, 0, 0};
  int64_t oStride[3] = {0, 0, 0};
  int64_t lseStride[2] = {0, 0}; ///< batch, head (sequence stride is 1)
  /// ALiBi slopes (f32), [Hq] (alibiStrideB = 0) or [B, Hq] (= Hq).
  cuda::CUdeviceptr alibiSlopes = 0;
  int64_t alibiStrideB = 0;
};

namespace abi {

/// How a parameter is passed. A buffer is a flat memref<?xT>: five launch
/// words (allocated pointer, aligned pointer, offset, size, stride).
enum class ParamType {
  ElementBuffer, ///< memref<?xT>, T the kernel's element type (Q, K, V, O)
  F32Buffer,     ///< memref<?xf32> (LSE, ALiBi slopes)
  Int64,         ///< i64 (sizes and strides, in elements)
};

struct Param {
  const char *name;
  ParamType type;
  /// Only kernels with ALiBi take it.
  bool alibiOnly;
};

/// The forward kernel's parameters, in launch order.
std::vector<Param> forwardKernelParams(bool alibi);

/// The manifest's type string of a parameter ("memref<?xbf16>", "i64").
std::string paramTypeName(ParamType type, const std::string &elementType);

/// The value of parameter `name` for one launch: a device pointer (buffers)
/// or an integer. False if the runtime does not know the name.
bool forwardParamValue(const ForwardArgs &args, const std::string &name,
                       int64_t &value);

} // namespace abi
} // namespace fa

#endif // FA_RUNTIME_KERNELABI_H
