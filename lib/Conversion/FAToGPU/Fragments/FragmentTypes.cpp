//===- FragmentTypes.cpp - per-thread types and scalar helpers ------------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "fa/Conversion/FAToGPU/FragmentPatterns.h"
#include "fa/Dialect/FA/Utils/PipelineInput.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fa;

FragmentShape FragmentShape::of(RankedTensorType type) {
  auto layout = cast<FragmentLayoutAttr>(type.getEncoding());
  int64_t groups = layout.getColumnGroups();
  return {layout.getWarps(), layout.getMTiles(),
          type.getRank() == 2 ? type.getDimSize(1) / groups : 0, groups};
}

ThreadFragment::ThreadFragment(OpBuilder &b, Location loc,
                               FragmentLayoutAttr layout)
    : b(b), loc(loc), layout(layout) {
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value warpSize = arith::ConstantIndexOp::create(b, loc, 32);
  lane = arith::RemUIOp::create(b, loc, tid, warpSize);
  warp = arith::DivUIOp::create(b, loc, tid, warpSize);
}

Value ThreadFragment::row(int64_t slot) {
  // (warp mod rowWarps)·16·m_tiles + 16·m_tile + 8·half + lane/4
  auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  Value rowWarp = warp;
  if (layout.getColumnGroups() > 1)
    rowWarp = arith::RemUIOp::create(b, loc, warp, cst(layout.getRowWarps()));
  Value warpRow = arith::MulIOp::create(b, loc, rowWarp, cst(16 * layout.getMTiles()));
  Value quad = arith::DivUIOp::create(b, loc, lane, cst(4));
  Value inTile = arith::AddIOp::create(b, loc, quad, cst(rowDelta(slot)));
  return arith::AddIOp::create(b, loc, warpRow, inTile);
}

Value ThreadFragment::column(const FragmentShape &shape, int64_t i) {
  // (warp / rowWarps)·columns + 8·n_tile + 2·(lane%4) + parity
  auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  Value pairColumn = arith::MulIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, lane, cst(4)), cst(2));
  Value column = arith::AddIOp::create(
      b, loc, pairColumn,
      cst(8 * shape.nTile(i) + shape.columnParity(i)));
  if (layout.getColumnGroups() == 1)
    return column;
  Value group = arith::DivUIOp::create(b, loc, warp, cst(layout.getRowWarps()));
  return arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, group, cst(shape.columns)), column);
}

Value mlir::fa::sharedSwizzledColumn(OpBuilder &b, Location loc, Value row,
                                     Value chunk) {
  // XOR the chunk with row % 8 to spread eight rows over all 32 banks: rows
  // are a multiple of 128 bytes apart, so unswizzled, eight rows at one
  // chunk (an ldmatrix) would hit the same four banks.
  Value phase = arith::AndIOp::create(
      b, loc, row, arith::ConstantIndexOp::create(b, loc, 7));
  Value physical = arith::XOrIOp::create(b, loc, chunk, phase);
  return arith::MulIOp::create(b, loc, physical,
                               arith::ConstantIndexOp::create(b, loc, 8));
}

Value mlir::fa::sharedPointer(OpBuilder &b, Location loc, Value address,
                              int64_t offset, unsigned addressSpace) {
  auto type = LLVM::LLVMPointerType::get(b.getContext(), addressSpace);
  Value pointer = LLVM::IntToPtrOp::create(b, loc, type, address);
  if (!offset)
    return pointer;
  return LLVM::GEPOp::create(b, loc, type, b.getI8Type(), pointer,
                             ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(offset)});
}

Value mlir::fa::globalPointer(OpBuilder &b, Location loc, Value address) {
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), 1), address);
}

Value mlir::fa::sharedWindowAddress(OpBuilder &b, Location loc, Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  Value offsetBytes = arith::MulIOp::create(
      b, loc, metadata.getOffset(),
      arith::ConstantIndexOp::create(b, loc, type.getElementTypeBitWidth() / 8));
  Value address = arith::AddIOp::create(b, loc, base, offsetBytes);
  return arith::IndexCastUIOp::create(b, loc, b.getI32Type(), address);
}

Value mlir::fa::globalElementAddress(OpBuilder &b, Location loc, Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  Value offsetBytes = arith::MulIOp::create(
      b, loc, memref::ExtractStridedMetadataOp::create(b, loc, memref).getOffset(),
      arith::ConstantIndexOp::create(b, loc, type.getElementTypeBitWidth() / 8));
  return arith::IndexCastUIOp::create(b, loc, b.getI64Type(),
                                      arith::AddIOp::create(b, loc, base, offsetBytes));
}

SharedWindowAddress mlir::fa::splitSharedWindowAddress(OpBuilder &b, Location loc,
                                                      Value memref) {
  Value tile = memref;
  if (auto cast = tile.getDefiningOp<memref::CastOp>())
    tile = cast.getSource();
  // A stage's slice: its dynamic offset joins the base.
  Value stageOffset;
  auto subview = tile.getDefiningOp<memref::SubViewOp>();
  if (subview && subview.getSource().getDefiningOp<memref::ViewOp>()) {
    auto type = cast<MemRefType>(tile.getType());
    stageOffset = arith::MulIOp::create(
        b, loc, memref::ExtractStridedMetadataOp::create(b, loc, tile).getOffset(),
        arith::ConstantIndexOp::create(b, loc, type.getElementTypeBitWidth() / 8));
    tile = subview.getSource();
  }
  auto view = tile.getDefiningOp<memref::ViewOp>();
  std::optional<int64_t> shift =
      view ? getConstantIntValue(view.getByteShift()) : std::nullopt;
  if (!shift)
    return {sharedWindowAddress(b, loc, memref), 0};
  Value base = sharedWindowAddress(b, loc, view.getSource());
  if (stageOffset)
    base = arith::AddIOp::create(
        b, loc, base,
        arith::IndexCastUIOp::create(b, loc, b.getI32Type(), stageOffset));
  return {base, *shift};
}

Value ThreadFragment::isRowLeader() {
  auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                               arith::RemUIOp::create(b, loc, lane, cst(4)),
                               cst(0));
}

bool mlir::fa::hasFragmentLayout(Type type) { return hasGPULayout(type); }

bool mlir::fa::isDistributed(Operation *op) {
  auto placed = [](Type type) {
    return !isa<RankedTensorType>(type) || hasFragmentLayout(type);
  };
  return llvm::all_of(op->getOperandTypes(), placed) &&
         llvm::all_of(op->getResultTypes(), placed);
}

void mlir::fa::addFragmentTypeConversions(TypeConverter &converter) {
  converter.addConversion([](Type type) { return type; });
  converter.addConversion([](RankedTensorType type) -> std::optional<Type> {
    Attribute encoding = type.getEncoding();
    Type element = type.getElementType();
    if (isa_and_nonnull<FragmentLayoutAttr>(encoding))
      return VectorType::get({FragmentShape::of(type).size()}, element);
    if (auto operand = dyn_cast_or_null<OperandLayoutAttr>(encoding)) {
      int64_t kChunks = (type.getDimSize(1) + 15) / 16;
      return VectorType::get({operand.getMTiles() * kChunks * 4, 2}, element);
    }
    if (auto shared = dyn_cast_or_null<SharedLayoutAttr>(encoding)) {
      MLIRContext *ctx = type.getContext();
      int64_t width = shared.getRowElements();
      auto layout = StridedLayoutAttr::get(ctx, ShapedType::kDynamic, {width, 1});
      return MemRefType::get(
          {type.getDimSize(0), width}, element, layout,
          gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup));
    }
    if (auto tma = dyn_cast_or_null<TmaSharedLayoutAttr>(encoding)) {
      // [panels, rows, panel width]: the view TMA fills and wgmma reads.
      MLIRContext *ctx = type.getContext();
      int64_t width = tma.getSwizzleBytes() / (type.getElementTypeBitWidth() / 8);
      // A key-major [R, C] tile is stored as its transpose.
      int64_t rows = type.getDimSize(tma.getKeyMajor() ? 1 : 0);
      int64_t columns = type.getDimSize(tma.getKeyMajor() ? 0 : 1);
      int64_t panels = (columns + width - 1) / width;
      auto layout = StridedLayoutAttr::get(ctx, ShapedType::kDynamic,
                                           {rows * width, width, 1});
      return MemRefType::get(
          {panels, rows, width}, element, layout,
          gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup));
    }
    return type;
  });
}

SmallVector<Value> mlir::fa::unpackVector(OpBuilder &b, Location loc,
                                          Value vector) {
  auto type = cast<VectorType>(vector.getType());
  SmallVector<Value> elements;
  for (int64_t i = 0; i < type.getDimSize(0); ++i)
    elements.push_back(
        vector::ExtractOp::create(b, loc, vector, ArrayRef<int64_t>{i}));
  return elements;
}

AccumulatorOperand::AccumulatorOperand(OpBuilder &b, Location loc,
                                       Value fragment, RankedTensorType type,
                                       Type mmaType)
    : b(b), loc(loc), values(fragment), shape(FragmentShape::of(type)) {
  auto vectorType = cast<VectorType>(fragment.getType());
  if (vectorType.getElementType() != mmaType)
    values = arith::TruncFOp::create(b, loc, vectorType.clone(mmaType), fragment);
}

std::array<Value, 4> AccumulatorOperand::registers(int64_t mTile,
                                                   int64_t k) const {
  Type element = cast<VectorType>(values.getType()).getElementType();
  auto pairAt = [&](int64_t first) -> Value {
    Value lo = vector::ExtractOp::create(b, loc, values, ArrayRef<int64_t>{first});
    Value hi = vector::ExtractOp::create(b, loc, values, ArrayRef<int64_t>{first + 1});
    return vector::FromElementsOp::create(
        b, loc, VectorType::get({2}, element), ValueRange{lo, hi});
  };
  int64_t lo = shape.index(mTile, 2 * k, 0), hi = shape.index(mTile, 2 * k + 1, 0);
  return {pairAt(lo), pairAt(lo + 2), pairAt(hi), pairAt(hi + 2)};
}

Value mlir::fa::packVector(OpBuilder &b, Location loc, Type type,
                           ArrayRef<Value> elements) {
  auto vectorType = cast<VectorType>(type);
  if (vectorType.getRank() == 1)
    return vector::FromElementsOp::create(b, loc, vectorType, elements);
  // Registers of 2-element vectors (A fragments): from their scalars.
  SmallVector<Value> scalars;
  for (Value reg : elements)
    for (int64_t i = 0; i < vectorType.getDimSize(1); ++i)
      scalars.push_back(vector::ExtractOp::create(b, loc, reg, ArrayRef<int64_t>{i}));
  return vector::FromElementsOp::create(b, loc, vectorType, scalars);
}

Value mlir::fa::fastExp2(OpBuilder &b, Location loc, Value x) {
  // .ftz: one MUFU.EX2. Without it ptxas wraps each in a compare, two
  // multiplies and a select that keep denormal results (x < -126), which
  // are below anything a softmax or its gradient can register, in what is
  // a few instructions per score.
  return LLVM::CallIntrinsicOp::create(
             b, loc, b.getF32Type(),
             b.getStringAttr("llvm.nvvm.ex2.approx.ftz.f32"), ValueRange{x})
      .getResult(0);
}

Value mlir::fa::fastLog2(OpBuilder &b, Location loc, Value x) {
  // lg2.approx.f32: one instruction, max relative error 2^-22.
  return LLVM::CallIntrinsicOp::create(
             b, loc, b.getF32Type(), b.getStringAttr("llvm.nvvm.lg2.approx.f"),
             ValueRange{x})
      .getResult(0);
}

Value mlir::fa::fastMax(OpBuilder &b, Location loc, Value x, Value y) {
  return LLVM::CallIntrinsicOp::create(b, loc, b.getF32Type(),
                                       b.getStringAttr("llvm.nvvm.fmax.f"),
                                       ValueRange{x, y})
      .getResult(0);
}

Value mlir::fa::transformScore(OpBuilder &b, Location loc, QKScoresOp op,
                               Value dot) {
  auto f32 = [&](double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  };
  // With a deferred scale the registers hold S / c (the layout's c): the
  // consumers multiply by c where it is cheaper (FragmentLayoutAttr).
  auto layout = dyn_cast_or_null<FragmentLayoutAttr>(op.getType().getEncoding());
  bool deferred = layout && layout.getDeferredScale();
  double scale = op.getScale().convertToDouble();
  double log2e = op.getLog2Domain() ? M_LOG2E : 1.0;
  auto softcap = op.getSoftcapAttr();
  // e4m3: q·k of the stored values times the run-time descale (Q's · K's),
  // folded into the constant factor where there is one.
  Value descale = op.getDescale();
  auto times = [&](Value x, double factor) -> Value {
    Value f = f32(factor);
    if (descale)
      f = arith::MulFOp::create(b, loc, descale, f);
    return arith::MulFOp::create(b, loc, x, f);
  };
  if (!softcap) { // c·scale·q·k: one multiply, log2(e) folded in
    if (!deferred)
      return times(dot, scale * log2e);
    // Held as S / c: the descale applies here unless deferred with c.
    return descale && !layout.getDeferredDescale()
               ? arith::MulFOp::create(b, loc, dot, descale).getResult()
               : dot;
  }
  // c·cap·tanh(scale·q·k / cap) with tanh.approx (as FlashAttention-2's
  // softcap; its error, ~2^-11 relative, is below bf16's rounding of S):
  // llvm.tanh with `afn`, which NVPTX selects as tanh.approx.f32.
  double cap = softcap.getValueAsDouble();
  Value inner = times(dot, scale / cap);
  Value tanh = LLVM::TanhOp::create(b, loc, inner,
                                    LLVM::FastmathFlags::afn);
  if (deferred)
    return tanh;
  return arith::MulFOp::create(b, loc, tanh, f32(cap * log2e));
}

Value mlir::fa::quadAllReduce(OpBuilder &b, Location loc, Value v, bool isMax) {
  // Lanes 4r .. 4r + 3 hold row r's columns. maximumf is max.NaN.f32; no
  // NaN reaches it (masked scores are -inf, which max keeps).
  for (int64_t offset : {1, 2}) {
    Value off = arith::ConstantIntOp::create(b, loc, offset, 32);
    Value width = arith::ConstantIntOp::create(b, loc, 32, 32);
    Value other = gpu::ShuffleOp::create(b, loc, v, off, width,
                                         gpu::ShuffleMode::XOR)
                      .getShuffleResult();
    v = isMax ? arith::MaximumFOp::create(b, loc, v, other).getResult()
              : arith::AddFOp::create(b, loc, v, other).getResult();
  }
  return v;
}
