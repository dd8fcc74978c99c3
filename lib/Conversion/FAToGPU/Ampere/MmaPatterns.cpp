//===- MmaPatterns.cpp - fa.qk_scores and fa.matmul on mma.sync -----------===//
//
// Part of fa-mlir.
//
// The chip-specific half of fa-gpu-lower-fragments on sm_80. Fragment
// layouts are PTX's for mma.m16n8k16 (PTX ISA, "Matrix Fragments for
// mma.m16n8k16 with floating point type"): lane l holds rows l/4 and l/4 + 8
// and columns 2·(l%4), 2·(l%4) + 1 of each 8-wide piece, which is exactly
// #fa.fragment (FragmentPatterns.h), so the MMA results feed the
// chip-neutral patterns directly.
//
//===----------------------------------------------------------------------===//

#include "AmpereStrategy.h"

#include "fa/Conversion/FAToGPU/FragmentPatterns.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <array>
#include <string>

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::ampere;

namespace {

using Fragment = std::array<Value, 4>; ///< A: 4 pairs; C: 4 f32
using BFragment = std::array<Value, 2>;

/// Whether every shared operand among `values` is a tile ldmatrix reads
/// as WarpMma addresses it: workgroup memory, row-major with a static row
/// stride (the address is computed here, not by nvgpu.ldmatrix's verifier).
bool areLdmatrixTiles(ValueRange values) {
  return llvm::all_of(values, [](Value v) {
    auto type = dyn_cast<MemRefType>(v.getType());
    if (!type)
      return true; // an operand in registers
    auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(type.getMemorySpace());
    if (!space || space.getValue() != gpu::AddressSpace::Workgroup)
      return false;
    auto [strides, offset] = type.getStridesAndOffset();
    return strides.size() == 2 && !ShapedType::isDynamic(strides[0]) && strides[1] == 1;
  });
}

/// Whether a result's column groups start where WarpMma::ldmatrix can
/// place them within the swizzle: none, whole 64-column spans (D = 128 on
/// two groups), or 32 columns each (D = 64 on two groups).
bool isSpanAlignedGroup(const FragmentShape &out) {
  return out.columnGroups == 1 || out.columns % 64 == 0 || out.columns == 32;
}

/// Index math and ldmatrix at one location, for one warp's lane.
struct WarpMma {
  OpBuilder &b;
  Location loc;
  Value lane, warp;

  WarpMma(OpBuilder &b, Location loc) : b(b), loc(loc) {
    Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
    lane = arith::RemUIOp::create(b, loc, tid, cst(32));
    warp = arith::DivUIOp::create(b, loc, tid, cst(32));
  }
  Value cst(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, int64_t y) { return arith::MulIOp::create(b, loc, x, cst(y)); }
  Value div(Value x, int64_t y) { return arith::DivUIOp::create(b, loc, x, cst(y)); }
  Value rem(Value x, int64_t y) { return arith::RemUIOp::create(b, loc, x, cst(y)); }

  /// ldmatrix.x4 of the tile at (row, logical chunk), split into its four
  /// 8x8 matrices' registers (vector<2xT> each). Row and chunk come as a
  /// compile-time part and the lane's: `rowStep` a multiple of 8 (so the
  /// swizzle's phase is the lane row's), and `chunkStep` either a multiple
  /// of 8 or even with the lane's chunk 0 or 1 (its n-tile pair or k16
  /// step). The address is a 32-bit shared-window address (a few lane
  /// values per tile) plus the compile-time part as a constant GEP, which
  /// NVPTX folds into the instruction (`[addr+imm]`). Where the tile is
  /// invariant in a loop (the backward's K and V in its Q-block loop),
  /// LLVM hoists each GEP out of the loop as an add of its own, which
  /// ptxas folds back into the immediates. (A whole address computed per
  /// ldmatrix held a register each across the loop: spills in the sm_80
  /// backward.)
  std::array<Value, 4> ldmatrix(Value tile, int64_t rowStep, Value laneRow,
                                int64_t chunkStep, Value laneChunk,
                                bool transpose, Value spanColumn = Value()) {
    assert(rowStep % 8 == 0 && "the swizzle's phase is the lane row's");
    assert(chunkStep % 2 == 0 && "the lane's chunk (0 or 1) fills bit 0");
    auto type = cast<MemRefType>(tile.getType());
    Type element = type.getElementType();
    int64_t bytes = element.getIntOrFloatBitWidth() / 8;
    assert(areLdmatrixTiles(tile) && "a row-major workgroup tile with a static row stride");
    int64_t rowElements = type.getStridesAndOffset().first[0];
    // (8·hi + lo + laneChunk) ^ phase = 8·hi + ((lo + laneChunk) ^ phase):
    // lo + laneChunk < 8, so the XOR leaves the high part alone. A group's
    // `spanColumn` is a multiple of 64 (whole 8-chunk spans: the XOR is an
    // add) or of 32 with the group's chunks below 4 (a 32-column group:
    // (4 + c) ^ phase = 4 ^ (c ^ phase) for c < 4), so it is XORed in.
    int64_t hi = chunkStep / 8, lo = chunkStep % 8;
    Value column = swizzledColumn(b, loc, laneRow, add(laneChunk, cst(lo)));
    if (spanColumn)
      column = arith::XOrIOp::create(b, loc, column, spanColumn);
    Value laneOffset = mul(add(mul(laneRow, rowElements), column), bytes);
    SharedWindowAddress window = splitSharedWindowAddress(b, loc, tile);
    Value address = arith::AddIOp::create(
        b, loc, window.base,
        arith::IndexCastUIOp::create(b, loc, b.getI32Type(), laneOffset));
    int64_t immediate = window.bytes + (rowStep * rowElements + 64 * hi) * bytes;
    Type i32 = b.getI32Type();
    auto result = LLVM::LLVMStructType::getLiteral(b.getContext(), {i32, i32, i32, i32});
    // ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16: a read of shared
    // memory that barriers order (P and dS are rewritten every step).
    Value loaded = NVVM::LdMatrixOp::create(
        b, loc, result, sharedPointer(b, loc, address, immediate), 4,
        transpose ? NVVM::MMALayout::col : NVVM::MMALayout::row,
        NVVM::LdStMatrixShapeAttr::get(b.getContext(), 8, 8),
        NVVM::LdStMatrixEltType::B16);
    std::array<Value, 4> regs;
    for (int64_t i = 0; i < 4; ++i) {
      Value word = LLVM::ExtractValueOp::create(b, loc, loaded, ArrayRef<int64_t>{i});
      Value asVector = vector::FromElementsOp::create(
          b, loc, VectorType::get({1}, i32), ValueRange{word});
      regs[i] = vector::BitCastOp::create(b, loc, VectorType::get({2}, element),
                                          asVector);
    }
    return regs;
  }

  /// A fragment (16 rows × k16 chunk kc) of a row-major tile. Lane l
  /// addresses row l % 16 at chunk 2·kc + l / 16, giving a0 = (rows 0-7,
  /// k 0-7), a1 = (8-15, 0-7), a2 = (0-7, 8-15), a3 = (8-15, 8-15).
  Fragment loadA(Value tile, Value row0, int64_t kc) {
    return ldmatrix(tile, 0, add(row0, rem(lane, 16)), 2 * kc, div(lane, 16),
                    /*transpose=*/false);
  }

  /// The A fragment (16 rows × k16 chunk kc) of Aᵀ for A stored [k][m]
  /// (P or dS, written by rows of queries): ldmatrix.trans of 8 × 8 blocks
  /// of A, matrix i covering k rows 16·kc + 8·(i/2) .. +7 at m chunk
  /// m0/8 + i % 2, which gives a0 = (m 0-7, k 0-7), a1 = (m 8-15, k 0-7),
  /// a2 = (m 0-7, k 8-15), a3 = (m 8-15, k 8-15) as loadA does.
  Fragment loadATransposed(Value tile, Value m0, int64_t kc) {
    Value matrix = div(lane, 8);
    Value row = add(mul(div(matrix, 2), 8), rem(lane, 8));
    Value chunk = add(div(m0, 8), rem(matrix, 2));
    return ldmatrix(tile, 16 * kc, row, 0, chunk, /*transpose=*/true);
  }

  /// B fragments of n-tiles n0/8 and n0/8 + 1 at k16 chunk kc, from a tile
  /// stored [n][k] (K for S = QKᵀ): matrix i = l/8 covers n rows
  /// n0 + 8·(i/2) .. +7 at k chunk 2·kc + i % 2.
  /// `groupRow`, if given, is the first row of the warp's column group
  /// (a multiple of 16: the swizzle's phase stays the lane's).
  std::array<BFragment, 2> loadBFromRows(Value tile, int64_t n0, int64_t kc,
                                         Value groupRow = Value()) {
    Value matrix = div(lane, 8);
    Value row = add(mul(div(matrix, 2), 8), rem(lane, 8));
    if (groupRow)
      row = add(row, groupRow);
    assert(n0 % 16 == 0 && "n-tile pairs");
    auto r = ldmatrix(tile, n0, row, 2 * kc, rem(matrix, 2), false);
    return {BFragment{r[0], r[1]}, BFragment{r[2], r[3]}};
  }

  /// The same from a tile stored [k][n] (V for O = PV), via ldmatrix.trans:
  /// matrix i covers k rows 16·kc + 8·(i % 2) .. +7 at n chunk n0/8 + i/2.
  /// `groupColumn`, if given, is the first column of the warp's column
  /// group (a multiple of 64, or of 32 for groups of 32 columns:
  /// isSpanAlignedGroup).
  std::array<BFragment, 2> loadBFromColumns(Value tile, int64_t n0, int64_t kc,
                                            Value groupColumn = Value()) {
    Value matrix = div(lane, 8);
    Value row = add(mul(rem(matrix, 2), 8), rem(lane, 8));
    assert(n0 % 16 == 0 && "n-tile pairs");
    auto r = ldmatrix(tile, 16 * kc, row, n0 / 8, div(matrix, 2), true,
                      groupColumn);
    return {BFragment{r[0], r[1]}, BFragment{r[2], r[3]}};
  }

  /// d = a·b + c on mma.sync.m16n8k16, f32 accumulation.
  Fragment mma(const Fragment &a, const BFragment &bf, const Fragment &c) {
    SmallVector<Value> aOps, bOps;
    for (Value reg : a)
      aOps.push_back(operand(reg));
    for (Value reg : bf)
      bOps.push_back(operand(reg));
    Type f32 = b.getF32Type();
    auto resultType =
        LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
    bool isBf16 = cast<VectorType>(a[0].getType()).getElementType().isBF16();
    std::optional<std::array<NVVM::MMATypes, 2>> ptxTypes;
    if (isBf16)
      ptxTypes = {NVVM::MMATypes::bf16, NVVM::MMATypes::bf16};
    auto op = NVVM::MmaOp::create(
        b, loc, resultType, aOps, bOps, SmallVector<Value>(c.begin(), c.end()),
        ArrayRef<int64_t>{16, 8, 16}, /*b1Op=*/std::nullopt,
        /*intOverflow=*/std::nullopt, ptxTypes,
        std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                       NVVM::MMALayout::col});
    Fragment d;
    for (int64_t i = 0; i < 4; ++i)
      d[i] = LLVM::ExtractValueOp::create(b, loc, op.getResult(),
                                          ArrayRef<int64_t>{i});
    return d;
  }

  /// A register as mma.sync takes it: vector<2xf16> as is; bf16 pairs as
  /// i32 (MLIR 22 cannot type bf16 vectors for nvvm.mma.sync).
  Value operand(Value pair) {
    if (cast<VectorType>(pair.getType()).getElementType().isF16())
      return pair;
    Value asInt = vector::BitCastOp::create(
        b, loc, VectorType::get({1}, b.getI32Type()), pair);
    return vector::ExtractOp::create(b, loc, asInt, ArrayRef<int64_t>{0});
  }

  /// The first row of m-tile mt of this warp.
  Value tileRow0(int64_t mTiles, int64_t mt) {
    return add(mul(warp, 16 * mTiles), cst(16 * mt));
  }
  /// The same where the warps are split into column groups: a warp's rows
  /// are those of its index within its group (ThreadFragment::row).
  Value tileRow0(const FragmentShape &shape, int64_t mt) {
    if (shape.columnGroups == 1)
      return tileRow0(shape.mTiles, mt);
    Value rowWarp = rem(warp, shape.warps / shape.columnGroups);
    return add(mul(rowWarp, 16 * shape.mTiles), cst(16 * mt));
  }
  /// The first column (of the whole tile) of this warp's column group; null
  /// without column groups.
  Value groupColumn(const FragmentShape &shape) {
    if (shape.columnGroups == 1)
      return Value();
    return mul(div(warp, shape.warps / shape.columnGroups), shape.columns);
  }
};

int64_t kChunks(int64_t k) { return (k + 15) / 16; }

/// fa.load_operand: the A fragments of a shared tile, per m-tile and k16
/// chunk, kept in registers (the query tile for the whole KV loop).
struct LoadOperandLowering : OpConversionPattern<LoadOperandOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LoadOperandOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isDistributed(op))
      return rewriter.notifyMatchFailure(op, "tiles without a GPU layout");
    if (!areLdmatrixTiles(adaptor.getTile()))
      return rewriter.notifyMatchFailure(op, "not a row-major workgroup tile");
    auto layout = cast<OperandLayoutAttr>(op.getType().getEncoding());
    WarpMma w(rewriter, op.getLoc());
    SmallVector<Value> regs;
    for (int64_t mt = 0; mt < layout.getMTiles(); ++mt)
      for (int64_t kc = 0; kc < kChunks(op.getType().getDimSize(1)); ++kc)
        for (Value reg : w.loadA(adaptor.getTile(),
                                 w.tileRow0(layout.getMTiles(), mt), kc))
          regs.push_back(reg);
    rewriter.replaceOp(op, packVector(rewriter, op.getLoc(),
                                      getTypeConverter()->convertType(op.getType()),
                                      regs));
    return success();
  }
};

/// acc += A·Bᵀ for a B stored by rows ([n][k]: K in QKᵀ, V in dO·Vᵀ), per
/// m-tile over n8 tiles, each B fragment pair feeding every m-tile. A is a
/// shared tile (ldmatrix) or its fragments already in registers
/// (#fa.operand, the query of the forward).
void multiplyByRows(ConversionPatternRewriter &rewriter, WarpMma &w,
                    Value lhs, Value rhs, int64_t depth,
                    const FragmentShape &shape, SmallVector<Fragment> &acc) {
  Location loc = w.loc;
  bool lhsInRegisters = isa<VectorType>(lhs.getType());
  assert((!lhsInRegisters || shape.columnGroups == 1) &&
         "register operands are the forward's, without column groups");
  // A warp of column group g multiplies by B's rows g·columns.. (its keys).
  Value groupRow = w.groupColumn(shape);
  int64_t chunks = kChunks(depth);
  for (int64_t kc = 0; kc < chunks; ++kc) {
    SmallVector<Fragment> a;
    for (int64_t mt = 0; mt < shape.mTiles; ++mt) {
      if (!lhsInRegisters) {
        a.push_back(w.loadA(lhs, w.tileRow0(shape, mt), kc));
        continue;
      }
      Fragment regs;
      for (int64_t r = 0; r < 4; ++r)
        regs[r] = vector::ExtractOp::create(
            rewriter, loc, lhs, ArrayRef<int64_t>{(mt * chunks + kc) * 4 + r});
      a.push_back(regs);
    }
    for (int64_t n0 = 0; n0 < shape.columns; n0 += 16) {
      auto rhsFrags = w.loadBFromRows(rhs, n0, kc, groupRow);
      for (int64_t mt = 0; mt < shape.mTiles; ++mt)
        for (int64_t half = 0; half < 2; ++half) {
          if (n0 / 8 + half >= shape.nTiles())
            continue; // the padding half of a width that is 8 mod 16
          Fragment &c = acc[mt * shape.nTiles() + n0 / 8 + half];
          c = w.mma(a[mt], rhsFrags[half], c);
        }
    }
  }
}

/// An accumulator's fragments (vector<size x f32> in FragmentShape order).
SmallVector<Fragment> fragmentsOf(OpBuilder &b, Location loc, Value acc) {
  SmallVector<Value> values = unpackVector(b, loc, acc);
  SmallVector<Fragment> fragments;
  for (size_t i = 0; i < values.size(); i += 4)
    fragments.push_back({values[i], values[i + 1], values[i + 2], values[i + 3]});
  return fragments;
}

Value packFragments(OpBuilder &b, Location loc, Type type,
                    ArrayRef<Fragment> fragments) {
  SmallVector<Value> values;
  for (const Fragment &f : fragments)
    values.append(f.begin(), f.end());
  return packVector(b, loc, type, values);
}

/// fa.matmul's alpha (acc + α·A·B) around MMAs that accumulate in place:
/// acc·(1/α) before, ·α after, so that no second accumulator is live.
struct MatmulAlpha {
  OpBuilder &b;
  Location loc;
  FloatAttr alpha;
  void scale(MutableArrayRef<Value> values, double factor) {
    Value c = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(factor));
    for (Value &v : values)
      v = arith::MulFOp::create(b, loc, v, c);
  }
  void before(MutableArrayRef<Value> values) {
    if (alpha)
      scale(values, 1.0 / alpha.getValueAsDouble());
  }
  void after(MutableArrayRef<Value> values) {
    if (alpha)
      scale(values, alpha.getValueAsDouble());
  }
  void before(MutableArrayRef<Fragment> acc) {
    for (Fragment &f : acc)
      before(MutableArrayRef<Value>(f));
  }
  void after(MutableArrayRef<Fragment> acc) {
    for (Fragment &f : acc)
      after(MutableArrayRef<Value>(f));
  }
};

/// fa.qk_scores: S = QKᵀ, then the op's score epilogue (scale, softcap,
/// log2 e) per element.
struct QKScoresLowering : OpConversionPattern<QKScoresOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(QKScoresOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isDistributed(op))
      return rewriter.notifyMatchFailure(op, "tiles without a GPU layout");
    if (op.getDescale()) // e4m3 tiles: no mma.sync lowering (sm_90a only)
      return rewriter.notifyMatchFailure(op, "f8E4M3FN scores are not lowered on sm_80");
    if (!areLdmatrixTiles({adaptor.getQuery(), adaptor.getKey()}))
      return rewriter.notifyMatchFailure(op, "not row-major workgroup tiles");
    Location loc = op.getLoc();
    FragmentShape shape = FragmentShape::of(op.getType());
    WarpMma w(rewriter, loc);
    Value zero = arith::ConstantOp::create(rewriter, loc,
                                           rewriter.getF32FloatAttr(0.0));
    SmallVector<Fragment> acc(shape.mTiles * shape.nTiles(),
                              Fragment{zero, zero, zero, zero});
    multiplyByRows(rewriter, w, adaptor.getQuery(), adaptor.getKey(),
                   op.getQuery().getType().getDimSize(1), shape, acc);
    SmallVector<Value> scores;
    for (const Fragment &f : acc)
      for (Value dot : f)
        scores.push_back(transformScore(rewriter, loc, op, dot));
    rewriter.replaceOp(op, packVector(rewriter, loc,
                                      getTypeConverter()->convertType(op.getType()),
                                      scores));
    return success();
  }
};

/// fa.matmul {transpose_b} with both operands in shared memory: acc +
/// A·Bᵀ, the backward's dP = dO·Vᵀ (the same MMAs as S = QKᵀ).
struct RowsTimesRowsLowering : OpConversionPattern<TileMatmulOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TileMatmulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isDistributed(op) || !op.getTransposeB() || op.getTransposeA())
      return rewriter.notifyMatchFailure(op, "not a distributed acc + A·Bᵀ");
    if (!areLdmatrixTiles({adaptor.getLhs(), adaptor.getRhs()}))
      return rewriter.notifyMatchFailure(op, "not row-major workgroup tiles");
    Location loc = op.getLoc();
    FragmentShape shape = FragmentShape::of(op.getAcc().getType());
    WarpMma w(rewriter, loc);
    SmallVector<Fragment> acc = fragmentsOf(rewriter, loc, adaptor.getAcc());
    MatmulAlpha alpha{rewriter, loc, op.getAlphaAttr()};
    alpha.before(acc);
    multiplyByRows(rewriter, w, adaptor.getLhs(), adaptor.getRhs(),
                   op.getLhs().getType().getDimSize(1), shape, acc);
    alpha.after(acc);
    rewriter.replaceOp(op, packFragments(rewriter, loc,
                                         adaptor.getAcc().getType(), acc));
    return success();
  }
};

/// fa.matmul {transpose_a}: acc + Aᵀ·B with A [k][m] and B [k][n] in
/// shared memory (the backward's dV += Pᵀ·dO and dK += dSᵀ·Q, P and dS
/// written there by fa.store_shared): A's fragments by ldmatrix.trans of
/// A's columns, B's as V's in P·V.
struct TransposedTimesColumnsLowering : OpConversionPattern<TileMatmulOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TileMatmulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isDistributed(op) || !op.getTransposeA() || op.getTransposeB() ||
        !isa<MemRefType>(adaptor.getLhs().getType()))
      return rewriter.notifyMatchFailure(op, "not a distributed acc + Aᵀ·B");
    if (!areLdmatrixTiles({adaptor.getLhs(), adaptor.getRhs()}))
      return rewriter.notifyMatchFailure(op, "not row-major workgroup tiles");
    Location loc = op.getLoc();
    FragmentShape out = FragmentShape::of(op.getAcc().getType());
    if (!isSpanAlignedGroup(out))
      return rewriter.notifyMatchFailure(
          op, "a column group is neither whole 64-column spans nor 32 columns");
    WarpMma w(rewriter, loc);
    SmallVector<Fragment> acc = fragmentsOf(rewriter, loc, adaptor.getAcc());
    Value groupColumn = w.groupColumn(out);
    MatmulAlpha alpha{rewriter, loc, op.getAlphaAttr()};
    alpha.before(acc);
    int64_t depth = op.getLhs().getType().getDimSize(0);
    for (int64_t kc = 0; kc < kChunks(depth); ++kc) {
      SmallVector<Fragment> a;
      for (int64_t mt = 0; mt < out.mTiles; ++mt)
        a.push_back(w.loadATransposed(adaptor.getLhs(), w.tileRow0(out, mt), kc));
      for (int64_t n0 = 0; n0 < out.columns; n0 += 16) {
        auto rhsFrags = w.loadBFromColumns(adaptor.getRhs(), n0, kc, groupColumn);
        for (int64_t mt = 0; mt < out.mTiles; ++mt)
          for (int64_t half = 0; half < 2; ++half) {
            if (n0 / 8 + half >= out.nTiles())
              continue;
            Fragment &c = acc[mt * out.nTiles() + n0 / 8 + half];
            c = w.mma(a[mt], rhsFrags[half], c);
          }
      }
    }
    alpha.after(acc);
    rewriter.replaceOp(op, packFragments(rewriter, loc,
                                         adaptor.getAcc().getType(), acc));
    return success();
  }
};

/// fa.matmul acc + A·B, B N-major in shared memory by ldmatrix.trans (V,
/// K), each fragment feeding every m-tile. A is P's accumulator in
/// registers (two adjacent n8 tiles of the C layout of m16n8 are the A
/// layout of m16k16), or a shared tile read by ldmatrix: dS where its keys
/// are split over column groups, so that dQ_i = dS·K_j needs all of them
/// (BackwardColumnGroups). With column groups, a warp's columns of the
/// result are B's columns of its group.
struct ProbsTimesValueLowering : OpConversionPattern<TileMatmulOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TileMatmulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isDistributed(op))
      return rewriter.notifyMatchFailure(op, "tiles without a GPU layout");
    if (op.getTransposeA() || op.getTransposeB())
      return rewriter.notifyMatchFailure(op, "a transposed operand");
    if (!areLdmatrixTiles({adaptor.getLhs(), adaptor.getRhs()}))
      return rewriter.notifyMatchFailure(op, "not row-major workgroup tiles");
    FragmentShape out = FragmentShape::of(op.getAcc().getType());
    if (!isSpanAlignedGroup(out))
      return rewriter.notifyMatchFailure(
          op, "a column group is neither whole 64-column spans nor 32 columns");
    Location loc = op.getLoc();
    Type mmaType = op.getRhs().getType().getElementType();
    bool lhsShared = isa<MemRefType>(adaptor.getLhs().getType());
    if (out.columnGroups > 1 && !lhsShared)
      return rewriter.notifyMatchFailure(
          op, "a register A holds only its group's keys: split results read A from shared memory");
    WarpMma w(rewriter, loc);
    std::optional<AccumulatorOperand> probsOperand;
    if (!lhsShared)
      probsOperand.emplace(rewriter, loc, adaptor.getLhs(), op.getLhs().getType(),
                           mmaType);
    int64_t kSteps = lhsShared ? kChunks(op.getLhs().getType().getDimSize(1))
                               : probsOperand->kSteps();
    Value groupColumn = w.groupColumn(out);
    SmallVector<Value> accValues = unpackVector(rewriter, loc, adaptor.getAcc());
    MatmulAlpha alpha{rewriter, loc, op.getAlphaAttr()};
    alpha.before(accValues);
    auto fragmentAt = [&](int64_t first) {
      return Fragment{accValues[first], accValues[first + 1],
                      accValues[first + 2], accValues[first + 3]};
    };
    for (int64_t kc = 0; kc < kSteps; ++kc) {
      SmallVector<Fragment> a;
      for (int64_t mt = 0; mt < out.mTiles; ++mt)
        a.push_back(lhsShared ? w.loadA(adaptor.getLhs(), w.tileRow0(out, mt), kc)
                              : probsOperand->registers(mt, kc));
      for (int64_t n0 = 0; n0 < out.columns; n0 += 16) {
        auto valueFrags = w.loadBFromColumns(adaptor.getRhs(), n0, kc, groupColumn);
        for (int64_t mt = 0; mt < out.mTiles; ++mt)
          for (int64_t half = 0; half < 2; ++half) {
            int64_t nt = n0 / 8 + half;
            if (nt >= out.nTiles())
              continue; // the padding half of a Dv that is 8 mod 16
            Fragment c = fragmentAt(out.index(mt, nt, 0));
            Fragment d = w.mma(a[mt], valueFrags[half], c);
            for (int64_t r = 0; r < 4; ++r)
              accValues[out.index(mt, nt, r)] = d[r];
          }
      }
    }
    alpha.after(accValues);
    rewriter.replaceOp(op, packVector(rewriter, loc, adaptor.getAcc().getType(),
                                      accValues));
    return success();
  }
};

} // namespace

void ampere::populateAmpereMmaPatterns(const TypeConverter &converter,
                                       RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  // fa.load_operand: ldmatrix.x4 A fragments.
  patterns.add<LoadOperandLowering>(converter, ctx);
  // fa.qk_scores: ldmatrix K fragments, mma.sync, the score epilogue.
  patterns.add<QKScoresLowering>(converter, ctx);
  // fa.matmul (acc + P·V, dS·K): P from registers, ldmatrix.trans V, mma.sync.
  patterns.add<ProbsTimesValueLowering>(converter, ctx);
  // fa.matmul {transpose_b} (dO·Vᵀ) and {transpose_a} (Pᵀ·dO, dSᵀ·Q): the
  // backward's operands in shared memory.
  patterns.add<RowsTimesRowsLowering, TransposedTimesColumnsLowering>(converter,
                                                                      ctx);
}
