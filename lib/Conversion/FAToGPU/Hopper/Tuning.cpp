//===- Tuning.cpp - the sm_90a tiles and schedule knobs -------------------===//
//
// Part of fa-mlir.
//
// Every sm_90a choice made by measurement rather than by what the tile
// needs: the tuned tiles, the forward's pipeline, the backward's warps,
// and the schedule knobs (Tuning.h), each default with its reason. The
// measurements behind them are in docs/performance.md (docs/tuning.md
// says where, knob by knob).
//
//===----------------------------------------------------------------------===//

#include "HopperStrategy.h"

#include <algorithm>
#include <sstream>

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::hopper;

//===----------------------------------------------------------------------===//
// Tiles
//===----------------------------------------------------------------------===//

AttentionGPUStrategy::Tile hopper::tunedTile(int64_t headDim, int64_t valueDim,
                                             MaskKind mask, bool e4m3) {
  using Tile = AttentionGPUStrategy::Tile;
  // e4m3: FA3's 128 query rows; at D <= 128 its block_n 224 spreads the
  // softmax's per-tile work over more scores (a window keeps 128,
  // unmeasured at 224).
  if (e4m3)
    return mask != MaskKind::Window && headDim <= 128 && valueDim <= 128
               ? Tile{128, 224}
               : Tile{128, 128};
  // D64: FA3's three consumer warpgroups, except under a mask, where 128
  // rows waste less on the diagonal.
  bool masked = mask != MaskKind::None;
  if (headDim <= 64 && valueDim <= 64)
    return masked ? Tile{128, 128} : Tile{192, 128};
  if (headDim <= 128 && valueDim <= 128)
    return {128, 128};
  // Past D128, FA3's block_n 80: QKᵀ at n64 needs all of shared memory's
  // bandwidth; a window keeps n64, where n80 spills.
  return mask == MaskKind::Window ? Tile{128, 64} : Tile{128, 80};
}

AttentionGPUStrategy::Pipeline hopper::forwardPipeline(int64_t blockM,
                                                       int64_t blockN,
                                                       int64_t headDim,
                                                       int64_t valueDim,
                                                       bool e4m3) {
  // e4m3: as many K / V / Vᵀ stages as fit, up to 4, so that the producer
  // transposes V_j well before the consumers need it; 16-bit kernels: two,
  // as deep as a third.
  int64_t stages = 2;
  while (e4m3 && stages < 4 &&
         SharedMemoryPlan::bytesFor(blockM, blockN, headDim, valueDim,
                                    /*e4m3=*/true, stages + 1) <=
             kMaxSharedMemoryBytes)
    ++stages;
  return {blockM / 16, stages};
}

AttentionGPUStrategy::Tile hopper::tunedBackwardTile(int64_t headDim,
                                                     int64_t valueDim) {
  // D <= 64: two consumer warpgroups on 128 x 128, whose diagonal masking
  // and deterministic turns cover twice the keys of 64 x 64. D = 128: 64
  // query rows, S's 128 keys split between two warpgroups. Above 128,
  // 64 x 64 with dK's and dV's head dims split too (backwardWarpsFor).
  if (headDim <= 64 && valueDim <= 64)
    return {128, 128};
  if (headDim == 128 && valueDim <= 128)
    return {64, 128};
  return {64, 64};
}

int64_t hopper::backwardWarpsFor(int64_t blockM, int64_t blockN,
                                 int64_t headDim, int64_t valueDim) {
  // 64 x 64 takes a second warpgroup where one cannot hold dK and dV.
  if (blockM == 64 && blockN == 64 && std::max(headDim, valueDim) > 128)
    return 8;
  return std::max(blockM, blockN) / 16;
}

//===----------------------------------------------------------------------===//
// Schedule knobs
//===----------------------------------------------------------------------===//

namespace {

/// FA3's split of the block's registers: 2·128·240 + 128·24, or
/// 3·128·160 + 128·32.
RegisterBudget fa3RegisterBudget(int64_t consumerGroups) {
  return consumerGroups <= 2 ? RegisterBudget{24, 240} : RegisterBudget{32, 160};
}

RegisterBudget tunedForwardRegisterBudget(const AttentionKernelConfig &c) {
  // e4m3 at Dv <= 128: the producer's transpose gets 40 registers (56
  // with three consumer warpgroups), the consumers' rest still holds S
  // and O; at Dv 256 the consumers need FA3's 240, under which ptxas
  // serialises their wgmmas.
  int64_t groups = consumerGroups(c);
  if (!isE4M3(c.elementType) || c.valueDim > 128)
    return fa3RegisterBudget(groups);
  return groups <= 2 ? RegisterBudget{40, 232} : RegisterBudget{56, 152};
}

RegisterBudget tunedBackwardRegisterBudget(const AttentionKernelConfig &c) {
  // Two blocks per SM share 64K registers: 24 for the producer, the rest
  // (232) for the one consumer warpgroup. With dQ_i in parts the
  // consumers fit 232 and the producer (the TMA issuer and the dQ writer)
  // gets 40, where it does not spill; elsewhere FA3's split.
  if (backwardBlocksPerSM(c) == 2)
    return {24, 232};
  if (BackwardSharedMemoryPlan(c).gradQueryParts > 1)
    return {40, 232};
  return fa3RegisterBudget(c.warps / 4);
}

OutputPlacement tunedOutputStaging(const AttentionKernelConfig &c) {
  // e4m3: O (bf16) staged for TMA where it fits beside the rings, else over
  // V's staging ring at Dv 256, where the transpose releases the ring
  // early; the 16-bit kernels' 4-byte stores beat a TMA store.
  bool e4m3 = isE4M3(c.elementType);
  if (!e4m3)
    return OutputPlacement::Registers;
  int64_t budget = sharedMemoryBudgetOf(c, kMaxSharedMemoryBytes);
  SharedMemoryPlan rings(c.blockM, c.blockN, c.headDim, c.valueDim, e4m3,
                         c.stages, OutputPlacement::Registers);
  int64_t outputBytes = outputStagingBytes(c);
  if (rings.bytes + outputBytes <= budget)
    return OutputPlacement::Shared;
  if (c.valueDim > 128 && c.stages * rings.stagingStageBytes >= outputBytes &&
      rings.bytes + 8 <= budget)
    return OutputPlacement::Staging;
  return OutputPlacement::Registers;
}

const char *onlyE4M3(const AttentionKernelConfig &c) {
  return isE4M3(c.elementType) ? nullptr : "f8e4m3fn kernels";
}

std::string budgetText(RegisterBudget budget) {
  return std::to_string(budget.producer) + "/" + std::to_string(budget.consumer);
}

/// Why `budget` cannot run: more registers than the block holds at entry.
std::string unfitRegisterBudget(RegisterBudget budget, int64_t consumerThreads,
                                int64_t blocksPerSM) {
  if (fitsEntryRegisters(budget, consumerThreads, blocksPerSM))
    return "";
  int64_t threads = consumerThreads + kWarpgroupThreads;
  std::ostringstream os;
  os << "register_budget " << budgetText(budget) << " hands out "
     << budget.producer * kWarpgroupThreads + budget.consumer * consumerThreads
     << " registers, more than the "
     << entryRegisters(threads, blocksPerSM) * threads << " the block holds at entry ("
     << entryRegisters(threads, blocksPerSM) << " per thread, " << threads
     << " threads, " << blocksPerSM
     << " block" << (blocksPerSM == 1 ? "" : "s")
     << " per SM): setmaxnreg.inc would wait for ever";
  return os.str();
}

} // namespace

ScheduleKnobs hopper::tunedSchedule(const AttentionKernelConfig &c,
                                    KernelKind kind) {
  ScheduleKnobs k;
  // Per warp: the consumers' registers take the warp's first row.
  k.maskPerWarp = kMaskPerWarp;
  if (kind == KernelKind::Forward) {
    // Without the mask's branch between the wgmmas' issue and their wait,
    // ptxas waits for P·V below the row max, not before it. Not for 16-bit
    // Dv > 128 (a second copy of the largest bodies) nor e4m3 between 128
    // and 256 (unmeasured; it spills).
    k.splitsUnmaskedTiles = c.valueDim > 128
                                ? isE4M3(c.elementType) && c.valueDim == 256
                                : true;
    // e4m3 at Dv 256: the consumers' release would hold V_j's copy back
    // until P·V_{j-2} is done; at Dv <= 128 the early release is slower.
    k.stagingReleasedByTranspose = isE4M3(c.elementType) && c.valueDim > 128;
    k.outputStaging = tunedOutputStaging(c);
    // Persistent, so that the next tile's Q and first K land under this
    // tile's epilogue; under a mask in pairs of a head's Q blocks from
    // both ends, whose costs balance where single tiles' do not.
    k.tileOrder = c.tileWorkVaries() ? TileOrder::Paired : TileOrder::Strided;
    k.registerBudget = tunedForwardRegisterBudget(c);
    return k;
  }
  // Above Dv 128, where the bodies' registers take the second loop.
  k.splitsUnmaskedQueryBlocks = c.valueDim > 128;
  k.registerBudget = tunedBackwardRegisterBudget(c);
  // 32 MiB: two sections would split a pair's KV blocks across waves.
  k.sectionMiB = 32;
  return k;
}

ArrayRef<ScheduleKnob> hopper::scheduleKnobs(KernelKind kind) {
  static const ScheduleKnob forward[] = {
      knob::flag<&ScheduleKnobs::maskPerWarp>("mask_per_warp"),
      knob::flag<&ScheduleKnobs::splitsUnmaskedTiles>("splits_unmasked_tiles"),
      knob::flag<&ScheduleKnobs::stagingReleasedByTranspose>(
          "staging_released_by_transpose", onlyE4M3),
      knob::outputStaging(),
      knob::tileOrder(),
      knob::registerBudget(),
  };
  static const ScheduleKnob backward[] = {
      knob::flag<&ScheduleKnobs::maskPerWarp>("mask_per_warp"),
      knob::flag<&ScheduleKnobs::splitsUnmaskedQueryBlocks>(
          "splits_unmasked_query_blocks"),
      knob::registerBudget(),
      knob::sectionMiB(),
  };
  if (kind == KernelKind::Forward)
    return forward;
  return backward;
}

std::string hopper::unsupportedSchedule(const AttentionKernelConfig &c,
                                        KernelKind kind) {
  const ScheduleKnobs &k = c.schedule;
  if (kind == KernelKind::Backward)
    return unfitRegisterBudget(k.registerBudget, 32 * c.warps,
                               backwardBlocksPerSM(c));
  if (std::string budget = unfitRegisterBudget(k.registerBudget, 32 * c.warps,
                                               /*blocksPerSM=*/1);
      !budget.empty())
    return budget;
  std::ostringstream os;
  bool e4m3 = isE4M3(c.elementType);
  SharedMemoryPlan rings(c.blockM, c.blockN, c.headDim, c.valueDim, e4m3,
                         c.stages, OutputPlacement::Registers);
  int64_t outputBytes = outputStagingBytes(c);
  int64_t budget = sharedMemoryBudgetOf(c, kMaxSharedMemoryBytes);
  switch (k.outputStaging) {
  case OutputPlacement::Registers:
    break;
  case OutputPlacement::Shared:
    if (rings.bytes <= budget && rings.bytes + outputBytes > budget)
      os << "output_staging=shared needs " << rings.bytes + outputBytes
         << " bytes of shared memory (O's " << outputBytes
         << " beside the rings), more than the budget's " << budget << " bytes";
    break;
  case OutputPlacement::Staging:
    if (!e4m3)
      os << "output_staging=staging stages O over V's staging ring, which "
            "only f8e4m3fn kernels have";
    else if (c.stages * rings.stagingStageBytes < outputBytes)
      os << "output_staging=staging needs V's staging ring ("
         << c.stages * rings.stagingStageBytes << " bytes) to hold O's tile ("
         << outputBytes << " bytes)";
    break;
  }
  return os.str();
}
