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

/// The backward's L2 sections (KeyBlockPlace: the deterministic and the
/// masked kernels): 16 MB. Deterministic, on the H100 D64 forward +
/// backward B4 H16 N4k took 4.61 ms at 32 MB, 4.42-4.44 at 16, 4.54 at 8
/// (fewer pairs, longer chains; docs/perf-notes.md, eleventh session); the
/// default causal kernels ran within 1.5% at 16, 32 and 64 MB (twelfth).
constexpr int64_t kBackwardSectionBytes = 16 << 20;

/// Whether the backward loads LSE_i and D_i a Q block ahead (predicated,
/// at immediate offsets from one address, carried by the Q-block loop)
/// instead of where the step first uses them: on the tuned tiles of D =
/// 256's 64 x 64 (measured at Dv = 256), D = 64's 128 x 128 and D = 128's
/// 64 x 128 (at D = Dv; deterministic kernels included). D128: none
/// -3.3%, causal -7.0% (three rounds; with the interior copies as well
/// -2.5% / -7.3%, with the staged stores too -2.8% / -4.8%; twenty-first
/// session). Deterministic, one round: D64 -3.5% / -4.6%, D128 -0.7% /
/// -0.8%, D256 on 64 x 64 -5.1% / -2.8% beside 32 x 64 in place.
/// D256: ptxas hoisted the in-place loads to the step's head and their
/// padding selects stalled there (forward + backward B4 H16 N4k: none
/// -1.4%, causal -0.7% beside the predicated load alone; twentieth
/// session). D64: with the copies and stores below, none -2.6%, causal
/// -1.9% (three rounds; the ahead loads alone -1.7% / -2.6%, in place but
/// predicated +11%; twenty-first session). Elsewhere it did not pay (one
/// round, before the immediate offsets): D256's 32 x 64 +5% / +2% (with
/// them, level / +1.3%, twenty-first session). Not on D256's masked
/// deterministic kernel: in place (with checked copies and fragment
/// stores, which follow) it ran 5.0% faster, 8.87 against 9.33 ms, and
/// 1.16x its default instead of 1.22x; unmasked, in place was 0.6% slower
/// (three rounds, twenty-second session).
inline bool loadsQueryRowsAhead(const AttentionKernelConfig &c) {
  if (c.headDim == 256 && c.blockM == 64 && c.blockN == 64)
    return c.valueDim == 256 && !(c.deterministic && c.mask.isMasking());
  if (c.headDim != c.valueDim)
    return false;
  return (c.headDim == 64 && c.blockM == 128 && c.blockN == 128) ||
         (c.headDim == 128 && c.blockM == 64 && c.blockN == 128);
}

/// Whether the backward's copies take copyTileAsync's interior fast path
/// (no row check, clamp or select where every row of the tile exists): on
/// D = 256's 64 x 64, forward + backward B4 H16 N4k none -0.7%, causal
/// -1.2% (three rounds, twentieth session); D64's 128 x 128 with the
/// loads ahead: none -1.0%, causal +1.1% (within the rounds' spread;
/// taken with the stores below, twenty-first session). On 32 x 64 it
/// measured null or slower (D256 +0.7% / +2.4%); on D128's 64 x 128 with
/// the loads ahead +0.9% / -0.3% (three rounds, twenty-first session; the
/// fifteenth's -1.6% / -2.5% was one round), so not there, except in
/// the masked deterministic kernel: -1.7% (3.97 against 4.04 ms, 1.18x
/// its default instead of 1.20x); unmasked deterministic +0.4% (three
/// rounds, twenty-second session).
inline bool copiesInteriorFast(const AttentionKernelConfig &c) {
  return loadsQueryRowsAhead(c) &&
         (c.headDim != 128 || (c.deterministic && c.mask.isMasking()));
}

/// Whether the backward stages dK_j and dV_j through the Q and dO rings
/// and stores them 16 bytes a thread instead of 32-bit stores from the
/// fragments (FA2's epilogue): on the square tiles above, whose rings (two
/// stages of block_m rows) hold block_n rows of each. D256's 64 x 64 -0.5% / -1.7% (the ncu page's E4,
/// 2.8 K samples of 166 K); D64's 128 x 128 level (twenty-first session).
inline bool storesGradientsThroughShared(const AttentionKernelConfig &c) {
  return copiesInteriorFast(c) && c.blockN == c.blockM;
}

/// The head dims the sm_80 backward runs on 64 x 128 with 8 warps: dQ_i's
/// columns split into two groups of 32 or 64 (whole swizzle spans or half
/// ones, WarpMma::ldmatrix).
inline bool isSplitTileHeadDim(int64_t headDim) { return headDim == 64 || headDim == 128; }

/// The sm_80 backward's warp layout (BackwardColumnGroups). On 64 x 128
/// with 8 warps, FA2's 2-D layout on both sides: S's keys over groups of
/// warps and dK_j's and dV_j's head dims over two groups (32 keys each, two
/// m-tiles): per warp and step, 1/4 fewer shared-memory reads for dK and
/// dV than 16 keys of every head dim, the same registers (docs/perf-notes.md:
/// 2.3-4.9% faster forward + backward). S's keys go over four groups: S
/// and dP at 32 x 32 a warp. At D = 128 dQ_i follows (32 x 32, FA2's
/// layout: 144 ldmatrix a step instead of 168; 3% faster); at D = 64 a
/// quarter of D is no whole or half swizzle span, so dQ_i keeps two
/// groups of its own (16 rows x 32 dims: 88 ldmatrix a step instead of
/// 96; 3% faster). The deterministic kernels keep {2, 2}: with four groups
/// they ran 4% (D128) and 8% (D64) slower (docs/perf-notes.md).
inline BackwardColumnGroups ampereBackwardColumnGroups(const AttentionKernelConfig &c) {
  // D = 64 on 128 x 128 (FA2's D64 tile): S and dP at 64 x 32 a warp (two
  // row warps of four m-tiles), dK_j, dV_j and dQ_i at 32 x 32: 72
  // ldmatrix per 64 x 128 of work against 64 x 128's 88.
  if (c.warps == 8 && c.blockM == 128 && c.blockN == 128 && c.headDim == 64)
    return {4, 2, /*gradQuery=*/2};
  // D = 256 on 32 x 64 (two Q/dO stages in 136 KB): S and dP at 16 x 16
  // a warp, dK_j and dV_j at 32 keys x 64 columns, dQ_i at 16 x 64 (each
  // group's columns a whole swizzle span). dK_j's and dV_j's head dims
  // over two groups (16 keys x 128) ran 4.5% slower forward + backward
  // (docs/perf-notes.md).
  if (c.warps == 8 && c.headDim == 256 && c.blockM == 32 && c.blockN == 64)
    return {4, 4, /*gradQuery=*/4};
  // D = 256 on 64 x 64 (FA2's H100 tile; 208 KB of shared memory, past an
  // A100's: --shared-memory-budget): S and dP at 16 x 32 a warp, dK_j and
  // dV_j at 32 keys x 64 columns, dQ_i at 32 x 64: per warp and step 320
  // HMMA and 168 ldmatrix, FA2's counts (bench/results/2026-11-27-s18-ncu/).
  if (c.warps == 8 && c.headDim == 256 && c.blockM == 64 && c.blockN == 64)
    return {2, 4, /*gradQuery=*/4};
  if (c.warps == 8 && c.blockM == 64 && c.blockN == 128) {
    if (c.deterministic)
      return {2, 2};
    if (c.headDim == 128)
      return {4, 2};
    return {4, 2, /*gradQuery=*/2};
  }
  return backwardColumnGroups(c);
}

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
