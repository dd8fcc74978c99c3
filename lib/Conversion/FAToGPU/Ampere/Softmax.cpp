//===- Softmax.cpp - masking, row reductions, the online recurrence -------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "AmpereKernelBuilder.h"

#include "fa/Dialect/FA/Utils/MaskUtils.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::ampere;

/// Butterfly over the four lanes of a row: lanes 4r..4r+3 hold its columns.
static Value rowAllReduce(AmpereKernelBuilder &kb, Value v,
                          function_ref<Value(Value, Value)> combine) {
  for (int64_t offset : {1, 2}) {
    auto shuffle = gpu::ShuffleOp::create(kb.b, kb.loc, v, kb.i32(offset),
                                          kb.i32(32), gpu::ShuffleMode::XOR);
    v = combine(v, shuffle.getShuffleResult());
  }
  return v;
}

Value AmpereKernelBuilder::rowAllReduceMax(Value v) {
  // maximumf is PTX max.NaN.f32, native; no NaN reaches it (masked scores
  // are -inf, and max(-inf, -inf) = -inf marks a row with no key yet).
  return rowAllReduce(*this, v, [&](Value x, Value y) {
    return arith::MaximumFOp::create(b, loc, x, y).getResult();
  });
}

Value AmpereKernelBuilder::rowAllReduceSum(Value v) {
  return rowAllReduce(*this, v, [&](Value x, Value y) {
    return arith::AddFOp::create(b, loc, x, y).getResult();
  });
}

Value AmpereKernelBuilder::maskScore(Value s, Value row, Value col,
                                     Value queryLen, Value keyLen) {
  Value visible = buildKeyVisible(b, loc, c.mask, row, col, queryLen, keyLen);
  return select(visible, s, f32(-std::numeric_limits<double>::infinity()));
}

Value AmpereKernelBuilder::safeMax(Value m) {
  Value minusInf = f32(-std::numeric_limits<double>::infinity());
  return select(cmpf(arith::CmpFPredicate::OEQ, m, minusInf), f32(0.0), m);
}

Value AmpereKernelBuilder::exp2(Value x) {
  return LLVM::CallIntrinsicOp::create(b, loc, b.getF32Type(),
                                       b.getStringAttr("llvm.nvvm.ex2.approx.f32"),
                                       ValueRange{x})
      .getResult(0);
}

Value AmpereKernelBuilder::exp2Shifted(Value x, Value shift) {
  // With shift = safeMax(m): x = -inf gives exp2(-inf) = 0, never NaN.
  return exp2(arith::SubFOp::create(b, loc, x, shift));
}

Value AmpereKernelBuilder::naturalLog(Value x) {
  // math.log would become a libdevice call; lg2.approx.f32 is one
  // instruction (max relative error 2^-22), and ln x = log2 x · ln 2.
  Value log2 = LLVM::CallIntrinsicOp::create(
                   b, loc, b.getF32Type(),
                   b.getStringAttr("llvm.nvvm.lg2.approx.f"), ValueRange{x})
                   .getResult(0);
  return arith::MulFOp::create(b, loc, log2, f32(M_LN2));
}

std::pair<Value, Value>
AmpereKernelBuilder::visibleKeyRange(Value q0, Value rows, Value queryLen,
                                     Value keyLen) {
  return buildVisibleKeyRange(b, loc, c.mask, q0, rows, queryLen, keyLen,
                              c.blockN);
}
