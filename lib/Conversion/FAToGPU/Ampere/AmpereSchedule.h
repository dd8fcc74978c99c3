//===- AmpereSchedule.h - the sm_80 kernel's schedule -----------*- C++ -*-===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_CONVERSION_FATOGPU_AMPERE_AMPERESCHEDULE_H
#define FA_LIB_CONVERSION_FATOGPU_AMPERE_AMPERESCHEDULE_H

#include "fa/Conversion/FAToGPU/AttentionKernel.h"
#include "fa/Conversion/FAToGPU/BackwardKernel.h"

namespace mlir {
namespace fa {
namespace ampere {

/// Shared memory: Q [BM][Dq], K [stages][BN][Dk], V [stages][BN][Dv], each
/// row padded to a multiple of 64 elements (the swizzle's period).
struct SharedMemoryPlan {
  explicit SharedMemoryPlan(const AttentionKernelConfig &c);
  SharedMemoryPlan(int64_t elementBytes, int64_t blockM, int64_t blockN,
                   int64_t headDim, int64_t valueDim, int64_t stages);
  static int64_t bytesFor(int64_t elementBytes, int64_t blockM, int64_t blockN,
                          int64_t headDim, int64_t valueDim, int64_t stages) {
    return SharedMemoryPlan(elementBytes, blockM, blockN, headDim, valueDim,
                            stages)
        .bytes;
  }
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
/// H100): the sm_80 kernels' default budget (what the forward's stages
/// are planned for), so that they run on every A100. A larger budget
/// (--shared-memory-budget) builds kernels for the H100's sm_80 path only.
constexpr int64_t kMaxSharedMemoryBytes = 163 * 1024;

/// The head dims the sm_80 backward runs on 64 x 128 with 8 warps: dQ_i's
/// columns split into two groups of 32 or 64 (whole swizzle spans or half
/// ones, WarpMma::ldmatrix).
inline bool isSplitTileHeadDim(int64_t headDim) { return headDim == 64 || headDim == 128; }

//===----------------------------------------------------------------------===//
// Tuning (Tuning.cpp): the tiles and the schedule knobs
//===----------------------------------------------------------------------===//

/// fa.apply_mask per tile: per warp, the warp's first row is a register
/// too many on sm_80.
constexpr bool kMaskPerWarp = false;

AttentionGPUStrategy::Tile tunedTile(int64_t headDim, int64_t valueDim,
                                     MaskKind mask, bool e4m3);
AttentionGPUStrategy::Pipeline forwardPipeline(int64_t blockM, int64_t blockN,
                                               int64_t headDim, int64_t valueDim);
/// Within `budget` bytes of shared memory (0: the chip's default).
AttentionGPUStrategy::Tile tunedBackwardTile(int64_t headDim, int64_t valueDim,
                                             int64_t budget);
int64_t backwardWarpsFor(int64_t blockM, int64_t blockN, int64_t headDim);
/// The backward's tuned warp layout (ScheduleKnobs::columnGroups).
BackwardColumnGroups columnGroupsFor(const AttentionKernelConfig &c);
ScheduleKnobs tunedSchedule(const AttentionKernelConfig &c, KernelKind kind);
ArrayRef<ScheduleKnob> scheduleKnobs(KernelKind kind);
std::string unsupportedSchedule(const AttentionKernelConfig &c, KernelKind kind);

/// The backward's main kernel: K_j, V_j once; Q_i, dO_i in a two-stage
/// ring; P and dS through shared memory (AmpereBackward.cpp).
struct BackwardSharedMemoryPlan {
  explicit BackwardSharedMemoryPlan(const AttentionKernelConfig &c);
  BackwardSharedMemoryPlan(int64_t elementBytes, int64_t blockM, int64_t blockN,
                           int64_t headDim, int64_t valueDim);
  int64_t keyRow, valueRow, probsRow; ///< elements per shared row
  int64_t valueOffset, queryOffset, gradOutOffset, probsOffset,
      gradScoresOffset; ///< bytes (K at 0)
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
