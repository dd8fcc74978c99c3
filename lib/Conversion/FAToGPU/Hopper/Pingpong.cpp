//===- Pingpong.cpp - consumer warpgroups issuing their MMAs in turn ------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "Pingpong.h"

#include "HopperPtx.h"
#include "ScheduleValues.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::hopper;

static_assert(Pingpong::kThreads == 2 * kWarpgroupThreads,
              "a turn's barrier: the syncing and the arriving warpgroup");

Pingpong::Pingpong(OpBuilder &b, Location loc, int64_t groups,
                   int64_t firstBarrier)
    : groups(groups), firstBarrier(firstBarrier) {
  if (groups < 2)
    return;
  Value group = warpgroupIndex(b, loc);
  ownBarrier = arith::AddIOp::create(b, loc, group, i32Constant(b, loc, firstBarrier));
  // The successor's: (group + 1) mod groups, + firstBarrier.
  Value next = firstBarrier == 1
                   ? ownBarrier
                   : Value(arith::AddIOp::create(b, loc, group, i32Constant(b, loc, 1)));
  nextBarrier = arith::AddIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, next, i32Constant(b, loc, groups)),
      i32Constant(b, loc, firstBarrier));
  isFirstGroup = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, group,
                                       i32Constant(b, loc, 0));
  isLastGroup = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, group,
                                      i32Constant(b, loc, groups - 1));
}

void Pingpong::start(OpBuilder &b, Location loc) const {
  if (enabled())
    namedBarrierArrive(b, loc, i32Constant(b, loc, firstBarrier), kThreads,
                       isLastGroup);
}

void Pingpong::drain(OpBuilder &b, Location loc) const {
  if (!enabled())
    return;
  scf::IfOp::create(b, loc, isFirstGroup, [&](OpBuilder &then, Location) {
    namedBarrierSync(then, loc, i32Constant(then, loc, firstBarrier), kThreads);
    scf::YieldOp::create(then, loc);
  });
}

void Pingpong::beforeIssue(OpBuilder &b, Location loc) const {
  if (enabled())
    namedBarrierSync(b, loc, ownBarrier, kThreads);
}

void Pingpong::afterIssue(OpBuilder &b, Location loc) const {
  if (enabled())
    namedBarrierArrive(b, loc, nextBarrier, kThreads,
                       arith::ConstantIntOp::create(b, loc, 1, 1));
}
