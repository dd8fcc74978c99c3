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
    // e4m3: two consumer warpgroups (FA3's fp8 tile is 128 query rows
    // too). At D <= 128, FA3's block_n 224: the softmax's per-tile work
    // (row reductions, the O rescale, the waits) over 1.75x the scores,
    // on two stages against four at 128 x 128; measured on the H100 at
    // N = 8k +4% without a mask, +7% causal (+4% at 4k; docs/perf-notes.md,
    // fifteenth session). A window keeps 128 (not measured at 224).
    if (e4m3)
      return mask != MaskKind::Window && headDim <= 128 && valueDim <= 128
                 ? Tile{128, 224}
                 : Tile{128, 128};
    // Measured on the H100 (docs/perf-notes.md, sm_90a): D64 takes FA3's
    // three consumer warpgroups, except under a mask, where 128 rows waste
    // less on the diagonal (0.89-0.92x cuDNN at N = 2k against 0.84-0.90x,
    // 4% slower at 8k). At D128 block_n 176 measured within noise of 128
    // (and 9% slower under a mask at 2k). Past D128, FA3's block_n 80: QKᵀ
    // at n64 needs all of shared memory's 128 B/clk, n80 112.5 (+4% at
    // D256 without a mask, +1/+6% causal at 2k/8k once the per-row mask
    // intervals stopped hoisting the thread's columns); a window keeps n64
    // (window(256,0) with softcap: n80 11% slower, and it spills 28 B).
    bool masked = mask != MaskKind::None;
    if (headDim <= 64 && valueDim <= 64)
      return masked ? Tile{128, 128} : Tile{192, 128};
    if (headDim <= 128 && valueDim <= 128)
      return {128, 128};
    return mask == MaskKind::Window ? Tile{128, 64} : Tile{128, 80};
  }

  Pipeline forwardPipeline(int64_t blockM, int64_t blockN, int64_t headDim,
                           int64_t valueDim, bool e4m3) const override {
    // e4m3: as many K / V / Vᵀ stages as fit, up to 4. With two, the
    // producer issued V_j's copy one tile before transposing it and the
    // consumers waited for Vᵀ (9% of the D128 kernel's stall samples, the
    // producer 15% for V's TMA); D128 ran 1.28x faster on 4 (none; 1.14x
    // causal), measured on the H100 (docs/perf-notes.md, thirteenth
    // session). 16-bit kernels: 3 stages measured level at D128.
    int64_t stages = 2;
    while (e4m3 && stages < 4 &&
           SharedMemoryPlan::bytesFor(blockM, blockN, headDim, valueDim,
                                      /*e4m3=*/true, stages + 1) <=
               kMaxSharedMemoryBytes)
      ++stages;
    return {blockM / 16, stages};
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
    if (!tileIs(64, 64, 4) && !tileIs(64, 64, 8) && !tileIs(128, 128, 8) &&
        !tileIs(64, 128, 8))
      os << "the sm_90a backward takes block_m x block_n (warps) 64 x 64 (4, "
            "or 8 splitting S's keys and dK's and dV's head dims), 128 x 128 "
            "(8) or 64 x 128 (8, S's keys split), got "
         << c.blockM << " x " << c.blockN << " (" << c.warps << ")";
    else if (std::max(c.headDim, c.valueDim) > 128 && groups.keyRows == 1)
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
    // D <= 64: two consumer warpgroups on 128 x 128. Without a mask, on
    // the H100 at N = 4k, bf16, forward + backward: 2.20 ms against 2.56-
    // 2.60 for one warpgroup on 64 x 64, two blocks per SM (twelfth
    // session; on 2026-11-25, before the dQ writer warp, 64 x 64 had been
    // the faster: docs/perf-notes.md). Masked, the diagonal blocks'
    // masking is amortised over twice the keys; deterministic, 64 x 64
    // doubles the KV blocks that take turns at each Q block. D = 128:
    // 64 query rows, S's 128 keys split between two warpgroups (dQ's
    // reductions are per block_n, docs/perf-notes.md); above 128, 64 x 64
    // with dK's and dV's head dims split too (backwardWarpsFor).
    if (headDim <= 64 && valueDim <= 64)
      return {128, 128};
    if (headDim == 128 && valueDim <= 128)
      return {64, 128};
    return {64, 64};
  }

  int64_t backwardWarpsFor(int64_t blockM, int64_t blockN, int64_t headDim,
                           int64_t valueDim) const override {
    // 64 x 64 takes a second warpgroup where one cannot hold dK and dV.
    if (blockM == 64 && blockN == 64 && std::max(headDim, valueDim) > 128)
      return 8;
    return std::max(blockM, blockN) / 16;
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

  // Measured on the H100: +1-5% for causal at N = 2k (perf-notes, sm_90a
  // v3); the consumers' registers take it without a spill.
  FragmentLoweringOptions fragmentLoweringOptions() const override {
    FragmentLoweringOptions options;
    options.maskPerWarp = true;
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
                                   int64_t stages, int64_t budget) {
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
  // e4m3: O (bf16, 2-byte panels) before the barriers where it fits. The
  // 16-bit kernels' 4-byte stores stay until measured (a TMA store on the
  // non-persistent kernel lost 2-8% at N = 8k, docs/perf-notes.md sm_90a v3).
  int64_t panels = panelsOf(valueDim, false);
  int64_t outputBytes = panels * blockM * kPanelRowBytes;
  if (e4m3 && bytes + outputBytes <= budget) {
    outputPanels = panels;
    outputOffset = barrierOffset;
    barrierOffset += outputBytes;
    bytes = barrierOffset + barrierBytes;
  } else if (e4m3 && valueDim > 128 && stages * stagingStageBytes >= outputBytes &&
             bytes + 8 <= budget) {
    // Over the staging ring, whose last reads (the transposes of the
    // tile's last V) the consumers have waited for before the epilogue;
    // one more barrier (output empty). Measured at Dv 256 only (where the
    // staging slot is released by the transpose); at Dv <= 128 (D128's
    // window tile, four stages) the next tile's V copies would wait for
    // the store as well, unmeasured, so it keeps the register stores.
    outputPanels = panels;
    outputOffset = stagingOffset;
    outputInStaging = true;
    bytes += 8;
  }
}

SharedMemoryPlan::SharedMemoryPlan(const AttentionKernelConfig &c)
    : SharedMemoryPlan(c.blockM, c.blockN, c.headDim, c.valueDim,
                       isE4M3(c.elementType), c.stages,
                       sharedMemoryBudgetOf(c, kMaxSharedMemoryBytes)) {}

RegisterBudget hopper::forwardRegisterBudget(const AttentionKernelConfig &c) {
  int64_t groups = consumerGroups(c);
  // e4m3 at Dv <= 128: the producer's transpose gets 40 registers (the
  // consumers' 232 hold S and O); at 24 / 240 it ran 1.5% slower, D128
  // none and causal (nineteenth session). At Dv 256 the consumers need
  // 240: at 232 ptxas serialises their wgmmas (C7512) and spills; the
  // kernel lost 25% (fourteenth session) and 20% (nineteenth).
  if (!isE4M3(c.elementType) || c.valueDim > 128)
    return registerBudget(groups);
  return groups <= 2 ? RegisterBudget{40, 232} : RegisterBudget{56, 152};
}

TileOrder hopper::tileOrder(const AttentionKernelConfig &c) {
  // Persistent: the next tile's Q and first K land under this tile's last
  // MMAs and epilogue. Without a mask every tile costs the same. Under a
  // mask the tiles differ (up to N / block_n KV tiles): a static round
  // robin over tiles leaves blocks idle (docs/perf-notes.md, sm_90a v3),
  // one over pairs of a head's Q blocks from both ends does not (with a
  // causal mask and M = N a pair sees T + 1 KV tiles whichever it is, an
  // odd T's middle one (T + 1) / 2). Measured on the H200
  // against one tile per block: causal +5% (D64) and +2-5% (D128, D256)
  // at N = 2k (docs/perf-notes.md, "Causal tiles in pairs"); e4m3 +4-5%
  // at D128 and D256, N = 8k on the H100 (fourteenth session).
  return c.mask.isMasking() ? TileOrder::Paired : TileOrder::Strided;
}

bool hopper::persistentTiles(const AttentionKernelConfig &c) {
  return tileOrder(c) != TileOrder::PerBlock;
}

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
