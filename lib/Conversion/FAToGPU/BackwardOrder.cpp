//===- BackwardOrder.cpp - the deterministic mode's turns ------------------===//
//
// Part of fa-mlir.
//
// Built deterministic (AttentionKernelConfig::deterministic) and launched
// with `deterministic`, the KV blocks that see Q block i add their share of
// dQ_i in increasing order: the block of KV block j waits until the Q
// block's counter (dq_semaphore, [B, Hq, ceil(M / 16)], zeroed per launch:
// KernelAbi.h) equals j minus the first KV block Q block i sees, adds, and
// increments it. Blocks with smaller j are launched first and never wait on
// larger ones, so the waits cannot deadlock. Each chip's schedule decides
// which threads add and how it knows they are done.
//
// The blocks resident together should rarely wait on each other: KV block
// j's first turn comes only after blocks 0 .. j-1 have each added theirs, a
// chain of hand-offs (a reduce's completion, a fence, an atomic) that the
// blocks started together pay at their first Q block. With KV blocks fastest
// in launch order a head's blocks all start together, in every wave, and
// the chain cost 1.45-2.5x (docs/perf-notes.md); with the (KV head, batch)
// pairs fastest a wave holds one or two KV blocks per head, whose
// predecessors ran in earlier waves, but every head's Q, dO and dq_acc
// rows are in flight at once, far past L2 at long sequences. So, without
// a mask, the pairs are fastest within sections of as many pairs as fit
// ~32 MB: a wave holds a few KV blocks of each pair of its section, the
// section's rows stay in L2 (under a causal or window mask the sections
// bring the chain back: every KV block's first turn waits for its
// predecessors to reach the diagonal). The order stays the launch order,
// so the waits still cannot deadlock.
//
//===----------------------------------------------------------------------===//

#include "fa/Conversion/FAToGPU/BackwardKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::fa;

/// Pairs per section: as many (KV head, batch) pairs as keep their Q, dO
/// and f32 dq_acc rows (the query heads of the group: M·(2D + 2Dv + 4D)
/// bytes each) within kSectionBytes of L2, at least one, at most all.
static Value sectionPairs(OpBuilder &b, Location loc, const KernelArgs &args,
                          const AttentionKernelConfig &c, Value pairs) {
  constexpr int64_t kSectionBytes = 32 << 20;
  auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  Value group = arith::DivUIOp::create(b, loc, args.index(b, "q_heads"),
                                       args.index(b, "kv_heads"));
  Value pairBytes = arith::MulIOp::create(
      b, loc, arith::MulIOp::create(b, loc, group, args.index(b, "q_len")),
      cst(6 * c.headDim + 2 * c.valueDim));
  Value fit = arith::DivUIOp::create(
      b, loc, cst(kSectionBytes), arith::MaxUIOp::create(b, loc, pairBytes, cst(1)));
  return arith::MinUIOp::create(b, loc, arith::MaxUIOp::create(b, loc, fit, cst(1)),
                                pairs);
}

KeyBlockPlace KeyBlockPlace::build(OpBuilder &b, Location loc,
                                   const KernelArgs &args,
                                   const AttentionKernelConfig &c) {
  auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  auto blockId = [&](gpu::Dimension d) { return gpu::BlockIdOp::create(b, loc, d); };
  auto gridDim = [&](gpu::Dimension d) { return gpu::GridDimOp::create(b, loc, d); };
  KeyBlockPlace p;
  if (!c.deterministic) {
    p.keyStart = arith::MulIOp::create(b, loc, blockId(gpu::Dimension::x),
                                       cst(c.blockN));
    p.kvHead = blockId(gpu::Dimension::y);
    p.batch = blockId(gpu::Dimension::z);
    return p;
  }
  // The launch's linear block index x + X (y + Y z), read with the (KV
  // head, batch) pairs fastest, without a mask in sections of S pairs (the
  // last may hold fewer): in 32 bits, as the grid's size is.
  Type i32 = b.getI32Type();
  auto narrow = [&](Value v) { return arith::IndexCastUIOp::create(b, loc, i32, v); };
  auto widen = [&](Value v) {
    return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), v);
  };
  Value keyBlocks = narrow(gridDim(gpu::Dimension::x));
  Value heads = narrow(gridDim(gpu::Dimension::y));
  Value pairs = arith::MulIOp::create(b, loc, heads, narrow(gridDim(gpu::Dimension::z)));
  Value linear = arith::AddIOp::create(
      b, loc, narrow(blockId(gpu::Dimension::x)),
      arith::MulIOp::create(
          b, loc, keyBlocks,
          arith::AddIOp::create(
              b, loc, narrow(blockId(gpu::Dimension::y)),
              arith::MulIOp::create(b, loc, heads, narrow(blockId(gpu::Dimension::z))))));
  Value pair, keyBlock;
  if (c.mask.isMasking()) {
    // One section: under a causal or window mask, KV block j's first turn
    // waits for j hand-offs at its first visible Q block, and sections
    // bring that chain back (measured: sections of 8 took D128 causal from
    // 1.07x to 1.37x the default kernel on the H200).
    pair = arith::RemUIOp::create(b, loc, linear, pairs);
    keyBlock = widen(arith::DivUIOp::create(b, loc, linear, pairs));
  } else {
    Value perSection = narrow(sectionPairs(b, loc, args, c, widen(pairs)));
    Value sectionBlocks = arith::MulIOp::create(b, loc, perSection, keyBlocks);
    Value section = arith::DivUIOp::create(b, loc, linear, sectionBlocks);
    Value firstPair = arith::MulIOp::create(b, loc, section, perSection);
    Value size = arith::MinUIOp::create(
        b, loc, perSection, arith::SubIOp::create(b, loc, pairs, firstPair));
    Value within = arith::SubIOp::create(
        b, loc, linear, arith::MulIOp::create(b, loc, section, sectionBlocks));
    pair = arith::AddIOp::create(b, loc, firstPair,
                                 arith::RemUIOp::create(b, loc, within, size));
    keyBlock = widen(arith::DivUIOp::create(b, loc, within, size));
  }
  p.kvHead = widen(arith::RemUIOp::create(b, loc, pair, heads));
  p.batch = widen(arith::DivUIOp::create(b, loc, pair, heads));
  p.keyStart = arith::MulIOp::create(b, loc, keyBlock, cst(c.blockN));
  return p;
}

GradQueryTurn GradQueryTurn::build(OpBuilder &b, Location loc,
                                   const KernelArgs &args,
                                   const AttentionKernelConfig &c,
                                   const GridCoords &at, Value keyStart) {
  auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  GradQueryTurn turn;
  turn.semaphores = args["dq_semaphore"];
  turn.enabled = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                       args.index(b, "deterministic"), cst(0));
  // Counter (b, h, q0 / 16) of [B, Hq, ceil(M / 16)].
  Value perHead = arith::CeilDivUIOp::create(b, loc, at.queryLen, cst(16));
  Value head = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, at.batch, args.index(b, "q_heads")),
      at.head);
  turn.counter = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, head, perHead),
      arith::DivUIOp::create(b, loc, at.queryStart, cst(16)));
  Value firstKey = at.visibleKeyBlocks(b, loc, c).first;
  Value rank = arith::SubIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, keyStart, cst(c.blockN)),
      arith::DivUIOp::create(b, loc, firstKey, cst(c.blockN)));
  turn.expected = arith::IndexCastOp::create(b, loc, b.getI32Type(), rank);
  return turn;
}

void GradQueryTurn::await(OpBuilder &b, Location loc) const {
  auto zero = arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(0));
  scf::WhileOp::create(
      b, loc, TypeRange{}, ValueRange{},
      [&](OpBuilder &cb, Location, ValueRange) {
        Value now = memref::AtomicRMWOp::create(
            cb, loc, arith::AtomicRMWKind::addi, zero, semaphores,
            ValueRange{counter});
        Value waiting =
            arith::CmpIOp::create(cb, loc, arith::CmpIPredicate::ne, now, expected);
        scf::ConditionOp::create(cb, loc, waiting, ValueRange{});
      },
      [&](OpBuilder &db, Location, ValueRange) { scf::YieldOp::create(db, loc); });
  NVVM::MembarOp::create(b, loc, NVVM::MemScopeKind::GPU);
}

void GradQueryTurn::pass(OpBuilder &b, Location loc) const {
  NVVM::MembarOp::create(b, loc, NVVM::MemScopeKind::GPU);
  memref::AtomicRMWOp::create(
      b, loc, arith::AtomicRMWKind::addi,
      arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(1)), semaphores,
      ValueRange{counter});
}
