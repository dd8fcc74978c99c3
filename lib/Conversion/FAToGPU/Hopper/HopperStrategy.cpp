//===- HopperStrategy.cpp - what the sm_90a strategy builds ---------------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "HopperStrategy.h"

#include "fa/Conversion/FAToGPU/BackwardKernel.h"

#include <algorithm>
#include <sstream>

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::hopper;

namespace {


/// The e4m3 kernel's operand rule: k32 steps over D (TMA zero-fills the
/// panel past D), Vᵀ written in 16-column units, 32 keys a step.
std::string unsupportedE4M3Operands(const AttentionKernelConfig &c) {
  std::ostringstream os;
  auto headDimOk = [](int64_t d) { return d >= 16 && d <= 256 && d % 16 == 0; };
  if (!headDimOk(c.headDim) || !headDimOk(c.valueDim))
    os << "sm_90a f8e4m3fn kernels need D and Dv multiples of 16 from 16 to "
          "256, got D="
       << c.headDim << " Dv=" << c.valueDim
       << " (pad the head dim with zeros to the next multiple of 16)";
  else if (c.blockN % 32)
    os << "sm_90a f8e4m3fn kernels need block_n a multiple of 32 (the "
          "producer transposes V 32 keys at a time), got "
       << c.blockN;
  return os.str();
}

class HopperStrategy : public AttentionGPUStrategy {
public:
  StringRef chip() const override { return "sm_90a"; }
  // wgmma, setmaxnreg and cp.async.bulk.tensor need PTX 8.0.
  StringRef ptxFeatures() const override { return "+ptx80"; }

  std::string unsupportedReason(const AttentionKernelConfig &c) const override {
    std::string operands = isE4M3(c.elementType)
                               ? unsupportedE4M3Operands(c)
                               : unsupported16BitOperands(chip(), c);
    if (!operands.empty())
      return operands;
    std::ostringstream os;
    if (c.blockM % kRowsPerWarpgroup ||
        c.blockM > kMaxConsumerGroups * kRowsPerWarpgroup)
      os << "sm_90a block_m must be 64, 128 or 192 (64 query rows per "
            "consumer warpgroup, at most "
         << kMaxConsumerGroups << "), got " << c.blockM;
    else if (c.warps != c.blockM / 16)
      os << "sm_90a kernels have one MMA warp per 16 query rows: warps must "
            "be block_m / 16 = "
         << c.blockM / 16 << ", got " << c.warps;
    else if (c.blockN % 16 || c.blockN > 256)
      os << "sm_90a block_n must be a multiple of 16 up to 256 (wgmma's N), got "
         << c.blockN;
    else if (c.stages < 2 || c.stages > 4)
      os << "the sm_90a K/V rings have 2 to 4 stages, got " << c.stages;
    else if (dynamicSharedMemoryBytes(c) > sharedMemoryBudget(c))
      os << "the tile needs " << dynamicSharedMemoryBytes(c)
         << " bytes of shared memory, more than the budget's "
         << sharedMemoryBudget(c) << " bytes";
    return os.str();
  }

  /// The kernels' rings are planned for the chip's maximum; a smaller
  /// budget refuses what does not fit it.
  int64_t defaultSharedMemoryBudget() const override { return kMaxSharedMemoryBytes; }

  int64_t dynamicSharedMemoryBytes(const AttentionKernelConfig &c) const override {
    return SharedMemoryPlan(c).bytes;
  }

  int64_t blockThreads(const AttentionKernelConfig &c) const override {
    return blockThreadsFor(c);
  }

  bool usesTensorMaps() const override { return true; }
  bool storesOutputByTensorMap(const AttentionKernelConfig &c) const override {
    return storesOutputThroughShared(c);
  }
  bool persistentTiles(const AttentionKernelConfig &c) const override {
    return hopper::persistentTiles(c);
  }

  Tile tunedTile(int64_t headDim, int64_t valueDim, MaskKind mask,
                 bool e4m3) const override {
    return hopper::tunedTile(headDim, valueDim, mask, e4m3);
  }

  Pipeline forwardPipeline(int64_t blockM, int64_t blockN, int64_t headDim,
                           int64_t valueDim, bool e4m3) const override {
    return hopper::forwardPipeline(blockM, blockN, headDim, valueDim, e4m3);
  }

  ArrayRef<ScheduleKnob> scheduleKnobs(KernelKind kind) const override {
    return hopper::scheduleKnobs(kind);
  }
  ScheduleKnobs tunedSchedule(const AttentionKernelConfig &c,
                              KernelKind kind) const override {
    return hopper::tunedSchedule(c, kind);
  }
  std::string unsupportedSchedule(const AttentionKernelConfig &c,
                                  KernelKind kind) const override {
    return hopper::unsupportedSchedule(c, kind);
  }

  std::string
  unsupportedBackwardReason(const AttentionKernelConfig &c) const override {
    if (isE4M3(c.elementType))
      return "there is no f8e4m3fn backward (the fp8 kernels are forward only)";
    // dK_j and dV_j stay in registers: 64 key rows of [D] and [Dv] f32 per
    // consumer warpgroup (half the columns each above D = 128), beside S,
    // dP and dQ_i.
    std::string operands =
        unsupportedBackwardOperands(chip(), c, /*maxHeadDim=*/256);
    if (!operands.empty())
      return operands;
    std::ostringstream os;
    auto tileIs = [&](int64_t m, int64_t n, int64_t warps) {
      return c.blockM == m && c.blockN == n && c.warps == warps;
    };
    BackwardColumnGroups groups = backwardColumnGroups(c);
    // The warps of a tile the strategy does not build are derived from the
    // blocks (backwardWarpsFor), so they say nothing: name the tile alone.
    bool knownTile = (c.blockM == 64 && c.blockN == 64) ||
                     (c.blockM == 128 && c.blockN == 128) ||
                     (c.blockM == 64 && c.blockN == 128);
    if (!tileIs(64, 64, 4) && !tileIs(64, 64, 8) && !tileIs(128, 128, 8) &&
        !tileIs(64, 128, 8)) {
      os << "the sm_90a backward takes block_m x block_n (warps) 64 x 64 (4, "
            "or 8 splitting S's keys and dK's and dV's head dims), 128 x 128 "
            "(8) or 64 x 128 (8, S's keys split), got "
         << c.blockM << " x " << c.blockN;
      if (knownTile)
        os << " with " << c.warps << " warps";
    } else if (std::max(c.headDim, c.valueDim) > 128 && groups.keyRows == 1)
      os << "above D = 128 the sm_90a backward splits dK's and dV's head dims "
            "over two warpgroups: block_m x block_n 64 x 64 with 8 warps, got "
         << c.blockM << " x " << c.blockN << " (" << c.warps << ")";
    else if (groups.queryRows > 1 &&
             c.headDim % (kPanelElements * groups.queryRows))
      os << "the sm_90a backward's " << c.blockM << " x " << c.blockN
         << " tile splits dQ's head dims over the warpgroups in 64-column "
            "panels: D must be a multiple of "
         << kPanelElements * groups.queryRows << ", got " << c.headDim;
    else if (groups.keyRows > 1 &&
             (c.headDim % (kPanelElements * groups.keyRows) ||
              c.valueDim % (kPanelElements * groups.keyRows)))
      os << "the sm_90a backward's " << c.blockM << " x " << c.blockN
         << " tile with " << c.warps
         << " warps splits dK's and dV's head dims over the warpgroups in "
            "64-column panels: D and Dv must be multiples of "
         << kPanelElements * groups.keyRows << ", got D=" << c.headDim
         << " Dv=" << c.valueDim;
    else if (backwardSharedMemoryBytes(c) > sharedMemoryBudget(c))
      os << "the backward tile needs " << backwardSharedMemoryBytes(c)
         << " bytes of shared memory, more than the budget's "
         << sharedMemoryBudget(c) << " bytes";
    return os.str();
  }

  int64_t backwardSharedMemoryBytes(const AttentionKernelConfig &c) const override {
    return BackwardSharedMemoryPlan(c).bytes;
  }

  int64_t backwardBlockThreads(const AttentionKernelConfig &c) const override {
    return blockThreadsFor(c);
  }

  Tile tunedBackwardTile(int64_t headDim, int64_t valueDim, bool /*masked*/,
                         bool /*deterministic*/,
                         int64_t /*sharedMemoryBudget*/) const override {
    return hopper::tunedBackwardTile(headDim, valueDim);
  }

  int64_t backwardWarpsFor(int64_t blockM, int64_t blockN, int64_t headDim,
                           int64_t valueDim) const override {
    return hopper::backwardWarpsFor(blockM, blockN, headDim, valueDim);
  }

  LogicalResult buildBackwardKernels(OpBuilder &builder, gpu::GPUModuleOp module,
                                     const AttentionBackward &backward,
                                     const AttentionKernelConfig &c,
                                     StringRef name) const override {
    // dQ_i reaches dq_acc by TMA reduce-adds of row-major panels.
    if (failed(buildBackwardEdgeKernels(builder, module, backward, c, name,
                                        GradQueryOrder::RowMajor)))
      return failure();
    return buildHopperBackwardMain(builder, module, backward, c, name);
  }

  LogicalResult buildForwardKernel(OpBuilder &builder, gpu::GPUModuleOp module,
                                   const FusedAttention &attention,
                                   const AttentionKernelConfig &c,
                                   StringRef name) const override {
    return buildHopperForwardKernel(builder, module, attention, c, name);
  }

  FragmentLoweringOptions fragmentLoweringOptions() const override {
    FragmentLoweringOptions options;
    options.maskPerWarp = kMaskPerWarp;
    return options;
  }

  void populateFragmentLoweringPatterns(
      const TypeConverter &converter,
      RewritePatternSet &patterns) const override {
    populateWgmmaPatterns(converter, patterns);
  }

};

} // namespace

SharedMemoryPlan::SharedMemoryPlan(int64_t blockM, int64_t blockN,
                                   int64_t headDim, int64_t valueDim, bool e4m3,
                                   int64_t stages, OutputPlacement output) {
  queryPanels = panelsOf(headDim, e4m3);
  keyPanels = panelsOf(headDim, e4m3);
  queryBytes = queryPanels * blockM * kPanelRowBytes;
  keyStageBytes = keyPanels * blockN * kPanelRowBytes;
  // Vᵀ (e4m3): Dv rows of block_n keys, in panels of 128 keys.
  valuePanels = panelsOf(e4m3 ? blockN : valueDim, e4m3);
  valueStageBytes = valuePanels * (e4m3 ? valueDim : blockN) * kPanelRowBytes;
  stagingPanels = e4m3 ? panelsOf(valueDim, e4m3) : 0;
  stagingStageBytes = stagingPanels * blockN * kPanelRowBytes;
  // block_m and block_n are multiples of 16 (and Dv of e4m3 too): every
  // panel is a whole number of 1024-byte atoms.
  keyOffset = queryBytes;
  valueOffset = keyOffset + stages * keyStageBytes;
  stagingOffset = valueOffset + stages * valueStageBytes;
  barrierOffset = stagingOffset + stages * stagingStageBytes;
  // Q full, then per stage K full, K empty, V full, V empty, then Q empty;
  // e4m3: then per stage Vᵀ full, then per stage staging empty (and, with
  // O over the staging ring, output empty).
  int64_t barrierBytes = 8 * (2 + (e4m3 ? 6 : 4) * stages);
  bytes = barrierOffset + barrierBytes;
  // O's panels (of the output type, 2-byte elements) before the barriers,
  // or over the staging ring, whose last reads (the transposes of the
  // tile's last V) the consumers have waited for before the epilogue, with
  // one more barrier (output empty).
  int64_t panels = panelsOf(valueDim, false);
  int64_t outputBytes = panels * blockM * kPanelRowBytes;
  if (output == OutputPlacement::Shared) {
    outputPanels = panels;
    outputOffset = barrierOffset;
    barrierOffset += outputBytes;
    bytes = barrierOffset + barrierBytes;
  } else if (output == OutputPlacement::Staging) {
    outputPanels = panels;
    outputOffset = stagingOffset;
    outputInStaging = true;
    bytes += 8;
  }
}

SharedMemoryPlan::SharedMemoryPlan(const AttentionKernelConfig &c)
    : SharedMemoryPlan(c.blockM, c.blockN, c.headDim, c.valueDim,
                       isE4M3(c.elementType), c.stages,
                       c.schedule.outputStaging) {}

std::unique_ptr<AttentionGPUStrategy> hopper::createHopperStrategy() {
  return std::make_unique<HopperStrategy>();
}

LogicalResult hopper::checkRegisterBudget(Location loc, RegisterBudget budget,
                                          int64_t consumerThreads, int64_t blocksPerSM) {
  if (fitsEntryRegisters(budget, consumerThreads, blocksPerSM))
    return success();
  int64_t threads = consumerThreads + kWarpgroupThreads;
  return emitError(loc) << "internal error: setmaxnreg " << budget.producer << " / "
                        << budget.consumer << " hands out more than the "
                        << entryRegisters(threads, blocksPerSM)
                        << " registers per thread the block holds at entry ("
                        << threads << " threads, " << blocksPerSM << " per SM)";
}
