//===- Tuning.cpp - the sm_80 tiles and schedule knobs --------------------===//
//
// Part of fa-mlir.
//
// Every sm_80 choice made by measurement rather than by what the tile
// needs: the tuned tiles, the forward's pipeline, the backward's warps,
// and the schedule knobs (Tuning.h), each default with its reason. The
// measurements behind them are in docs/performance.md (docs/tuning.md
// says where, knob by knob).
//
//===----------------------------------------------------------------------===//

#include "AmpereSchedule.h"
#include "AmpereStrategy.h"

#include <algorithm>
#include <sstream>

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::ampere;

//===----------------------------------------------------------------------===//
// Tiles
//===----------------------------------------------------------------------===//

AttentionGPUStrategy::Tile ampere::tunedTile(int64_t, int64_t, MaskKind, bool) {
  // Two m16 tiles per warp halve the ldmatrix traffic per mma; at D = 256
  // forwardPipeline gives the same tile 8 warps of one m16 tile each.
  return {128, 64};
}

AttentionGPUStrategy::Pipeline ampere::forwardPipeline(int64_t blockM,
                                                       int64_t blockN,
                                                       int64_t headDim,
                                                       int64_t valueDim) {
  // Past D = 128 a warp has registers for one m16 tile (O alone is 128
  // f32 a thread at Dv = 256): 16 rows per warp. Two K/V stages where
  // they fit in sm_80's shared memory, else one.
  bool wideHead = headDim > 128 || valueDim > 128;
  int64_t warps = wideHead ? std::clamp<int64_t>(blockM / 16, 1, 8) : 4;
  bool twoFit = SharedMemoryPlan::bytesFor(/*elementBytes=*/2, blockM, blockN,
                                           headDim, valueDim, 2) <=
                kMaxSharedMemoryBytes;
  return {warps, twoFit ? 2 : 1};
}

AttentionGPUStrategy::Tile ampere::tunedBackwardTile(int64_t headDim,
                                                     int64_t valueDim,
                                                     int64_t budget) {
  // D = 64: FA2's 128 x 128 on 8 warps in its 2-D layout, the fewest
  // ldmatrix per unit of work (columnGroupsFor).
  if (headDim == 64)
    return {128, 128};
  // D = Dv = 256: FA2's 64 x 64 on 8 warps where the budget holds its two
  // Q/dO stages (past an A100's default); else 32 x 64. Dv = 128 keeps
  // 32 x 64, unmeasured on 64 x 64.
  if (headDim > 128) {
    int64_t wideBytes =
        BackwardSharedMemoryPlan(/*elementBytes=*/2, 64, 64, headDim, valueDim).bytes;
    bool wide = valueDim == 256 && wideBytes <= (budget ? budget : kMaxSharedMemoryBytes);
    return wide ? AttentionGPUStrategy::Tile{64, 64} : AttentionGPUStrategy::Tile{32, 64};
  }
  // D = 128: 64 x 128 on 8 warps, S's keys split over two groups of four,
  // spreads dK_j and dV_j over twice the warps and halves block_n 64's dQ
  // atomics.
  if (isSplitTileHeadDim(headDim))
    return {64, 128};
  return {64, 64};
}

int64_t ampere::backwardWarpsFor(int64_t blockM, int64_t blockN,
                                 int64_t headDim) {
  // 8 warps on FA2's 2-D layouts (64 x 128 at D = 64 or 128, 128 x 128 at
  // D = 64) and at D = 256 (dK_j's and dV_j's head dims over four groups);
  // every other tile on 4.
  bool splitTile = blockM == 64 && blockN == 128 && isSplitTileHeadDim(headDim);
  bool wideTile = blockM == 128 && blockN == 128 && headDim == 64;
  return splitTile || wideTile || headDim > 128 ? 8 : 4;
}

//===----------------------------------------------------------------------===//
// Schedule knobs
//===----------------------------------------------------------------------===//

namespace {

/// The tuned tiles of the backward's fast paths (loads ahead, interior
/// copies, staged stores): D = 256's 64 x 64 at Dv = 256, D = 64's
/// 128 x 128 and D = 128's 64 x 128 at D = Dv.
bool onFastPathTile(const AttentionKernelConfig &c) {
  if (c.headDim == 256 && c.blockM == 64 && c.blockN == 64)
    return c.valueDim == 256;
  if (c.headDim != c.valueDim)
    return false;
  return (c.headDim == 64 && c.blockM == 128 && c.blockN == 128) ||
         (c.headDim == 128 && c.blockM == 64 && c.blockN == 128);
}

/// D = 256's masked deterministic kernel, whose turns favour the plain
/// forms.
bool isWideMaskedDeterministic(const AttentionKernelConfig &c) {
  return c.headDim == 256 && c.deterministic && c.mask.isMasking();
}

bool tunedLoadsQueryRowsAhead(const AttentionKernelConfig &c) {
  // Carried loads keep the step's first use of LSE and D off the
  // scoreboard of its own loads, where the tile has the registers.
  return onFastPathTile(c) && !isWideMaskedDeterministic(c);
}

bool tunedCopiesInteriorFast(const AttentionKernelConfig &c) {
  // Pays beside the carried loads, except on D = 128's 64 x 128, where
  // only the masked deterministic kernel gains.
  return tunedLoadsQueryRowsAhead(c) &&
         (c.headDim != 128 || (c.deterministic && c.mask.isMasking()));
}

bool tunedStoresGradientsThroughShared(const AttentionKernelConfig &c) {
  // FA2's epilogue, where the square tile's rings hold dK_j and dV_j.
  return tunedCopiesInteriorFast(c) && c.blockN == c.blockM;
}

} // namespace

BackwardColumnGroups ampere::columnGroupsFor(const AttentionKernelConfig &c) {
  // D = 64 on 128 x 128 (FA2's D64 layout): S and dP at 64 x 32 a warp,
  // dK_j, dV_j and dQ_i at 32 x 32.
  if (c.warps == 8 && c.blockM == 128 && c.blockN == 128 && c.headDim == 64)
    return {4, 2, /*gradQuery=*/2};
  // D = 256 on 32 x 64: S and dP at 16 x 16 a warp, dK_j, dV_j and dQ_i
  // each group's 64 columns, a whole swizzle span.
  if (c.warps == 8 && c.headDim == 256 && c.blockM == 32 && c.blockN == 64)
    return {4, 4, /*gradQuery=*/4};
  // D = 256 on 64 x 64: FA2's per-warp HMMA and ldmatrix counts.
  if (c.warps == 8 && c.headDim == 256 && c.blockM == 64 && c.blockN == 64)
    return {2, 4, /*gradQuery=*/4};
  // 64 x 128 on 8 warps: FA2's 2-D layout, a quarter fewer shared reads
  // for dK and dV; dQ_i follows at D = 128 and keeps two groups at D = 64
  // (a quarter of 64 columns is no swizzle span). The deterministic
  // kernels keep two groups, whose turns the four-group layout slows.
  if (c.warps == 8 && c.blockM == 64 && c.blockN == 128) {
    if (c.deterministic)
      return {2, 2};
    if (c.headDim == 128)
      return {4, 2};
    return {4, 2, /*gradQuery=*/2};
  }
  return backwardColumnGroups(c);
}

ScheduleKnobs ampere::tunedSchedule(const AttentionKernelConfig &c,
                                    KernelKind kind) {
  ScheduleKnobs k;
  // Per tile: per warp, the warp's first row is a register too many.
  k.maskPerWarp = kMaskPerWarp;
  if (kind == KernelKind::Forward) {
    // Q's fragments stay in registers while a warp's m16 tiles of them
    // take at most 128 columns, beside S and O.
    int64_t mTiles = c.blockM / (16 * c.warps);
    k.queryInRegisters = (c.headDim + 15) / 16 * 16 * mTiles <= 128;
    return k;
  }
  k.loadsQueryRowsAhead = tunedLoadsQueryRowsAhead(c);
  k.copiesInteriorFast = tunedCopiesInteriorFast(c);
  k.storesGradientsThroughShared = tunedStoresGradientsThroughShared(c);
  k.columnGroups = columnGroupsFor(c);
  // 16 MiB: enough (KV head, batch) pairs per section to fill the chip,
  // few enough that their Q, dO and dQ rows stay in L2.
  k.sectionMiB = 16;
  return k;
}

ArrayRef<ScheduleKnob> ampere::scheduleKnobs(KernelKind kind) {
  static const ScheduleKnob forward[] = {
      knob::flag<&ScheduleKnobs::maskPerWarp>("mask_per_warp"),
      knob::flag<&ScheduleKnobs::queryInRegisters>("query_in_registers"),
  };
  static const ScheduleKnob backward[] = {
      knob::flag<&ScheduleKnobs::maskPerWarp>("mask_per_warp"),
      knob::flag<&ScheduleKnobs::loadsQueryRowsAhead>("loads_query_rows_ahead"),
      knob::flag<&ScheduleKnobs::copiesInteriorFast>("copies_interior_fast"),
      knob::flag<&ScheduleKnobs::storesGradientsThroughShared>(
          "stores_gradients_through_shared"),
      knob::columnGroups(),
      knob::sectionMiB(),
  };
  if (kind == KernelKind::Forward)
    return forward;
  return backward;
}

std::string ampere::unsupportedSchedule(const AttentionKernelConfig &c,
                                        KernelKind kind) {
  if (kind == KernelKind::Forward)
    return "";
  const ScheduleKnobs &k = c.schedule;
  std::ostringstream os;
  if (k.storesGradientsThroughShared && c.blockN > 2 * c.blockM) {
    os << "stores_gradients_through_shared stages dK_j and dV_j in the Q and "
          "dO rings' two stages of block_m rows: block_n must be at most 2 x "
          "block_m, got "
       << c.blockM << " x " << c.blockN;
    return os.str();
  }
  // The layouts the backward builds on this tile: the column groups of its
  // default and of its deterministic (or default) twin.
  AttentionKernelConfig twin = c;
  twin.deterministic = !c.deterministic;
  BackwardColumnGroups own = columnGroupsFor(c), other = columnGroupsFor(twin);
  if (!(k.columnGroups == own) && !(k.columnGroups == other)) {
    auto text = [](const BackwardColumnGroups &g) {
      std::string t = std::to_string(g.queryRows) + "x" + std::to_string(g.keyRows);
      if (g.gradQuery)
        t += "x" + std::to_string(g.gradQuery);
      return t;
    };
    os << "column_groups " << text(k.columnGroups)
       << " is no layout the sm_80 backward builds on " << c.blockM << " x "
       << c.blockN << " with " << c.warps << " warps at D=" << c.headDim
       << " (it builds " << text(own);
    if (!(own == other))
      os << " or " << text(other);
    os << ")";
  }
  return os.str();
}
