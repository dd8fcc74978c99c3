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
// predecessors ran in earlier waves. The order stays the launch order, so
// the waits still cannot deadlock.
//
//===----------------------------------------------------------------------===//

#include "fa/Conversion/FAToGPU/BackwardKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::fa;

KeyBlockPlace KeyBlockPlace::build(OpBuilder &b, Location loc,
                                   const AttentionKernelConfig &c) {
  auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  auto blockId = [&](gpu::Dimension d) { return gpu::BlockIdOp::create(b, loc, d); };
  KeyBlockPlace p;
  if (!c.deterministic) {
    p.keyStart = arith::MulIOp::create(b, loc, blockId(gpu::Dimension::x),
                                       cst(c.blockN));
    p.kvHead = blockId(gpu::Dimension::y);
    p.batch = blockId(gpu::Dimension::z);
    return p;
  }
  Value keyBlock = blockId(gpu::Dimension::x);
  p.kvHead = blockId(gpu::Dimension::y);
  p.batch = blockId(gpu::Dimension::z);
  {
    // The launch's linear block index x + X (y + Y z), read with (y, z)
    // fastest: in 32 bits, as the grid's size is.
    Type i32 = b.getI32Type();
    auto narrow = [&](Value v) { return arith::IndexCastUIOp::create(b, loc, i32, v); };
    auto widen = [&](Value v) {
      return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), v);
    };
    Value heads = narrow(gpu::GridDimOp::create(b, loc, gpu::Dimension::y));
    Value pairs = arith::MulIOp::create(
        b, loc, heads, narrow(gpu::GridDimOp::create(b, loc, gpu::Dimension::z)));
    Value linear = arith::AddIOp::create(
        b, loc, narrow(keyBlock),
        arith::MulIOp::create(
            b, loc, narrow(gpu::GridDimOp::create(b, loc, gpu::Dimension::x)),
            arith::AddIOp::create(
                b, loc, narrow(p.kvHead),
                arith::MulIOp::create(b, loc, heads, narrow(p.batch)))));
    Value pair = arith::RemUIOp::create(b, loc, linear, pairs);
    keyBlock = widen(arith::DivUIOp::create(b, loc, linear, pairs));
    p.kvHead = widen(arith::RemUIOp::create(b, loc, pair, heads));
    p.batch = widen(arith::DivUIOp::create(b, loc, pair, heads));
  }
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
