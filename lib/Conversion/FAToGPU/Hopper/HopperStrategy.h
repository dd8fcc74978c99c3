//===- HopperStrategy.h - the sm_90a strategy -------------------*- C++ -*-===//
//
// Part of fa-mlir.
//
// sm_90a (H100): Q, K and V land by TMA (cp.async.bulk.tensor) in
// 128-byte-swizzled column panels (#fa.tma_shared), completing on mbarriers;
// S = QKᵀ and O += PV run on wgmma m64nNk16 (P from registers); one
// producer warpgroup issues the copies while the consumer warpgroups (one
// per 64 query rows) compute, each with the register budget setmaxnreg
// gives it.
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_CONVERSION_FATOGPU_HOPPER_HOPPERSTRATEGY_H
#define FA_LIB_CONVERSION_FATOGPU_HOPPER_HOPPERSTRATEGY_H

#include "fa/Conversion/FAToGPU/AttentionKernel.h"
#include "fa/Conversion/FAToGPU/BackwardKernel.h"
#include "fa/Conversion/FAToGPU/KernelSkeleton.h"

namespace mlir {
namespace fa {
namespace hopper {

/// Query rows per consumer warpgroup: wgmma's M.
constexpr int64_t kRowsPerWarpgroup = 64;
/// Threads per warpgroup (wgmma's and setmaxnreg's unit).
constexpr int64_t kWarpgroupThreads = 128;
/// Consumer warpgroups per block: three fit 64K registers at 160 each.
constexpr int64_t kMaxConsumerGroups = 3;
/// Elements per 128-byte panel row (16-bit types).
constexpr int64_t kPanelElements = 64;
constexpr int64_t kPanelRowBytes = 128;
/// The 64-column panels a 16-bit tile of `width` columns takes.
inline int64_t panelsOf(int64_t width) {
  return (width + kPanelElements - 1) / kPanelElements;
}
/// Elements of `element` per 128-byte panel row: 64 (16-bit), 128 (e4m3).
inline int64_t panelElementsOf(Type element) {
  return kPanelRowBytes * 8 / element.getIntOrFloatBitWidth();
}
/// The panels a tile of `width` columns of 16-bit or (`e4m3`) 8-bit
/// elements takes.
inline int64_t panelsOf(int64_t width, bool e4m3) {
  int64_t elements = e4m3 ? 2 * kPanelElements : kPanelElements;
  return (width + elements - 1) / elements;
}
/// True for the fp8 (e4m3) forward: V is transposed in shared memory.
inline bool isE4M3(Type element) { return isa<Float8E4M3FNType>(element); }

/// Shared memory: Q [panels][BM][W], K and V [stages][panels][BN][W] (W
/// the panel width in elements), then the mbarriers. With e4m3 the V ring
/// holds Vᵀ [stages][BN / 128][Dv][128] (#fa.tma_shared keyMajor, written
/// by the producer warpgroup) and V lands by TMA in a staging ring of its
/// own [stages][panels][BN][128] first. O (of the output type,
/// [panels][BM][64]) is staged for a TMA store where the output_staging
/// knob says: in a region of its own before the barriers, or over V's
/// staging ring, where the next tile's V copies wait for the store (an
/// output-empty barrier after the others). Every tile starts on a
/// 1024-byte swizzle atom.
struct SharedMemoryPlan {
  explicit SharedMemoryPlan(const AttentionKernelConfig &c);
  /// The plan of a tile of 16-bit or (`e4m3`) 8-bit inputs, O placed as
  /// `output` says.
  SharedMemoryPlan(int64_t blockM, int64_t blockN, int64_t headDim,
                   int64_t valueDim, bool e4m3, int64_t stages,
                   OutputPlacement output);
  /// The rings' bytes (what the stage count is chosen by).
  static int64_t bytesFor(int64_t blockM, int64_t blockN, int64_t headDim,
                          int64_t valueDim, bool e4m3, int64_t stages) {
    return SharedMemoryPlan(blockM, blockN, headDim, valueDim, e4m3, stages,
                            OutputPlacement::Registers)
        .bytes;
  }
  int64_t queryPanels, keyPanels, valuePanels;
  int64_t keyOffset, valueOffset;     ///< bytes
  int64_t queryBytes, keyStageBytes, valueStageBytes;
  /// e4m3: the staging ring of V as TMA writes it (0 bytes otherwise).
  int64_t stagingOffset, stagingPanels, stagingStageBytes;
  /// O staged for its TMA store (bf16 panels of 64 columns); 0 panels where
  /// O is stored from the registers. `outputInStaging`: over V's staging
  /// ring.
  int64_t outputOffset = 0, outputPanels = 0;
  bool outputInStaging = false;
  int64_t barrierOffset;              ///< bytes; 8 per mbarrier
  int64_t bytes;
};

/// Threads per block: the consumer warpgroups (c.warps MMA warps), then
/// one producer warpgroup.
inline int64_t blockThreadsFor(const AttentionKernelConfig &c) {
  return 32 * c.warps + kWarpgroupThreads;
}

/// Whether the forward's consumers write O into shared memory, each
/// warpgroup its 64 rows, and one thread of each stores them with TMA
/// (o_tmap), instead of 4-byte stores from the registers (output_staging).
inline bool storesOutputThroughShared(const AttentionKernelConfig &c) {
  return c.schedule.outputStaging != OutputPlacement::Registers;
}

/// The bytes of O's staging: the output type's 64-column panels of
/// block_m rows.
inline int64_t outputStagingBytes(const AttentionKernelConfig &c) {
  return panelsOf(c.valueDim) * c.blockM * kPanelRowBytes;
}

/// The forward's consumer warpgroups: 64 query rows each.
inline int64_t consumerGroups(const AttentionKernelConfig &c) {
  return c.blockM / kRowsPerWarpgroup;
}

/// fa.apply_mask per warp: the consumers' registers take the warp's first
/// row.
constexpr bool kMaskPerWarp = true;

/// The registers per thread a block holds at entry, as ptxas allocates
/// them for `threads` threads and `blocksPerSM` resident blocks (.maxntid,
/// .minnctapersm): the SM's 64K shared out, a multiple of 8.
constexpr int64_t entryRegisters(int64_t threads, int64_t blocksPerSM) {
  int64_t share = 65536 / (threads * blocksPerSM);
  return (share < 255 ? share : 255) / 8 * 8;
}
/// Whether `budget` hands out no more registers than the block holds at
/// entry (the producer warpgroup plus `consumerThreads`): setmaxnreg.inc
/// waits until registers are free, so a budget over it hangs the kernel
/// (32 / 240 at 384 threads did on the H100: 65536 > 168 · 384).
constexpr bool fitsEntryRegisters(RegisterBudget budget, int64_t consumerThreads,
                                  int64_t blocksPerSM) {
  int64_t threads = consumerThreads + kWarpgroupThreads;
  return budget.producer * kWarpgroupThreads + budget.consumer * consumerThreads <=
         entryRegisters(threads, blocksPerSM) * threads;
}
/// `budget` checked against the block's entry registers: an internal
/// error at `loc` rather than a kernel that hangs.
LogicalResult checkRegisterBudget(Location loc, RegisterBudget budget,
                                  int64_t consumerThreads, int64_t blocksPerSM);
static_assert(fitsEntryRegisters({24, 240}, 256, 1) && fitsEntryRegisters({40, 232}, 256, 1) &&
                  !fitsEntryRegisters({32, 240}, 256, 1),
              "two consumer warpgroups: 168 registers per thread at entry");
static_assert(fitsEntryRegisters({32, 160}, 384, 1) && fitsEntryRegisters({56, 152}, 384, 1) &&
                  !fitsEntryRegisters({40, 160}, 384, 1),
              "three consumer warpgroups: 128 registers per thread at entry");
static_assert(fitsEntryRegisters({24, 232}, 128, 2) && fitsEntryRegisters({32, 224}, 128, 2) &&
                  !fitsEntryRegisters({40, 224}, 128, 2),
              "one consumer warpgroup, two blocks per SM: 128 at entry");

/// The most dynamic shared memory a block may take and still have a second
/// block beside it on an SM (half of the H100's 228 KB, less each block's
/// 1 KB reserve, rounded down).
constexpr int64_t kHalfSharedMemoryBytes = 113 * 1024;
/// The H100's opt-in maximum of dynamic shared memory per block: the
/// largest budget (AttentionKernel.h), sm_90a's default.
constexpr int64_t kMaxSharedMemoryBytes = kLargestSharedMemoryBudget;

/// The backward main kernel's shared memory: K [panels][BN][64], V, the
/// Q ring [queryStages][panels][BM][64] and the dO ring [gradOutStages]...,
/// P and dS [BN / 64][BM][64], dQ_i's f32 staging [stagingStages][D / 32 /
/// parts][BM][32] (the TMA reduce-add's source, one buffer per dQ_i part),
/// then the mbarriers: kv_full; q_full, q_empty per Q stage; do_full,
/// do_empty per dO stage where dO has a ring of its own; dq_full, dq_empty
/// per staging buffer.
struct BackwardSharedMemoryPlan {
  explicit BackwardSharedMemoryPlan(const AttentionKernelConfig &c);
  /// Where dQ_i is computed in column parts (dV_j complete by the second
  /// part's wait), dO_i is released before the step ends: it gets its own
  /// ring and barriers, so that dO_(i+1) lands under dK_j's and the next
  /// S's wgmmas. Otherwise Q_i and dO_i share one ring and its barriers.
  bool gradOutRing;
  int64_t queryStages;   ///< 2, or 1 for a second block per SM or where
                         ///< staging buffers come first (deterministic D256)
  int64_t gradOutStages; ///< the Q ring's unless gradOutRing
  int64_t gradQueryParts; ///< dQ_i's column parts (one staging buffer each)
  int64_t keyPanels, valuePanels, probsPanels;
  int64_t keyBytes, valueBytes, queryStageBytes, gradOutStageBytes;
  int64_t valueOffset, queryOffset, gradOutOffset, probsOffset,
      gradScoresOffset; ///< bytes
  int64_t stagingOffset, stagingPanels, stagingBufferBytes;
  int64_t stagingStages; ///< dQ_i's staging buffers: 2 where they fit
                         ///< and a second Q stage does not come first
  /// dQ writers (producer threads, each of its own warp) taking the steps
  /// in turn. Deterministic, with a staging buffer per part (D256), two:
  /// each passes its own Q block's turn once its reduce-adds complete,
  /// while the other adds the next step. Writer w > 0 waits on dq_full
  /// barriers of its own (after every other barrier), since two waiters
  /// a phase apart cannot share one mbarrier's parity.
  int64_t gradQueryWriters;
  int64_t barrierOffset, bytes;
};

/// Whether the kernel loops over tiles (KernelAbi.h's TileScheduler).
inline bool persistentTiles(const AttentionKernelConfig &c) {
  return c.schedule.tileOrder != TileOrder::PerBlock;
}

/// The backward's resident blocks per SM: two where one consumer
/// warpgroup's shared memory leaves room for a second block, since one
/// consumer warpgroup alone cannot keep the tensor cores busy.
int64_t backwardBlocksPerSM(const AttentionKernelConfig &c);

//===----------------------------------------------------------------------===//
// Tuning (Tuning.cpp): the tiles and the schedule knobs
//===----------------------------------------------------------------------===//

AttentionGPUStrategy::Tile tunedTile(int64_t headDim, int64_t valueDim,
                                     MaskKind mask, bool e4m3);
AttentionGPUStrategy::Pipeline forwardPipeline(int64_t blockM, int64_t blockN,
                                               int64_t headDim, int64_t valueDim,
                                               bool e4m3);
AttentionGPUStrategy::Tile tunedBackwardTile(int64_t headDim, int64_t valueDim);
int64_t backwardWarpsFor(int64_t blockM, int64_t blockN, int64_t headDim,
                         int64_t valueDim);
ScheduleKnobs tunedSchedule(const AttentionKernelConfig &c, KernelKind kind);
ArrayRef<ScheduleKnob> scheduleKnobs(KernelKind kind);
std::string unsupportedSchedule(const AttentionKernelConfig &c, KernelKind kind);

/// The sm_90a forward kernel (fa-gpu-distribute's output for sm_90a).
LogicalResult buildHopperForwardKernel(OpBuilder &b, gpu::GPUModuleOp module,
                                       const FusedAttention &attention,
                                       const AttentionKernelConfig &c,
                                       StringRef name);

/// The sm_90a backward's main kernel (BackwardKernel.h's NAME_main).
LogicalResult buildHopperBackwardMain(OpBuilder &b, gpu::GPUModuleOp module,
                                      const AttentionBackward &backward,
                                      const AttentionKernelConfig &c,
                                      StringRef name);

/// fa-gpu-lower-fragments' sm_90a patterns: S = QKᵀ and acc + PV on wgmma.
void populateWgmmaPatterns(const TypeConverter &converter,
                           RewritePatternSet &patterns);

std::unique_ptr<AttentionGPUStrategy> createHopperStrategy();

} // namespace hopper
} // namespace fa
} // namespace mlir

#endif // FA_LIB_CONVERSION_FATOGPU_HOPPER_HOPPERSTRATEGY_H
