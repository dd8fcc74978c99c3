//===- HopperSchedule.cpp - the sm_90a kernel's schedule ------------------===//
//
// Part of fa-mlir.
//
// Warp-specialised, as FlashAttention-3 (TARGETS.md): the consumer
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
// (the consumers' loop is software-pipelined: buildPipelinedLoop).
// A ring's empty barriers expect every consumer thread; its full barriers
// one arrival plus the copy's bytes (TMA's complete_tx). A fresh barrier's
// "previous phase" counts as complete, so the producer's first wait on
// each empty barrier (parity 1) passes at once. Rows past M and keys past
// N arrive as TMA's out-of-bounds zeros; the L2 math masks the keys.
//
//===----------------------------------------------------------------------===//

#include "HopperPtx.h"
#include "HopperStrategy.h"

#include "fa/Conversion/FAToGPU/KernelSkeleton.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::hopper;

namespace {

int64_t consumerGroups(const AttentionKernelConfig &c) {
  return c.blockM / kRowsPerWarpgroup;
}

/// The kernel's shared memory: tile views, their addresses, the barriers.
struct SharedState {
  const AttentionKernelConfig &c;
  SharedMemoryPlan plan;
  Value base;    ///< shared-window address of the buffer (i32)
  Value query, key, value; ///< memref views [(stages,) panels, rows, 64]

  Value idx(OpBuilder &b, Location loc, int64_t v) const {
    return arith::ConstantIndexOp::create(b, loc, v);
  }
  Value i32(OpBuilder &b, Location loc, int64_t v) const {
    return arith::ConstantIntOp::create(b, loc, v, 32);
  }
  Value toI32(OpBuilder &b, Location loc, Value index) const {
    return arith::IndexCastOp::create(b, loc, b.getI32Type(), index);
  }
  /// The mbarrier phase parity (i32) of a barrier's `uses`-th use.
  Value parity(OpBuilder &b, Location loc, Value uses) const {
    return toI32(b, loc, arith::RemUIOp::create(b, loc, uses, idx(b, loc, 2)));
  }
  /// base + bytes + stride · stage (stage an index, or null).
  Value address(OpBuilder &b, Location loc, int64_t bytes, Value stage = Value(),
                int64_t stride = 0) const {
    Value a = arith::AddIOp::create(b, loc, base, i32(b, loc, bytes));
    if (!stage)
      return a;
    return arith::AddIOp::create(
        b, loc, a,
        arith::MulIOp::create(b, loc, toI32(b, loc, stage), i32(b, loc, stride)));
  }
  /// Barrier `which` (0 K full, 1 K empty, 2 V full, 3 V empty) of `stage`;
  /// the Q barrier comes first.
  Value barrier(OpBuilder &b, Location loc, Value stage, int64_t which) const {
    return address(b, loc, plan.barrierOffset + 8 * (1 + which), stage, 32);
  }
  Value queryFull(OpBuilder &b, Location loc) const {
    return address(b, loc, plan.barrierOffset);
  }
  /// Released by the consumers once their last S = QKᵀ of a tile is done.
  Value queryEmpty(OpBuilder &b, Location loc) const {
    return address(b, loc, plan.barrierOffset + 8 * (1 + 4 * c.stages));
  }
  /// The tile of `buffer` (behind `stage`) as a value of the math.
  Value tile(OpBuilder &b, Location loc, Value buffer, Value stage,
             int64_t rows, int64_t width) const {
    auto type = RankedTensorType::get(
        {rows, width}, c.elementType,
        TmaSharedLayoutAttr::get(b.getContext(), kPanelRowBytes));
    return SharedTileOp::create(b, loc, type, buffer, stage);
  }
};

enum Barrier { KeyFull = 0, KeyEmpty = 1, ValueFull = 2, ValueEmpty = 3 };

SharedState buildSharedState(OpBuilder &b, Location loc,
                             gpu::GPUModuleOp module,
                             const AttentionKernelConfig &c) {
  SharedState s{c, SharedMemoryPlan(c)};
  Value smem = sharedMemoryBase(b, module, loc, s.plan.bytes);
  s.base = sharedAddress(b, loc, smem);
  auto workgroup =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  auto view = [&](int64_t byteOffset, ArrayRef<int64_t> shape) -> Value {
    auto type = MemRefType::get(shape, c.elementType, nullptr, workgroup);
    return memref::ViewOp::create(b, loc, type, smem, s.idx(b, loc, byteOffset),
                                  ValueRange{});
  };
  const SharedMemoryPlan &p = s.plan;
  s.query = view(0, {p.queryPanels, c.blockM, kPanelElements});
  s.key = view(p.keyOffset, {c.stages, p.keyPanels, c.blockN, kPanelElements});
  s.value =
      view(p.valueOffset, {c.stages, p.valuePanels, c.blockN, kPanelElements});
  return s;
}

/// Thread 0 initialises the barriers; the block waits for it.
void initBarriers(OpBuilder &b, Location loc, const SharedState &s, Value tid,
                  int64_t consumerThreads) {
  inFirstThread(b, loc, tid, [&](OpBuilder &then) {
    mbarrierInit(then, loc, s.queryFull(then, loc), 1);
    mbarrierInit(then, loc, s.queryEmpty(then, loc), consumerThreads);
    for (int64_t stage = 0; stage < s.c.stages; ++stage) {
      Value st = s.idx(then, loc, stage);
      mbarrierInit(then, loc, s.barrier(then, loc, st, KeyFull), 1);
      mbarrierInit(then, loc, s.barrier(then, loc, st, KeyEmpty), consumerThreads);
      mbarrierInit(then, loc, s.barrier(then, loc, st, ValueFull), 1);
      mbarrierInit(then, loc, s.barrier(then, loc, st, ValueEmpty),
                   consumerThreads);
    }
    fenceBarrierInit(then, loc);
  });
  gpu::BarrierOp::create(b, loc);
}

/// Ring position of the n-th KV tile this block loads (counted over all
/// its Q tiles): (stage, parity of its use of the stage).
std::pair<Value, Value> ringPosition(OpBuilder &b, Location loc,
                                     const SharedState &s, Value n) {
  Value stages = s.idx(b, loc, s.c.stages);
  Value stage = arith::RemUIOp::create(b, loc, n, stages);
  Value round = arith::DivUIOp::create(b, loc, n, stages);
  return {stage, s.parity(b, loc, round)};
}

/// One Q tile of the persistent loop, as a role sees it.
struct QueryTile {
  GridCoords grid;
  Value kvBegin, numBlocks; ///< the visible KV tiles (GridCoords)
  Value round;              ///< this block's tile count so far: Q's phase
  Value ringBase;           ///< KV tiles this block loaded before this one
};

/// Runs `body` for each of this block's tiles (BlockTiles), carrying
/// the round and the ring count both roles agree on.
void forEachQueryTile(OpBuilder &b, Location loc, const SharedState &s,
                      const KernelArgs &args, const BlockTiles &tiles,
                      llvm::function_ref<void(OpBuilder &, const QueryTile &)> body) {
  Value zero = s.idx(b, loc, 0);
  scf::ForOp::create(
      b, loc, tiles.first, tiles.count, tiles.step, ValueRange{zero, zero},
      [&](OpBuilder &tb, Location, Value tile, ValueRange carried) {
        QueryTile q;
        q.grid = tiles.coords(tb, loc, args, s.c, tile);
        std::tie(q.kvBegin, q.numBlocks) = q.grid.visibleKeyBlocks(tb, loc, s.c);
        q.round = carried[0];
        q.ringBase = carried[1];
        body(tb, q);
        scf::YieldOp::create(
            tb, loc,
            ValueRange{arith::AddIOp::create(tb, loc, q.round, s.idx(tb, loc, 1)),
                       arith::AddIOp::create(tb, loc, q.ringBase, q.numBlocks)});
      });
}

/// One thread's copies, per tile: Q once the consumers released the last
/// one, then each visible K and V tile into the rings.
void buildProducer(OpBuilder &b, Location loc, const SharedState &s,
                   const KernelArgs &args, const QueryTile &q) {
  const AttentionKernelConfig &c = s.c;
  const SharedMemoryPlan &p = s.plan;
  const GridCoords &grid = q.grid;
  Value head = s.toI32(b, loc, grid.head);
  Value kvHead = s.toI32(b, loc, grid.kvHead);
  Value batch = s.toI32(b, loc, grid.batch);
  // Panel by panel: box [rows][64] at (64·panel, row, head, batch).
  auto copyTile = [&](OpBuilder &cb, StringRef map, Value dst, int64_t panels,
                      int64_t rows, Value row, Value headIndex, Value bar) {
    for (int64_t panel = 0; panel < panels; ++panel) {
      Value panelDst = arith::AddIOp::create(
          cb, loc, dst, s.i32(cb, loc, panel * rows * kPanelRowBytes));
      tmaLoad(cb, loc, panelDst, args[map],
              {s.i32(cb, loc, panel * kPanelElements), row, headIndex, batch},
              bar);
    }
  };
  // A fresh barrier's previous phase counts as complete: round 0 passes.
  waitParity(b, loc, s.queryEmpty(b, loc),
             arith::XOrIOp::create(b, loc, s.parity(b, loc, q.round), s.i32(b, loc, 1)));
  Value queryBar = s.queryFull(b, loc);
  arriveExpectTx(b, loc, queryBar, p.queryBytes);
  copyTile(b, "q_tmap", s.address(b, loc, 0), p.queryPanels, c.blockM,
           s.toI32(b, loc, grid.queryStart), head, queryBar);

  scf::ForOp::create(
      b, loc, s.idx(b, loc, 0), q.numBlocks, s.idx(b, loc, 1), ValueRange{},
      [&](OpBuilder &lb, Location, Value j, ValueRange) {
        auto [stage, parity] = ringPosition(
            lb, loc, s, arith::AddIOp::create(lb, loc, q.ringBase, j));
        Value emptyParity =
            arith::XOrIOp::create(lb, loc, parity, s.i32(lb, loc, 1));
        Value keyStart = s.toI32(
            lb, loc,
            arith::AddIOp::create(
                lb, loc, q.kvBegin,
                arith::MulIOp::create(lb, loc, j, s.idx(lb, loc, c.blockN))));
        // Wait for the stage to be released, expect its bytes, copy.
        auto fillStage = [&](Barrier empty, Barrier full, StringRef map,
                             int64_t offset, int64_t stageBytes, int64_t panels) {
          waitParity(lb, loc, s.barrier(lb, loc, stage, empty), emptyParity);
          Value bar = s.barrier(lb, loc, stage, full);
          arriveExpectTx(lb, loc, bar, stageBytes);
          copyTile(lb, map, s.address(lb, loc, offset, stage, stageBytes),
                   panels, c.blockN, keyStart, kvHead, bar);
        };
        fillStage(KeyEmpty, KeyFull, "k_tmap", p.keyOffset, p.keyStageBytes,
                  p.keyPanels);
        fillStage(ValueEmpty, ValueFull, "v_tmap", p.valueOffset,
                  p.valueStageBytes, p.valuePanels);
        scf::YieldOp::create(lb, loc);
      });
}

/// Pingpong (FA3's warp scheduler barrier): the consumer warpgroups issue
/// their MMAs in turn, round robin, so that one's softmax runs under the
/// others' GEMMs. Warpgroup w syncs on named barrier 1 + w before issuing
/// and arrives on its successor's after. The turns run on across the
/// block's tiles (every warpgroup takes the same tiles, so the same number
/// of turns): the last warpgroup gives the first its first turn before
/// the tiles, and the first takes that last arrival after them, so every
/// barrier phase completes (no arrival left pending).
struct Pingpong {
  const SharedState &s;
  int64_t groups = 0; ///< consumer warpgroups taking turns (< 2: no pingpong)
  // Computed once, before the tiles (i32 barrier ids, i1 flags):
  Value ownBarrier, nextBarrier, isFirstGroup, isLastGroup;

  // The syncing and the arriving warpgroup.
  static constexpr int64_t kThreads = 2 * kWarpgroupThreads;

  Pingpong(OpBuilder &b, Location loc, const SharedState &s, int64_t groups)
      : s(s), groups(groups) {
    if (groups < 2)
      return;
    Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
    Value group = s.toI32(
        b, loc,
        arith::DivUIOp::create(b, loc, tid, s.idx(b, loc, kWarpgroupThreads)));
    Value one = s.i32(b, loc, 1);
    ownBarrier = arith::AddIOp::create(b, loc, group, one);
    nextBarrier = arith::AddIOp::create(
        b, loc,
        arith::RemUIOp::create(b, loc, ownBarrier, s.i32(b, loc, groups)), one);
    isFirstGroup = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                         group, s.i32(b, loc, 0));
    isLastGroup = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, group,
                                        s.i32(b, loc, groups - 1));
  }
  /// Before the tiles: the first turn is warpgroup 0's.
  void start(OpBuilder &b, Location loc) const {
    if (groups >= 2)
      namedBarrierArrive(b, loc, s.i32(b, loc, 1), kThreads, isLastGroup);
  }
  /// After the tiles: warpgroup 0 takes the last warpgroup's last arrival.
  void drain(OpBuilder &b, Location loc) const {
    if (groups < 2)
      return;
    scf::IfOp::create(b, loc, isFirstGroup, [&](OpBuilder &then, Location) {
      namedBarrierSync(then, loc, s.i32(then, loc, 1), kThreads);
      scf::YieldOp::create(then, loc);
    });
  }
  void beforeIssue(OpBuilder &b, Location loc) const {
    if (groups >= 2)
      namedBarrierSync(b, loc, ownBarrier, kThreads);
  }
  void afterIssue(OpBuilder &b, Location loc) const {
    if (groups >= 2)
      namedBarrierArrive(b, loc, nextBarrier, kThreads,
                         arith::ConstantIntOp::create(b, loc, 1, 1));
  }
};

/// The consumers' loop over one Q tile's KV tiles, software-pipelined
/// (DistributedMath::emitPipelinedBody): tile 0's S and softmax peeled;
/// then per tile j ≥ 1 S_j and P_{j-1}·V_{j-1} in flight together, the
/// softmax of j under the P·V; the last P·V after the loop. Returns the
/// loop's values.
FailureOr<SmallVector<Value>>
buildPipelinedLoop(OpBuilder &b, Location loc, const SharedState &s,
                   DistributedMath &math, const QueryTile &q, Value query,
                   Value slope, const Pingpong &pingpong) {
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
      waitParity(tb, loc, s.barrier(tb, loc, stage, KeyFull), parity);
      return s.tile(tb, loc, s.key, stage, c.blockN, c.headDim);
    };
  };
  auto valueTileAt = [&](Value stage, Value parity) {
    return [&, stage, parity](OpBuilder &tb) {
      waitParity(tb, loc, s.barrier(tb, loc, stage, ValueFull), parity);
      return s.tile(tb, loc, s.value, stage, c.blockN, c.valueDim);
    };
  };
  auto hooksFor = [&](Value keyStage, Value valueStage) {
    DistributedMath::PipelineHooks hooks;
    hooks.beforeIssue = [&](OpBuilder &hb) { pingpong.beforeIssue(hb, loc); };
    hooks.afterIssue = [&](OpBuilder &hb) { pingpong.afterIssue(hb, loc); };
    if (keyStage)
      hooks.scoresDone = [&, keyStage](OpBuilder &hb) {
        arrive(hb, loc, s.barrier(hb, loc, keyStage, KeyEmpty));
      };
    if (valueStage)
      hooks.productDone = [&, valueStage](OpBuilder &hb) {
        arrive(hb, loc, s.barrier(hb, loc, valueStage, ValueEmpty));
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
            tb, grid, q.kvBegin, init, query, keyTileAt(stage, parity),
            DistributedMath::DeferredProduct{}, slope, hooksFor(stage, Value()));
        if (failed(body))
          result = failure();
        scf::YieldOp::create(tb, loc, succeeded(body) ? ValueRange(*body) : ValueRange(init));
      },
      [&](OpBuilder &eb, Location) { scf::YieldOp::create(eb, loc, init); });
  auto loop = scf::ForOp::create(
      b, loc, one, q.numBlocks, one, first.getResults(),
      [&](OpBuilder &lb, Location, Value j, ValueRange carried) {
        auto [stage, parity] = positionOf(lb, j);
        auto [valueStage, valueParity] =
            positionOf(lb, arith::SubIOp::create(lb, loc, j, one));
        Value keyStart = arith::AddIOp::create(
            lb, loc, q.kvBegin,
            arith::MulIOp::create(lb, loc, j, s.idx(lb, loc, c.blockN)));
        DistributedMath::DeferredProduct deferred{
            carried.back(), valueTileAt(valueStage, valueParity)};
        auto body = math.emitPipelinedBody(
            lb, grid, keyStart, carried, query, keyTileAt(stage, parity),
            deferred, slope, hooksFor(stage, valueStage));
        if (failed(body))
          result = failure();
        scf::YieldOp::create(lb, loc, succeeded(body) ? ValueRange(*body) : carried);
      });
  if (failed(result))
    return failure();
  SmallVector<Value> loopValues(loop.getResults().drop_back());
  auto last = scf::IfOp::create(
      b, loc, hasBlocks,
      [&](OpBuilder &tb, Location) {
        auto [stage, parity] = positionOf(tb, lastTile);
        DistributedMath::PipelineHooks hooks = hooksFor(Value(), stage);
        hooks.beforeIssue = hooks.afterIssue = nullptr; // outside the turns
        scf::YieldOp::create(
            tb, loc,
            math.emitDeferredProduct(
                tb, loop.getResults(),
                {loop.getResults().back(), valueTileAt(stage, parity)}, hooks));
      },
      [&](OpBuilder &eb, Location) { scf::YieldOp::create(eb, loc, loopValues); });
  return SmallVector<Value>(last.getResults());
}

/// The consumers, per Q tile: the L2 math over the rings, Q released, the
/// epilogue (under the producer's next Q and K).
LogicalResult buildConsumers(OpBuilder &b, Location loc, const SharedState &s,
                             const FusedAttention &attention,
                             const KernelArgs &args,
                             const BlockTiles &tiles) {
  const AttentionKernelConfig &c = s.c;
  // wgmma's accumulator is mma.sync's per warp: one m16 tile per warp.
  auto layout = FragmentLayoutAttr::get(b.getContext(), c.warps, /*mTiles=*/1,
                                        /*quadPartial=*/false,
                                        /*deferredScale=*/FloatAttr(),
                                        /*columnGroups=*/1);
  DistributedMath math(attention, layout);
  Pingpong pingpong(b, loc, s, consumerGroups(c));
  pingpong.start(b, loc);
  LogicalResult result = success();
  forEachQueryTile(b, loc, s, args, tiles, [&](OpBuilder &tb, const QueryTile &q) {
    waitParity(tb, loc, s.queryFull(tb, loc), s.parity(tb, loc, q.round));
    Value query = s.tile(tb, loc, s.query, Value(), c.blockM, c.headDim);
    Value slope = c.alibi ? q.grid.alibiSlope(tb, loc, args) : Value();
    auto values = buildPipelinedLoop(tb, loc, s, math, q, query, slope, pingpong);
    if (failed(values)) {
      result = failure();
      return;
    }
    // Every S = QKᵀ of the tile has been waited for: Q may be overwritten.
    arrive(tb, loc, s.queryEmpty(tb, loc));
    if (failed(emitEpilogueAndStore(tb, loc, math, *values, args, q.grid)))
      result = failure();
  });
  pingpong.drain(b, loc);
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
                                       /*tensorMaps=*/true);
  SharedState s = buildSharedState(b, loc, module, c);
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  initBarriers(b, loc, s, tid, consumerThreads);
  BlockTiles tiles = BlockTiles::build(b, loc, args, c, persistentTiles(c));

  // One if/else, one role per branch: what setmaxnreg needs.
  Value isProducer = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::uge, tid, s.idx(b, loc, consumerThreads));
  auto roles = scf::IfOp::create(b, loc, isProducer, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard roleGuard(b);
    b.setInsertionPointToStart(roles.thenBlock());
    RegisterBudget budget = registerBudget(consumerGroups(c));
    setMaxRegisters(b, loc, budget.producer, /*increase=*/false);
    Value issuer = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid,
                                         s.idx(b, loc, consumerThreads));
    scf::IfOp::create(b, loc, issuer, [&](OpBuilder &then, Location) {
      forEachQueryTile(then, loc, s, args, tiles,
                       [&](OpBuilder &tb, const QueryTile &q) {
                         buildProducer(tb, loc, s, args, q);
                       });
      scf::YieldOp::create(then, loc);
    });
    b.setInsertionPointToStart(roles.elseBlock());
    setMaxRegisters(b, loc, budget.consumer, /*increase=*/true);
    if (failed(buildConsumers(b, loc, s, attention, args, tiles)))
      return failure();
  }
  gpu::ReturnOp::create(b, loc);
  return success();
}
