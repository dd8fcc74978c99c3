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
//===----------------------------------------------------------------------===//

#include "fa/Conversion/FAToGPU/BackwardKernel.h"
#include "fa/Dialect/FA/Utils/MaskUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::fa;

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
  Value rows = arith::MinSIOp::create(
      b, loc, cst(c.blockM), arith::SubIOp::create(b, loc, at.queryLen, at.queryStart));
  Value firstKey = buildVisibleKeyRange(b, loc, c.mask, at.queryStart, rows,
                                        at.queryLen, at.keyLen, c.blockN)
                       .first;
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
