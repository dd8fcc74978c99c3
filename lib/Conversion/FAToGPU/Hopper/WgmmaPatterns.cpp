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
// The backward's transposed A operands (P and dS in Pᵀ·dO, dSᵀ·Q) are
// N-major tiles of the same panels, read with imm-trans-a: warpgroup w's
// 64 result rows are 64 columns of P, one panel.
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

/// A TMA tile stored transposed (the e4m3 kernel's Vᵀ).
bool isKeyMajor(Type type) {
  auto layout = dyn_cast_or_null<TmaSharedLayoutAttr>(
      cast<RankedTensorType>(type).getEncoding());
  return layout && layout.getKeyMajor();
}

/// Where this thread's warpgroup works in a result of layout `layout`:
/// its 64 rows (the warpgroup's place among those of its column group)
/// and its column group (0 unless the layout splits columns).
struct WarpgroupPlace {
  Value rowBlock, columnGroup; ///< i32
};
WarpgroupPlace warpgroupPlace(OpBuilder &b, Location loc,
                              FragmentLayoutAttr layout) {
  auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  auto i32 = [&](Value v) {
    return arith::IndexCastOp::create(b, loc, b.getI32Type(), v).getResult();
  };
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value group = arith::DivUIOp::create(b, loc, tid, cst(kWarpgroupThreads));
  if (layout.getColumnGroups() == 1)
    return {i32(group), arith::ConstantIntOp::create(b, loc, 0, 32)};
  int64_t rowGroups = layout.getRowWarps() / 4; // warpgroups per column group
  return {i32(arith::RemUIOp::create(b, loc, group, cst(rowGroups))),
          i32(arith::DivUIOp::create(b, loc, group, cst(rowGroups)))};
}

/// `address` + `index` · `bytesPerIndex` (i32).
Value offsetAddress(OpBuilder &b, Location loc, Value address, Value index,
                    int64_t bytesPerIndex) {
  return arith::AddIOp::create(
      b, loc, address,
      arith::MulIOp::create(b, loc, index,
                            arith::ConstantIntOp::create(b, loc, bytesPerIndex, 32)));
}

FragmentLayoutAttr layoutOf(Type type) {
  return cast<FragmentLayoutAttr>(cast<RankedTensorType>(type).getEncoding());
}

/// acc + A·Bᵀ with A (`lhsRows` rows) and B (`rhsRows` rows) K-major in
/// shared memory, `depth` deep, for a result of layout `layout`: this
/// warpgroup's 64 rows of A and, if the layout splits columns, its
/// column group's rows of B (N = its share of the columns). One wgmma
/// per k16 step, issued and committed (the caller waits).
SmallVector<Value> rowsTimesRows(OpBuilder &b, Location loc, Value lhs,
                                 int64_t lhsRows, Value rhs, int64_t rhsRows,
                                 int64_t depth, Type element,
                                 FragmentLayoutAttr layout,
                                 SmallVector<Value> acc) {
  WarpgroupPlace place = warpgroupPlace(b, loc, layout);
  int64_t n = 2 * static_cast<int64_t>(acc.size());
  Value lhsAddr = offsetAddress(b, loc, sharedWindowAddress(b, loc, lhs), place.rowBlock,
                                kRowsPerWarpgroup * kPanelRowBytes);
  Value rhsAddr = offsetAddress(b, loc, sharedWindowAddress(b, loc, rhs),
                                place.columnGroup, n * kPanelRowBytes);
  Value lhsDesc = matrixDescriptor(b, loc, lhsAddr, 16, kSwizzleAtomBytes);
  Value rhsDesc = matrixDescriptor(b, loc, rhsAddr, 16, kSwizzleAtomBytes);
  wgmmaFence(b, loc);
  // k16 steps of 16-bit types, k32 of e4m3: 32 bytes each, four per panel.
  int64_t stepElements = wgmmaDepth(element);
  int64_t panelElements = panelElementsOf(element);
  for (int64_t k = 0; k < (depth + stepElements - 1) / stepElements; ++k) {
    int64_t panel = k * stepElements / panelElements;
    int64_t inPanel = (k * stepElements % panelElements) / stepElements * kStepBytes;
    acc = wgmma(b, loc, element, acc,
                SharedOperand{lhsDesc, panel * lhsRows * kPanelRowBytes + inPanel},
                SharedOperand{rhsDesc, panel * rhsRows * kPanelRowBytes + inPanel},
                /*transposeB=*/false);
  }
  wgmmaCommit(b, loc);
  return acc;
}

/// The descriptor of an N-major (MN-major) operand of `rows` rows in
/// 64-column panels: the next panel is `rows`·128 bytes on (the leading
/// byte offset), 8-row groups 1024 (the stride byte offset); a k16 step
/// is 16 rows, +2048 bytes.
Value columnsDescriptor(OpBuilder &b, Location loc, Value address, int64_t rows) {
  return matrixDescriptor(b, loc, address, /*leadingBytes=*/rows * kPanelRowBytes,
                          /*strideBytes=*/kSwizzleAtomBytes);
}

/// fa.qk_scores: S = QKᵀ, both K-major from shared memory; then the op's
/// score epilogue per element.
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
    auto query = op.getQuery().getType(), key = op.getKey().getType();
    Value zero = arith::ConstantOp::create(rewriter, loc, rewriter.getF32FloatAttr(0.0));
    SmallVector<Value> acc = rowsTimesRows(
        rewriter, loc, adaptor.getQuery(), query.getDimSize(0), adaptor.getKey(),
        key.getDimSize(0), query.getDimSize(1), query.getElementType(),
        layoutOf(op.getType()), SmallVector<Value>(shape.size(), zero));
    Type packed = getTypeConverter()->convertType(op.getType());
    if (isAsync(op)) {
      // The epilogue runs on the waited values (MmaWaitLowering).
      rewriter.replaceOp(op, packVector(rewriter, loc, packed, acc));
      return success();
    }
    SmallVector<Value> scores;
    for (Value dot : wgmmaWait(rewriter, loc, 0, acc))
      scores.push_back(transformScore(rewriter, loc, op, dot));
    rewriter.replaceOp(op, packVector(rewriter, loc, packed, scores));
    return success();
  }
};

/// fa.matmul {transpose_b} (the backward's dP = dO·Vᵀ): acc + A·Bᵀ, both
/// K-major from shared memory, as S = QKᵀ.
struct RowsTimesRowsLowering : OpConversionPattern<TileMatmulOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TileMatmulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isDistributed(op) || !op.getTransposeB() || op.getTransposeA() ||
        op.getAlpha() || !isTmaTile(op.getLhs().getType()) ||
        !isTmaTile(op.getRhs().getType()))
      return rewriter.notifyMatchFailure(op, "not acc + A·Bᵀ from TMA tiles");
    Location loc = op.getLoc();
    auto lhs = op.getLhs().getType(), rhs = op.getRhs().getType();
    SmallVector<Value> acc = rowsTimesRows(
        rewriter, loc, adaptor.getLhs(), lhs.getDimSize(0), adaptor.getRhs(),
        rhs.getDimSize(0), lhs.getDimSize(1), lhs.getElementType(),
        layoutOf(op.getType()), unpackVector(rewriter, loc, adaptor.getAcc()));
    if (!isAsync(op))
      acc = wgmmaWait(rewriter, loc, 0, acc);
    rewriter.replaceOp(op, packVector(rewriter, loc, adaptor.getAcc().getType(), acc));
    return success();
  }
};

/// fa.matmul {transpose_a} (the backward's dV += Pᵀ·dO, dK += dSᵀ·Q): A
/// [k][m] and B [k][n] both N-major in shared memory (P and dS as
/// fa.store_shared wrote them, Q and dO as TMA did); warpgroup w's 64
/// rows of the result are A's panel w, and where the result's columns are
/// split (dK, dV above D = 128), its columns B's panels of its group.
struct TransposedTimesColumnsLowering : OpConversionPattern<TileMatmulOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TileMatmulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isDistributed(op) || !op.getTransposeA() || op.getTransposeB() ||
        op.getAlpha() || !isTmaTile(op.getLhs().getType()) ||
        !isTmaTile(op.getRhs().getType()))
      return rewriter.notifyMatchFailure(op, "not acc + Aᵀ·B from TMA tiles");
    Location loc = op.getLoc();
    auto lhs = op.getLhs().getType();
    int64_t depth = lhs.getDimSize(0); // A's and B's rows
    SmallVector<Value> acc = unpackVector(rewriter, loc, adaptor.getAcc());
    int64_t n = 2 * static_cast<int64_t>(acc.size());
    FragmentLayoutAttr layout = layoutOf(op.getType());
    if (layout.getColumnGroups() > 1 && n % kPanelElements)
      return rewriter.notifyMatchFailure(op, "a column group is not whole panels");
    // The warpgroup's 64 result rows are A's panel (its row block); its
    // columns, B's panels of its column group.
    WarpgroupPlace place = warpgroupPlace(rewriter, loc, layout);
    Value lhsAddr = offsetAddress(rewriter, loc,
                                  sharedWindowAddress(rewriter, loc, adaptor.getLhs()),
                                  place.rowBlock, depth * kPanelRowBytes);
    Value lhsDesc = columnsDescriptor(rewriter, loc, lhsAddr, depth);
    Value rhsAddr = sharedWindowAddress(rewriter, loc, adaptor.getRhs());
    if (layout.getColumnGroups() > 1)
      rhsAddr = offsetAddress(rewriter, loc, rhsAddr, place.columnGroup,
                              n / kPanelElements * depth * kPanelRowBytes);
    Value rhsDesc = columnsDescriptor(rewriter, loc, rhsAddr, depth);
    wgmmaFence(rewriter, loc);
    for (int64_t k = 0; k < depth / 16; ++k) {
      int64_t step = k * 16 * kPanelRowBytes;
      acc = wgmma(rewriter, loc, lhs.getElementType(), acc,
                  SharedOperand{lhsDesc, step},
                  SharedOperand{rhsDesc, step},
                  /*transposeB=*/true, /*transposeA=*/true);
    }
    wgmmaCommit(rewriter, loc);
    if (!isAsync(op))
      acc = wgmmaWait(rewriter, loc, 0, acc);
    rewriter.replaceOp(op, packVector(rewriter, loc, adaptor.getAcc().getType(), acc));
    return success();
  }
};

/// fa.matmul acc + A·B with A K-major and B N-major, both TMA tiles (the
/// backward's dQ_i = dS·K_j where dS's columns are split over warpgroups,
/// BackwardMath's gradQueryFromShared): this warpgroup's 64 rows of A
/// and its column group's share of B's columns, whole 64-column panels.
struct SharedTimesColumnsLowering : OpConversionPattern<TileMatmulOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TileMatmulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isDistributed(op) || op.getTransposeA() || op.getTransposeB() ||
        op.getAlpha() || !isTmaTile(op.getLhs().getType()) ||
        !isTmaTile(op.getRhs().getType()))
      return rewriter.notifyMatchFailure(op, "not acc + A·B from TMA tiles");
    Location loc = op.getLoc();
    auto lhs = op.getLhs().getType(), rhs = op.getRhs().getType();
    SmallVector<Value> acc = unpackVector(rewriter, loc, adaptor.getAcc());
    int64_t n = 2 * static_cast<int64_t>(acc.size());
    if (n % kPanelElements)
      return rewriter.notifyMatchFailure(op, "a column group is not whole panels");
    int64_t lhsRows = lhs.getDimSize(0), depth = lhs.getDimSize(1);
    int64_t rhsRows = rhs.getDimSize(0);
    WarpgroupPlace place = warpgroupPlace(rewriter, loc, layoutOf(op.getType()));
    Value lhsDesc = matrixDescriptor(
        rewriter, loc,
        offsetAddress(rewriter, loc, sharedWindowAddress(rewriter, loc, adaptor.getLhs()),
                      place.rowBlock, kRowsPerWarpgroup * kPanelRowBytes),
        16, kSwizzleAtomBytes);
    Value rhsDesc = columnsDescriptor(
        rewriter, loc,
        offsetAddress(rewriter, loc, sharedWindowAddress(rewriter, loc, adaptor.getRhs()),
                      place.columnGroup,
                      n / kPanelElements * rhsRows * kPanelRowBytes),
        rhsRows);
    wgmmaFence(rewriter, loc);
    for (int64_t k = 0; k < depth / 16; ++k) {
      int64_t panel = k * 16 / kPanelElements;
      int64_t inPanel = (k * 16 % kPanelElements) / 16 * kStepBytes;
      acc = wgmma(rewriter, loc, lhs.getElementType(), acc,
                  SharedOperand{lhsDesc, panel * lhsRows * kPanelRowBytes + inPanel},
                  SharedOperand{rhsDesc, k * 16 * kPanelRowBytes},
                  /*transposeB=*/true);
    }
    wgmmaCommit(rewriter, loc);
    if (!isAsync(op))
      acc = wgmmaWait(rewriter, loc, 0, acc);
    rewriter.replaceOp(op, packVector(rewriter, loc, adaptor.getAcc().getType(), acc));
    return success();
  }
};

/// A register of two 16-bit elements as the i32 fa.wgmma's A takes.
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
    if (!isDistributed(op) || !isTmaTile(op.getRhs().getType()) ||
        isTmaTile(op.getLhs().getType()) || isKeyMajor(op.getRhs().getType()))
      return rewriter.notifyMatchFailure(op, "not P in registers, V in TMA layout");
    if (op.getTransposeA() || op.getTransposeB() || op.getAlpha())
      return rewriter.notifyMatchFailure(op, "not acc + P·V");
    Location loc = op.getLoc();
    Type mmaType = op.getRhs().getType().getElementType();
    int64_t valueRows = op.getRhs().getType().getDimSize(0);
    AccumulatorOperand probs(rewriter, loc, adaptor.getLhs(),
                             op.getLhs().getType(), mmaType);
    SmallVector<Value> acc = unpackVector(rewriter, loc, adaptor.getAcc());
    Value valueDesc = columnsDescriptor(
        rewriter, loc, sharedWindowAddress(rewriter, loc, adaptor.getRhs()), valueRows);
    wgmmaFence(rewriter, loc);
    for (int64_t k = 0; k < probs.kSteps(); ++k) {
      SmallVector<Value> a;
      for (Value pair : probs.registers(/*mTile=*/0, k))
        a.push_back(asI32(rewriter, loc, pair));
      acc = wgmma(rewriter, loc, mmaType, acc, a,
                  SharedOperand{valueDesc, k * 16 * kPanelRowBytes},
                  /*transposeB=*/true);
    }
    wgmmaCommit(rewriter, loc);
    if (!isAsync(op))
      acc = wgmmaWait(rewriter, loc, 0, acc);
    rewriter.replaceOp(op, packVector(rewriter, loc, adaptor.getAcc().getType(),
                                      acc));
    return success();
  }
};

/// arith.truncf of an accumulator-layout fragment to f8E4M3FN (P of the
/// e4m3 P·V). An e4m3 fragment exists only as that product's A operand,
/// so its registers hold the bytes in wgmma m64nNk32's A order rather than
/// the accumulator's: per 32-key step k, four 32-bit registers a0 .. a3 of
/// (n8 tiles 4k, 4k + 1 of row r), (the same of row r + 8), (tiles 4k + 2,
/// 4k + 3 of row r), (the same of row r + 8) — the accumulator's element
/// pairs 8k and 8k + 2, 8k + 1 and 8k + 3, 8k + 4 and 8k + 6, 8k + 5 and
/// 8k + 7, each pair rounded by cvt.rn.satfinite.e4m3x2 into one half
/// (E4M3ProbsTimesValueLowering reads them as they are). Converting
/// straight into the A registers is what FA3 does (its permute_Cregs_fp8):
/// packed in the accumulator's order, the loop-carried P needed a byte
/// permute per register to form A.
struct TruncToE4M3Lowering : OpConversionPattern<arith::TruncFOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(arith::TruncFOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = dyn_cast<RankedTensorType>(op.getType());
    if (!type || !isa_and_nonnull<FragmentLayoutAttr>(type.getEncoding()) ||
        !isa<Float8E4M3FNType>(type.getElementType()))
      return rewriter.notifyMatchFailure(op, "not a fragment to e4m3");
    Location loc = op.getLoc();
    SmallVector<Value> values = unpackVector(rewriter, loc, adaptor.getIn());
    // 16 values (8 pairs) a 32-key step.
    if (values.size() % 16 != 0)
      return op.emitError("an e4m3 fragment needs its keys in steps of 32 "
                          "(wgmma k32's A operand), got ")
             << type.getDimSize(type.getRank() - 1);
    auto pair = [&](int64_t p) { return ArrayRef<Value>(values).slice(2 * p, 2); };
    SmallVector<Value> registers;
    for (int64_t first = 0, e = values.size() / 2; first < e; first += 8)
      for (int64_t lo : {first, first + 1, first + 4, first + 5}) {
        SmallVector<Value> four(pair(lo));
        four.append(pair(lo + 2).begin(), pair(lo + 2).end());
        registers.push_back(packE4M3x4(rewriter, loc, four));
      }
    Value packed = vector::FromElementsOp::create(
        rewriter, loc,
        VectorType::get({static_cast<int64_t>(registers.size())}, rewriter.getI32Type()),
        registers);
    rewriter.replaceOpWithNewOp<vector::BitCastOp>(
        op, getTypeConverter()->convertType(type), packed);
    return success();
  }
};

/// fa.matmul acc + P·V of the e4m3 kernel: P's e4m3 registers as wgmma
/// m64nNk32's A operand, Vᵀ (#fa.tma_shared keyMajor) as its K-major B.
/// Per 32-key step k (n8 tiles 4k .. 4k + 3 of P's accumulator layout),
/// a thread's bytes are A's without shuffles once the keys are permuted
/// by σ, as Vᵀ's are: a0 = tiles 4k, 4k + 1 of row r, a1 the same of row
/// r + 8, a2 and a3 tiles 4k + 2, 4k + 3 (PTX ISA, the k32 A fragment: a
/// thread's 4t .. 4t + 3 and 16 + 4t .. 16 + 4t + 3 of each row), which
/// are P's registers 4k .. 4k + 3 as TruncToE4M3Lowering packs them.
struct E4M3ProbsTimesValueLowering : OpConversionPattern<TileMatmulOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TileMatmulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isDistributed(op) || !isTmaTile(op.getRhs().getType()) ||
        !isKeyMajor(op.getRhs().getType()) || isTmaTile(op.getLhs().getType()) ||
        op.getTransposeA() || op.getTransposeB() || op.getAlpha())
      return rewriter.notifyMatchFailure(op, "not acc + P·Vᵀ of e4m3");
    Location loc = op.getLoc();
    auto value = op.getRhs().getType();
    Type element = value.getElementType();
    int64_t keys = value.getDimSize(0), valueDim = value.getDimSize(1);
    SmallVector<Value> acc = unpackVector(rewriter, loc, adaptor.getAcc());
    auto probs = cast<VectorType>(adaptor.getLhs().getType());
    Value words = vector::BitCastOp::create(
        rewriter, loc,
        VectorType::get({probs.getDimSize(0) / 4}, rewriter.getI32Type()),
        adaptor.getLhs());
    auto reg = [&](int64_t i) -> Value {
      return vector::ExtractOp::create(rewriter, loc, words, ArrayRef<int64_t>{i});
    };
    Value valueDesc = matrixDescriptor(
        rewriter, loc, sharedWindowAddress(rewriter, loc, adaptor.getRhs()), 16,
        kSwizzleAtomBytes);
    int64_t stepElements = wgmmaDepth(element), panelElements = panelElementsOf(element);
    // Every k step's A registers before the fence: a register written
    // between two wgmmas makes ptxas fence (and serialise) each of them
    // (its C7519 note).
    SmallVector<SmallVector<Value>> steps;
    for (int64_t k = 0; k < keys / stepElements; ++k)
      steps.push_back({reg(4 * k), reg(4 * k + 1), reg(4 * k + 2), reg(4 * k + 3)});
    wgmmaFence(rewriter, loc);
    for (int64_t k = 0, e = steps.size(); k < e; ++k) {
      ArrayRef<Value> a = steps[k];
      int64_t panel = k * stepElements / panelElements;
      int64_t inPanel = (k * stepElements % panelElements) / stepElements * kStepBytes;
      acc = wgmma(rewriter, loc, element, acc, a,
                  SharedOperand{valueDesc, panel * valueDim * kPanelRowBytes + inPanel},
                  /*transposeB=*/false);
    }
    wgmmaCommit(rewriter, loc);
    if (!isAsync(op))
      acc = wgmmaWait(rewriter, loc, 0, acc);
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
  // fa.matmul (acc + P·V, the backward's dS·K): wgmma with P's registers
  // as A.
  patterns.add<ProbsTimesValueLowering>(converter, ctx);
  // e4m3: P rounded into 16-bit byte pairs, and acc + P·Vᵀ on wgmma k32.
  patterns.add<TruncToE4M3Lowering>(converter, ctx, /*benefit=*/2);
  patterns.add<E4M3ProbsTimesValueLowering>(converter, ctx);
  // fa.matmul {transpose_b} (dO·Vᵀ) and {transpose_a} (Pᵀ·dO, dSᵀ·Q): the
  // backward's, every operand from shared memory.
  patterns.add<RowsTimesRowsLowering, TransposedTimesColumnsLowering>(converter,
                                                                      ctx);
  // fa.matmul (dS·K_j with dS in shared memory, column-split results).
  patterns.add<SharedTimesColumnsLowering>(converter, ctx);
  // fa.mma_wait: the schedule's wait for asynchronous wgmma groups.
  patterns.add<MmaWaitLowering>(converter, ctx);
}
