//===- WgmmaPatterns.cpp - fa.qk_scores and fa.matmul on wgmma ------------===//
//
// Part of fa-mlir.
//
// The chip-specific half of fa-gpu-lower-fragments on sm_90a. A consumer
// warpgroup w (threads 128w .. 128w + 127) owns query rows 64w .. 64w + 63;
// wgmma m64nNk16's accumulator gives warp i of the group rows 16i .. 16i+15
// in exactly mma.sync's m16n8 register order (PTX ISA, "Register Fragments
// for wgmma .m64nNk16"), which is #fa.fragment with one m-tile per warp: the
// chip-neutral patterns take the results as they are.
//
// Operands in shared memory are #fa.tma_shared tiles (128-byte swizzled
// panels of 64 columns) read through matrix descriptors:
//   Q, K (K-major): a k16 step is +32 bytes in a panel, the next panel
//     +rows·128; 8-row groups 1024 bytes apart (the stride byte offset);
//   V (N-major, imm-trans-b): a k16 step is 16 rows, +2048 bytes; the
//     64-column panels rows·128 apart (the leading byte offset).
// P feeds P·V from registers: two n8 accumulator tiles of S are one k16 A
// fragment (AccumulatorOperand, as on sm_80).
//
//===----------------------------------------------------------------------===//

#include "HopperPtx.h"
#include "HopperStrategy.h"

#include "fa/Conversion/FAToGPU/FragmentPatterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::hopper;

namespace {

constexpr int64_t kSwizzleAtomBytes = 1024;
constexpr int64_t kStepBytes = 32; ///< 16 elements of a 16-bit type

/// True if the MMA's result is awaited by an fa.mma_wait: issue and commit
/// only, the wait is the schedule's.
bool isAsync(Operation *mma) {
  return mma->hasOneUse() && isa<MmaWaitOp>(*mma->user_begin());
}

bool isTmaTile(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && isa_and_nonnull<TmaSharedLayoutAttr>(tensor.getEncoding());
}

/// A descriptor plus a byte offset (a multiple of 16 that stays inside the
/// 256 KB window: the 14-bit address field never carries).
Value offsetDescriptor(OpBuilder &b, Location loc, Value desc, int64_t bytes) {
  if (!bytes)
    return desc;
  return arith::AddIOp::create(b, loc, desc,
                               arith::ConstantIntOp::create(b, loc, bytes >> 4, 64));
}

/// The shared address of this thread's warpgroup's 64 rows of a Q tile.
Value warpgroupRows(OpBuilder &b, Location loc, Value address) {
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value group = arith::DivUIOp::create(
      b, loc, tid, arith::ConstantIndexOp::create(b, loc, kWarpgroupThreads));
  Value offset = arith::MulIOp::create(
      b, loc, group,
      arith::ConstantIndexOp::create(b, loc, kRowsPerWarpgroup * kPanelRowBytes));
  return arith::AddIOp::create(
      b, loc, address,
      arith::IndexCastOp::create(b, loc, b.getI32Type(), offset));
}

/// fa.qk_scores: S = QKᵀ, both K-major from shared memory, one wgmma per
/// k16 step; then the op's score epilogue per element.
struct QKScoresLowering : OpConversionPattern<QKScoresOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(QKScoresOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isDistributed(op) || !isTmaTile(op.getQuery().getType()) ||
        !isTmaTile(op.getKey().getType()))
      return rewriter.notifyMatchFailure(op, "operands not in TMA layout");
    Location loc = op.getLoc();
    FragmentShape shape = FragmentShape::of(op.getType());
    int64_t queryRows = op.getQuery().getType().getDimSize(0);
    int64_t keyRows = op.getKey().getType().getDimSize(0);
    int64_t depth = op.getQuery().getType().getDimSize(1);
    Type element = op.getQuery().getType().getElementType();
    Value queryAddr =
        warpgroupRows(rewriter, loc, sharedAddress(rewriter, loc, adaptor.getQuery()));
    Value keyAddr = sharedAddress(rewriter, loc, adaptor.getKey());
    Value queryDesc = matrixDescriptor(rewriter, loc, queryAddr, 16, kSwizzleAtomBytes);
    Value keyDesc = matrixDescriptor(rewriter, loc, keyAddr, 16, kSwizzleAtomBytes);
    Value zero = arith::ConstantOp::create(rewriter, loc, rewriter.getF32FloatAttr(0.0));
    SmallVector<Value> acc(shape.size(), zero);
    wgmmaFence(rewriter, loc);
    for (int64_t k = 0; k < (depth + 15) / 16; ++k) {
      int64_t panel = k * 16 / kPanelElements;
      int64_t inPanel = (k * 16 % kPanelElements) / 16 * kStepBytes;
      acc = wgmma(rewriter, loc, element, acc,
                  {offsetDescriptor(rewriter, loc, queryDesc,
                                    panel * queryRows * kPanelRowBytes + inPanel)},
                  offsetDescriptor(rewriter, loc, keyDesc,
                                   panel * keyRows * kPanelRowBytes + inPanel),
                  /*transposeB=*/false);
    }
    wgmmaCommit(rewriter, loc);
    if (isAsync(op)) {
      // The epilogue runs on the waited values (MmaWaitLowering).
      rewriter.replaceOp(op, packVector(rewriter, loc,
                                        getTypeConverter()->convertType(op.getType()),
                                        acc));
      return success();
    }
    wgmmaWait(rewriter, loc, 0);
    SmallVector<Value> scores;
    for (Value dot : acc)
      scores.push_back(transformScore(rewriter, loc, op, dot));
    rewriter.replaceOp(op, packVector(rewriter, loc,
                                      getTypeConverter()->convertType(op.getType()),
                                      scores));
    return success();
  }
};

/// A register of two 16-bit elements as the i32 wgmma's inline PTX takes.
Value asI32(OpBuilder &b, Location loc, Value pair) {
  Value asInt = vector::BitCastOp::create(
      b, loc, VectorType::get({1}, b.getI32Type()), pair);
  return vector::ExtractOp::create(b, loc, asInt, ArrayRef<int64_t>{0});
}

/// fa.matmul acc + P·V: P from registers (operand A), V N-major from
/// shared memory, one wgmma per k16 step over all of Dv.
struct ProbsTimesValueLowering : OpConversionPattern<TileMatmulOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TileMatmulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isDistributed(op) || !isTmaTile(op.getRhs().getType()))
      return rewriter.notifyMatchFailure(op, "V not in TMA layout");
    if (op.getTransposeA() || op.getTransposeB() || op.getAlpha())
      return rewriter.notifyMatchFailure(op, "only acc + P·V on sm_90a yet");
    Location loc = op.getLoc();
    Type mmaType = op.getRhs().getType().getElementType();
    int64_t valueRows = op.getRhs().getType().getDimSize(0);
    AccumulatorOperand probs(rewriter, loc, adaptor.getLhs(),
                             op.getLhs().getType(), mmaType);
    SmallVector<Value> acc = unpackVector(rewriter, loc, adaptor.getAcc());
    Value valueDesc = matrixDescriptor(
        rewriter, loc, sharedAddress(rewriter, loc, adaptor.getRhs()),
        /*leadingBytes=*/valueRows * kPanelRowBytes,
        /*strideBytes=*/kSwizzleAtomBytes);
    wgmmaFence(rewriter, loc);
    for (int64_t k = 0; k < probs.kSteps(); ++k) {
      SmallVector<Value> a;
      for (Value pair : probs.registers(/*mTile=*/0, k))
        a.push_back(asI32(rewriter, loc, pair));
      acc = wgmma(rewriter, loc, mmaType, acc, a,
                  offsetDescriptor(rewriter, loc, valueDesc,
                                   k * 16 * kPanelRowBytes),
                  /*transposeB=*/true);
    }
    wgmmaCommit(rewriter, loc);
    if (!isAsync(op))
      wgmmaWait(rewriter, loc, 0);
    rewriter.replaceOp(op, packVector(rewriter, loc, adaptor.getAcc().getType(),
                                      acc));
    return success();
  }
};

/// fa.mma_wait: wgmma.wait_group with the fragment carried through it; on
/// scores, then the producing fa.qk_scores' epilogue (scale, softcap).
struct MmaWaitLowering : OpConversionPattern<MmaWaitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MmaWaitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    SmallVector<Value> values = wgmmaWait(
        rewriter, loc, op.getPending(),
        unpackVector(rewriter, loc, adaptor.getInput()));
    if (auto scores = op.getInput().getDefiningOp<QKScoresOp>())
      for (Value &value : values)
        value = transformScore(rewriter, loc, scores, value);
    rewriter.replaceOp(op, packVector(rewriter, loc,
                                      adaptor.getInput().getType(), values));
    return success();
  }
};

} // namespace

void hopper::populateWgmmaPatterns(const TypeConverter &converter,
                                   RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  // fa.qk_scores: wgmma with both operands' descriptors, the score epilogue.
  patterns.add<QKScoresLowering>(converter, ctx);
  // fa.matmul (acc + P·V): wgmma with P's registers as A.
  patterns.add<ProbsTimesValueLowering>(converter, ctx);
  // fa.mma_wait: the schedule's wait for asynchronous wgmma groups.
  patterns.add<MmaWaitLowering>(converter, ctx);
}
