//===- HopperPtx.cpp - the sm_90a instructions, as named ops --------------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "HopperPtx.h"

#include "fa/Conversion/FAToGPU/FragmentPatterns.h"
#include "fa/Dialect/FA/IR/FAOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::fa;

static Value i32(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIntOp::create(b, loc, v, 32);
}

void hopper::mbarrierInit(OpBuilder &b, Location loc, Value barrier,
                          int64_t count) {
  NVVM::MBarrierInitOp::create(b, loc, sharedPointer(b, loc, barrier),
                               i32(b, loc, count), /*predicate=*/Value());
}

void hopper::fenceBarrierInit(OpBuilder &b, Location loc) {
  NVVM::FenceMbarrierInitOp::create(b, loc);
  fenceProxyAsync(b, loc);
}

void hopper::arriveExpectTx(OpBuilder &b, Location loc, Value barrier,
                            int64_t bytes) {
  NVVM::MBarrierArriveExpectTxOp::create(
      b, loc, /*res=*/Type(), sharedPointer(b, loc, barrier), i32(b, loc, bytes),
      NVVM::MemScopeKind::CTA, /*relaxed=*/false, /*predicate=*/Value());
}

void hopper::arrive(OpBuilder &b, Location loc, Value barrier) {
  NVVM::MBarrierArriveOp::create(b, loc, /*res=*/Type(),
                                 sharedPointer(b, loc, barrier),
                                 /*count=*/Value());
}

void hopper::waitParity(OpBuilder &b, Location loc, Value barrier,
                        Value parity) {
  // try_wait until it reports the phase complete. (nvvm.mbarrier.try_wait.
  // parity, which loops by itself, requires a suspend-time hint.)
  Value pointer = sharedPointer(b, loc, barrier);
  scf::WhileOp::create(
      b, loc, TypeRange{}, ValueRange{},
      [&](OpBuilder &cb, Location, ValueRange) {
        Value done = NVVM::MBarrierTryWaitOp::create(
            cb, loc, cb.getI1Type(), pointer, parity, /*ticks=*/Value());
        Value waiting = arith::XOrIOp::create(
            cb, loc, done, arith::ConstantIntOp::create(cb, loc, 1, 1));
        scf::ConditionOp::create(cb, loc, waiting, ValueRange{});
      },
      [&](OpBuilder &db, Location, ValueRange) { scf::YieldOp::create(db, loc); });
}

void hopper::tmaLoad(OpBuilder &b, Location loc, Value dst, Value tensorMap,
                     ArrayRef<Value> coords, Value barrier) {
  Value destination = sharedPointer(
      b, loc, dst, 0, static_cast<unsigned>(NVVM::NVVMMemorySpace::SharedCluster));
  NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
      b, loc, destination, tensorMap, coords, sharedPointer(b, loc, barrier),
      /*im2colOffsets=*/ValueRange{}, /*multicastMask=*/Value(),
      /*l2CacheHint=*/Value(), NVVM::TMALoadMode::TILE, /*isCTAOnly=*/false,
      /*group=*/NVVM::CTAGroupKindAttr(), /*predicate=*/Value());
}

void hopper::tmaReduceAdd(OpBuilder &b, Location loc, Value src,
                          Value tensorMap, ArrayRef<Value> coords) {
  NVVM::CpAsyncBulkTensorReduceOp::create(
      b, loc, tensorMap, sharedPointer(b, loc, src), NVVM::TMAReduxKind::ADD,
      NVVM::TMAStoreMode::TILE, coords, /*l2CacheHint=*/Value());
}

void hopper::tmaStore(OpBuilder &b, Location loc, Value src, Value tensorMap,
                      ArrayRef<Value> coords) {
  NVVM::CpAsyncBulkTensorSharedCTAToGlobalOp::create(
      b, loc, tensorMap, sharedPointer(b, loc, src), coords,
      /*l2CacheHint=*/Value(), NVVM::TMAStoreMode::TILE, /*predicate=*/Value());
}

void hopper::bulkCommit(OpBuilder &b, Location loc) {
  NVVM::CpAsyncBulkCommitGroupOp::create(b, loc);
}

void hopper::bulkWait(OpBuilder &b, Location loc, int64_t pending,
                      bool readOnly) {
  NVVM::CpAsyncBulkWaitGroupOp::create(
      b, loc, static_cast<uint32_t>(pending),
      readOnly ? b.getUnitAttr() : UnitAttr());
}

void hopper::namedBarrierSync(OpBuilder &b, Location loc, Value id,
                              int64_t threads) {
  NVVM::BarrierOp::create(b, loc, /*res=*/Type(), id, i32(b, loc, threads),
                          /*reductionOp=*/NVVM::BarrierReductionAttr(),
                          /*reductionPredicate=*/Value());
}

void hopper::namedBarrierArrive(OpBuilder &b, Location loc, Value id,
                                int64_t threads, Value condition) {
  Value count = i32(b, loc, threads);
  if (!condition) {
    NVVM::BarrierArriveOp::create(b, loc, id, count);
    return;
  }
  // The condition is uniform over the arriving warps (bar.arrive is
  // .aligned): a branch around it.
  scf::IfOp::create(b, loc, condition, [&](OpBuilder &tb, Location) {
    NVVM::BarrierArriveOp::create(tb, loc, id, count);
    scf::YieldOp::create(tb, loc);
  });
}

void hopper::setMaxRegisters(OpBuilder &b, Location loc, int64_t count,
                             bool increase) {
  NVVM::SetMaxRegisterOp::create(b, loc, static_cast<uint32_t>(count),
                                 increase ? NVVM::SetMaxRegisterAction::increase
                                          : NVVM::SetMaxRegisterAction::decrease);
}

void hopper::fenceProxyAsync(OpBuilder &b, Location loc) {
  NVVM::FenceProxyOp::create(
      b, loc, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(b.getContext(), NVVM::SharedSpace::shared_cta));
}

void hopper::fenceProxyAsyncAll(OpBuilder &b, Location loc) {
  NVVM::FenceProxyOp::create(b, loc, NVVM::ProxyKind::async,
                             NVVM::SharedSpaceAttr());
}

void hopper::wgmmaFence(OpBuilder &b, Location loc) {
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
}

void hopper::wgmmaCommit(OpBuilder &b, Location loc) {
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
}

void hopper::wgmmaWait(OpBuilder &b, Location loc, int64_t pending) {
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, static_cast<uint64_t>(pending));
}

SmallVector<Value> hopper::wgmmaWait(OpBuilder &b, Location loc,
                                     int64_t pending, ArrayRef<Value> values) {
  auto wait = WgmmaWaitOp::create(b, loc, ValueRange(values).getTypes(),
                                  b.getI64IntegerAttr(pending), values);
  return SmallVector<Value>(wait.getResults());
}

Value hopper::matrixDescriptor(OpBuilder &b, Location loc, Value address,
                               int64_t leadingBytes, int64_t strideBytes) {
  // Bits 0-13: address >> 4; 16-29: leading byte offset >> 4; 32-45:
  // stride byte offset >> 4; 49-51: base offset (0: every tile starts on
  // a 1024-byte swizzle atom); 62-63: swizzle mode (1 = 128 bytes).
  Type i64 = b.getI64Type();
  uint64_t fixed = (uint64_t(leadingBytes >> 4) & 0x3FFF) << 16 |
                   (uint64_t(strideBytes >> 4) & 0x3FFF) << 32 |
                   uint64_t(1) << 62;
  Value wide = arith::ExtUIOp::create(b, loc, i64, address);
  Value start = arith::ShRUIOp::create(
      b, loc,
      arith::AndIOp::create(b, loc, wide,
                            arith::ConstantIntOp::create(b, loc, 0x3FFFF, 64)),
      arith::ConstantIntOp::create(b, loc, 4, 64));
  return arith::OrIOp::create(
      b, loc, start,
      arith::ConstantIntOp::create(b, loc, static_cast<int64_t>(fixed), 64));
}

/// Whether `v` is the constant 0.0: an arith.constant, or an element of a
/// constant splat of zeros (a fragment's unpacked initial value).
static bool isZeroConstant(Value v) {
  if (matchPattern(v, m_AnyZeroFloat()))
    return true;
  auto extract = v.getDefiningOp<vector::ExtractOp>();
  DenseElementsAttr splat;
  return extract && matchPattern(extract.getSource(), m_Constant(&splat)) &&
         splat.isSplat() && splat.getElementType().isF32() &&
         splat.getSplatValue<APFloat>().isZero();
}

/// The wgmma of both public forms: A a shared operand (`aShared`) or four
/// registers (`aRegisters`).
static SmallVector<Value> buildWgmma(OpBuilder &b, Location loc, Type inputType,
                                     ArrayRef<Value> acc,
                                     const hopper::SharedOperand *aShared,
                                     ArrayRef<Value> aRegisters,
                                     hopper::SharedOperand bShared, bool transposeB,
                                     bool transposeA) {
  assert((!transposeA || aShared) && "only a shared A transposes");
  // A chain's first wgmma onto zeros (S = QKᵀ, dP, dQ_i) does not read its
  // accumulators: scale-d = 0, outputs only. Passing the zeros in would
  // cost one mov per accumulator register per k chain, which LLVM places
  // after the wgmma.fence, where ptxas answers each write with an injected
  // warpgroup.arrive (its C7519 note).
  bool zeroAccumulators = llvm::all_of(acc, isZeroConstant);
  assert((inputType.getIntOrFloatBitWidth() == 16 || (!transposeA && !transposeB)) &&
         "e4m3 wgmma reads its operands K-major only");
  SmallVector<Type> types(acc.size(), b.getF32Type());
  auto op = WgmmaOp::create(
      b, loc, types, aShared ? aShared->descriptor : Value(), aRegisters,
      bShared.descriptor, zeroAccumulators ? ArrayRef<Value>() : acc,
      TypeAttr::get(inputType), b.getI64IntegerAttr(aShared ? aShared->bytes : 0),
      b.getI64IntegerAttr(bShared.bytes),
      transposeA ? b.getUnitAttr() : UnitAttr(),
      transposeB ? b.getUnitAttr() : UnitAttr());
  return SmallVector<Value>(op.getResults());
}

SmallVector<Value> hopper::wgmma(OpBuilder &b, Location loc, Type inputType,
                                 ArrayRef<Value> acc, SharedOperand a,
                                 SharedOperand bOperand, bool transposeB,
                                 bool transposeA) {
  return buildWgmma(b, loc, inputType, acc, &a, {}, bOperand, transposeB,
                    transposeA);
}

SmallVector<Value> hopper::wgmma(OpBuilder &b, Location loc, Type inputType,
                                 ArrayRef<Value> acc, ArrayRef<Value> aRegisters,
                                 SharedOperand bOperand, bool transposeB) {
  return buildWgmma(b, loc, inputType, acc, nullptr, aRegisters, bOperand,
                    transposeB, /*transposeA=*/false);
}

int64_t hopper::wgmmaDepth(Type inputType) {
  return 256 / inputType.getIntOrFloatBitWidth();
}

SmallVector<Value> hopper::loadMatrixTransposed(OpBuilder &b, Location loc,
                                                Value rowAddress, int64_t offset,
                                                int64_t matrices) {
  assert((matrices == 1 || matrices == 2 || matrices == 4) &&
         "ldmatrix loads one, two or four matrices");
  Type i32Type = b.getI32Type();
  Type result = i32Type;
  if (matrices > 1)
    result = LLVM::LLVMStructType::getLiteral(
        b.getContext(), SmallVector<Type>(matrices, i32Type));
  auto load = NVVM::LdMatrixOp::create(
      b, loc, result, sharedPointer(b, loc, rowAddress, offset),
      static_cast<uint32_t>(matrices), NVVM::MMALayout::col,
      NVVM::LdStMatrixShapeAttr::get(b.getContext(), 8, 8),
      NVVM::LdStMatrixEltType::B16);
  if (matrices == 1)
    return {load.getRes()};
  SmallVector<Value> out;
  for (int64_t i = 0; i < matrices; ++i)
    out.push_back(
        LLVM::ExtractValueOp::create(b, loc, load.getRes(), ArrayRef<int64_t>{i}));
  return out;
}

void hopper::storeMatrix(OpBuilder &b, Location loc, Value rowAddress,
                         int64_t offset, ArrayRef<Value> registers) {
  assert((registers.size() == 1 || registers.size() == 2 || registers.size() == 4) &&
         "stmatrix stores one, two or four matrices");
  NVVM::StMatrixOp::create(b, loc, sharedPointer(b, loc, rowAddress, offset),
                           registers, NVVM::MMALayout::row,
                           NVVM::LdStMatrixShapeAttr::get(b.getContext(), 8, 8),
                           NVVM::LdStMatrixEltType::B16);
}

Value hopper::bytePermute(OpBuilder &b, Location loc, Value lo, Value hi,
                          Value selector) {
  return NVVM::PermuteOp::create(b, loc, b.getI32Type(), lo, hi, selector,
                                 NVVM::PermuteMode::DEFAULT);
}

Value hopper::packE4M3x4(OpBuilder &b, Location loc, ArrayRef<Value> values) {
  assert(values.size() == 4 && "four bytes to a register");
  // cvt's first source goes to the pair's high byte.
  auto pair = [&](Value low, Value high) -> Value {
    return NVVM::ConvertF32x2ToF8x2Op::create(
        b, loc, b.getI16Type(), high, low, NVVM::FPRoundingMode::RN,
        NVVM::SaturationMode::SATFINITE, /*relu=*/false,
        b.getType<Float8E4M3FNType>());
  };
  // The two byte pairs as one 32-bit register, the first in the low half.
  auto halves = VectorType::get({2}, b.getI16Type());
  Value packed = LLVM::PoisonOp::create(b, loc, halves);
  Value pairs[] = {pair(values[0], values[1]), pair(values[2], values[3])};
  for (int64_t i = 0; i < 2; ++i)
    packed = LLVM::InsertElementOp::create(
        b, loc, packed, pairs[i],
        LLVM::ConstantOp::create(b, loc, b.getI32Type(), b.getI32IntegerAttr(i)));
  return LLVM::BitcastOp::create(b, loc, b.getI32Type(), packed);
}
