//===- ScoreModPatterns.cpp - masks over fragments ------------------------===//
//
// Part of fa-mlir.
//
// Score modifications that depend on where an element is: its query row
// and key column, from the fragment layout. The mask semantics are
// MaskUtils' (the same functions the CPU lowering and fa-tile use).
//
//===----------------------------------------------------------------------===//

#include "FragmentLowering.h"

#include "fa/Dialect/FA/IR/ModRegions.h"
#include "fa/Dialect/FA/Utils/MaskUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <type_traits>

#include <limits>

using namespace mlir;
using namespace mlir::fa;

namespace {

/// fa.apply_mask: -inf where the key is invisible, only where the mask
/// cuts (MaskUtils' classification); elsewhere the scores pass through
/// untouched. The decision is per tile, or with `maskPerWarp` per warp
/// (warp-uniform; on a diagonal tile most warps' rows see every key). Per
/// row the visible keys are one interval (buildVisibleKeyInterval) taken
/// relative to the tile and clamped to [-1, C], so that an element costs a
/// 32-bit compare against its column offset, an immediate (two for a
/// window), and a select. (Testing each element's (row, column) in 64-bit
/// index arithmetic instead, as buildKeyVisible does, made LLVM hoist the
/// thread's columns out of the key-invariant loops: 16 64-bit registers
/// across the sm_80 D128 backward's Q-block loop.)
struct ApplyMaskLowering : OpConversionPattern<ApplyMaskOp> {
  ApplyMaskLowering(const TypeConverter &converter, MLIRContext *ctx,
                    bool perWarp)
      : OpConversionPattern(converter, ctx), perWarp(perWarp) {}

  LogicalResult
  matchAndRewrite(ApplyMaskOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isDistributed(op))
      return rewriter.notifyMatchFailure(op, "tiles without a GPU layout");
    Location loc = op.getLoc();
    auto type = op.getScores().getType();
    auto layout = cast<FragmentLayoutAttr>(type.getEncoding());
    Value firstRow = adaptor.getQueryOffset();
    int64_t rows = type.getDimSize(0);
    bool perWarp = this->perWarp;
    if (auto knob = op->getAttrOfType<BoolAttr>(kMaskPerWarpAttrName))
      perWarp = knob.getValue();
    if (perWarp) {
      rows = 16 * layout.getMTiles();
      // The warp's rows (its place among the warps of its column group);
      // the decision covers the tile's every column.
      Value warp = ThreadFragment(rewriter, loc, layout).warp;
      if (layout.getColumnGroups() > 1)
        warp = arith::RemUIOp::create(
            rewriter, loc, warp,
            arith::ConstantIndexOp::create(rewriter, loc, layout.getRowWarps()));
      firstRow = arith::AddIOp::create(
          rewriter, loc, firstRow,
          arith::MulIOp::create(rewriter, loc, warp,
                                arith::ConstantIndexOp::create(rewriter, loc, rows)));
    }
    Value needMask = buildTileNeedsMask(
        rewriter, loc, op.getMask(), firstRow, adaptor.getKeyOffset(), rows,
        type.getDimSize(1), adaptor.getQueryLen(), adaptor.getKeyLen());
    Value scores = adaptor.getScores();
    auto masked = scf::IfOp::create(
        rewriter, loc, needMask,
        [&](OpBuilder &b, Location loc) {
          SmallVector<Value> values = unpackVector(b, loc, scores);
          maskByIntervals(b, loc, op, adaptor, values);
          scf::YieldOp::create(b, loc,
                               packVector(b, loc, scores.getType(), values));
        },
        [&](OpBuilder &b, Location loc) { scf::YieldOp::create(b, loc, scores); });
    rewriter.replaceOp(op, masked.getResults());
    return success();
  }

private:
  static Value minusInf(OpBuilder &b, Location loc) {
    return arith::ConstantOp::create(
        b, loc, b.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
  }

  /// Per row slot the visible keys' interval relative to the tile (clamped
  /// to [-1, C] in index math, then i32) and to the thread's first column,
  /// so that an element costs one or two compares of that bound against
  /// its column offset, an immediate, and a select. (Comparing against
  /// each element's column instead made LLVM hoist the thread's columns out
  /// of the KV loop: 20 registers live across it at block_n 80.)
  static void maskByIntervals(OpBuilder &b, Location loc, ApplyMaskOp op,
                              OpAdaptor adaptor, SmallVector<Value> &values) {
    auto type = op.getScores().getType();
    FragmentShape shape = FragmentShape::of(type);
    ThreadFragment thread(b, loc, cast<FragmentLayoutAttr>(type.getEncoding()));
    Type i32 = b.getI32Type();
    auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
    Value firstColumn =
        arith::IndexCastOp::create(b, loc, i32, thread.column(shape, 0));
    auto relative = [&](Value key) -> Value {
      if (!key)
        return Value();
      Value rel = arith::SubIOp::create(b, loc, key, adaptor.getKeyOffset());
      rel = arith::MaxSIOp::create(b, loc, rel, cst(-1));
      rel = arith::MinSIOp::create(b, loc, rel, cst(type.getDimSize(1)));
      rel = arith::IndexCastOp::create(b, loc, i32, rel);
      return arith::SubIOp::create(b, loc, rel, firstColumn);
    };
    SmallVector<std::pair<Value, Value>> bounds; // per row slot
    for (int64_t slot = 0; slot < 2 * shape.mTiles; ++slot) {
      Value row = arith::AddIOp::create(b, loc, adaptor.getQueryOffset(),
                                        thread.row(slot));
      auto [first, last] = buildVisibleKeyInterval(
          b, loc, op.getMask(), row, adaptor.getQueryLen(), adaptor.getKeyLen());
      bounds.push_back({relative(first), relative(last)});
    }
    Value inf = minusInf(b, loc);
    for (auto [i, s] : llvm::enumerate(values)) {
      auto [first, last] = bounds[shape.rowSlot(i)];
      // column(i) - column(0), as ThreadFragment::column lays them out.
      Value offset = arith::ConstantOp::create(
          b, loc, i32,
          b.getI32IntegerAttr(8 * shape.nTile(i) + shape.columnParity(i)));
      Value visible =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, offset, last);
      if (first)
        visible = arith::AndIOp::create(
            b, loc, visible,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, offset, first));
      s = arith::SelectOp::create(b, loc, visible, s, inf);
    }
  }

  bool perWarp;
};

/// fa.alibi_bias: S - c·slope·|i + N - M - j| per element, c = log2(e) in
/// log2 units (docs/design.md's ALiBi, bottom-right aligned like the masks).
struct AlibiBiasLowering : OpConversionPattern<AlibiBiasOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AlibiBiasOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isDistributed(op))
      return rewriter.notifyMatchFailure(op, "tiles without a GPU layout");
    Location loc = op.getLoc();
    auto type = op.getScores().getType();
    FragmentShape shape = FragmentShape::of(type);
    ThreadFragment thread(rewriter, loc,
                          cast<FragmentLayoutAttr>(type.getEncoding()));
    double c = op.getLog2Domain() ? M_LOG2E : 1.0;
    Value slope = arith::MulFOp::create(
        rewriter, loc, adaptor.getSlope(),
        arith::ConstantOp::create(rewriter, loc, rewriter.getF32FloatAttr(-c)));
    // distance = (q0 + row + N - M) - (k0 + column): the thread's part of
    // it once per row (as f32, exact below 2^24), then per element only the
    // column's constant offset, |.| and one FFMA.
    auto toFloat = [&](Value index) {
      Value asInt = arith::IndexCastOp::create(rewriter, loc,
                                               rewriter.getI32Type(), index);
      return arith::SIToFPOp::create(rewriter, loc, rewriter.getF32Type(), asInt);
    };
    Value firstKeyOfThread = arith::AddIOp::create(
        rewriter, loc, adaptor.getKeyOffset(), thread.column(shape, 0));
    Value shift = arith::SubIOp::create(
        rewriter, loc,
        arith::AddIOp::create(rewriter, loc, adaptor.getQueryOffset(),
                              arith::SubIOp::create(rewriter, loc,
                                                    adaptor.getKeyLen(),
                                                    adaptor.getQueryLen())),
        firstKeyOfThread);
    SmallVector<Value> rowDistance;
    for (int64_t slot = 0; slot < 2 * shape.mTiles; ++slot)
      rowDistance.push_back(toFloat(
          arith::AddIOp::create(rewriter, loc, shift, thread.row(slot))));
    SmallVector<Value> values = unpackVector(rewriter, loc, adaptor.getScores());
    for (auto [i, s] : llvm::enumerate(values)) {
      double columnOffset = 8 * shape.nTile(i) + shape.columnParity(i);
      Value distance = arith::SubFOp::create(
          rewriter, loc, rowDistance[shape.rowSlot(i)],
          arith::ConstantOp::create(rewriter, loc,
                                    rewriter.getF32FloatAttr(columnOffset)));
      // |d| as max(d, -d) and a contracted multiply-add (one FFMA): math.absf
      // and math.fma (and their LLVM intrinsics) become libdevice calls in
      // convert-gpu-to-nvvm, and the PTX must not need libdevice.
      Value magnitude = fastMax(
          rewriter, loc, distance, arith::NegFOp::create(rewriter, loc, distance));
      auto contract = arith::FastMathFlags::contract;
      s = arith::AddFOp::create(
          rewriter, loc,
          arith::MulFOp::create(rewriter, loc, magnitude, slope, contract), s,
          contract);
    }
    rewriter.replaceOp(op, packVector(rewriter, loc, adaptor.getScores().getType(),
                                      values));
    return success();
  }
};

/// One element's (q_idx, kv_idx) for the variant ops: the thread's rows
/// per row slot and its first column once, then per element a constant
/// column offset, each clamped to the last real row and key (fa.score_mod's
/// contract: a padded position is evaluated at the last real one).
struct VariantPositions {
  VariantPositions(OpBuilder &b, Location loc, RankedTensorType type,
                   Value queryOffset, Value keyOffset, Value queryLen,
                   Value keyLen)
      : b(b), loc(loc), shape(FragmentShape::of(type)) {
    ThreadFragment thread(b, loc, cast<FragmentLayoutAttr>(type.getEncoding()));
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    lastRow = arith::SubIOp::create(b, loc, queryLen, one);
    lastKey = arith::SubIOp::create(b, loc, keyLen, one);
    for (int64_t slot = 0; slot < 2 * shape.mTiles; ++slot)
      rows.push_back(arith::MinSIOp::create(
          b, loc, arith::AddIOp::create(b, loc, queryOffset, thread.row(slot)),
          lastRow));
    firstKey = arith::AddIOp::create(b, loc, keyOffset, thread.column(shape, 0));
  }
  Value query(int64_t i) { return rows[shape.rowSlot(i)]; }
  Value key(int64_t i) {
    Value key = arith::AddIOp::create(
        b, loc, firstKey,
        arith::ConstantIndexOp::create(
            b, loc, 8 * shape.nTile(i) + shape.columnParity(i)));
    return arith::MinSIOp::create(b, loc, key, lastKey);
  }

  OpBuilder &b;
  Location loc;
  FragmentShape shape;
  Value lastRow, lastKey, firstKey;
  SmallVector<Value> rows;
};

/// A captured tensor's element in a kernel: a load from the buffer view
/// (KernelArgs::captureValues), each index clamped to the extent; index
/// elements travel as i64.
Value loadCapture(OpBuilder &b, Location loc, Value buffer, ValueRange indices) {
  SmallVector<Value> clamped = clampIndices(b, loc, indices, [&](unsigned dim) {
    return memref::DimOp::create(b, loc, buffer, dim).getResult();
  });
  return memref::LoadOp::create(b, loc, buffer, clamped);
}

/// The math ops of a region as the kernel computes them: the hardware's
/// approximations and NVVM intrinsics (convert-gpu-to-nvvm would make the
/// math ops and their LLVM intrinsics libdevice calls, which the PTX must
/// not need); null for the ops cloned as they are. The set is
/// checkPipelineInput's (isGpuRegionMath).
Value lowerRegionMath(OpBuilder &b, Operation &op, ValueRange x) {
  Location loc = op.getLoc();
  auto f32 = [&](double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  };
  auto nvvm = [&](StringRef name) -> Value {
    return LLVM::CallIntrinsicOp::create(b, loc, b.getF32Type(),
                                         b.getStringAttr(name), x)
        .getResult(0);
  };
  return llvm::TypeSwitch<Operation *, Value>(&op)
      .Case([&](math::ExpOp) {
        return fastExp2(b, loc, arith::MulFOp::create(b, loc, x[0], f32(M_LOG2E)));
      })
      .Case([&](math::Exp2Op) { return fastExp2(b, loc, x[0]); })
      .Case([&](math::LogOp) {
        return arith::MulFOp::create(b, loc, fastLog2(b, loc, x[0]), f32(M_LN2));
      })
      .Case([&](math::Log2Op) { return fastLog2(b, loc, x[0]); })
      // div.full.f32 (2 ulp): the IEEE division is a dozen instructions
      // and a branch per score; the kernel's exponent is approximate anyway.
      .Case([&](arith::DivFOp div) -> Value {
        if (!div.getType().isF32())
          return Value();
        return nvvm("llvm.nvvm.div.full");
      })
      .Case([&](math::TanhOp) {
        return LLVM::TanhOp::create(b, loc, x[0], LLVM::FastmathFlags::afn);
      })
      .Case([&](math::AbsFOp) {
        return fastMax(b, loc, x[0], arith::NegFOp::create(b, loc, x[0]));
      })
      .Case([&](math::SinOp) { return nvvm("llvm.nvvm.sin.approx.f"); })
      .Case([&](math::CosOp) { return nvvm("llvm.nvvm.cos.approx.f"); })
      .Case([&](math::SqrtOp) { return nvvm("llvm.nvvm.sqrt.rn.f"); })
      .Case([&](math::RsqrtOp) { return nvvm("llvm.nvvm.rsqrt.approx.f"); })
      .Case([&](math::FmaOp) { return nvvm("llvm.nvvm.fma.rn.f"); })
      .Case([&](math::FloorOp) { return nvvm("llvm.nvvm.floor.f"); })
      .Case([&](math::CeilOp) { return nvvm("llvm.nvvm.ceil.f"); })
      .Case([&](math::TruncOp) { return nvvm("llvm.nvvm.trunc.f"); })
      .Default([](Operation *) { return Value(); });
}

/// fa.score_mod and fa.mask_mod: the region inlined per element at its
/// (b, h, q_idx, kv_idx).
template <typename VariantOp>
struct VariantLowering : OpConversionPattern<VariantOp> {
  using OpConversionPattern<VariantOp>::OpConversionPattern;
  using OpAdaptor = typename VariantOp::Adaptor;

  LogicalResult
  matchAndRewrite(VariantOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isDistributed(op))
      return rewriter.notifyMatchFailure(op, "tiles without a GPU layout");
    Location loc = op.getLoc();
    auto type = op.getScores().getType();
    VariantPositions at(rewriter, loc, type, adaptor.getQueryOffset(),
                        adaptor.getKeyOffset(), adaptor.getQueryLen(),
                        adaptor.getKeyLen());
    SmallVector<Value> values = unpackVector(rewriter, loc, adaptor.getScores());
    constexpr bool isScore = std::is_same_v<VariantOp, ScoreModOp>;
    Value inf = arith::ConstantOp::create(
        rewriter, loc,
        rewriter.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
    auto f32 = [&](double v) {
      return arith::ConstantOp::create(rewriter, loc, rewriter.getF32FloatAttr(v));
    };
    // A mask_mod that is exactly a band (MaskUtils' analysis) leaves a tile
    // inside the band as it is: the region is evaluated per element only
    // on the tiles the band cuts.
    MaskModKeyBand band;
    if constexpr (!isScore)
      band = analyzeMaskModKeyBand(op.getBody());
    scf::IfOp cut;
    if (band.exact && band.bounded()) {
      Value leaves = buildTileLeavesBand(
          rewriter, loc, band, adaptor.getQueryOffset(), adaptor.getKeyOffset(),
          type.getDimSize(0), type.getDimSize(1));
      cut = scf::IfOp::create(rewriter, loc, adaptor.getScores().getType(),
                              leaves, /*withElseRegion=*/true);
      OpBuilder otherwise = OpBuilder::atBlockBegin(cut.elseBlock());
      scf::YieldOp::create(otherwise, loc, adaptor.getScores());
      rewriter.setInsertionPointToStart(cut.thenBlock());
    }
    for (auto [i, s] : llvm::enumerate(values)) {
      SmallVector<Value> leading;
      if constexpr (isScore)
        leading.push_back(op.getLog2Domain()
                              ? arith::MulFOp::create(rewriter, loc, s, f32(M_LN2))
                              : s);
      leading.append({adaptor.getBatch(), adaptor.getHead(), at.query(i), at.key(i)});
      Value result =
          inlineModRegion(rewriter, op.getBody(), leading, adaptor.getCaptures(),
                          loadCapture, lowerRegionMath);
      if constexpr (isScore)
        s = op.getLog2Domain()
                ? arith::MulFOp::create(rewriter, loc, result, f32(M_LOG2E))
                : result;
      else
        s = arith::SelectOp::create(rewriter, loc, result, s, inf);
    }
    Value packed = packVector(rewriter, loc, adaptor.getScores().getType(), values);
    if (cut) {
      scf::YieldOp::create(rewriter, loc, packed);
      rewriter.setInsertionPointAfter(cut);
      packed = cut.getResult(0);
    }
    rewriter.replaceOp(op, packed);
    return success();
  }
};

} // namespace

void mlir::fa::populateScoreModPatterns(const TypeConverter &converter,
                                        RewritePatternSet &patterns,
                                        const FragmentLoweringOptions &options) {
  patterns.add<ApplyMaskLowering>(converter, patterns.getContext(),
                                  options.maskPerWarp);
  patterns.add<AlibiBiasLowering, VariantLowering<ScoreModOp>,
               VariantLowering<MaskModOp>>(converter, patterns.getContext());
}
