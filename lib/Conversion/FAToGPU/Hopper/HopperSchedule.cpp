//===- HopperSchedule.cpp - the sm_90a kernel's schedule ------------------===//
//
// Part of fa-mlir.
//
// Warp-specialised, as FlashAttention-3 (docs/targets.md): the consumer
// warpgroups (threads 0 .. 32·warps - 1, one per 64 query rows) compute,
// and the producer warpgroup after them issues every copy from one thread.
// The producer lowers its register budget with setmaxnreg and the
// consumers raise theirs.
//
// Per Q tile t of the block (one, or a persistent block's tiles; round r,
// and n counts the KV tiles loaded before: KV tile j uses stage
// s = (n + j) mod stages with parity ((n + j) / stages) mod 2):
//
//   producer                              consumers
//   wait q_empty (parity r ^ 1)           wait q_full (parity r)
//   Q_t by TMA → q_full
//   for j: wait k_empty[s] (parity ^ 1)   wait k_full[s]; S = QKᵀ (wgmma)
//          K_j by TMA → k_full[s]         mask, online softmax (the L2 math)
//          wait v_empty[s] (parity ^ 1)   arrive k_empty[s]; wait v_full[s]
//          V_j by TMA → v_full[s]         acc += PV (wgmma); arrive v_empty[s]
//                                         arrive q_empty; epilogue
//
// (the consumers' loop is software-pipelined: buildPipelinedLoop). e4m3
// adds the producer's transpose of V (staging ring → Vᵀ ring,
// E4M3Transpose.h) and, where O is staged in shared memory, its TMA store
// (OutputStaging.h). The rings and their barrier protocol are TmaRing.h's,
// the consumers' turns Pingpong.h's. Rows past M and keys past N arrive
// as TMA's out-of-bounds zeros; the L2 math masks the keys.
//
//===----------------------------------------------------------------------===//

#include "E4M3Transpose.h"
#include "HopperPtx.h"
#include "HopperStrategy.h"
#include "OutputStaging.h"
#include "Pingpong.h"
#include "ScheduleValues.h"
#include "TmaRing.h"

#include "fa/Conversion/FAToGPU/FragmentPatterns.h"
#include "fa/Conversion/FAToGPU/KernelSkeleton.h"
#include "fa/Dialect/FA/Utils/MaskUtils.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::hopper;

namespace {

/// The kernel's shared memory: tile views, the rings over them, the
/// barriers. Its mbarriers (8 bytes each, from plan.barrierOffset): Q
/// full; per stage K full, K empty, V full, V empty; Q empty; e4m3: per
/// stage Vᵀ full, then per stage staging empty; with O over the staging
/// ring, output empty.
struct SharedState {
  const AttentionKernelConfig &c;
  SharedMemoryPlan plan;
  Value base;    ///< shared-window address of the buffer (i32)
  /// memref views [(stages,) panels, rows, W]; e4m3: `value` holds Vᵀ
  /// (rows Dv, W 128 keys)
  Value query, key, value;
  /// O's staging [panels, BM, 64] of the output type, for its TMA store
  /// (null where O is stored from the registers).
  Value output;
  /// Q (one stage: Q full, released once the consumers' last S = QKᵀ of a
  /// tile is done) and K.
  TmaRing queryRing, keyRing;
  /// V as TMA fills it (e4m3: the staging ring, whose slots the
  /// producer's transpose reads), and V as the P·V reads it (e4m3: Vᵀ,
  /// written by the producer warpgroup, whose 128 threads arrive on its
  /// full barriers); the same ring for 16-bit inputs. Both release on V
  /// empty, but for staging_released_by_transpose: then the transpose
  /// releases the staging slot (staging empty, its 128 threads), and TMA
  /// may refill it without waiting for the consumers.
  TmaRing valueLoad, valueOperand;

  Value idx(OpBuilder &b, Location loc, int64_t v) const {
    return arith::ConstantIndexOp::create(b, loc, v);
  }
  Value i32(OpBuilder &b, Location loc, int64_t v) const {
    return i32Constant(b, loc, v);
  }
  /// base + bytes + stride · stage (stage an index or i32, or null).
  Value address(OpBuilder &b, Location loc, int64_t bytes, Value stage = Value(),
                int64_t stride = 0) const {
    return sharedAddress(b, loc, base, bytes, stage, stride);
  }
  /// e4m3 with O over the staging ring (outputInStaging), bytes past the
  /// base: O's store of the tile has read it (each consumer warpgroup's
  /// first thread arrives, once a tile that has KV tiles: one phase per
  /// QueryTile::outputRound). The issuer waits for phase r - 1 before
  /// staged tile r's first V copy, and no phase goes unwaited: each
  /// arrival of tile r needs that V, so the barrier is never two phases
  /// off the wait (which a parity cannot tell apart). A tile with no KV
  /// tiles would break that (its arrivals need no V: a race
  /// compute-sanitizer's synccheck and racecheck find), so its O leaves
  /// from registers and it does not arrive.
  int64_t outputEmptyOffset() const {
    return plan.barrierOffset + 8 * (2 + 6 * c.stages);
  }
  Value outputEmpty(OpBuilder &b, Location loc) const {
    return address(b, loc, outputEmptyOffset());
  }
  /// The tile of `buffer` (behind `stage`) as a value of the math; a
  /// key-major one is stored transposed (Vᵀ of the e4m3 kernel).
  Value tile(OpBuilder &b, Location loc, Value buffer, Value stage,
             int64_t rows, int64_t width, bool keyMajor = false) const {
    auto type = RankedTensorType::get(
        {rows, width}, c.elementType,
        TmaSharedLayoutAttr::get(b.getContext(), kPanelRowBytes, keyMajor));
    return SharedTileOp::create(b, loc, type, buffer, stage);
  }
  /// V as the P·V reads it: the ring's tile (Vᵀ for e4m3).
  Value valueTile(OpBuilder &b, Location loc, Value stage) const {
    return tile(b, loc, value, stage, c.blockN, c.valueDim, isE4M3(c.elementType));
  }
};

SharedState buildSharedState(OpBuilder &b, Location loc,
                             gpu::GPUModuleOp module,
                             const AttentionKernelConfig &c) {
  SharedState s{c, SharedMemoryPlan(c)};
  Value smem = sharedMemoryBase(b, module, loc, s.plan.bytes);
  s.base = sharedWindowAddress(b, loc, smem);
  auto workgroup =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  auto view = [&](int64_t byteOffset, ArrayRef<int64_t> shape,
                  Type element = Type()) -> Value {
    auto type = MemRefType::get(shape, element ? element : c.elementType,
                                nullptr, workgroup);
    return memref::ViewOp::create(b, loc, type, smem, s.idx(b, loc, byteOffset),
                                  ValueRange{});
  };
  const SharedMemoryPlan &p = s.plan;
  int64_t width = panelElementsOf(c.elementType);
  int64_t valueRows = isE4M3(c.elementType) ? c.valueDim : c.blockN;
  s.query = view(0, {p.queryPanels, c.blockM, width});
  s.key = view(p.keyOffset, {c.stages, p.keyPanels, c.blockN, width});
  s.value = view(p.valueOffset, {c.stages, p.valuePanels, valueRows, width});
  if (p.outputPanels)
    s.output = view(p.outputOffset, {p.outputPanels, c.blockM, kPanelElements},
                    outputElementTypeOf(c.elementType));

  int64_t consumers = 32 * c.warps;
  int64_t barriers = p.barrierOffset;
  // Per stage: K full, K empty, V full, V empty (32 bytes).
  auto perStage = [&](int64_t which, int64_t arrivals) {
    return RingBarriers{barriers + 8 * (1 + which), 32, arrivals};
  };
  s.queryRing = TmaRing(s.base, /*stages=*/1, /*offset=*/0, p.queryBytes,
                        RingBarriers{barriers, 0, 1},
                        RingBarriers{barriers + 8 * (1 + 4 * c.stages), 0, consumers});
  s.keyRing = TmaRing(s.base, c.stages, p.keyOffset, p.keyStageBytes,
                      perStage(0, 1), perStage(1, consumers));
  RingBarriers valueEmpty = perStage(3, consumers);
  if (!isE4M3(c.elementType)) {
    s.valueLoad = s.valueOperand = TmaRing(s.base, c.stages, p.valueOffset,
                                           p.valueStageBytes, perStage(2, 1),
                                           valueEmpty);
    return s;
  }
  RingBarriers transposed{barriers + 8 * (2 + 4 * c.stages), 8, kWarpgroupThreads};
  RingBarriers stagingEmpty{barriers + 8 * (2 + 5 * c.stages), 8, kWarpgroupThreads};
  s.valueLoad = TmaRing(s.base, c.stages, p.stagingOffset, p.stagingStageBytes,
                        perStage(2, 1),
                        c.schedule.stagingReleasedByTranspose ? stagingEmpty
                                                              : valueEmpty);
  s.valueOperand = TmaRing(s.base, c.stages, p.valueOffset, p.valueStageBytes,
                           transposed, valueEmpty);
  return s;
}

/// Thread 0 initialises the barriers; the block waits for it.
void initBarriers(OpBuilder &b, Location loc, const SharedState &s, Value tid) {
  inFirstThread(b, loc, tid, [&](OpBuilder &then) {
    s.queryRing.init(then, loc, Value());
    for (int64_t stage = 0; stage < s.c.stages; ++stage) {
      Value st = s.idx(then, loc, stage);
      s.keyRing.init(then, loc, st);
      // V full, V empty (the e4m3 staging ring's full, Vᵀ's empty).
      s.valueLoad.initFull(then, loc, st);
      s.valueOperand.initEmpty(then, loc, st);
      if (isE4M3(s.c.elementType)) {
        s.valueOperand.initFull(then, loc, st);
        if (s.c.schedule.stagingReleasedByTranspose)
          s.valueLoad.initEmpty(then, loc, st);
      }
    }
    if (s.plan.outputInStaging)
      mbarrierInit(then, loc, s.outputEmpty(then, loc), consumerGroups(s.c));
    fenceBarrierInit(then, loc);
  });
  gpu::BarrierOp::create(b, loc);
}

/// Ring position of the n-th KV tile this block loads (counted over all
/// its Q tiles), of n's type (index or i32): every KV ring's.
RingPosition ringPosition(OpBuilder &b, Location loc, const SharedState &s,
                          Value n) {
  return s.keyRing.position(b, loc, n);
}

/// One Q tile of the persistent loop, as a role sees it.
struct QueryTile {
  GridCoords grid;
  KeyTiles keys;            ///< the visible KV tiles, in loop order
  Value numBlocks;          ///< keys.count
  Value round;              ///< this block's tile count so far: Q's phase
  Value ringBase;           ///< KV tiles this block loaded before this one
  /// With O over V's staging ring (outputInStaging): this block's tiles
  /// so far that had KV tiles, i.e. that staged O: output empty's phase.
  Value outputRound;

  /// Whether the tile has KV tiles (i1); one with none (the paired causal
  /// tile past M, fully masked rows) stores O from registers.
  Value hasKeys(OpBuilder &b, Location loc) const {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, numBlocks,
                                 arith::ConstantIndexOp::create(b, loc, 0));
  }
};

/// Runs `body` for each of this block's tiles (BlockTiles), carrying
/// the round and the ring count both roles agree on (and, with O over
/// V's staging ring, the output round).
void forEachQueryTile(OpBuilder &b, Location loc, const SharedState &s,
                      const KernelArgs &args, const BlockTiles &tiles,
                      llvm::function_ref<void(OpBuilder &, const QueryTile &)> body) {
  Value zero = s.idx(b, loc, 0);
  bool outputRound = s.plan.outputInStaging;
  SmallVector<Value> initial(outputRound ? 3 : 2, zero);
  scf::ForOp::create(
      b, loc, tiles.first, tiles.count, tiles.step, initial,
      [&](OpBuilder &tb, Location, Value tile, ValueRange carried) {
        QueryTile q;
        q.grid = tiles.coords(tb, loc, args, s.c, tile);
        q.keys = tiles.keyTiles(tb, loc, args, s.c, q.grid);
        q.numBlocks = q.keys.count;
        q.round = carried[0];
        q.ringBase = carried[1];
        if (outputRound)
          q.outputRound = carried[2];
        body(tb, q);
        SmallVector<Value> next{
            arith::AddIOp::create(tb, loc, q.round, s.idx(tb, loc, 1)),
            arith::AddIOp::create(tb, loc, q.ringBase, q.numBlocks)};
        if (outputRound)
          next.push_back(arith::AddIOp::create(
              tb, loc, q.outputRound,
              arith::IndexCastUIOp::create(tb, loc, tb.getIndexType(),
                                           q.hasKeys(tb, loc))));
        scf::YieldOp::create(tb, loc, next);
      });
}

/// A tile's TMA coordinates (i32): its head, KV head and batch.
struct CopyCoords {
  Value head, kvHead, batch;
  CopyCoords(OpBuilder &b, Location loc, const GridCoords &grid)
      : head(toI32(b, loc, grid.head)), kvHead(toI32(b, loc, grid.kvHead)),
        batch(toI32(b, loc, grid.batch)) {}
};

/// The issuing thread's copy of a tile's Q, once the consumers released
/// the last one.
void issueQuery(OpBuilder &b, Location loc, const SharedState &s,
                const KernelArgs &args, const QueryTile &q,
                const CopyCoords &at) {
  s.queryRing.acquire(
      b, loc, Value(),
      TmaRing::releasedParity(b, loc, TmaRing::parityOf(b, loc, q.round)));
  Value queryBar = s.queryRing.commit(b, loc, Value(), s.plan.queryBytes);
  Value row = toI32(b, loc, q.grid.queryStart);
  s.queryRing.copy(b, loc, Value(), args["q_tmap"],
                   TmaBox{s.plan.queryPanels, s.c.blockM,
                          panelElementsOf(s.c.elementType), row, at.head, at.batch},
                   queryBar);
}

/// The issuing thread's copies of KV tile `j` into the rings: K, and V
/// (into the e4m3 kernel's staging ring, where the producer transposes
/// it), each once its stage was released: K's by the consumers, V's by
/// the consumers or (staging_released_by_transpose) by the producer's own
/// transpose, so that V_j is in flight while the consumers still read
/// Vᵀ_{j - stages}.
void issueKeyValue(OpBuilder &b, Location loc, const SharedState &s,
                   const KernelArgs &args, const QueryTile &q,
                   const CopyCoords &at, Value j) {
  const AttentionKernelConfig &c = s.c;
  const SharedMemoryPlan &p = s.plan;
  auto [stage, parity] =
      ringPosition(b, loc, s, arith::AddIOp::create(b, loc, q.ringBase, j));
  Value emptyParity = TmaRing::releasedParity(b, loc, parity);
  // In i32, as TMA takes it (j is the producer's i32 or an index).
  Value keyStart =
      q.keys.listed()
          ? toI32(b, loc,
                  q.keys.keyStart(b, loc,
                                  j.getType().isIndex()
                                      ? j
                                      : arith::IndexCastUIOp::create(
                                            b, loc, b.getIndexType(), j)
                                            .getResult()))
          : arith::AddIOp::create(
                b, loc, toI32(b, loc, q.keys.begin),
                arith::MulIOp::create(b, loc, toI32(b, loc, j),
                                      s.i32(b, loc, c.blockN)))
                .getResult();
  // Wait for the stage to be released, expect its bytes, copy.
  auto fillStage = [&](const TmaRing &ring, StringRef map, int64_t panels) {
    ring.acquire(b, loc, stage, emptyParity);
    Value bar = ring.commit(b, loc, stage, ring.bytesPerSlot());
    ring.copy(b, loc, stage, args[map],
              TmaBox{panels, c.blockN, panelElementsOf(c.elementType), keyStart,
                     at.kvHead, at.batch},
              bar);
  };
  fillStage(s.keyRing, "k_tmap", p.keyPanels);
  if (p.outputInStaging) {
    // The tile's first V waits until the last staged O, over the staging
    // ring, has been read by its store (a fresh barrier passes round 0).
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, j,
                                        constantLike(b, loc, j, 0));
    buildIf(b, loc, first, [&](OpBuilder &then) {
      waitParity(then, loc, s.outputEmpty(then, loc),
                 TmaRing::releasedParity(
                     then, loc, TmaRing::parityOf(then, loc, q.outputRound)));
    });
  }
  fillStage(s.valueLoad, "v_tmap",
            isE4M3(c.elementType) ? p.stagingPanels : p.valuePanels);
}

/// One thread's copies, per tile (16-bit kernels): Q, then each visible
/// K and V tile into the rings.
void buildProducer(OpBuilder &b, Location loc, const SharedState &s,
                   const KernelArgs &args, const QueryTile &q) {
  CopyCoords at(b, loc, q.grid);
  issueQuery(b, loc, s, args, q, at);
  scf::ForOp::create(b, loc, s.idx(b, loc, 0), q.numBlocks, s.idx(b, loc, 1),
                     ValueRange{},
                     [&](OpBuilder &lb, Location, Value j, ValueRange) {
                       issueKeyValue(lb, loc, s, args, q, at, j);
                       scf::YieldOp::create(lb, loc);
                     });
}

/// e4m3: the producer warpgroup, per tile. One thread issues the copies
/// (Q, K_j, V_j into the staging ring) one KV tile ahead of the
/// transposes; all 128 threads transpose V_{j-1} (transposeValueTile)
/// once it landed and its Vᵀ slot is free, make their writes visible to
/// wgmma (the async proxy) and arrive on its Vᵀ barrier (and its staging
/// slot's, where the transpose releases it).
void buildTransposingProducer(OpBuilder &b, Location loc, const SharedState &s,
                              const KernelArgs &args, const QueryTile &q,
                              Value producerThread) {
  [[maybe_unused]] const SharedMemoryPlan &p = s.plan;
  assert((p.stagingOffset | p.stagingStageBytes | p.valueOffset |
          p.valueStageBytes) % kPanelRowBytes == 0 &&
         "the transpose's swizzle xors need 128-byte aligned slots");
  // In i32, as the loop below (an index compare kept a 64-bit value live).
  Value issuer = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                       toI32(b, loc, producerThread),
                                       s.i32(b, loc, 0));
  CopyCoords at(b, loc, q.grid);
  buildIf(b, loc, issuer,
          [&](OpBuilder &then) { issueQuery(then, loc, s, args, q, at); });
  // The KV loop counts in i32 (ring positions, TMA coordinates): with
  // index (i64) ones the 24-register producer reloaded its bounds from
  // local memory and compared in 64 bits every tile. The consumers count
  // in index: the two agree while a block has loaded fewer than 2^32 KV
  // tiles (hours of one launch).
  QueryTile tileI32 = q;
  tileI32.numBlocks = toI32(b, loc, q.numBlocks);
  tileI32.ringBase = toI32(b, loc, q.ringBase);
  Value one = s.i32(b, loc, 1);
  scf::ForOp::create(
      b, loc, s.i32(b, loc, 0),
      arith::AddIOp::create(b, loc, tileI32.numBlocks, one), one, ValueRange{},
      [&](OpBuilder &lb, Location, Value j, ValueRange) {
        Value issue = arith::AndIOp::create(
            lb, loc, issuer,
            arith::CmpIOp::create(lb, loc, arith::CmpIPredicate::ult, j,
                                  tileI32.numBlocks));
        buildIf(lb, loc, issue, [&](OpBuilder &then) {
          issueKeyValue(then, loc, s, args, tileI32, at, j);
        });
        Value previous = arith::CmpIOp::create(lb, loc, arith::CmpIPredicate::ugt,
                                               j, s.i32(lb, loc, 0));
        buildIf(lb, loc, previous, [&](OpBuilder &then) {
          auto [stage, parity] = ringPosition(
              then, loc, s,
              arith::SubIOp::create(
                  then, loc, arith::AddIOp::create(then, loc, tileI32.ringBase, j),
                  one));
          // V_{j-1} landed, and its Vᵀ slot is free: the consumers
          // released Vᵀ_{j-1-stages} (implied when V's copy waited for it).
          bool early = s.c.schedule.stagingReleasedByTranspose;
          s.valueLoad.wait(then, loc, stage, parity);
          if (early)
            s.valueOperand.acquire(then, loc, stage,
                                   TmaRing::releasedParity(then, loc, parity));
          transposeValueTile(then, loc, producerThread,
                             s.valueLoad.slot(then, loc, stage),
                             s.valueOperand.slot(then, loc, stage), s.c.blockN,
                             s.c.valueDim);
          fenceProxyAsync(then, loc);
          s.valueOperand.commitWrites(then, loc, stage);
          if (early)
            s.valueLoad.release(then, loc, stage);
        });
        scf::YieldOp::create(lb, loc);
      });
}

/// The forward consumers' named barriers (0 is gpu.barrier's): warpgroup
/// g's pingpong turn is 1 + g, its O staging's 1 + groups + g.
constexpr int64_t kPingpongBarriers = 1;
int64_t outputBarriers(const AttentionKernelConfig &c) {
  return 1 + consumerGroups(c);
}
static_assert(1 + 2 * kMaxConsumerGroups <= 16, "PTX has 16 named barriers");

/// The KV tiles of `q` (indices into its visible tiles) that need no mask:
/// [begin, end), clamped to [1, numBlocks) (tile 0 is the pipeline's
/// prologue). `begin` is null where the mask has no left edge (it is then 1).
/// Under a block mask they are the full blocks' tiles, which come last.
std::pair<Value, Value> unmaskedTiles(OpBuilder &b, Location loc,
                                      const AttentionKernelConfig &c,
                                      const QueryTile &q) {
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  if (q.keys.listed()) // the partial blocks' tiles, then the full ones'
    return {arith::MinSIOp::create(
                b, loc, arith::MaxSIOp::create(b, loc, q.keys.maskedCount, one),
                arith::MaxSIOp::create(b, loc, q.numBlocks, one)),
            q.numBlocks};
  auto [firstKey, endKey] =
      buildUnmaskedKeyRange(b, loc, c.mask, q.grid.queryStart, c.blockM,
                            q.grid.queryLen, q.grid.keyLen);
  // Tile j holds keys [begin + j·block_n, begin + (j + 1)·block_n).
  Value blockN = arith::ConstantIndexOp::create(b, loc, c.blockN);
  Value last = arith::MaxSIOp::create(b, loc, q.numBlocks, one);
  Value begin;
  bool leftEdge = c.mask.getKind() == MaskKind::Window && c.mask.getLeft() >= 0;
  if (leftEdge) {
    begin = arith::CeilDivSIOp::create(
        b, loc, arith::SubIOp::create(b, loc, firstKey, q.keys.begin), blockN);
    begin = arith::MinSIOp::create(b, loc, arith::MaxSIOp::create(b, loc, begin, one),
                                   last);
  }
  Value end = arith::FloorDivSIOp::create(
      b, loc, arith::SubIOp::create(b, loc, endKey, q.keys.begin), blockN);
  end = arith::MinSIOp::create(b, loc, end, q.numBlocks);
  end = arith::MaxSIOp::create(b, loc, end, begin ? begin : one);
  return {begin, end};
}

/// The consumers' loop over one Q tile's KV tiles, software-pipelined
/// (DistributedMath::emitPipelinedBody): tile 0's S and softmax peeled;
/// then per tile j ≥ 1 S_j and P_{j-1}·V_{j-1} in flight together, the
/// softmax of j under the P·V; the last P·V after the loop. Returns the
/// loop's values.
FailureOr<SmallVector<Value>>
buildPipelinedLoop(OpBuilder &b, Location loc, const SharedState &s,
                   DistributedMath &math, const QueryTile &q, Value query,
                   const Pingpong &pingpong) {
  const AttentionKernelConfig &c = s.c;
  const GridCoords &grid = q.grid;
  Value one = s.idx(b, loc, 1);
  Value hasBlocks = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                          q.numBlocks, s.idx(b, loc, 0));
  Value lastTile = arith::SubIOp::create(b, loc, q.numBlocks, one);
  auto positionOf = [&](OpBuilder &pb, Value j) {
    return ringPosition(pb, loc, s, arith::AddIOp::create(pb, loc, q.ringBase, j));
  };
  auto keyTileAt = [&](Value stage, Value parity) {
    return [&, stage, parity](OpBuilder &tb) {
      s.keyRing.wait(tb, loc, stage, parity);
      return s.tile(tb, loc, s.key, stage, c.blockN, c.headDim);
    };
  };
  auto valueTileAt = [&](Value stage, Value parity) {
    return [&, stage, parity](OpBuilder &tb) {
      // e4m3: Vᵀ, once the producer wrote it; else V as TMA landed it.
      s.valueOperand.wait(tb, loc, stage, parity);
      return s.valueTile(tb, loc, stage);
    };
  };
  auto hooksFor = [&](Value keyStage, Value valueStage) {
    DistributedMath::PipelineHooks hooks;
    hooks.beforeIssue = [&](OpBuilder &hb) { pingpong.beforeIssue(hb, loc); };
    hooks.afterIssue = [&](OpBuilder &hb) { pingpong.afterIssue(hb, loc); };
    if (keyStage)
      hooks.scoresDone = [&, keyStage](OpBuilder &hb) {
        s.keyRing.release(hb, loc, keyStage);
      };
    if (valueStage)
      hooks.productDone = [&, valueStage](OpBuilder &hb) {
        s.valueOperand.release(hb, loc, valueStage);
      };
    return hooks;
  };

  SmallVector<Value> init = math.initialLoopValues(b, loc);
  RankedTensorType probsType = math.deferredProbsType();
  init.push_back(arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(probsType, b.getZeroAttr(probsType.getElementType()))));
  LogicalResult result = success();
  auto first = scf::IfOp::create(
      b, loc, hasBlocks,
      [&](OpBuilder &tb, Location) {
        auto [stage, parity] = positionOf(tb, s.idx(tb, loc, 0));
        auto body = math.emitPipelinedBody(
            tb, grid, q.keys.keyStart(tb, loc, s.idx(tb, loc, 0)), init, query,
            keyTileAt(stage, parity),
            DistributedMath::DeferredProduct{}, hooksFor(stage, Value()));
        if (failed(body))
          result = failure();
        scf::YieldOp::create(tb, loc, succeeded(body) ? ValueRange(*body) : ValueRange(init));
      },
      [&](OpBuilder &eb, Location) { scf::YieldOp::create(eb, loc, init); });
  // Tiles [from, to) in one loop; `unmasked`: tiles every key of which
  // every query sees, emitted without the mask (splits_unmasked_tiles).
  auto tilesIn = [&](Value from, Value to, ValueRange init, bool unmasked) {
    math.setTilesUnmasked(unmasked);
    auto loop = scf::ForOp::create(
        b, loc, from, to, one, init,
        [&](OpBuilder &lb, Location, Value j, ValueRange carried) {
          auto [stage, parity] = positionOf(lb, j);
          auto [valueStage, valueParity] =
              positionOf(lb, arith::SubIOp::create(lb, loc, j, one));
          Value keyStart = q.keys.keyStart(lb, loc, j);
          DistributedMath::DeferredProduct deferred{
              carried.back(), valueTileAt(valueStage, valueParity)};
          auto body = math.emitPipelinedBody(
              lb, grid, keyStart, carried, query, keyTileAt(stage, parity),
              deferred, hooksFor(stage, valueStage));
          if (failed(body))
            result = failure();
          scf::YieldOp::create(lb, loc, succeeded(body) ? ValueRange(*body) : carried);
        });
    math.setTilesUnmasked(false);
    return loop.getResults();
  };
  ValueRange carried = first.getResults();
  Value maskedFrom = one; // the tiles after the unmasked ones
  if (c.schedule.splitsUnmaskedTiles) {
    auto [unmaskedBegin, unmaskedEnd] = unmaskedTiles(b, loc, c, q);
    if (unmaskedBegin) // a window's left edge: its tiles come first
      carried = tilesIn(one, unmaskedBegin, carried, /*unmasked=*/false);
    carried = tilesIn(unmaskedBegin ? unmaskedBegin : one, unmaskedEnd, carried,
                      /*unmasked=*/true);
    maskedFrom = unmaskedEnd;
  }
  auto loopResults = tilesIn(maskedFrom, q.numBlocks, carried, /*unmasked=*/false);
  if (failed(result))
    return failure();
  SmallVector<Value> loopValues(loopResults.drop_back());
  auto last = scf::IfOp::create(
      b, loc, hasBlocks,
      [&](OpBuilder &tb, Location) {
        auto [stage, parity] = positionOf(tb, lastTile);
        DistributedMath::PipelineHooks hooks = hooksFor(Value(), stage);
        hooks.beforeIssue = hooks.afterIssue = nullptr; // outside the turns
        scf::YieldOp::create(
            tb, loc,
            math.emitDeferredProduct(
                tb, loopResults, {loopResults.back(), valueTileAt(stage, parity)},
                hooks));
      },
      [&](OpBuilder &eb, Location) { scf::YieldOp::create(eb, loc, loopValues); });
  return SmallVector<Value>(last.getResults());
}

/// O through shared memory and TMA (storesOutputThroughShared): in O's
/// own region, or over V's staging ring (outputInStaging), where the next
/// staged tile's first V copy waits for output empty.
OutputStaging outputStagingOf(const SharedState &s, const KernelArgs &args) {
  OutputStaging::Layout layout;
  layout.buffer = s.output;
  layout.base = s.base;
  layout.offset = s.plan.outputOffset;
  layout.panels = s.plan.outputPanels;
  layout.rows = s.c.blockM;
  layout.firstBarrier = outputBarriers(s.c);
  layout.tensorMap = args["o_tmap"];
  if (s.plan.outputInStaging)
    layout.readBarrier = s.outputEmptyOffset();
  return OutputStaging(layout);
}

/// The tile's O through the staging; LSE keeps its stores from the
/// registers. Over V's staging ring a tile with no KV tiles stores O from
/// registers (SharedState::outputEmptyOffset says why).
void storeOutput(OpBuilder &b, Location loc, const OutputStaging &staging,
                 Value output, const KernelArgs &args, const QueryTile &q) {
  if (!staging.lent())
    return staging.stage(b, loc, output, q.grid);
  buildIfElse(
      b, loc, q.hasKeys(b, loc),
      [&](OpBuilder &then) { staging.stage(then, loc, output, q.grid); },
      [&](OpBuilder &otherwise) {
        storeOutputFromRegisters(otherwise, loc, output, args, q.grid);
      });
}

/// The consumers, per Q tile: the L2 math over the rings, Q released, the
/// epilogue (under the producer's next Q and K).
LogicalResult buildConsumers(OpBuilder &b, Location loc, const SharedState &s,
                             const FusedAttention &attention,
                             const KernelArgs &args,
                             const BlockTiles &tiles) {
  const AttentionKernelConfig &c = s.c;
  // wgmma's accumulator is mma.sync's per warp: one m16 tile per warp.
  auto layout = FragmentLayoutAttr::get(b.getContext(), c.warps, /*mTiles=*/1);
  DistributedMath math(attention, layout);
  math.setCaptureValues(args.captureValues(b, loc, attention.captures));
  math.setUnmaskedTilesListed(c.blockSparse());
  Pingpong pingpong(b, loc, consumerGroups(c), kPingpongBarriers);
  std::optional<OutputStaging> outputStaging;
  if (s.output)
    outputStaging.emplace(outputStagingOf(s, args));
  pingpong.start(b, loc);
  LogicalResult result = success();
  forEachQueryTile(b, loc, s, args, tiles, [&](OpBuilder &tb, const QueryTile &q) {
    s.queryRing.wait(tb, loc, Value(), TmaRing::parityOf(tb, loc, q.round));
    Value query = s.tile(tb, loc, s.query, Value(), c.blockM, c.headDim);
    math.loadHeadScoreInputs(tb, loc, q.grid, args);
    if (isE4M3(c.elementType)) {
      auto [scoreDescale, valueDescale] = q.grid.descales(tb, loc, args);
      math.setDescales(scoreDescale, valueDescale);
    }
    auto values = buildPipelinedLoop(tb, loc, s, math, q, query, pingpong);
    if (failed(values)) {
      result = failure();
      return;
    }
    // Every S = QKᵀ of the tile has been waited for: Q may be overwritten.
    s.queryRing.release(tb, loc, Value());
    auto store = [&](OpBuilder &sb, Value output) {
      storeOutput(sb, loc, *outputStaging, output, args, q);
    };
    if (failed(emitEpilogueAndStore(tb, loc, math, *values, args, q.grid,
                                    s.output ? store
                                             : llvm::function_ref<void(OpBuilder &, Value)>())))
      result = failure();
  });
  pingpong.drain(b, loc);
  if (outputStaging)
    outputStaging->drain(b, loc);
  return result;
}

} // namespace

LogicalResult hopper::buildHopperForwardKernel(OpBuilder &b,
                                               gpu::GPUModuleOp module,
                                               const FusedAttention &attention,
                                               const AttentionKernelConfig &c,
                                               StringRef name) {
  OpBuilder::InsertionGuard guard(b);
  Location loc = attention.kvLoop->getLoc();
  int64_t consumerThreads = 32 * c.warps;
  KernelArgs args = KernelArgs::create(b, module, c, name, blockThreadsFor(c),
                                       /*tensorMaps=*/true,
                                       storesOutputThroughShared(c));
  SharedState s = buildSharedState(b, loc, module, c);
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  initBarriers(b, loc, s, tid);
  BlockTiles tiles = BlockTiles::build(b, loc, args, c, c.schedule.tileOrder);

  // One if/else, one role per branch: what setmaxnreg needs.
  Value isProducer = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::uge, tid, s.idx(b, loc, consumerThreads));
  auto roles = scf::IfOp::create(b, loc, isProducer, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard roleGuard(b);
    b.setInsertionPointToStart(roles.thenBlock());
    RegisterBudget budget = c.schedule.registerBudget;
    if (failed(checkRegisterBudget(loc, budget, consumerThreads, /*blocksPerSM=*/1)))
      return failure();
    setMaxRegisters(b, loc, budget.producer, /*increase=*/false);
    if (isE4M3(c.elementType)) {
      // Every producer thread transposes V; one issues the copies.
      Value producerThread = arith::SubIOp::create(
          b, loc, tid, s.idx(b, loc, consumerThreads));
      forEachQueryTile(b, loc, s, args, tiles,
                       [&](OpBuilder &tb, const QueryTile &q) {
                         buildTransposingProducer(tb, loc, s, args, q,
                                                  producerThread);
                       });
    } else {
      Value issuer = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                           tid, s.idx(b, loc, consumerThreads));
      buildIf(b, loc, issuer, [&](OpBuilder &then) {
        forEachQueryTile(then, loc, s, args, tiles,
                         [&](OpBuilder &tb, const QueryTile &q) {
                           buildProducer(tb, loc, s, args, q);
                         });
      });
    }
    b.setInsertionPointToStart(roles.elseBlock());
    setMaxRegisters(b, loc, budget.consumer, /*increase=*/true);
    if (failed(buildConsumers(b, loc, s, attention, args, tiles)))
      return failure();
  }
  gpu::ReturnOp::create(b, loc);
  return success();
}
