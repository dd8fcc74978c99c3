//===- HopperBackward.cpp - the sm_90a backward's main kernel -------------===//
//
// Part of fa-mlir.
//
// One thread block per (KV block j, KV head, batch), warp-specialised as
// the forward (HopperSchedule.cpp): G consumer warpgroups own 64 key rows
// each of block_n = 64·G (dK_j and dV_j, in registers for the whole
// block), and either 64 query rows each of block_m = block_n (S, P, dP,
// dS, dQ_i), or, with block_m = 64 < block_n, all 64 query rows and 64
// of S's columns each (their own keys; #fa.fragment's columnGroups), dQ_i
// then read from the shared dS after the barrier, each warpgroup a column
// share of D. One producer thread after them issues every copy by TMA:
//
//   producer                               consumers
//   K_j, V_j → kv_full (once)              wait kv_full
//   for each query head of the group and each Q block i that sees K_j
//   (n counts them: stage s = n mod stages, parity (n / stages) mod 2):
//     wait q_empty[s] (parity ^ 1)         wait q_full[s]; consumer barrier
//     Q_i, dO_i → q_full[s]                the L2 step (BackwardMath):
//                                            S = Q Kᵀ, dP = dO Vᵀ (wgmma,
//                                            both operands by descriptor)
//                                            P, dS → shared (#fa.tma_shared)
//                                            dQ_i = dS K_j (dS's registers
//                                            as A) → f32 staging
//                                            fence.proxy.async; barrier
//                                            dQ_i added into dq_acc (TMA
//                                            reduce-add from the staging)
//                                            dV += Pᵀ dO, dK += dSᵀ Q
//                                            (imm-trans-a from P, dS)
//                                          arrive q_empty[s]
//
// (The diagram is block_m = block_n's; with split columns dQ_i comes after
// the barrier, from the shared dS, then its staging, a second barrier and
// the reduce-add. The schedule's overlap, overlapStepMatmuls, then issues
// dP with S, dQ_i before dV and dK, and awaits dV and dK together.)
//
// The consumer barrier at the top of a step orders the last step's reads
// of P, dS and the staging before this step's writes (thread 0 first
// waits for its reduce-adds to have read the staging); gpu.barrier cannot
// serve (the producer does not take part), so every barrier is named
// barrier 1 over the consumer threads. Two blocks per SM where one
// consumer warpgroup's shared memory allows (BackwardOccupancy).
//
//===----------------------------------------------------------------------===//

#include "HopperPtx.h"
#include "HopperStrategy.h"

#include "fa/Conversion/FAToGPU/BackwardKernel.h"
#include "fa/Dialect/FA/Utils/MaskUtils.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include <algorithm>
#include <limits>
#include <optional>

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::hopper;

BackwardSharedMemoryPlan::BackwardSharedMemoryPlan(const AttentionKernelConfig &c) {
  keyPanels = panelsOf(c.headDim);
  valuePanels = panelsOf(c.valueDim);
  probsPanels = panelsOf(c.blockN);
  keyBytes = keyPanels * c.blockN * kPanelRowBytes;
  valueBytes = valuePanels * c.blockN * kPanelRowBytes;
  queryStageBytes = keyPanels * c.blockM * kPanelRowBytes;
  gradOutStageBytes = valuePanels * c.blockM * kPanelRowBytes;
  int64_t probsBytes = probsPanels * c.blockM * kPanelRowBytes;
  stagingPanels = (c.headDim + 31) / 32; // of 32 f32 columns
  int64_t staging = stagingPanels * c.blockM * kPanelRowBytes;
  // dQ_i is always staged in f32 panels of 32 columns, for one TMA
  // reduce-add per panel: added per element from registers, its atomics
  // use a third of each L2 sector and bound the kernel (docs/perf-notes.md,
  // sm_90a backward). One consumer warpgroup alone leaves the tensor cores
  // idle, so where the staging costs the second block per SM, Q and dO get
  // one stage: the other block's work covers the copy.
  auto total = [&](int64_t ringStages) {
    return keyBytes + valueBytes + ringStages * (queryStageBytes + gradOutStageBytes) +
           2 * probsBytes + staging + 8 * (1 + 2 * ringStages);
  };
  stages = 2;
  if (c.warps == 4 && total(2) > kHalfSharedMemoryBytes &&
      total(1) <= kHalfSharedMemoryBytes)
    stages = 1;
  // Every tile a whole number of 1024-byte swizzle atoms (block_m and
  // block_n are multiples of 64), so each starts on one.
  valueOffset = keyBytes;
  queryOffset = valueOffset + valueBytes;
  gradOutOffset = queryOffset + stages * queryStageBytes;
  probsOffset = gradOutOffset + stages * gradOutStageBytes;
  gradScoresOffset = probsOffset + probsBytes;
  stagingOffset = gradScoresOffset + probsBytes;
  barrierOffset = stagingOffset + staging;
  bytes = total(stages); // kv_full, then q_full, q_empty per stage
}

namespace {

/// Blocks per SM and their warpgroups' registers. One consumer warpgroup
/// alone cannot keep the tensor cores busy: where two blocks fit the
/// shared memory (half the SM's, less the reserve), the block asks for
/// two, and its 64K / 2 registers go 24 to the producer, the rest (232)
/// to the consumers.
struct BackwardOccupancy {
  int64_t blocksPerSM;
  RegisterBudget budget;
};
BackwardOccupancy backwardOccupancy(const AttentionKernelConfig &c) {
  int64_t groups = c.warps / 4; // consumer warpgroups
  if (groups == 1 && BackwardSharedMemoryPlan(c).bytes <= kHalfSharedMemoryBytes)
    return {2, {24, 232}};
  return {1, registerBudget(groups)};
}

/// The block's shared memory, its place in the problem, the barriers.
struct BackwardBlock {
  const AttentionKernelConfig &c;
  KernelArgs &args;
  Location loc;
  BackwardSharedMemoryPlan plan;
  Value threadId, keyStart, batch, kvHead, group;
  Value base; ///< shared-window address of the buffer (i32)
  Value key, value, query, gradOut, probs, gradScores; ///< panel views
  Value staging; ///< dQ_i's f32 staging panels

  BackwardBlock(OpBuilder &b, gpu::GPUModuleOp module, KernelArgs &args,
                const AttentionKernelConfig &c, Location loc)
      : c(c), args(args), loc(loc), plan(c) {
    threadId = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
    KeyBlockPlace place = KeyBlockPlace::build(b, loc, c);
    keyStart = place.keyStart;
    kvHead = place.kvHead;
    batch = place.batch;
    group = arith::DivUIOp::create(b, loc, args.index(b, "q_heads"),
                                   args.index(b, "kv_heads"));
    Value smem = sharedMemoryBase(b, module, loc, plan.bytes);
    base = sharedAddress(b, loc, smem);
    auto workgroup = gpu::AddressSpaceAttr::get(b.getContext(),
                                                gpu::AddressSpace::Workgroup);
    auto view = [&](int64_t offset, ArrayRef<int64_t> shape, Type element) -> Value {
      auto type = MemRefType::get(shape, element, nullptr, workgroup);
      return memref::ViewOp::create(b, loc, type, smem, idx(b, offset), ValueRange{});
    };
    Type e = c.elementType;
    key = view(0, {plan.keyPanels, c.blockN, kPanelElements}, e);
    value = view(plan.valueOffset, {plan.valuePanels, c.blockN, kPanelElements}, e);
    query = view(plan.queryOffset,
                 {plan.stages, plan.keyPanels, c.blockM, kPanelElements}, e);
    gradOut = view(plan.gradOutOffset,
                   {plan.stages, plan.valuePanels, c.blockM, kPanelElements}, e);
    probs = view(plan.probsOffset, {plan.probsPanels, c.blockM, kPanelElements}, e);
    gradScores =
        view(plan.gradScoresOffset, {plan.probsPanels, c.blockM, kPanelElements}, e);
    staging = view(plan.stagingOffset, {plan.stagingPanels, c.blockM, 32},
                   b.getF32Type());
  }

  int64_t consumerThreads() const { return 32 * c.warps; }

  Value idx(OpBuilder &b, int64_t v) const {
    return arith::ConstantIndexOp::create(b, loc, v);
  }
  Value i32(OpBuilder &b, int64_t v) const {
    return arith::ConstantIntOp::create(b, loc, v, 32);
  }
  Value toI32(OpBuilder &b, Value index) const {
    return arith::IndexCastOp::create(b, loc, b.getI32Type(), index);
  }
  Value address(OpBuilder &b, int64_t bytes) const {
    return arith::AddIOp::create(b, loc, base, i32(b, bytes));
  }
  Value keyValueFull(OpBuilder &b) const { return address(b, plan.barrierOffset); }
  /// q_full (`empty` false) or q_empty of ring stage `stage` (an index).
  Value queryBarrier(OpBuilder &b, Value stage, bool empty) const {
    Value stageBytes = arith::MulIOp::create(b, loc, toI32(b, stage), i32(b, 16));
    return arith::AddIOp::create(
        b, loc, address(b, plan.barrierOffset + 8 + (empty ? 8 : 0)), stageBytes);
  }
  /// The ring position of the n-th Q block this block takes: (stage, parity).
  std::pair<Value, Value> ringPosition(OpBuilder &b, Value n) const {
    Value stage = arith::RemUIOp::create(b, loc, n, idx(b, plan.stages));
    Value round = arith::DivUIOp::create(b, loc, n, idx(b, plan.stages));
    return {stage, toI32(b, arith::RemUIOp::create(b, loc, round, idx(b, 2)))};
  }
  /// Shared buffer `buffer` (behind `stage` if non-null) as an operand tile.
  Value tile(OpBuilder &b, Value buffer, Value stage, int64_t rows,
             int64_t width) const {
    auto type = RankedTensorType::get(
        {rows, width}, c.elementType,
        TmaSharedLayoutAttr::get(b.getContext(), kPanelRowBytes));
    return SharedTileOp::create(b, loc, type, buffer, stage);
  }
  /// Runs `body` in thread 0 (a consumer).
  void inFirstThread(OpBuilder &b, function_ref<void(OpBuilder &)> body) const {
    mlir::fa::inFirstThread(b, loc, threadId, body);
  }
  /// dQ_i, staged (and fenced for the async proxy, behind a consumer
  /// barrier), added into dq_acc by thread 0's TMA reduce-adds, one per
  /// 32-column panel; rows past M are out of the map's bounds and skipped.
  ///
  /// Built deterministic and launched so, thread 0 first waits for this KV
  /// block's turn at the Q block (GradQueryTurn), and passes it on once
  /// its reduce-adds have completed: the other threads never wait for it
  /// but at the next step's barrier.
  void reduceStagedGradQuery(OpBuilder &b, const GridCoords &at) const {
    std::optional<GradQueryTurn> turn;
    if (c.deterministic)
      turn = GradQueryTurn::build(b, loc, args, c, at, keyStart);
    auto whenDeterministic = [&](OpBuilder &ib, function_ref<void(OpBuilder &)> body) {
      if (turn)
        turn->whenEnabled(ib, loc, body);
    };
    inFirstThread(b, [&](OpBuilder &tb) {
      whenDeterministic(tb, [&](OpBuilder &wb) {
        turn->await(wb, loc);
        fenceProxyAsyncAll(wb, loc);
      });
      Value stagingBase = address(tb, plan.stagingOffset);
      for (int64_t panel = 0; panel < plan.stagingPanels; ++panel)
        tmaReduceAdd(tb, loc,
                     arith::AddIOp::create(
                         tb, loc, stagingBase,
                         i32(tb, panel * c.blockM * kPanelRowBytes)),
                     args["dq_acc_tmap"],
                     {i32(tb, 32 * panel), toI32(tb, at.queryStart),
                      toI32(tb, at.head), toI32(tb, batch)});
      bulkCommit(tb, loc);
      whenDeterministic(tb, [&](OpBuilder &pb) {
        bulkWait(pb, loc, 0, /*readOnly=*/false);
        fenceProxyAsyncAll(pb, loc);
        turn->pass(pb, loc);
      });
    });
  }
  /// Before the staging is written again: thread 0's reduce-adds have read
  /// it (the consumer barrier that follows tells the others).
  void awaitStagingRead(OpBuilder &b) const {
    inFirstThread(b, [&](OpBuilder &tb) { bulkWait(tb, loc, 0, /*readOnly=*/true); });
  }
  /// Named barrier 1 over the consumer warpgroups.
  void consumerBarrier(OpBuilder &b) const {
    namedBarrierSync(b, loc, i32(b, 1), consumerThreads());
  }
  /// The coordinates of query head `head` of the group.
  GridCoords coords(OpBuilder &b, Value head) const {
    GridCoords g;
    g.batch = batch;
    g.head = head;
    g.kvHead = kvHead;
    g.queryLen = args.index(b, "q_len");
    g.keyLen = args.index(b, "kv_len");
    return g;
  }
  /// The query blocks of member `member` of the group that see K_j: the
  /// head, its first row, and the count.
  struct Member {
    Value head, begin, blocks;
  };
  Member member(OpBuilder &b, Value m) const {
    Member out;
    out.head = arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, kvHead, group), m);
    std::tie(out.begin, out.blocks) =
        coords(b, out.head).visibleQueryBlocks(b, loc, c, keyStart);
    return out;
  }
  /// Runs `body(member, n)` for each member of the group, n counting the
  /// Q blocks of the members before it; carries `init` through.
  FailureOr<SmallVector<Value>>
  forEachMember(OpBuilder &b, ValueRange init,
                function_ref<FailureOr<SmallVector<Value>>(OpBuilder &, const Member &,
                                                           Value n, ValueRange)>
                    body) const {
    SmallVector<Value> carried = {idx(b, 0)};
    carried.append(init.begin(), init.end());
    LogicalResult result = success();
    auto loop = scf::ForOp::create(
        b, loc, idx(b, 0), group, idx(b, 1), carried,
        [&](OpBuilder &lb, Location, Value m, ValueRange values) {
          Member mem = member(lb, m);
          FailureOr<SmallVector<Value>> out = body(lb, mem, values[0], values.drop_front());
          if (failed(out))
            result = failure();
          SmallVector<Value> yielded = {arith::AddIOp::create(lb, loc, values[0], mem.blocks)};
          if (succeeded(out))
            yielded.append(out->begin(), out->end());
          else
            yielded.append(values.begin() + 1, values.end());
          scf::YieldOp::create(lb, loc, yielded);
        });
    if (failed(result))
      return failure();
    return SmallVector<Value>(loop.getResults().drop_front());
  }
};

/// The producer thread: K_j and V_j once, then Q_i and dO_i of every step
/// into the ring. A TMA box is one 64-column panel of block rows at
/// (64·panel, row, head, batch); rows past the sequence arrive as zeros.
void buildProducer(OpBuilder &b, const BackwardBlock &block) {
  const AttentionKernelConfig &c = block.c;
  const BackwardSharedMemoryPlan &p = block.plan;
  Location loc = block.loc;
  Value batch = block.toI32(b, block.batch);
  auto copyTile = [&](OpBuilder &cb, StringRef map, int64_t offset, Value stageOffset,
                      int64_t panels, int64_t rows, Value row, Value head, Value bar) {
    for (int64_t panel = 0; panel < panels; ++panel) {
      Value dst = block.address(cb, offset + panel * rows * kPanelRowBytes);
      if (stageOffset)
        dst = arith::AddIOp::create(cb, loc, dst, stageOffset);
      tmaLoad(cb, loc, dst, block.args[map],
              {block.i32(cb, panel * kPanelElements), row, head, batch}, bar);
    }
  };
  Value kvBar = block.keyValueFull(b);
  Value keyRow = block.toI32(b, block.keyStart);
  Value kvHead = block.toI32(b, block.kvHead);
  arriveExpectTx(b, loc, kvBar, p.keyBytes + p.valueBytes);
  copyTile(b, "k_tmap", 0, Value(), p.keyPanels, c.blockN, keyRow, kvHead, kvBar);
  copyTile(b, "v_tmap", p.valueOffset, Value(), p.valuePanels, c.blockN, keyRow,
           kvHead, kvBar);
  (void)block.forEachMember(
      b, {}, [&](OpBuilder &mb, const BackwardBlock::Member &m, Value n, ValueRange)
          -> FailureOr<SmallVector<Value>> {
        Value head = block.toI32(mb, m.head);
        scf::ForOp::create(
            mb, loc, block.idx(mb, 0), m.blocks, block.idx(mb, 1), ValueRange{},
            [&](OpBuilder &lb, Location, Value i, ValueRange) {
              auto [stage, parity] =
                  block.ringPosition(lb, arith::AddIOp::create(lb, loc, n, i));
              // A fresh barrier's previous phase counts as complete: the
              // first use of each stage passes at once.
              waitParity(lb, loc, block.queryBarrier(lb, stage, /*empty=*/true),
                         arith::XOrIOp::create(lb, loc, parity, block.i32(lb, 1)));
              Value bar = block.queryBarrier(lb, stage, /*empty=*/false);
              arriveExpectTx(lb, loc, bar, p.queryStageBytes + p.gradOutStageBytes);
              Value row = block.toI32(
                  lb, arith::AddIOp::create(
                          lb, loc, m.begin,
                          arith::MulIOp::create(lb, loc, i, block.idx(lb, c.blockM))));
              Value s = block.toI32(lb, stage);
              copyTile(lb, "q_tmap", p.queryOffset,
                       arith::MulIOp::create(lb, loc, s, block.i32(lb, p.queryStageBytes)),
                       p.keyPanels, c.blockM, row, head, bar);
              copyTile(lb, "do_tmap", p.gradOutOffset,
                       arith::MulIOp::create(lb, loc, s,
                                             block.i32(lb, p.gradOutStageBytes)),
                       p.valuePanels, c.blockM, row, head, bar);
              scf::YieldOp::create(lb, loc);
            });
        return SmallVector<Value>();
      });
}

/// Moves `op` and the ops of its block it depends on that come after
/// `anchor` to right after `anchor`, in their order.
void hoistAfter(Operation *op, Operation *anchor) {
  Block *block = anchor->getBlock();
  llvm::SetVector<Operation *> moved;
  SmallVector<Operation *> worklist = {op};
  while (!worklist.empty()) {
    Operation *next = worklist.pop_back_val();
    if (next->getBlock() != block || !anchor->isBeforeInBlock(next) ||
        !moved.insert(next))
      continue;
    for (Value operand : next->getOperands())
      if (Operation *def = operand.getDefiningOp())
        worklist.push_back(def);
  }
  SmallVector<Operation *> ordered(moved.begin(), moved.end());
  llvm::sort(ordered, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  Operation *after = anchor;
  for (Operation *m : ordered) {
    m->moveAfter(after);
    after = m;
  }
}

/// `mma`'s uses (but `except`) read `wait`.
void readThroughWait(Operation *mma, MmaWaitOp wait) {
  mma->getResult(0).replaceAllUsesExcept(wait.getResult(), wait);
}

/// Two MMAs in flight at once: the step as BackwardMath cloned it waits
/// for each wgmma before the next issues. S = QKᵀ and dP = dO·Vᵀ are
/// independent: dP issues right after S, S is awaited with dP in flight
/// (wait_group 1) and dP only before its first use, so dP runs under the
/// mask and exp of S. dV += Pᵀ·dO and dK += dSᵀ·Q, the step's last, are
/// awaited together, at the end of `step` (not yet terminated); `yielded`
/// (the step's results) then reads the waits. A dQ_i that reads dS from
/// shared memory issues before them and is awaited alone.
void overlapStepMatmuls(Block *step, SmallVector<Value> &yielded) {
  QKScoresOp scores;
  TileMatmulOp gradProbs, gradQuery;
  SmallVector<TileMatmulOp> transposed;
  for (Operation &op : *step) {
    if (auto s = dyn_cast<QKScoresOp>(op))
      scores = s;
    else if (auto m = dyn_cast<TileMatmulOp>(op)) {
      if (m.getTransposeB())
        gradProbs = m;
      else if (m.getTransposeA())
        transposed.push_back(m);
      else
        gradQuery = m;
    }
  }
  auto firstUser = [](Operation *op) {
    Operation *first = nullptr;
    for (Operation *user : op->getUsers())
      if (!first || user->isBeforeInBlock(first))
        first = user;
    return first;
  };
  auto awaitAt = [](Operation *mma, Operation *before, int64_t pending) {
    OpBuilder b(before);
    auto wait = MmaWaitOp::create(b, mma->getLoc(), mma->getResult(0).getType(),
                                  mma->getResult(0), b.getI64IntegerAttr(pending));
    readThroughWait(mma, wait);
    return wait;
  };
  if (scores && gradProbs && scores->isBeforeInBlock(gradProbs)) {
    Operation *firstUseOfProbs = firstUser(gradProbs);
    hoistAfter(gradProbs, scores);
    awaitAt(scores, gradProbs->getNextNode(), 1);
    awaitAt(gradProbs, firstUseOfProbs, 0);
  }
  // dQ_i read from the shared dS comes after dV's and dK's wgmmas: issue
  // it first and await it alone (wait_group 2), so that its staging, the
  // barrier and the reduce-add run under them.
  if (gradQuery && transposed.size() == 2 &&
      transposed.front()->isBeforeInBlock(gradQuery)) {
    Operation *firstUse = firstUser(gradQuery);
    gradQuery->moveBefore(transposed.front());
    awaitAt(gradQuery, firstUse, 2);
  }
  if (transposed.size() == 2) {
    // (From the op's context: the step's loop is still being built, its
    // region has no parent op to ask.)
    OpBuilder b(transposed.front().getContext());
    b.setInsertionPointToEnd(step);
    for (auto [i, mma] : llvm::enumerate(transposed)) {
      Value result = mma.getResult();
      auto wait = MmaWaitOp::create(b, mma.getLoc(), result.getType(), result,
                                    b.getI64IntegerAttr(1 - int64_t(i)));
      readThroughWait(mma, wait);
      std::replace(yielded.begin(), yielded.end(), result, Value(wait.getResult()));
    }
  }
}

/// One Q block's step on the consumers: (dK_j, dV_j) updated.
FailureOr<SmallVector<Value>>
emitConsumerStep(OpBuilder &b, const BackwardBlock &block, BackwardMath &math,
                 const AttentionBackward &backward, const GridCoords &at,
                 Value stage, ValueRange gradients, Value slope) {
  const AttentionKernelConfig &c = block.c;
  Location loc = block.loc;
  KernelArgs &args = block.args;
  BackwardMath::Sources sources;
  sources.tile = [&](OpBuilder &tb, Value l2Tile) -> Value {
    if (l2Tile == backward.queryTile)
      return block.tile(tb, block.query, stage, c.blockM, c.headDim);
    if (l2Tile == backward.gradOutTile)
      return block.tile(tb, block.gradOut, stage, c.blockM, c.valueDim);
    if (l2Tile == backward.keyTile)
      return block.tile(tb, block.key, Value(), c.blockN, c.headDim);
    if (l2Tile == backward.valueTile)
      return block.tile(tb, block.value, Value(), c.blockN, c.valueDim);
    return math.loadQueryRows(tb, loc, args, at, l2Tile); // LSE or D
  };
  sources.transposedOperand = [&](OpBuilder &tb, TileMatmulOp matmul,
                                  Value fragment) -> Value {
    Value buffer = matmul == backward.gradValue ? block.probs : block.gradScores;
    StoreSharedOp::create(tb, loc, fragment, buffer);
    return block.tile(tb, buffer, Value(), c.blockM, c.blockN);
  };
  // With dS's columns split over the warpgroups, dQ_i = dS·K_j reads dS
  // from shared memory after the barrier, and its staging needs one more.
  bool splitColumns = c.blockN > c.blockM;
  sources.gradQueryFromShared = splitColumns;
  sources.accumulateGradQuery = [&](OpBuilder &tb, Value gradQuery) {
    StoreSharedOp::create(tb, loc, gradQuery, block.staging);
    if (!splitColumns)
      return; // reduced after sharedWritten's barrier
    fenceProxyAsync(tb, loc);
    block.consumerBarrier(tb);
    block.reduceStagedGradQuery(tb, at);
  };
  sources.sharedWritten = [&](OpBuilder &tb) {
    // The generic proxy's writes of P, dS (and dQ_i), seen by the async
    // proxy (wgmma, the TMA reduce-add).
    fenceProxyAsync(tb, loc);
    block.consumerBarrier(tb);
    if (!splitColumns)
      block.reduceStagedGradQuery(tb, at);
  };
  return math.emitBody(b, at, block.keyStart, gradients, slope, sources);
}

/// The consumers: every step of every member, then dK_j and dV_j stored.
LogicalResult buildConsumers(OpBuilder &b, const BackwardBlock &block,
                             const AttentionBackward &backward) {
  const AttentionKernelConfig &c = block.c;
  Location loc = block.loc;
  // wgmma's accumulator is mma.sync's per warp: one m16 tile per warp.
  // Key rows: warpgroup w owns keys 64w..; query rows: the same where
  // block_m = block_n, else every warpgroup has the 64 query rows and its
  // share of the columns (S's keys, dQ's head dims).
  auto layout = [&](int64_t columnGroups) {
    return FragmentLayoutAttr::get(b.getContext(), c.warps, /*mTiles=*/1,
                                   /*quadPartial=*/false, FloatAttr(), columnGroups);
  };
  BackwardMath math(backward, layout(c.blockN / c.blockM), layout(1));
  waitParity(b, loc, block.keyValueFull(b), block.i32(b, 0));
  FailureOr<SmallVector<Value>> gradients = block.forEachMember(
      b, math.initialGradients(b, loc),
      [&](OpBuilder &mb, const BackwardBlock::Member &m, Value n,
          ValueRange carried) -> FailureOr<SmallVector<Value>> {
        GridCoords grid = block.coords(mb, m.head);
        Value slope = c.alibi ? grid.alibiSlope(mb, loc, block.args) : Value();
        LogicalResult result = success();
        auto loop = scf::ForOp::create(
            mb, loc, block.idx(mb, 0), m.blocks, block.idx(mb, 1), carried,
            [&](OpBuilder &lb, Location, Value i, ValueRange values) {
              auto [stage, parity] =
                  block.ringPosition(lb, arith::AddIOp::create(lb, loc, n, i));
              waitParity(lb, loc, block.queryBarrier(lb, stage, /*empty=*/false),
                         parity);
              block.awaitStagingRead(lb);
              block.consumerBarrier(lb);
              GridCoords at = grid;
              at.queryStart = arith::AddIOp::create(
                  lb, loc, m.begin,
                  arith::MulIOp::create(lb, loc, i, block.idx(lb, c.blockM)));
              FailureOr<SmallVector<Value>> step = emitConsumerStep(
                  lb, block, math, backward, at, stage, values, slope);
              if (failed(step))
                result = failure();
              else
                overlapStepMatmuls(lb.getInsertionBlock(), *step);
              // Every wgmma reading Q_i and dO_i has been waited for.
              arrive(lb, loc, block.queryBarrier(lb, stage, /*empty=*/true));
              scf::YieldOp::create(lb, loc, succeeded(step) ? ValueRange(*step) : values);
            });
        if (failed(result))
          return failure();
        return SmallVector<Value>(loop.getResults());
      });
  if (failed(gradients))
    return failure();
  // The last reduce-adds complete before the block ends.
  block.inFirstThread(b, [&](OpBuilder &tb) { bulkWait(tb, loc, 0, /*readOnly=*/false); });
  // dK_j, dV_j in the input type, by the rows that exist.
  GridCoords kv = block.coords(b, Value());
  static constexpr StringLiteral kGradients[] = {"dk", "dv"};
  for (auto [i, name] : llvm::enumerate(kGradients)) {
    Value grad = (*gradients)[i];
    auto type = cast<RankedTensorType>(grad.getType());
    Value cast = arith::TruncFOp::create(b, loc, type.clone(c.elementType), grad);
    StoreFragmentOp::create(b, loc, cast, block.args[name],
                            kv.tensorBase(b, loc, block.args, name, block.kvHead),
                            block.keyStart, kv.keyLen,
                            block.args.index(b, (name + "_stride_s").str()));
  }
  return success();
}

/// Thread 0 initialises the barriers; the block waits for it.
void initBarriers(OpBuilder &b, const BackwardBlock &block) {
  Location loc = block.loc;
  block.inFirstThread(b, [&](OpBuilder &then) {
    mbarrierInit(then, loc, block.keyValueFull(then), 1);
    for (int64_t stage = 0; stage < block.plan.stages; ++stage) {
      Value st = block.idx(then, stage);
      mbarrierInit(then, loc, block.queryBarrier(then, st, false), 1);
      mbarrierInit(then, loc, block.queryBarrier(then, st, true),
                   block.consumerThreads());
    }
    fenceBarrierInit(then, loc);
  });
  gpu::BarrierOp::create(b, loc);
}

} // namespace

LogicalResult hopper::buildHopperBackwardMain(OpBuilder &b, gpu::GPUModuleOp module,
                                              const AttentionBackward &backward,
                                              const AttentionKernelConfig &c,
                                              StringRef name) {
  OpBuilder::InsertionGuard guard(b);
  Location loc = backward.queryLoop->getLoc();
  KernelArgs args = KernelArgs::create(
      b, module, c.elementType,
      backwardEntryName(name, ::fa::abi::BackwardStep::Main), blockThreadsFor(c),
      ::fa::abi::backwardKernelParams(::fa::abi::BackwardStep::Main, c.alibi,
                                      /*tensorMaps=*/true),
      backwardOccupancy(c).blocksPerSM);
  BackwardBlock block(b, module, args, c, loc);
  initBarriers(b, block);
  // One if/else, one role per branch: what setmaxnreg needs.
  Value isProducer = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                           block.threadId,
                                           block.idx(b, block.consumerThreads()));
  auto roles = scf::IfOp::create(b, loc, isProducer, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard roleGuard(b);
    b.setInsertionPointToStart(roles.thenBlock());
    RegisterBudget budget = backwardOccupancy(c).budget;
    setMaxRegisters(b, loc, budget.producer, /*increase=*/false);
    Value issuer = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                         block.threadId,
                                         block.idx(b, block.consumerThreads()));
    scf::IfOp::create(b, loc, issuer, [&](OpBuilder &then, Location) {
      buildProducer(then, block);
      scf::YieldOp::create(then, loc);
    });
    b.setInsertionPointToStart(roles.elseBlock());
    setMaxRegisters(b, loc, budget.consumer, /*increase=*/true);
    if (failed(buildConsumers(b, block, backward)))
      return failure();
  }
  gpu::ReturnOp::create(b, loc);
  return success();
}
