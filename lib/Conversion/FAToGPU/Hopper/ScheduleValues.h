//===- ScheduleValues.h - the arithmetic the sm_90a parts share -*- C++ -*-===//
//
// Part of fa-mlir.
//
// The small values every part of an sm_90a schedule (TmaRing.h,
// Pingpong.h, OutputStaging.h, E4M3Transpose.h) builds: i32 constants and
// casts, shared-window addresses (32-bit, as PTX's `.shared::cta` forms
// take them) and this thread's warpgroup.
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_CONVERSION_FATOGPU_HOPPER_SCHEDULEVALUES_H
#define FA_LIB_CONVERSION_FATOGPU_HOPPER_SCHEDULEVALUES_H

#include "HopperStrategy.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace fa {
namespace hopper {

/// The i32 constant `v`.
inline Value i32Constant(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIntOp::create(b, loc, v, 32);
}

/// An index or i32 value as i32.
inline Value toI32(OpBuilder &b, Location loc, Value value) {
  assert((value.getType().isIndex() || value.getType().isInteger(32)) &&
         "an index or i32 value");
  if (value.getType().isInteger(32))
    return value;
  return arith::IndexCastOp::create(b, loc, b.getI32Type(), value);
}

/// The constant `v` of `like`'s type (index or i32).
inline Value constantLike(OpBuilder &b, Location loc, Value like, int64_t v) {
  assert((like.getType().isIndex() || like.getType().isInteger(32)) &&
         "an index or i32 value");
  if (like.getType().isIndex())
    return arith::ConstantIndexOp::create(b, loc, v);
  return i32Constant(b, loc, v);
}

/// base + bytes, plus stride · stage where `stage` (an index or i32) is
/// given: the shared-window address (i32) of a buffer `bytes` past `base`,
/// or of slot `stage` of a ring of `stride`-byte slots there.
inline Value sharedAddress(OpBuilder &b, Location loc, Value base, int64_t bytes,
                           Value stage = Value(), int64_t stride = 0) {
  Value a = arith::AddIOp::create(b, loc, base, i32Constant(b, loc, bytes));
  if (!stage)
    return a;
  return arith::AddIOp::create(
      b, loc, a,
      arith::MulIOp::create(b, loc, toI32(b, loc, stage), i32Constant(b, loc, stride)));
}

/// This thread's warpgroup (i32): threadIdx.x / 128.
inline Value warpgroupIndex(OpBuilder &b, Location loc) {
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  return toI32(b, loc,
               arith::DivUIOp::create(
                   b, loc, tid, arith::ConstantIndexOp::create(b, loc, kWarpgroupThreads)));
}

} // namespace hopper
} // namespace fa
} // namespace mlir

#endif // FA_LIB_CONVERSION_FATOGPU_HOPPER_SCHEDULEVALUES_H
