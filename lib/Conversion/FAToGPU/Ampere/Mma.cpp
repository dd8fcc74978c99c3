//===- Mma.cpp - ldmatrix fragments and mma.sync m16n8k16 -----------------===//
//
// Part of fa-mlir.
//
// Fragment layouts are PTX's for mma.m16n8k16 (PTX ISA, "Matrix Fragments
// for mma.m16n8k16 with floating point type"): lane l holds rows l/4 and
// l/4 + 8, and columns 2·(l%4) and 2·(l%4) + 1 of each 8-wide piece.
//
//===----------------------------------------------------------------------===//

#include "AmpereKernelBuilder.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::ampere;

/// Splits ldmatrix's vector<4x2xT> into its four 8x8 matrices' registers.
static std::array<Value, 4> splitMatrices(OpBuilder &b, Location loc,
                                          Value loaded) {
  std::array<Value, 4> regs;
  for (int64_t i = 0; i < 4; ++i)
    regs[i] = vector::ExtractOp::create(b, loc, loaded, ArrayRef<int64_t>{i});
  return regs;
}

static Value ldmatrix(OpBuilder &b, Location loc, Value tile,
                      ValueRange indices, bool transpose, Type elementType) {
  auto type = VectorType::get({4, 2}, elementType);
  return nvgpu::LdMatrixOp::create(b, loc, type, tile, indices, transpose,
                                   /*numTiles=*/4);
}

AFragment AmpereKernelBuilder::loadA(Value tile, Value row0, int64_t kc,
                                     Value lane) {
  // x4: lane l addresses row l % 16 at k chunk 2·kc + l / 16, giving
  // a0 = (rows 0-7, k 0-7), a1 = (rows 8-15, k 0-7), a2 = (0-7, 8-15),
  // a3 = (8-15, 8-15): exactly the A fragment.
  Value row = add(row0, rem(lane, index(16)));
  Value chunk = add(index(2 * kc), div(lane, index(16)));
  Value loaded =
      ldmatrix(b, loc, tile, tileIndices({}, row, swizzledColumn(row, chunk)),
               /*transpose=*/false, c.elementType);
  return splitMatrices(b, loc, loaded);
}

std::array<BFragment, 2>
AmpereKernelBuilder::loadBFromRows(Value tile, Value stage, int64_t n0,
                                   int64_t kc, Value lane) {
  // The tile is [n][k] (K rows): a "col" B operand as stored. Matrix
  // i = l / 8 covers n rows n0 + 8·(i / 2) .. +7 at k chunk 2·kc + i % 2.
  Value matrix = div(lane, index(8));
  Value row = add(add(index(n0), mul(div(matrix, index(2)), index(8))),
                  rem(lane, index(8)));
  Value chunk = add(index(2 * kc), rem(matrix, index(2)));
  auto regs = splitMatrices(
      b, loc,
      ldmatrix(b, loc, tile,
               tileIndices(stage, row, swizzledColumn(row, chunk)),
               /*transpose=*/false, c.elementType));
  return {BFragment{regs[0], regs[1]}, BFragment{regs[2], regs[3]}};
}

std::array<BFragment, 2>
AmpereKernelBuilder::loadBFromColumns(Value tile, Value stage, int64_t n0,
                                      int64_t kc, Value lane) {
  // The tile is [k][n] (V rows are keys): ldmatrix.trans turns each 8x8
  // piece into the "col" operand. Matrix i = l / 8 covers k rows
  // 16·kc + 8·(i % 2) .. +7 at n chunk n0 / 8 + i / 2.
  Value matrix = div(lane, index(8));
  Value row = add(add(index(16 * kc), mul(rem(matrix, index(2)), index(8))),
                  rem(lane, index(8)));
  Value chunk = add(index(n0 / 8), div(matrix, index(2)));
  auto regs = splitMatrices(
      b, loc,
      ldmatrix(b, loc, tile,
               tileIndices(stage, row, swizzledColumn(row, chunk)),
               /*transpose=*/true, c.elementType));
  return {BFragment{regs[0], regs[1]}, BFragment{regs[2], regs[3]}};
}

/// One register of a fragment as mma.sync wants it: vector<2xf16> stays;
/// bf16 pairs go as i32 (MLIR 22 cannot type bf16 vectors for nvvm.mma).
static Value mmaOperand(OpBuilder &b, Location loc, Value pair) {
  auto type = cast<VectorType>(pair.getType());
  if (type.getElementType().isF16())
    return pair;
  Value asInt = vector::BitCastOp::create(
      b, loc, VectorType::get({1}, b.getI32Type()), pair);
  return vector::ExtractOp::create(b, loc, asInt, ArrayRef<int64_t>{0});
}

CFragment AmpereKernelBuilder::mma(const AFragment &a, const BFragment &bf,
                                   const CFragment &acc) {
  SmallVector<Value> aOps, bOps;
  for (Value reg : a)
    aOps.push_back(mmaOperand(b, loc, reg));
  for (Value reg : bf)
    bOps.push_back(mmaOperand(b, loc, reg));
  Type f32 = b.getF32Type();
  auto resultType = LLVM::LLVMStructType::getLiteral(
      b.getContext(), {f32, f32, f32, f32});
  bool isBf16 = c.elementType.isBF16();
  std::optional<std::array<NVVM::MMATypes, 2>> ptxTypes;
  if (isBf16)
    ptxTypes = {NVVM::MMATypes::bf16, NVVM::MMATypes::bf16};
  auto op = NVVM::MmaOp::create(
      b, loc, resultType, aOps, bOps, SmallVector<Value>(acc.begin(), acc.end()),
      /*shape=*/ArrayRef<int64_t>{16, 8, 16}, /*b1Op=*/std::nullopt,
      /*intOverflow=*/std::nullopt, ptxTypes,
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  CFragment d;
  for (int64_t i = 0; i < 4; ++i)
    d[i] = LLVM::ExtractValueOp::create(b, loc, op.getResult(),
                                        ArrayRef<int64_t>{i});
  return d;
}

Value AmpereKernelBuilder::pack(Value lo, Value hi) {
  Value l = arith::TruncFOp::create(b, loc, c.elementType, lo);
  Value h = arith::TruncFOp::create(b, loc, c.elementType, hi);
  return vector::FromElementsOp::create(
      b, loc, VectorType::get({2}, c.elementType), ValueRange{l, h});
}
