//===- AttentionKernel.h - what a GPU attention kernel is -------*- C++ -*-===//
//
// Part of fa-mlir.
//
// The contract between the tiled IR and a hardware strategy. The conversion
// reads an `AttentionKernelConfig` off the fused online-softmax loop nest
// (the L2 IR fa-tile + fa-fuse-online-softmax produce); a strategy (Ampere
// today, Hopper next) turns it into a gpu.func with a fixed ABI.
//
// Kernel ABI (what the runtime launches; the manifest records it):
//   q, k, v, o : memref<?xT>    flat device buffers (5 words each: allocated,
//   lse        : memref<?xf32>  aligned, offset, size, stride)
//   i64 batch, q_heads, kv_heads, q_len, kv_len,
//   i64 q_stride_{b,h,s}, k_stride_{b,h,s}, v_stride_{b,h,s},
//       o_stride_{b,h,s}, lse_stride_{b,h}
// Strides are in elements; the innermost dimension is contiguous. Grid:
// (ceil(q_len / block_m), q_heads, batch); block: warps × 32 threads.
//
//===----------------------------------------------------------------------===//

#ifndef FA_CONVERSION_FATOGPU_ATTENTIONKERNEL_H
#define FA_CONVERSION_FATOGPU_ATTENTIONKERNEL_H

#include "fa/Dialect/FA/IR/FAOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir {
namespace fa {

/// One forward attention kernel, as the tiled IR describes it.
struct AttentionKernelConfig {
  Type elementType;          ///< f16 or bf16
  int64_t headDim = 0;       ///< D
  int64_t valueDim = 0;      ///< Dv
  int64_t blockM = 0;        ///< query rows per thread block
  int64_t blockN = 0;        ///< key rows per pipeline stage
  int64_t stages = 2;        ///< K/V shared-memory buffers
  int64_t warps = 4;
  MaskAttr mask;
  double scale = 0.0;        ///< natural units (log2(e) is applied inside)
  double softcap = 0.0;
  bool writesLse = true;
};

/// Reads the config off a function holding one fused online-softmax loop
/// nest (after fa-tile and fa-fuse-online-softmax). `stages` and `warps`
/// come from `tile` if given, else from the `fa.tile` fa-tile leaves on the
/// loop nest.
FailureOr<AttentionKernelConfig> analyzeFusedAttention(func::FuncOp func,
                                                       TileAttr tile);

/// Names of the scalar kernel parameters, in ABI order (after the memrefs).
const std::vector<std::string> &attentionKernelScalarParams();

/// A hardware strategy: validates a config and emits its kernel.
class AttentionGPUStrategy {
public:
  virtual ~AttentionGPUStrategy();
  /// The chip this strategy targets ("sm_80").
  virtual StringRef chip() const = 0;
  /// Null if the config can be built; otherwise the reason.
  virtual std::string unsupportedReason(const AttentionKernelConfig &c) const = 0;
  /// Bytes of dynamic shared memory the kernel needs.
  virtual int64_t dynamicSharedMemoryBytes(const AttentionKernelConfig &c) const = 0;
  /// Emits `gpu.func @name` into `module`.
  virtual gpu::GPUFuncOp emitForwardKernel(OpBuilder &builder,
                                           gpu::GPUModuleOp module,
                                           const AttentionKernelConfig &c,
                                           StringRef name) const = 0;
};

/// FlashAttention-2 on sm_80: cp.async, ldmatrix, mma.sync m16n8k16.
std::unique_ptr<AttentionGPUStrategy> createAmpereAttentionStrategy();

/// The strategy for a chip name, or null.
std::unique_ptr<AttentionGPUStrategy> createAttentionStrategy(StringRef chip);

} // namespace fa
} // namespace mlir

#endif // FA_CONVERSION_FATOGPU_ATTENTIONKERNEL_H
