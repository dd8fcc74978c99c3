//===- AmpereSchedule.h - the sm_80 kernel's schedule -----------*- C++ -*-===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_CONVERSION_FATOGPU_AMPERE_AMPERESCHEDULE_H
#define FA_LIB_CONVERSION_FATOGPU_AMPERE_AMPERESCHEDULE_H

#include "fa/Conversion/FAToGPU/AttentionKernel.h"

namespace mlir {
namespace fa {
namespace ampere {

/// Shared memory: Q [BM][Dq], K [stages][BN][Dk], V [stages][BN][Dv], each
/// row padded to a multiple of 64 elements (the swizzle's period).
struct SharedMemoryPlan {
  explicit SharedMemoryPlan(const AttentionKernelConfig &c);
  int64_t queryRow, keyRow, valueRow; ///< elements per shared row
  int64_t keyOffset, valueOffset;     ///< bytes
  int64_t bytes;
};

/// The sm_80 forward kernel (fa-gpu-distribute's output for sm_80).
LogicalResult buildAmpereForwardKernel(OpBuilder &b, gpu::GPUModuleOp module,
                                       const FusedAttention &attention,
                                       const AttentionKernelConfig &c,
                                       StringRef name);

/// An A100's opt-in maximum of shared memory per block (227 KB on the
/// H100): what every sm_80 kernel must fit.
constexpr int64_t kMaxSharedMemoryBytes = 163 * 1024;

/// The backward's main kernel: K_j, V_j once; Q_i, dO_i in a two-stage
/// ring; P and dS through shared memory (AmpereBackward.cpp).
struct BackwardSharedMemoryPlan {
  explicit BackwardSharedMemoryPlan(const AttentionKernelConfig &c);
  int64_t keyRow, valueRow, probsRow; ///< elements per shared row
  int64_t valueOffset, queryOffset, gradOutOffset, probsOffset,
      gradScoresOffset; ///< bytes (K at 0)
  /// dQ_i staged as f32 [block_m, D + 8] for coalesced atomics
  /// (fa.accumulate_shared), when it leaves room for two blocks per SM of
  /// 4 warps, or fits beside the one block per SM of 8; stagingRow 0
  /// without.
  int64_t stagingOffset = 0, stagingRow = 0;
  int64_t bytes;
};

/// NAME_main of the sm_80 backward.
LogicalResult buildAmpereBackwardMain(OpBuilder &b, gpu::GPUModuleOp module,
                                      const AttentionBackward &backward,
                                      const AttentionKernelConfig &c,
                                      StringRef name);

} // namespace ampere
} // namespace fa
} // namespace mlir

#endif // FA_LIB_CONVERSION_FATOGPU_AMPERE_AMPERESCHEDULE_H
