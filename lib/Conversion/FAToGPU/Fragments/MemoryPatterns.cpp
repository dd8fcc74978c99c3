//===- MemoryPatterns.cpp - shared tiles and stores of fragments ----------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "FragmentLowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fa;

namespace {

/// fa.shared_tile: a strided view of the (staged) shared buffer; the MMA
/// patterns address it with the swizzle of its layout (#fa.shared,
/// #fa.tma_shared).
struct SharedTileLowering : OpConversionPattern<SharedTileOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SharedTileOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isDistributed(op))
      return rewriter.notifyMatchFailure(op, "tiles without a GPU layout");
    auto type = cast<MemRefType>(getTypeConverter()->convertType(op.getType()));
    Value buffer = adaptor.getBuffer();
    if (!op.getStage()) {
      rewriter.replaceOpWithNewOp<memref::CastOp>(op, type, buffer);
      return success();
    }
    // The stage's slice of [stages, ...], rank-reduced.
    auto bufferType = cast<MemRefType>(buffer.getType());
    SmallVector<OpFoldResult> offsets = {adaptor.getStage()};
    SmallVector<OpFoldResult> sizes = {rewriter.getIndexAttr(1)};
    for (int64_t dim : bufferType.getShape().drop_front()) {
      offsets.push_back(rewriter.getIndexAttr(0));
      sizes.push_back(rewriter.getIndexAttr(dim));
    }
    SmallVector<OpFoldResult> strides(bufferType.getRank(),
                                      rewriter.getIndexAttr(1));
    rewriter.replaceOpWithNewOp<memref::SubViewOp>(op, type, buffer, offsets,
                                                   sizes, strides);
    return success();
  }
};

/// For each row slot of this thread: the global row (`row0` + the slot's
/// tile row) and, under an scf.if on it existing (below `limit`, and
/// `also` when given), `body` with the builder inside that if. The stores
/// and adds of the rows that exist share it.
void forEachExistingRow(OpBuilder &b, Location loc, ThreadFragment &thread,
                        const FragmentShape &shape, Value row0, Value limit,
                        Value also,
                        function_ref<void(int64_t slot, Value row)> body) {
  for (int64_t slot = 0; slot < 2 * shape.mTiles; ++slot) {
    Value row = arith::AddIOp::create(b, loc, row0, thread.row(slot));
    Value exists =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, row, limit);
    if (also)
      exists = arith::AndIOp::create(b, loc, exists, also);
    auto ifOp = scf::IfOp::create(b, loc, exists);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    body(slot, row);
  }
}

/// base + row · stride.
Value rowStart(OpBuilder &b, Location loc, Value base, Value row, Value stride) {
  return arith::AddIOp::create(b, loc, base,
                               arith::MulIOp::create(b, loc, row, stride));
}

/// The `mma_blocks` order (fa.accumulate_fragment): the offset of the
/// thread's element (row, first column) of an 8 × 8 block, `base` +
/// (row / 8)·8·stride + (row % 8)·4 + (column / 8)·64 + (column % 8) / 2
/// for the even column `column` (its pair's first). The element 8·k + p
/// columns further lies 64·k + 32·p floats on (mmaBlockStep), within the
/// thread's column group and row.
static Value mmaBlockOffset(OpBuilder &b, Location loc, Value base, Value row,
                            Value stride, Value column) {
  auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  Value band = arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, row, cst(8)),
      arith::MulIOp::create(b, loc, stride, cst(8)));
  Value inBand = arith::MulIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, row, cst(8)), cst(4));
  Value block = arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, column, cst(8)), cst(64));
  Value lane = arith::DivUIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, column, cst(8)), cst(2));
  Value offset = arith::AddIOp::create(b, loc, base, band);
  offset = arith::AddIOp::create(b, loc, offset, inBand);
  offset = arith::AddIOp::create(b, loc, offset, block);
  return arith::AddIOp::create(b, loc, offset, lane);
}

/// Element i's distance from the thread's first element (n-tile 0, parity
/// 0) of its row in the `mma_blocks` order: 64 floats per n-tile, 32 for
/// the odd column.
static int64_t mmaBlockStep(const FragmentShape &shape, int64_t i) {
  return 64 * shape.nTile(i) + 32 * shape.columnParity(i);
}

/// fa.store_fragment: each thread writes its elements of the rows that
/// exist; a 2-D tile as 32-bit pairs (two adjacent columns), a 1-D tile
/// (row statistics) from the quad's first lane.
struct StoreFragmentLowering : OpConversionPattern<StoreFragmentOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(StoreFragmentOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isDistributed(op))
      return rewriter.notifyMatchFailure(op, "tiles without a GPU layout");
    Location loc = op.getLoc();
    auto type = op.getTile().getType();
    FragmentShape shape = FragmentShape::of(type);
    ThreadFragment thread(rewriter, loc,
                          cast<FragmentLayoutAttr>(type.getEncoding()));
    Value tile = adaptor.getTile();
    Value leader = type.getRank() == 1 ? thread.isRowLeader() : Value();
    forEachExistingRow(rewriter, loc, thread, shape, adaptor.getRow0(),
                       adaptor.getRowLimit(), leader,
                       [&](int64_t slot, Value row) {
      if (leader) {
        Value value = vector::ExtractOp::create(rewriter, loc, tile,
                                                ArrayRef<int64_t>{slot});
        Value offset = arith::AddIOp::create(rewriter, loc, adaptor.getBase(), row);
        memref::StoreOp::create(rewriter, loc, value, adaptor.getBuffer(),
                                ValueRange{offset});
        return;
      }
      Value rowBase = rowStart(rewriter, loc, adaptor.getBase(), row,
                               adaptor.getRowStride());
      for (int64_t nt = 0; nt < shape.nTiles(); ++nt) {
        int64_t first = shape.index(slot / 2, nt, 2 * (slot % 2));
        Value lo = vector::ExtractOp::create(rewriter, loc, tile,
                                             ArrayRef<int64_t>{first});
        Value hi = vector::ExtractOp::create(rewriter, loc, tile,
                                             ArrayRef<int64_t>{first + 1});
        Value pair = vector::FromElementsOp::create(
            rewriter, loc,
            VectorType::get({2}, type.getElementType()), ValueRange{lo, hi});
        Value offset = arith::AddIOp::create(rewriter, loc, rowBase,
                                             thread.column(shape, first));
        // One 32-bit store per pair: the column is even and rows are
        // 16-byte aligned (the ABI's requirement), so 4 holds.
        vector::StoreOp::create(rewriter, loc, pair, adaptor.getBuffer(),
                                ValueRange{offset}, /*nontemporal=*/false,
                                llvm::MaybeAlign(4));
      }
    });
    rewriter.eraseOp(op);
    return success();
  }
};

/// The 64-bit global address of f32 element `offset` of `buffer`.
static Value f32ElementAddress(OpBuilder &b, Location loc, Value buffer, Value offset) {
  return arith::AddIOp::create(
      b, loc, globalElementAddress(b, loc, buffer),
      arith::MulIOp::create(b, loc,
                            arith::IndexCastUIOp::create(b, loc, b.getI64Type(), offset),
                            arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(4))));
}

/// fa.load_fragment's `predicated` row value: the f32 `bytes` past
/// `address`, or `padding` where the row does not exist, as a predicated
/// load (`@p ld`) into a register that holds the padding, so that nothing
/// waits for the load until the value's first use. (As select(exists,
/// load, padding) the select followed the load at once: in the sm_80 D256
/// backward, ptxas hoisted both to the step's head, where the select
/// stalled.) The address of a missing row is formed but never read.
static Value loadRowOrPadding(OpBuilder &b, Location loc, Value address,
                              int64_t bytes, Value exists, Value padding) {
  Value predicate = arith::ExtUIOp::create(b, loc, b.getI32Type(), exists);
  // Asm: neither NVVM nor LLVM has a predicated load (LLVM branches around
  // a conditional one or selects after it).
  return LLVM::InlineAsmOp::create(
             b, loc, b.getF32Type(), ValueRange{address, predicate, padding},
             "{ .reg .pred p; setp.ne.b32 p, $2, 0; mov.b32 $0, $3; "
             "@p ld.global.f32 $0, [$1+" + std::to_string(bytes) + "]; }",
             "=f,l,r,f", /*has_side_effects=*/true, /*is_align_stack=*/false,
             LLVM::tailcallkind::TailCallKind::None,
             /*asm_dialect=*/LLVM::AsmDialectAttr(), /*operand_attrs=*/ArrayAttr())
      .getResult(0);
}

/// A `predicated` row tile's values: a thread's rows are its first one
/// plus constants (ThreadFragment::row), so one 64-bit address and the
/// rows left past it serve every slot: each load at an immediate offset,
/// each row's test a compare with a constant (per-row indices, clamps and
/// selects cost the sm_80 backward several times FA2's instructions).
static void loadPredicatedRows(OpBuilder &b, Location loc, ThreadFragment &thread,
                               const FragmentShape &shape, Value buffer,
                               Value base, Value row0, Value rowLimit,
                               Value padding, SmallVectorImpl<Value> &values) {
  Value firstRow = arith::AddIOp::create(b, loc, row0, thread.row(0));
  Value rowsLeft = arith::SubIOp::create(b, loc, rowLimit, firstRow);
  Value address = f32ElementAddress(
      b, loc, buffer, arith::AddIOp::create(b, loc, base, firstRow));
  for (int64_t slot = 0; slot < 2 * shape.mTiles; ++slot) {
    int64_t delta = ThreadFragment::rowDelta(slot);
    Value exists = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::slt,
        arith::ConstantIndexOp::create(b, loc, delta), rowsLeft);
    values[slot] = loadRowOrPadding(b, loc, address, 4 * delta, exists, padding);
  }
}

/// fa.load_fragment: each thread reads its own elements (a 2-D tile as
/// 32-bit pairs, rows as one value per row slot, which the four lanes of a
/// quad read together); a missing row's address is clamped to the last
/// row that exists and its values replaced by the padding, or (a
/// `predicated` row tile) its load not issued.
struct LoadFragmentLowering : OpConversionPattern<LoadFragmentOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LoadFragmentOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isDistributed(op))
      return rewriter.notifyMatchFailure(op, "tiles without a GPU layout");
    Location loc = op.getLoc();
    auto type = op.getResult().getType();
    FragmentShape shape = FragmentShape::of(type);
    ThreadFragment thread(rewriter, loc,
                          cast<FragmentLayoutAttr>(type.getEncoding()));
    Type element = type.getElementType();
    Value padding = arith::ConstantOp::create(
        rewriter, loc, FloatAttr::get(element, op.getPadding().convertToDouble()));
    SmallVector<Value> values(shape.size());
    if (type.getRank() == 1 && op.getPredicated()) {
      loadPredicatedRows(rewriter, loc, thread, shape, adaptor.getBuffer(),
                         adaptor.getBase(), adaptor.getRow0(),
                         adaptor.getRowLimit(), padding, values);
      rewriter.replaceOp(op, packVector(rewriter, loc,
                                        getTypeConverter()->convertType(type),
                                        values));
      return success();
    }
    Value lastRow = arith::SubIOp::create(
        rewriter, loc, adaptor.getRowLimit(),
        arith::ConstantIndexOp::create(rewriter, loc, 1));
    for (int64_t slot = 0; slot < 2 * shape.mTiles; ++slot) {
      Value row = arith::AddIOp::create(rewriter, loc, adaptor.getRow0(),
                                        thread.row(slot));
      Value exists = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::slt, row, adaptor.getRowLimit());
      Value safeRow = arith::MinSIOp::create(rewriter, loc, row, lastRow);
      auto padded = [&](Value v) {
        return arith::SelectOp::create(rewriter, loc, exists, v, padding)
            .getResult();
      };
      if (type.getRank() == 1) {
        Value offset = arith::AddIOp::create(rewriter, loc, adaptor.getBase(), safeRow);
        values[slot] = padded(memref::LoadOp::create(
            rewriter, loc, adaptor.getBuffer(), ValueRange{offset}));
        continue;
      }
      if (op.getMmaBlocks()) {
        // Each element on its own: a pair's two columns are 32 floats
        // apart, and the warp's loads of a slot read 128 contiguous bytes.
        Value first = mmaBlockOffset(
            rewriter, loc, adaptor.getBase(), safeRow, adaptor.getRowStride(),
            thread.column(shape, shape.index(slot / 2, 0, 2 * (slot % 2))));
        for (int64_t nt = 0; nt < shape.nTiles(); ++nt)
          for (int64_t parity = 0; parity < 2; ++parity) {
            int64_t i = shape.index(slot / 2, nt, 2 * (slot % 2) + parity);
            Value offset = arith::AddIOp::create(
                rewriter, loc, first,
                arith::ConstantIndexOp::create(rewriter, loc, mmaBlockStep(shape, i)));
            values[i] = padded(memref::LoadOp::create(
                rewriter, loc, adaptor.getBuffer(), ValueRange{offset}));
          }
        continue;
      }
      Value rowBase = rowStart(rewriter, loc, adaptor.getBase(), safeRow,
                               adaptor.getRowStride());
      for (int64_t nt = 0; nt < shape.nTiles(); ++nt) {
        int64_t first = shape.index(slot / 2, nt, 2 * (slot % 2));
        Value offset = arith::AddIOp::create(rewriter, loc, rowBase,
                                             thread.column(shape, first));
        Value pair = vector::LoadOp::create(
            rewriter, loc, VectorType::get({2}, element), adaptor.getBuffer(),
            ValueRange{offset}, /*nontemporal=*/false, llvm::MaybeAlign(4));
        for (int64_t k = 0; k < 2; ++k)
          values[first + k] = padded(vector::ExtractOp::create(
              rewriter, loc, pair, ArrayRef<int64_t>{k}));
      }
    }
    rewriter.replaceOp(op, packVector(rewriter, loc,
                                      getTypeConverter()->convertType(type),
                                      values));
    return success();
  }
};

/// Elements `first` and `first + 1` of a thread's fragment vector, as the
/// 2-element vector one 32-bit shared store writes.
static Value elementPair(OpBuilder &b, Location loc, Value fragment,
                         int64_t first) {
  auto type = cast<VectorType>(fragment.getType());
  return vector::FromElementsOp::create(
      b, loc, VectorType::get({2}, type.getElementType()),
      ValueRange{vector::ExtractOp::create(b, loc, fragment, ArrayRef<int64_t>{first}),
                 vector::ExtractOp::create(b, loc, fragment,
                                           ArrayRef<int64_t>{first + 1})});
}

/// fa.store_shared: each thread writes its 32-bit pairs at the swizzled
/// column of #fa.shared (or of #fa.tma_shared's panel: the same swizzle
/// within 64-column rows); the four lanes of a quad fill one 16-byte chunk
/// and the eight quads eight rows' chunks, which the swizzle spreads over
/// distinct banks.
struct StoreSharedLowering : OpConversionPattern<StoreSharedOp> {
  using OpConversionPattern::OpConversionPattern;
  static void storeRowMajor16(ConversionPatternRewriter &rewriter, Location loc,
                              StoreSharedOp op, Value tile, Value buffer,
                              ThreadFragment &thread);
  LogicalResult
  matchAndRewrite(StoreSharedOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isDistributed(op))
      return rewriter.notifyMatchFailure(op, "tiles without a GPU layout");
    Location loc = op.getLoc();
    auto type = op.getTile().getType();
    FragmentShape shape = FragmentShape::of(type);
    ThreadFragment thread(rewriter, loc,
                          cast<FragmentLayoutAttr>(type.getEncoding()));
    auto cst = [&](int64_t v) {
      return arith::ConstantIndexOp::create(rewriter, loc, v);
    };
    Value tile = adaptor.getTile();
    bool swizzled = type.getElementTypeBitWidth() == 16;
    // [P, R, W]: 128-byte panels, each swizzled as a 128-byte row (16-bit
    // tiles always are, f32 ones only in panels).
    bool panels = op.getBuffer().getType().getRank() == 3;
    int64_t panelWidth = panels ? op.getBuffer().getType().getDimSize(2) : 0;
    swizzled = swizzled || panels;
    int64_t chunkElements = 128 / 8 / (type.getElementTypeBitWidth() / 8);
    // Each index as the thread's part plus a constant (the row slot's
    // offset, the n-tile's panel), and the swizzled column as one of at
    // most eight thread values: LLVM hoists every element's address out
    // of a loop, and only a constant part folds into the store's
    // immediate offset; 64 distinct addresses held 128 registers.
    Value rowBase = thread.row(0);
    Value columnBase = thread.column(shape, 0);
    bool splitColumns = !panels || shape.columns % panelWidth == 0;
    if (!panels && type.getElementTypeBitWidth() == 16) {
      storeRowMajor16(rewriter, loc, op, adaptor.getTile(), adaptor.getBuffer(),
                      thread);
      rewriter.eraseOp(op);
      return success();
    }
    for (int64_t slot = 0; slot < 2 * shape.mTiles; ++slot) {
      Value row = arith::AddIOp::create(
          rewriter, loc, rowBase, cst(ThreadFragment::rowDelta(slot)));
      for (int64_t nt = 0; nt < shape.nTiles(); ++nt) {
        int64_t first = shape.index(slot / 2, nt, 2 * (slot % 2));
        Value column = thread.column(shape, first);
        Value physical = column; // f32: row-major
        SmallVector<Value> indices = {row};
        if (panels && splitColumns) {
          // columnBase is the group's first panel plus 2·(lane % 4):
          // the n-tile's 8 columns never cross a panel.
          Value groupPanel =
              arith::DivUIOp::create(rewriter, loc, columnBase, cst(panelWidth));
          indices.insert(indices.begin(),
                         arith::AddIOp::create(rewriter, loc, groupPanel,
                                               cst(8 * nt / panelWidth)));
          column = arith::AddIOp::create(
              rewriter, loc,
              arith::RemUIOp::create(rewriter, loc, columnBase, cst(panelWidth)),
              cst(8 * nt % panelWidth));
        } else if (panels) {
          indices.insert(indices.begin(),
                         arith::DivUIOp::create(rewriter, loc, column, cst(panelWidth)));
          column = arith::RemUIOp::create(rewriter, loc, column, cst(panelWidth));
        }
        if (swizzled) {
          Value chunk = arith::DivUIOp::create(rewriter, loc, column, cst(chunkElements));
          Value within = arith::RemUIOp::create(rewriter, loc, column, cst(chunkElements));
          // The swizzle's first column of the chunk, in 16-bit elements
          // (8 per chunk): in this type's, chunkElements per chunk. The row
          // slots are 8-row steps from rowBase: the same phase.
          Value start = sharedSwizzledColumn(rewriter, loc, rowBase, chunk);
          if (chunkElements != 8)
            start = arith::DivUIOp::create(
                rewriter, loc,
                arith::MulIOp::create(rewriter, loc, start, cst(chunkElements)),
                cst(8));
          physical = arith::AddIOp::create(rewriter, loc, start, within);
        }
        indices.push_back(physical);
        Value pair = elementPair(rewriter, loc, tile, first);
        vector::StoreOp::create(rewriter, loc, pair, adaptor.getBuffer(),
                                indices,
                                /*nontemporal=*/false,
                                llvm::MaybeAlign(4 * type.getElementTypeBitWidth() / 16));
      }
    }
    rewriter.eraseOp(op);
    return success();
  }
};

/// A 16-bit fragment into a swizzled row-major tile, as 32-bit stores
/// `st.shared.b32 [addr+imm]`: one 32-bit address per n-tile (the thread's
/// row and swizzled column) and the row slot's offset and the tile's place
/// in shared memory as constant GEPs, which NVPTX folds into the stores.
/// (A whole address per store was hoisted out of the sm_80 backward's
/// Q-block loop, P's and dS's apart.)
void StoreSharedLowering::storeRowMajor16(ConversionPatternRewriter &rewriter,
                                          Location loc, StoreSharedOp op,
                                          Value tile, Value buffer,
                                          ThreadFragment &thread) {
  auto type = op.getTile().getType();
  FragmentShape shape = FragmentShape::of(type);
  auto bufferType = cast<MemRefType>(buffer.getType());
  assert(bufferType.getLayout().isIdentity() &&
         "lane offsets are row · rowElements + column");
  int64_t rowElements = bufferType.getShape().back(), bytes = 2;
  auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(rewriter, loc, v); };
  SharedWindowAddress window = splitSharedWindowAddress(rewriter, loc, buffer);
  Value rowBase = thread.row(0);
  Type i32 = rewriter.getI32Type();
  for (int64_t nt = 0; nt < shape.nTiles(); ++nt) {
    Value column = thread.column(shape, shape.index(0, nt, 0));
    Value chunk = arith::DivUIOp::create(rewriter, loc, column, cst(8));
    Value within = arith::RemUIOp::create(rewriter, loc, column, cst(8));
    Value physical = arith::AddIOp::create(
        rewriter, loc, sharedSwizzledColumn(rewriter, loc, rowBase, chunk), within);
    Value laneOffset = arith::MulIOp::create(
        rewriter, loc,
        arith::AddIOp::create(rewriter, loc,
                              arith::MulIOp::create(rewriter, loc, rowBase,
                                                    cst(rowElements)),
                              physical),
        cst(bytes));
    Value address = arith::AddIOp::create(
        rewriter, loc, window.base,
        arith::IndexCastUIOp::create(rewriter, loc, i32, laneOffset));
    // The row slots are 8-row steps from rowBase: the same swizzle phase.
    for (int64_t slot = 0; slot < 2 * shape.mTiles; ++slot) {
      int64_t first = shape.index(slot / 2, nt, 2 * (slot % 2));
      int64_t immediate =
          window.bytes + ThreadFragment::rowDelta(slot) * rowElements * bytes;
      Value pair = elementPair(rewriter, loc, tile, first);
      Value word = vector::ExtractOp::create(
          rewriter, loc,
          vector::BitCastOp::create(rewriter, loc, VectorType::get({1}, i32), pair),
          ArrayRef<int64_t>{0});
      LLVM::StoreOp::create(rewriter, loc, word,
                            sharedPointer(rewriter, loc, address, immediate),
                            /*alignment=*/4);
    }
  }
}

/// `value` added into the f32 at `address` by a reduction
/// (red.global.add.f32): nothing waits for it. As an atomic with its result
/// unused (memref.atomic_rmw), ptxas chose RED in the default kernels but
/// ATOM in the deterministic ones, whose turns put fences in the kernel,
/// and slowed them even with the mode off.
static void reduceAddGlobal(OpBuilder &b, Location loc, Value address, Value value,
                            int64_t immediateBytes = 0) {
  std::string target = immediateBytes ? "[$0+" + std::to_string(immediateBytes) + "]"
                                      : std::string("[$0]");
  // Asm: LLVM selects atomicrmw fadd as atom, whatever its result's use.
  LLVM::InlineAsmOp::create(b, loc, Type(), ValueRange{address, value},
                            "red.global.add.f32 " + target + ", $1;", "l,f",
                            /*has_side_effects=*/true, /*is_align_stack=*/false,
                            LLVM::tailcallkind::TailCallKind::None,
                            /*asm_dialect=*/LLVM::AsmDialectAttr(),
                            /*operand_attrs=*/ArrayAttr());
}

/// fa.accumulate_fragment: an f32 reduction per element of the rows that
/// exist.
struct AccumulateFragmentLowering : OpConversionPattern<AccumulateFragmentOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AccumulateFragmentOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isDistributed(op))
      return rewriter.notifyMatchFailure(op, "tiles without a GPU layout");
    Location loc = op.getLoc();
    auto type = op.getTile().getType();
    FragmentShape shape = FragmentShape::of(type);
    ThreadFragment thread(rewriter, loc,
                          cast<FragmentLayoutAttr>(type.getEncoding()));
    SmallVector<Value> values = unpackVector(rewriter, loc, adaptor.getTile());
    forEachExistingRow(rewriter, loc, thread, shape, adaptor.getRow0(),
                       adaptor.getRowLimit(), Value(),
                       [&](int64_t slot, Value row) {
      if (op.getMmaBlocks()) {
        // One address per row slot, each element's place an immediate.
        Value first = mmaBlockOffset(
            rewriter, loc, adaptor.getBase(), row, adaptor.getRowStride(),
            thread.column(shape, shape.index(slot / 2, 0, 2 * (slot % 2))));
        Value address = f32ElementAddress(rewriter, loc, adaptor.getBuffer(), first);
        for (int64_t nt = 0; nt < shape.nTiles(); ++nt)
          for (int64_t parity = 0; parity < 2; ++parity) {
            int64_t i = shape.index(slot / 2, nt, 2 * (slot % 2) + parity);
            reduceAddGlobal(rewriter, loc, address, values[i],
                            4 * mmaBlockStep(shape, i));
          }
        return;
      }
      Value rowBase = rowStart(rewriter, loc, adaptor.getBase(), row,
                               adaptor.getRowStride());
      for (int64_t nt = 0; nt < shape.nTiles(); ++nt)
        for (int64_t parity = 0; parity < 2; ++parity) {
          int64_t i = shape.index(slot / 2, nt, 2 * (slot % 2) + parity);
          Value offset = arith::AddIOp::create(rewriter, loc, rowBase,
                                               thread.column(shape, i));
          reduceAddGlobal(rewriter, loc,
                          f32ElementAddress(rewriter, loc, adaptor.getBuffer(), offset),
                          values[i]);
        }
    });
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void mlir::fa::populateMemoryPatterns(const TypeConverter &converter,
                                      RewritePatternSet &patterns) {
  patterns.add<SharedTileLowering, StoreFragmentLowering, LoadFragmentLowering,
               StoreSharedLowering, AccumulateFragmentLowering>(
      converter, patterns.getContext());
}
