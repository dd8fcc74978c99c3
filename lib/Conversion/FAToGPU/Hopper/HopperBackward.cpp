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
// share of D. The producer warpgroup after them has two roles: its first
// thread issues every copy by TMA, its second warp's first thread (the dQ
// writer) adds each staged dQ_i into dq_acc:
//
//   producer          dQ writer            consumers
//   K_j, V_j →                             wait kv_full
//     kv_full (once)
//   for each query head of the group and each Q block i that sees K_j
//   (n counts them: stage s = n mod stages, parity (n / stages) mod 2; the
//   staging buffer r of dQ_i's part p likewise from n·parts + p):
//   wait q_empty[s]                        wait q_full[s]; consumer barrier
//   Q_i, dO_i →                            the L2 step (BackwardMath):
//     q_full[s]                              S = Q Kᵀ, dP = dO Vᵀ (wgmma,
//                                            both operands by descriptor)
//                                            P, dS → shared (#fa.tma_shared)
//                                            dQ_i = dS K_j (dS's registers
//                                            as A); wait dq_empty[r];
//                                            → f32 staging[r];
//                                            fence.proxy.async;
//                                            arrive dq_full[r]
//                     wait dq_full[r]        fence.proxy.async; barrier
//                     [deterministic:        dV += Pᵀ dO, dK += dSᵀ Q
//                      wait the turn]        (imm-trans-a from P, dS)
//                     TMA reduce-adds      arrive q_empty[s]
//                     of staging[r];
//                     once read: arrive
//                     dq_empty[r]; [once
//                     complete: pass the
//                     turn on]
//
// (The diagram is block_m = block_n's; with split columns dQ_i comes after
// the barrier, from the shared dS. The schedule's overlap,
// overlapStepMatmuls, then issues dP with S, dQ_i before dV and dK, and
// awaits dV and dK together. Where dQ_i is in column parts (D = 256), dO_i
// has a ring of its own: the producer waits do_empty and fills it after
// Q_i; the consumers wait do_full just before dP's wgmma and arrive at
// do_empty once dV's has completed (at the second part's wait), so dO_(i+1)
// lands under dK's and the next S's wgmmas; each part of dQ_i is staged
// in a staging buffer of its own ring position.) Neither the reduce-adds nor the
// deterministic mode's turns hold the consumers up while a staging buffer
// is free: two where shared memory allows and nothing else is worth more
// (BackwardSharedMemoryPlan: at D = 256 a second Q stage comes first).
// Deterministic at D = 256 (a staging buffer per part) two dQ writers,
// the first threads of the producer's second and third warps, take the
// steps in turn (plan.gradQueryWriters): each passes its own Q block's
// turn as soon as its reduce-adds complete, while the other adds the next
// step, so the turns run a step earlier down the chain of KV blocks; the
// second writer's dq_full barriers are its own (gradQueryFull).
//
// The consumer barrier at the top of a step orders the last step's reads
// of P and dS before this step's writes; gpu.barrier cannot serve (the
// producer does not take part), so every barrier is named barrier 1 over
// the consumer threads. Two blocks per SM where one consumer warpgroup's
// shared memory allows (BackwardOccupancy). The rings and their barrier
// protocol are TmaRing.h's; the step's MMAs are reordered with IrMotion.h.
//
//===----------------------------------------------------------------------===//

#include "HopperPtx.h"
#include "HopperStrategy.h"
#include "IrMotion.h"
#include "TmaRing.h"

#include "fa/Conversion/FAToGPU/BackwardKernel.h"
#include "fa/Conversion/FAToGPU/FragmentPatterns.h"
#include "fa/Dialect/FA/Utils/MaskUtils.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include <algorithm>
#include <limits>
#include <optional>

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::hopper;

namespace {
/// dQ_i = dS·K_j from the shared dS in column parts (BackwardMath's
/// Sources::gradQueryParts): at D = 256 a warpgroup's 128 of dQ_i's
/// columns (64 registers) beside dK_j's and dV_j's 64 each; in two parts
/// of 64 columns, the second issued once the first is staged, one part's
/// 32 registers are live at a time (ptxas: the consumers fit 232
/// registers, against 240).
int64_t gradQueryPartsOf(const AttentionKernelConfig &c) {
  int64_t groups = backwardColumnGroups(c).queryRows;
  bool fromShared = groups > 1; // dQ_i from the shared dS
  return fromShared && c.headDim / groups > 64 && c.headDim % 128 == 0 ? 2 : 1;
}

} // namespace

BackwardSharedMemoryPlan::BackwardSharedMemoryPlan(const AttentionKernelConfig &c) {
  gradQueryParts = gradQueryPartsOf(c);
  gradOutRing = gradQueryParts > 1;
  keyPanels = panelsOf(c.headDim);
  valuePanels = panelsOf(c.valueDim);
  probsPanels = panelsOf(c.blockN);
  keyBytes = keyPanels * c.blockN * kPanelRowBytes;
  valueBytes = valuePanels * c.blockN * kPanelRowBytes;
  queryStageBytes = keyPanels * c.blockM * kPanelRowBytes;
  gradOutStageBytes = valuePanels * c.blockM * kPanelRowBytes;
  int64_t probsBytes = probsPanels * c.blockM * kPanelRowBytes;
  stagingPanels = (c.headDim + 31) / 32; // of 32 f32 columns
  stagingBufferBytes = stagingPanels / gradQueryParts * c.blockM * kPanelRowBytes;
  // dQ_i is always staged in f32 panels of 32 columns, for one TMA
  // reduce-add per panel: added per element from registers, its atomics use
  // a third of each L2 sector and bound the kernel. The reduce-adds are the
  // dQ writer's (a producer thread), so two staging buffers let the
  // consumers write dQ_(i+1) while it still adds dQ_i (or, deterministic,
  // waits for dQ_i's turn); in parts, a buffer holds one part, and one
  // buffer is passed between the parts (the writer reads the first while the
  // second is computed). One consumer warpgroup alone leaves the tensor
  // cores idle, so where the staging costs the second block per SM, Q and dO
  // get one stage first: the other block's work covers the copy. With dO on
  // a ring of its own (released early), a second Q stage comes before a
  // second dO stage: at D = 256 (208 KB) nothing is then exposed but the
  // first step's copies.
  // Two dQ writers at most (gradQueryWriters; one extra dq_full set).
  auto writersFor = [&](int64_t buffers) {
    return c.deterministic && gradQueryParts > 1 && buffers == gradQueryParts ? 2 : 1;
  };
  auto total = [&](int64_t query, int64_t gradOut, int64_t buffers) {
    int64_t barriers = 1 + 2 * query + (gradOutRing ? 2 * gradOut : 0) +
                       (1 + writersFor(buffers)) * buffers;
    return keyBytes + valueBytes + query * queryStageBytes + gradOut * gradOutStageBytes +
           2 * probsBytes + buffers * stagingBufferBytes + 8 * barriers;
  };
  int64_t budget = c.warps == 4 && total(1, 1, 1) <= kHalfSharedMemoryBytes
                       ? kHalfSharedMemoryBytes
                       : kMaxSharedMemoryBytes;
  struct Rings {
    int64_t query, gradOut, buffers;
  };
  SmallVector<Rings> choices = {{2, 2, 2}, {2, 2, 1}};
  if (gradOutRing)
    choices.append({{2, 1, 2}, {2, 1, 1}});
  choices.append({{1, 1, 2}, {1, 1, 1}});
  // Deterministic, the dQ writer waits for each Q block's turn before it
  // reads the first part: with one buffer the consumers would wait for
  // that turn in the middle of their step, so a buffer per part comes
  // before a second Q stage.
  if (gradOutRing && c.deterministic)
    std::stable_partition(choices.begin(), choices.end(),
                          [&](Rings r) { return r.buffers >= gradQueryParts; });
  Rings chosen = choices.back();
  for (Rings rings : choices)
    if (total(rings.query, rings.gradOut, rings.buffers) <= budget) {
      chosen = rings;
      break;
    }
  queryStages = chosen.query;
  gradOutStages = chosen.gradOut;
  stagingStages = chosen.buffers;
  gradQueryWriters = writersFor(stagingStages);
  // Every tile a whole number of 1024-byte swizzle atoms (block_m and
  // block_n are multiples of 64), so each starts on one.
  valueOffset = keyBytes;
  queryOffset = valueOffset + valueBytes;
  gradOutOffset = queryOffset + queryStages * queryStageBytes;
  probsOffset = gradOutOffset + gradOutStages * gradOutStageBytes;
  gradScoresOffset = probsOffset + probsBytes;
  stagingOffset = gradScoresOffset + probsBytes;
  barrierOffset = stagingOffset + stagingStages * stagingBufferBytes;
  bytes = total(queryStages, gradOutStages, stagingStages);
}

int64_t hopper::backwardBlocksPerSM(const AttentionKernelConfig &c) {
  int64_t groups = c.warps / 4; // consumer warpgroups
  return groups == 1 && BackwardSharedMemoryPlan(c).bytes <= kHalfSharedMemoryBytes
             ? 2
             : 1;
}

namespace {

/// Blocks per SM (backwardBlocksPerSM) and their warpgroups' registers
/// (the register_budget knob).
struct BackwardOccupancy {
  int64_t blocksPerSM;
  RegisterBudget budget;
};
BackwardOccupancy backwardOccupancy(const AttentionKernelConfig &c) {
  return {backwardBlocksPerSM(c), c.schedule.registerBudget};
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
  /// Per dQ_i column part (plan.gradQueryParts), K_j's panels.
  SmallVector<Value, 2> keyParts;
  /// dQ_i's f32 staging panels, per buffer (of one part each).
  SmallVector<Value, 2> staging;
  /// The rings: Q_i (q_full, q_empty), dO_i (do_full, do_empty where
  /// plan.gradOutRing, else the Q ring's barriers), and dQ_i's staging
  /// buffers, which the consumers fill (dq_full: every consumer thread
  /// arrives) and the dQ writer's reduce-adds drain (dq_empty); the second
  /// writer sees the staging ring through dq_full barriers of its own.
  TmaRing queryRing, gradOutSlots, stagingRing, secondWriterStaging;

  BackwardBlock(OpBuilder &b, gpu::GPUModuleOp module, KernelArgs &args,
                const AttentionKernelConfig &c, Location loc)
      : c(c), args(args), loc(loc), plan(c) {
    threadId = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
    KeyBlockPlace place = KeyBlockPlace::build(b, loc, args, c,
                                               c.schedule.sectionMiB << 20);
    keyStart = place.keyStart;
    kvHead = place.kvHead;
    batch = place.batch;
    group = arith::DivUIOp::create(b, loc, args.index(b, "q_heads"),
                                   args.index(b, "kv_heads"));
    Value smem = sharedMemoryBase(b, module, loc, plan.bytes);
    base = sharedWindowAddress(b, loc, smem);
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
                 {plan.queryStages, plan.keyPanels, c.blockM, kPanelElements}, e);
    gradOut = view(plan.gradOutOffset,
                   {plan.gradOutStages, plan.valuePanels, c.blockM, kPanelElements}, e);
    probs = view(plan.probsOffset, {plan.probsPanels, c.blockM, kPanelElements}, e);
    gradScores =
        view(plan.gradScoresOffset, {plan.probsPanels, c.blockM, kPanelElements}, e);
    int64_t gradQueryParts = plan.gradQueryParts;
    int64_t keyPartPanels = plan.keyPanels / gradQueryParts;
    for (int64_t part = 0; part < gradQueryParts; ++part)
      keyParts.push_back(view(part * keyPartPanels * c.blockN * kPanelRowBytes,
                              {keyPartPanels, c.blockN, kPanelElements}, e));
    for (int64_t buffer = 0; buffer < plan.stagingStages; ++buffer)
      staging.push_back(view(plan.stagingOffset + buffer * plan.stagingBufferBytes,
                             {stagingPartPanels(), c.blockM, 32}, b.getF32Type()));
    // After kv_full, a (full, empty) pair per stage of each ring.
    auto pairs = [&](int64_t first, int64_t fullArrivals, int64_t emptyArrivals) {
      int64_t at = plan.barrierOffset + first;
      return std::pair{RingBarriers{at, 16, fullArrivals},
                       RingBarriers{at + 8, 16, emptyArrivals}};
    };
    auto [queryFull, queryEmpty] = pairs(8, 1, consumerThreads());
    queryRing = TmaRing(base, plan.queryStages, plan.queryOffset, plan.queryStageBytes,
                        queryFull, queryEmpty);
    auto [gradOutFull, gradOutEmpty] =
        plan.gradOutRing ? pairs(8 + 16 * plan.queryStages, 1, consumerThreads())
                         : std::pair{queryFull, queryEmpty};
    gradOutSlots = TmaRing(base, plan.gradOutStages, plan.gradOutOffset,
                           plan.gradOutStageBytes, gradOutFull, gradOutEmpty);
    auto [stagingFull, stagingEmpty] = pairs(gradQueryBarriersOffset(), consumerThreads(), 1);
    stagingRing = TmaRing(base, plan.stagingStages, plan.stagingOffset,
                          plan.stagingBufferBytes, stagingFull, stagingEmpty);
    // Writer 1's dq_full barriers follow every other barrier (two writers
    // at most: the plan counts one extra set).
    RingBarriers secondWriterFull{
        plan.barrierOffset + gradQueryBarriersOffset() + 16 * plan.stagingStages, 8,
        consumerThreads()};
    secondWriterStaging = TmaRing(base, plan.stagingStages, plan.stagingOffset,
                                  plan.stagingBufferBytes, secondWriterFull, stagingEmpty);
  }

  int64_t stagingPartPanels() const { return plan.stagingPanels / plan.gradQueryParts; }

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
  /// Where the dq_full / dq_empty pairs start, bytes into the barriers
  /// (after kv_full and the Q and dO rings' pairs).
  int64_t gradQueryBarriersOffset() const {
    int64_t rings = plan.queryStages + (plan.gradOutRing ? plan.gradOutStages : 0);
    return 8 + 16 * rings;
  }
  /// dq_full of staging buffer `stage` for the writer of step `step` (an
  /// index): writer step mod plan.gradQueryWriters; writer 0's is
  /// gradQueryBarrier's, writer 1's follow every other barrier (two
  /// writers at most: the plan counts one extra set).
  Value gradQueryFull(OpBuilder &b, Value stage, Value step) const {
    Value shared = stagingRing.fullBarrier(b, loc, stage);
    if (plan.gradQueryWriters == 1)
      return shared;
    Value own = secondWriterStaging.fullBarrier(b, loc, stage);
    Value writer = arith::RemUIOp::create(b, loc, step, idx(b, plan.gradQueryWriters));
    Value first0 = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, writer, idx(b, 0));
    return arith::SelectOp::create(b, loc, first0, shared, own);
  }
  /// The staging ring's position of part `part` of the step-th dQ_i.
  RingPosition stagingPosition(OpBuilder &b, Value step, int64_t part) const {
    Value n = step;
    if (plan.gradQueryParts > 1)
      n = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, step, idx(b, plan.gradQueryParts)),
          idx(b, part));
    return stagingRing.position(b, loc, n);
  }
  /// Staging buffer `stage` (an index) as the fragment store's target.
  Value stagingBuffer(OpBuilder &b, Value stage) const {
    if (staging.size() == 1)
      return staging.front();
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, stage, idx(b, 0));
    return arith::SelectOp::create(b, loc, first, staging[0], staging[1]);
  }
  /// Shared buffer `buffer` (behind `stage` if non-null) as an operand tile.
  Value tile(OpBuilder &b, Value buffer, Value stage, int64_t rows,
             int64_t width) const {
    auto type = RankedTensorType::get(
        {rows, width}, c.elementType,
        TmaSharedLayoutAttr::get(b.getContext(), kPanelRowBytes,
                                 /*keyMajor=*/false));
    return SharedTileOp::create(b, loc, type, buffer, stage);
  }
  /// Runs `body` in thread 0 (a consumer).
  void inFirstThread(OpBuilder &b, function_ref<void(OpBuilder &)> body) const {
    mlir::fa::inFirstThread(b, loc, threadId, body);
  }
  /// The dQ writer's part of a step, for part `part` of dQ_i: staged in
  /// buffer `stage` and fenced for the async proxy by the consumers, added
  /// into dq_acc by TMA reduce-adds, one per 32-column panel (rows past M
  /// are out of the map's bounds and skipped); the buffer is released once
  /// they have read it. Built deterministic and launched so, the writer
  /// first waits for this KV block's turn at the Q block (GradQueryTurn,
  /// built into `turn` at the first part); after the first part it passes
  /// on the turn of the member's previous Q block (if `afterFirst`) once
  /// that block's reduce-adds have completed (passTurn).
  void reduceStagedPart(OpBuilder &b, const GridCoords &at, Value stage, int64_t part,
                        std::optional<GradQueryTurn> &turn, Value afterFirst) const {
    auto whenDeterministic = [&](OpBuilder &ib, function_ref<void(OpBuilder &)> body) {
      if (turn)
        turn->whenEnabled(ib, loc, body);
    };
    if (part == 0 && c.deterministic) {
      turn = GradQueryTurn::build(b, loc, args, c, at, keyStart);
      whenDeterministic(b, [&](OpBuilder &wb) {
        turn->await(wb, loc);
        fenceProxyAsyncAll(wb, loc);
      });
    }
    int64_t partPanels = stagingPartPanels();
    Value stagingBase = stagingRing.slot(b, loc, stage);
    for (int64_t panel = 0; panel < partPanels; ++panel)
      tmaReduceAdd(b, loc,
                   arith::AddIOp::create(b, loc, stagingBase,
                                         i32(b, panel * c.blockM * kPanelRowBytes)),
                   args["dq_acc_tmap"],
                   {i32(b, 32 * (part * partPanels + panel)), toI32(b, at.queryStart),
                    toI32(b, at.head), toI32(b, batch)});
    bulkCommit(b, loc);
    bulkWait(b, loc, 0, /*readOnly=*/true);
    stagingRing.release(b, loc, stage);
    if (plan.gradQueryWriters > 1) {
      // Another writer adds the next step: this one passes its own turn
      // as soon as its additions complete.
      if (part == plan.gradQueryParts - 1)
        whenDeterministic(b, [&](OpBuilder &pb) { passTurn(pb, *turn, 0); });
      return;
    }
    if (part != 0)
      return;
    // After the first part: the only bulk group younger than the previous
    // Q block's is this one's.
    whenDeterministic(b, [&](OpBuilder &pb) {
      buildIf(pb, loc, afterFirst, [&](OpBuilder &ib) {
        passTurn(ib, turn->before(ib, loc, c.blockM), /*inFlight=*/1);
      });
    });
  }
  /// Passes `turn` on once the bulk groups before the last `inFlight` have
  /// completed (the additions it orders).
  ///
  /// The writer passes a Q block's turn only after the first reduce-adds of
  /// its next Q block are issued, so that it does not wait for its own
  /// additions to complete (about as long as a step at D128: waiting, the
  /// deterministic writer falls behind the consumers). The next KV block
  /// sees the turn up to a step later, but it arrives at this Q block steps
  /// after this one anyway (BackwardOrder.cpp); at D256, two parts a step,
  /// after the whole next step it waits. No deadlock: a block only waits on
  /// blocks ranked before it, at every Q block alike.
  void passTurn(OpBuilder &b, const GradQueryTurn &turn, int64_t inFlight) const {
    bulkWait(b, loc, inFlight, /*readOnly=*/false);
    fenceProxyAsyncAll(b, loc);
    turn.pass(b, loc);
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
  /// Runs `body(step, i)` for member `m`'s Q blocks i that see K_j, step =
  /// n + i counting the block's Q blocks over the group (the rings'
  /// position); carries `init` through. Every role walks the steps so.
  FailureOr<SmallVector<Value>>
  forEachQueryBlock(OpBuilder &b, const Member &m, Value n, ValueRange init,
                    function_ref<FailureOr<SmallVector<Value>>(OpBuilder &, Value step,
                                                               Value i, ValueRange)>
                        body) const {
    return forQueryBlocks(b, n, idx(b, 0), m.blocks, init, body);
  }
  /// forEachQueryBlock over the member's Q blocks [from, to) only.
  FailureOr<SmallVector<Value>>
  forQueryBlocks(OpBuilder &b, Value n, Value from, Value to, ValueRange init,
                 function_ref<FailureOr<SmallVector<Value>>(OpBuilder &, Value step,
                                                            Value i, ValueRange)>
                     body) const {
    LogicalResult result = success();
    auto loop = scf::ForOp::create(
        b, loc, from, to, idx(b, 1), init,
        [&](OpBuilder &lb, Location, Value i, ValueRange values) {
          FailureOr<SmallVector<Value>> out =
              body(lb, arith::AddIOp::create(lb, loc, n, i), i, values);
          if (failed(out))
            result = failure();
          scf::YieldOp::create(lb, loc, succeeded(out) ? ValueRange(*out) : values);
        });
    if (failed(result))
      return failure();
    return SmallVector<Value>(loop.getResults());
  }
  /// Member `m`'s Q blocks (indices among its visible ones) that see every
  /// key of K_j, so need no mask: [first, last) (buildUnmaskedQueryRange).
  std::pair<Value, Value> unmaskedQueryBlocks(OpBuilder &b, const Member &m) const {
    GridCoords g = coords(b, m.head);
    auto [beginRow, endRow] = buildUnmaskedQueryRange(
        b, loc, c.mask, keyStart, c.blockN, g.queryLen, g.keyLen);
    // Q block i holds rows [m.begin + i·block_m, m.begin + (i + 1)·block_m).
    Value blockM = idx(b, c.blockM);
    auto clamp = [&](Value v, Value lo) {
      return arith::MinSIOp::create(b, loc, arith::MaxSIOp::create(b, loc, v, lo),
                                    m.blocks);
    };
    Value first = clamp(arith::CeilDivSIOp::create(
                            b, loc, arith::SubIOp::create(b, loc, beginRow, m.begin),
                            blockM),
                        idx(b, 0));
    Value last = m.blocks;
    if (endRow)
      last = clamp(arith::FloorDivSIOp::create(
                       b, loc, arith::SubIOp::create(b, loc, endRow, m.begin), blockM),
                   first);
    return {first, last};
  }
  /// The first query row of member `m`'s i-th visible Q block.
  Value queryRowOf(OpBuilder &b, const Member &m, Value i) const {
    return arith::AddIOp::create(b, loc, m.begin,
                                 arith::MulIOp::create(b, loc, i, idx(b, c.blockM)));
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
  auto box = [&](int64_t panels, int64_t rows, Value row, Value head) {
    return TmaBox{panels, rows, kPanelElements, row, head, batch};
  };
  Value kvBar = block.keyValueFull(b);
  Value keyRow = block.toI32(b, block.keyStart);
  Value kvHead = block.toI32(b, block.kvHead);
  arriveExpectTx(b, loc, kvBar, p.keyBytes + p.valueBytes);
  copyBox(b, loc, block.address(b, 0), block.args["k_tmap"],
          box(p.keyPanels, c.blockN, keyRow, kvHead), kvBar);
  copyBox(b, loc, block.address(b, p.valueOffset), block.args["v_tmap"],
          box(p.valuePanels, c.blockN, keyRow, kvHead), kvBar);
  (void)block.forEachMember(
      b, {}, [&](OpBuilder &mb, const BackwardBlock::Member &m, Value n, ValueRange)
          -> FailureOr<SmallVector<Value>> {
        Value head = block.toI32(mb, m.head);
        return block.forEachQueryBlock(
            mb, m, n, {},
            [&](OpBuilder &lb, Value step, Value i, ValueRange)
                -> FailureOr<SmallVector<Value>> {
              const TmaRing &queryRing = block.queryRing;
              auto [stage, parity] = queryRing.position(lb, loc, step);
              queryRing.acquire(lb, loc, stage, TmaRing::releasedParity(lb, loc, parity));
              // dO_i shares the expect unless it has a ring of its own.
              Value bar = queryRing.commit(
                  lb, loc, stage,
                  p.queryStageBytes + (p.gradOutRing ? 0 : p.gradOutStageBytes));
              Value row = block.toI32(lb, block.queryRowOf(lb, m, i));
              queryRing.copy(lb, loc, stage, block.args["q_tmap"],
                             box(p.keyPanels, c.blockM, row, head), bar);
              Value gradOutStage = stage;
              if (p.gradOutRing) {
                // dO_i on its own ring, released before the step ends.
                const TmaRing &gradOutRing = block.gradOutSlots;
                auto [doStage, doParity] = gradOutRing.position(lb, loc, step);
                gradOutRing.acquire(lb, loc, doStage,
                                    TmaRing::releasedParity(lb, loc, doParity));
                bar = gradOutRing.commit(lb, loc, doStage, p.gradOutStageBytes);
                gradOutStage = doStage;
              }
              block.gradOutSlots.copy(lb, loc, gradOutStage, block.args["do_tmap"],
                                      box(p.valuePanels, c.blockM, row, head), bar);
              return SmallVector<Value>();
            });
      });
}

/// The dQ writer (a producer thread of its own warp): for every step, in
/// the consumers' order, waits for each part of dQ_i in its staging buffer
/// and adds it into dq_acc (BackwardBlock::reduceStagedPart), so that neither the
/// reduce-adds nor the deterministic mode's turns hold up the consumers;
/// its last reduce-adds complete before the block ends.
void buildGradQueryWriter(OpBuilder &b, const BackwardBlock &block, int64_t writer) {
  Location loc = block.loc;
  int64_t writers = block.plan.gradQueryWriters;
  (void)block.forEachMember(
      b, {}, [&](OpBuilder &mb, const BackwardBlock::Member &m, Value n, ValueRange)
          -> FailureOr<SmallVector<Value>> {
        GridCoords grid = block.coords(mb, m.head);
        auto addStep = [&](OpBuilder &lb, Value step, Value i) {
          GridCoords at = grid;
          std::optional<GradQueryTurn> turn;
          Value afterFirst =
              arith::CmpIOp::create(lb, loc, arith::CmpIPredicate::ne, i, block.idx(lb, 0));
          // This writer's steps alone use its dq_full barriers: their
          // phases count its own steps.
          Value own = writers == 1 ? step
                                   : arith::DivUIOp::create(lb, loc, step,
                                                            block.idx(lb, writers));
          for (int64_t part = 0; part < block.plan.gradQueryParts; ++part) {
            auto [stage, parity] = block.stagingPosition(lb, own, part);
            waitParity(lb, loc, block.gradQueryFull(lb, stage, step), parity);
            if (part == 0)
              at.queryStart = block.queryRowOf(lb, m, i);
            block.reduceStagedPart(lb, at, stage, part, turn, afterFirst);
          }
        };
        FailureOr<SmallVector<Value>> done = block.forEachQueryBlock(
            mb, m, n, {},
            [&](OpBuilder &lb, Value step, Value i, ValueRange)
                -> FailureOr<SmallVector<Value>> {
              if (writers == 1) {
                addStep(lb, step, i);
                return SmallVector<Value>();
              }
              Value mine = arith::CmpIOp::create(
                  lb, loc, arith::CmpIPredicate::eq,
                  arith::RemUIOp::create(lb, loc, step, block.idx(lb, writers)),
                  block.idx(lb, writer));
              buildIf(lb, loc, mine, [&](OpBuilder &ib) { addStep(ib, step, i); });
              return SmallVector<Value>();
            });
        // The member's last Q block's turn, passed once all is complete
        // (several writers pass each of theirs at once).
        if (block.c.deterministic && writers == 1) {
          auto [turn, ran] = GradQueryTurn::buildLast(mb, loc, block.args, block.c, grid,
                                                      block.keyStart, m.begin, m.blocks);
          turn.whenEnabled(mb, loc, [&](OpBuilder &eb) {
            buildIf(eb, loc, ran, [&](OpBuilder &pb) { block.passTurn(pb, turn, 0); });
          });
        }
        return done;
      });
  bulkWait(b, loc, 0, /*readOnly=*/false);
}

/// dO_i's own ring in a step (BackwardSharedMemoryPlan::gradOutRing):
/// `acquire` is emitted before the first wgmma that reads `buffer`,
/// `release` once the last one has completed. Empty: dO_i shares Q_i's.
struct GradOutRing {
  Value buffer;
  std::function<void(OpBuilder &)> acquire, release;
};

/// Two MMAs in flight at once: the step as BackwardMath cloned it waits
/// for each wgmma before the next issues. S = QKᵀ and dP = dO·Vᵀ are
/// independent: dP issues right after S, S is awaited with dP in flight
/// (wait_group 1) and dP only before its first use, so dP runs under the
/// mask and exp of S. dV += Pᵀ·dO and dK += dSᵀ·Q, the step's last, are
/// awaited together, at the end of `step` (not yet terminated); `yielded`
/// (the step's results) then reads the waits. A dQ_i that reads dS from
/// shared memory issues before them and is awaited alone. With dO_i on a
/// ring of its own (`ring`), its wait comes before dP's wgmma and its
/// release after the wait that completes dV (the second dQ_i part's).
LogicalResult overlapStepMatmuls(Block *step, SmallVector<Value> &yielded,
                                 const GradOutRing &ring) {
  QKScoresOp scores;
  TileMatmulOp gradProbs;
  SmallVector<TileMatmulOp> transposed, gradQuery; // (dQ_i: one or its parts)
  for (Operation &op : *step) {
    if (auto s = dyn_cast<QKScoresOp>(op))
      scores = s;
    else if (auto m = dyn_cast<TileMatmulOp>(op)) {
      if (m.getTransposeB())
        gradProbs = m;
      else if (m.getTransposeA())
        transposed.push_back(m);
      else
        gradQuery.push_back(m);
    }
  }
  MmaWaitOp gradValueDone; // the first wait after which dV has completed
  if (scores && gradProbs && scores->isBeforeInBlock(gradProbs)) {
    Operation *firstUseOfProbs = firstUser(gradProbs);
    hoistAfter(gradProbs, scores);
    awaitAt(scores, gradProbs->getNextNode(), 1);
    awaitAt(gradProbs, firstUseOfProbs, 0);
  }
  // dQ_i read from the shared dS comes after dV's and dK's wgmmas: issue
  // it first and await it alone (wait_group 2), so that its staging, the
  // barrier and the reduce-add run under them.
  if (gradQuery.size() == 1 && transposed.size() == 2 &&
      transposed.front()->isBeforeInBlock(gradQuery[0])) {
    Operation *firstUse = firstUser(gradQuery[0]);
    gradQuery[0]->moveBefore(transposed.front());
    awaitAt(gradQuery[0], firstUse, 2);
  }
  // In two parts, each issues before one of them and is awaited with it
  // in flight (wait_group 1): dQ_i's first part, dV, its staging under
  // dV's wgmmas, the second part, dK, its staging under dK's. The second
  // part issues after the first is staged, so only one part's
  // accumulators are live.
  if (gradQuery.size() == 2 && transposed.size() == 2 &&
      transposed.back()->isBeforeInBlock(gradQuery[0])) {
    Operation *firstUses[] = {firstUser(gradQuery[0]), firstUser(gradQuery[1])};
    moveBeforeWithOperands(gradQuery[0], transposed.front());
    transposed.back()->moveAfter(gradQuery[1]);
    for (auto [mma, firstUse] : llvm::zip(gradQuery, firstUses))
      gradValueDone = awaitAt(mma, firstUse, 1);
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
      if (!gradValueDone)
        gradValueDone = wait;
    }
  }
  if (!ring.buffer)
    return success();
  // dP and dV read dO_i; dV is the first transposed matmul (dV, dK), and
  // completes by the second dQ_i part's wait or the step's first wait.
  Operation *firstRead = nullptr;
  for (Operation &op : *step)
    if (auto mma = dyn_cast<TileMatmulOp>(op); mma && readsBuffer(mma, ring.buffer)) {
      firstRead = mma;
      break;
    }
  if (!firstRead || !gradValueDone || transposed.empty() ||
      !readsBuffer(transposed.front(), ring.buffer) ||
      (gradProbs && !readsBuffer(gradProbs, ring.buffer)))
    return emitError(step->front().getLoc(),
                     "internal: dO's ring needs dP and dV (the first transposed "
                     "matmul) reading dO_i, dV completed by a wait");
  OpBuilder b(firstRead);
  ring.acquire(b);
  b.setInsertionPointAfter(gradValueDone);
  ring.release(b);
  return success();
}

/// A Q block's LSE and D rows, loaded ahead of its step.
struct QueryRows {
  Value lse, rowDot;
};

/// One Q block's step on the consumers: (dK_j, dV_j) updated.
FailureOr<SmallVector<Value>>
emitConsumerStep(OpBuilder &b, const BackwardBlock &block, BackwardMath &math,
                 const AttentionBackward &backward, const GridCoords &at,
                 QueryRows rows, Value step, Value stage, Value gradOutStage,
                 ValueRange gradients) {
  const AttentionKernelConfig &c = block.c;
  Location loc = block.loc;
  BackwardMath::Sources sources;
  sources.tile = [&](OpBuilder &tb, Value l2Tile) -> Value {
    if (l2Tile == backward.queryTile)
      return block.tile(tb, block.query, stage, c.blockM, c.headDim);
    if (l2Tile == backward.gradOutTile)
      return block.tile(tb, block.gradOut, gradOutStage, c.blockM, c.valueDim);
    if (l2Tile == backward.keyTile)
      return block.tile(tb, block.key, Value(), c.blockN, c.headDim);
    if (l2Tile == backward.valueTile)
      return block.tile(tb, block.value, Value(), c.blockN, c.valueDim);
    return l2Tile == backward.lseRows ? rows.lse : rows.rowDot;
  };
  sources.transposedOperand = [&](OpBuilder &tb, TileMatmulOp matmul,
                                  Value fragment) -> Value {
    Value buffer = matmul == backward.gradValue ? block.probs : block.gradScores;
    StoreSharedOp::create(tb, loc, fragment, buffer);
    return block.tile(tb, buffer, Value(), c.blockM, c.blockN);
  };
  // With dS's columns split over the warpgroups, dQ_i = dS·K_j reads dS
  // from shared memory after the barrier, and its staging needs one more.
  sources.gradQueryFromShared = backwardColumnGroups(c).queryRows > 1;
  // dQ_i to the dQ writer: once the buffer is free, staged, fenced for the
  // async proxy (its TMA reduce-adds), and dq_full arrived at by every
  // consumer thread; in parts, each part so in a buffer of its own
  // staging-ring position (stagingPosition).
  sources.gradQueryParts = block.plan.gradQueryParts;
  sources.keyColumns = [&](OpBuilder &tb, int64_t part) {
    return block.tile(tb, block.keyParts[part], Value(), c.blockN,
                      c.headDim / block.plan.gradQueryParts);
  };
  // Each part in a buffer of its own position in the staging ring.
  RingPosition staged = block.stagingPosition(b, step, 0);
  sources.accumulateGradQuery = [&](OpBuilder &tb, Value gradQuery, int64_t part) {
    auto [buffer, parity] = part == 0 ? staged : block.stagingPosition(tb, step, part);
    block.stagingRing.acquire(tb, loc, buffer, TmaRing::releasedParity(tb, loc, parity));
    StoreSharedOp::create(tb, loc, gradQuery, block.stagingBuffer(tb, buffer));
    fenceProxyAsync(tb, loc);
    arrive(tb, loc, block.gradQueryFull(tb, buffer, step));
  };
  sources.sharedWritten = [&](OpBuilder &tb) {
    // The generic proxy's writes of P and dS, seen by the async proxy
    // (wgmma).
    fenceProxyAsync(tb, loc);
    block.consumerBarrier(tb);
  };
  return math.emitBody(b, at, block.keyStart, gradients, sources);
}

/// The consumers: every step of every member, then dK_j and dV_j stored.
LogicalResult buildConsumers(OpBuilder &b, const BackwardBlock &block,
                             const AttentionBackward &backward) {
  const AttentionKernelConfig &c = block.c;
  Location loc = block.loc;
  // wgmma's accumulator is mma.sync's per warp: one m16 tile per warp.
  // Key rows: warpgroup w owns keys 64w.., or, with 64 keys over two
  // warpgroups, all 64 and its share of dK's and dV's head dims; query
  // rows likewise: its 64 rows, or all 64 and its share of the columns
  // (S's keys, dQ's head dims).
  auto layout = [&](int64_t columnGroups) {
    return FragmentLayoutAttr::get(b.getContext(), c.warps, /*mTiles=*/1,
                                   columnGroups);
  };
  BackwardColumnGroups groups = backwardColumnGroups(c);
  BackwardMath math(backward, layout(groups.queryRows), layout(groups.keyRows));
  math.setCaptureValues(block.args.captureValues(b, loc, backward.captures));
  waitParity(b, loc, block.keyValueFull(b), block.i32(b, 0));
  FailureOr<SmallVector<Value>> gradients = block.forEachMember(
      b, math.initialGradients(b, loc),
      [&](OpBuilder &mb, const BackwardBlock::Member &m, Value n,
          ValueRange carried) -> FailureOr<SmallVector<Value>> {
        GridCoords grid = block.coords(mb, m.head);
        math.loadHeadScoreInputs(mb, loc, grid, block.args);
        auto stepBody = [&](OpBuilder &lb, Value step, Value i, ValueRange values)
            -> FailureOr<SmallVector<Value>> {
              GridCoords at = grid;
              at.queryStart = block.queryRowOf(lb, m, i);
              const BackwardSharedMemoryPlan &plan = block.plan;
              auto [stage, parity] = block.queryRing.position(lb, loc, step);
              block.queryRing.wait(lb, loc, stage, parity);
              auto [gradOutStage, gradOutParity] =
                  plan.gradOutRing ? block.gradOutSlots.position(lb, loc, step)
                                   : RingPosition{stage, parity};
              block.consumerBarrier(lb);
              // The LSE and D rows from global memory before S's and dP's
              // wgmmas issue: issued at their first use (P = exp(S - LSE),
              // after S's wgmmas), their L2 latency stalls every step.
              QueryRows rows{math.loadQueryRows(lb, loc, block.args, at, backward.lseRows),
                             math.loadQueryRows(lb, loc, block.args, at,
                                                backward.rowDotRows)};
              FailureOr<SmallVector<Value>> results =
                  emitConsumerStep(lb, block, math, backward, at, rows, step, stage,
                                   gradOutStage, values);
              // dO_i on a ring of its own: awaited before its first wgmma,
              // released once dV_j's has completed.
              GradOutRing ring;
              if (plan.gradOutRing) {
                ring.buffer = block.gradOut;
                ring.acquire = [&](OpBuilder &rb) {
                  block.gradOutSlots.wait(rb, loc, gradOutStage, gradOutParity);
                };
                ring.release = [&](OpBuilder &rb) {
                  block.gradOutSlots.release(rb, loc, gradOutStage);
                };
              }
              if (succeeded(results) &&
                  failed(overlapStepMatmuls(lb.getInsertionBlock(), *results, ring)))
                return failure();
              // Every wgmma reading Q_i and dO_i has been waited for.
              block.queryRing.release(lb, loc, stage);
              return results;
            };
        if (!c.schedule.splitsUnmaskedQueryBlocks)
          return block.forEachQueryBlock(mb, m, n, carried, stepBody);
        // The Q blocks that see all of K_j in a loop of their own, without
        // the mask's branch between S's and dP's wgmma issue and their
        // waits (splits_unmasked_query_blocks).
        auto [first, last] = block.unmaskedQueryBlocks(mb, m);
        FailureOr<SmallVector<Value>> values = block.forQueryBlocks(
            mb, n, block.idx(mb, 0), first, carried, stepBody);
        if (failed(values))
          return failure();
        math.setTilesUnmasked(true);
        values = block.forQueryBlocks(mb, n, first, last, *values, stepBody);
        math.setTilesUnmasked(false);
        if (failed(values))
          return failure();
        return block.forQueryBlocks(mb, n, last, m.blocks, *values, stepBody);
      });
  if (failed(gradients))
    return failure();
  // dK_j, dV_j in the input type, by the rows that exist.
  GridCoords kv = block.coords(b, Value());
  SmallVector<Value> stored = math.finalGradients(b, loc, *gradients);
  static constexpr StringLiteral kGradients[] = {"dk", "dv"};
  for (auto [i, name] : llvm::enumerate(kGradients)) {
    Value grad = stored[i];
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
    block.queryRing.init(then, loc);
    if (block.plan.gradOutRing)
      block.gradOutSlots.init(then, loc);
    for (int64_t stage = 0; stage < block.plan.stagingStages; ++stage) {
      Value st = block.idx(then, stage);
      block.stagingRing.init(then, loc, st);
      if (block.plan.gradQueryWriters > 1)
        block.secondWriterStaging.initFull(then, loc, st);
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
                                      /*tensorMaps=*/true,
                                      captureTypesOf(c.captures)),
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
    BackwardOccupancy occupancy = backwardOccupancy(c);
    RegisterBudget budget = occupancy.budget;
    if (failed(checkRegisterBudget(loc, budget, block.consumerThreads(),
                                   occupancy.blocksPerSM)))
      return failure();
    setMaxRegisters(b, loc, budget.producer, /*increase=*/false);
    Value issuer = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                         block.threadId,
                                         block.idx(b, block.consumerThreads()));
    // The copies' issuer is the producer warpgroup's first thread, the dQ
    // writers the first of its next warps (each a warp of its own: none
    // waits on another's spins).
    auto roleOf = scf::IfOp::create(b, loc, issuer, /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard producerGuard(b);
      b.setInsertionPointToStart(roleOf.thenBlock());
      buildProducer(b, block);
      b.setInsertionPointToStart(roleOf.elseBlock());
      for (int64_t w = 0; w < block.plan.gradQueryWriters; ++w) {
        Value writer = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::eq, block.threadId,
            block.idx(b, block.consumerThreads() + 32 * (w + 1)));
        scf::IfOp::create(b, loc, writer, [&](OpBuilder &then, Location) {
          buildGradQueryWriter(then, block, w);
          scf::YieldOp::create(then, loc);
        });
      }
    }
    b.setInsertionPointToStart(roles.elseBlock());
    setMaxRegisters(b, loc, budget.consumer, /*increase=*/true);
    if (failed(buildConsumers(b, block, backward)))
      return failure();
  }
  gpu::ReturnOp::create(b, loc);
  return success();
}
