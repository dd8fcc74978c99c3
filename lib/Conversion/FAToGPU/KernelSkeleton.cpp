//===- KernelSkeleton.cpp - signature, grid, shared memory ----------------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "fa/Conversion/FAToGPU/KernelSkeleton.h"

#include "fa/Dialect/FA/Utils/MaskUtils.h"
#include "fa/runtime/KernelAbi.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"

#include <tuple>

using namespace mlir;
using namespace mlir::fa;

std::string mlir::fa::captureElementName(Type type) {
  if (type.isF32() || type.isF16() || type.isBF16() || type.isIndex()) {
    std::string name;
    llvm::raw_string_ostream os(name);
    type.print(os);
    return name;
  }
  if (auto integer = dyn_cast<IntegerType>(type))
    if (llvm::is_contained({1u, 8u, 16u, 32u, 64u}, integer.getWidth()))
      return "i" + std::to_string(integer.getWidth());
  return "";
}

std::vector<::fa::CaptureType> mlir::fa::captureTypesOf(TypeRange captures) {
  std::vector<::fa::CaptureType> types;
  for (Type captured : captures) {
    auto tensor = dyn_cast<RankedTensorType>(captured);
    ::fa::CaptureType type;
    type.element =
        captureElementName(tensor ? tensor.getElementType() : captured);
    if (tensor)
      for (int64_t dim : tensor.getShape())
        type.shape.push_back(ShapedType::isDynamic(dim)
                                 ? ::fa::CaptureType::kDynamicExtent
                                 : dim);
    types.push_back(type);
  }
  return types;
}

KernelArgs KernelArgs::create(OpBuilder &b, gpu::GPUModuleOp module,
                              const AttentionKernelConfig &c, StringRef name,
                              int64_t threads, bool tensorMaps,
                              bool outputTensorMap) {
  return create(b, module, c.elementType, name, threads,
                ::fa::abi::forwardKernelParams(c.alibi, tensorMaps,
                                               isa<Float8E4M3FNType>(c.elementType),
                                               outputTensorMap,
                                               captureTypesOf(c.captures),
                                               c.blockSparse()));
}

KernelArgs KernelArgs::create(OpBuilder &b, gpu::GPUModuleOp module,
                              Type elementType, StringRef name, int64_t threads,
                              ArrayRef<::fa::abi::Param> params,
                              int64_t blocksPerSM) {
  KernelArgs args;
  SmallVector<Type> types;
  SmallVector<int64_t> gridConstants;
  for (const ::fa::abi::Param &p : params) {
    args.names.push_back(p.name);
    switch (p.type) {
    case ::fa::abi::ParamType::TensorMap:
      // A pointer to the by-value parameter; fa-nvvm-grid-constant-params
      // makes it a byval grid constant once the kernel is an llvm.func.
      gridConstants.push_back(types.size());
      types.push_back(LLVM::LLVMPointerType::get(b.getContext()));
      break;
    case ::fa::abi::ParamType::ElementBuffer:
      types.push_back(MemRefType::get({ShapedType::kDynamic}, elementType));
      break;
    case ::fa::abi::ParamType::OutputBuffer:
      types.push_back(MemRefType::get({ShapedType::kDynamic},
                                      outputElementTypeOf(elementType)));
      break;
    case ::fa::abi::ParamType::F32Buffer:
      types.push_back(MemRefType::get({ShapedType::kDynamic}, b.getF32Type()));
      break;
    case ::fa::abi::ParamType::I32Buffer:
      types.push_back(MemRefType::get({ShapedType::kDynamic}, b.getI32Type()));
      break;
    case ::fa::abi::ParamType::Int64:
      types.push_back(b.getI64Type());
      break;
    case ::fa::abi::ParamType::F32:
      types.push_back(b.getF32Type());
      break;
    case ::fa::abi::ParamType::CaptureBuffer: {
      Type element =
          p.element == "f32"    ? Type(b.getF32Type())
          : p.element == "f16"  ? Type(b.getF16Type())
          : p.element == "bf16" ? Type(b.getBF16Type())
                                : Type(b.getIntegerType(
                                      std::stoi(p.element.substr(1))));
      types.push_back(MemRefType::get({ShapedType::kDynamic}, element));
      break;
    }
    }
  }
  b.setInsertionPointToEnd(module.getBody());
  args.kernel = gpu::GPUFuncOp::create(b, module.getLoc(), name,
                                       b.getFunctionType(types, {}));
  args.kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                       b.getUnitAttr());
  if (gridConstants.empty()) {
    args.kernel.setKnownBlockSizeAttr(DenseI32ArrayAttr::get(
        b.getContext(), {static_cast<int32_t>(threads), 1, 1}));
  } else {
    args.kernel->setAttr(kGridConstantParamsAttrName,
                         b.getDenseI64ArrayAttr(gridConstants));
    // __launch_bounds__(threads, blocksPerSM): the register cap at entry
    // that setmaxnreg needs to take effect (.maxntid, .minnctapersm).
    args.kernel->setAttr("nvvm.maxntid",
                         b.getDenseI32ArrayAttr({static_cast<int32_t>(threads), 1, 1}));
    args.kernel->setAttr("nvvm.minctasm",
                         b.getI32IntegerAttr(static_cast<int32_t>(blocksPerSM)));
  }
  b.setInsertionPointToStart(&args.kernel.getBody().front());
  return args;
}

Value KernelArgs::operator[](StringRef name) const {
  for (auto [i, n] : llvm::enumerate(names))
    if (n == name)
      return kernel.getArgument(i);
  llvm::report_fatal_error("kernel ABI has no parameter '" + name + "'");
}

Value KernelArgs::index(OpBuilder &b, StringRef name) const {
  Value arg = (*this)[name];
  return arith::IndexCastOp::create(b, arg.getLoc(), b.getIndexType(), arg);
}

SmallVector<Value> KernelArgs::captureValues(OpBuilder &b, Location loc,
                                             ValueRange captures) const {
  SmallVector<Value> values;
  for (auto [i, capture] : llvm::enumerate(captures)) {
    std::string name = "capture" + std::to_string(i);
    Value param = (*this)[name];
    auto tensor = dyn_cast<RankedTensorType>(capture.getType());
    if (!tensor) {
      Type type = capture.getType();
      Value value = param;
      if (type.isIndex())
        value = arith::IndexCastOp::create(b, loc, type, param);
      else if (isa<IntegerType>(type) && type != param.getType())
        value = arith::TruncIOp::create(b, loc, type, param);
      else if (isa<FloatType>(type) && type != param.getType())
        value = arith::TruncFOp::create(b, loc, type, param);
      values.push_back(value);
      continue;
    }
    // Row-major: stride d is the product of the extents after d.
    int64_t rank = tensor.getRank();
    SmallVector<OpFoldResult> sizes(rank), strides(rank);
    SmallVector<int64_t> staticStrides(rank);
    OpFoldResult stride = b.getIndexAttr(1);
    bool dynamicStride = false;
    for (int64_t d = rank - 1; d >= 0; --d) {
      strides[d] = stride;
      staticStrides[d] = dynamicStride ? ShapedType::kDynamic
                                       : *getConstantIntValue(stride);
      if (tensor.isDynamicDim(d)) {
        sizes[d] = index(b, name + "_extent" + std::to_string(d));
        dynamicStride = true;
      } else {
        sizes[d] = b.getIndexAttr(tensor.getDimSize(d));
      }
      if (d > 0)
        stride = dynamicStride
                     ? OpFoldResult(arith::MulIOp::create(
                           b, loc, getValueOrCreateConstantIndexOp(b, loc, stride),
                           getValueOrCreateConstantIndexOp(b, loc, sizes[d])))
                     : b.getIndexAttr(*getConstantIntValue(stride) *
                                      tensor.getDimSize(d));
    }
    Type element = cast<MemRefType>(param.getType()).getElementType();
    auto viewType = MemRefType::get(
        tensor.getShape(), element,
        StridedLayoutAttr::get(b.getContext(), 0, staticStrides));
    values.push_back(memref::ReinterpretCastOp::create(
        b, loc, viewType, param, b.getIndexAttr(0), sizes, strides));
  }
  return values;
}

/// The coordinates that follow from (queryBlock, head, batch).
static void completeCoords(OpBuilder &b, Location loc, const KernelArgs &args,
                           const AttentionKernelConfig &c, GridCoords &g) {
  // GQA/MQA: query head h reads KV head h / (Hq / Hkv).
  Value group = arith::DivUIOp::create(b, loc, args.index(b, "q_heads"),
                                       args.index(b, "kv_heads"));
  g.kvHead = arith::DivUIOp::create(b, loc, g.head, group);
  g.queryStart = arith::MulIOp::create(
      b, loc, g.queryBlock, arith::ConstantIndexOp::create(b, loc, c.blockM));
  g.queryLen = args.index(b, "q_len");
  g.keyLen = args.index(b, "kv_len");
}

/// ceil(M / block_m).
static Value queryBlockCount(OpBuilder &b, Location loc, const KernelArgs &args,
                             const AttentionKernelConfig &c) {
  return arith::CeilDivUIOp::create(
      b, loc, args.index(b, "q_len"),
      arith::ConstantIndexOp::create(b, loc, c.blockM));
}

GridCoords GridCoords::build(OpBuilder &b, Location loc, const KernelArgs &args,
                             const AttentionKernelConfig &c) {
  auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  GridCoords g;
  g.queryBlock = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  if (c.tileWorkVaries()) {
    Value blocks = gpu::GridDimOp::create(b, loc, gpu::Dimension::x);
    g.queryBlock = arith::SubIOp::create(
        b, loc, arith::SubIOp::create(b, loc, blocks, cst(1)), g.queryBlock);
  }
  g.head = gpu::BlockIdOp::create(b, loc, gpu::Dimension::y);
  g.batch = gpu::BlockIdOp::create(b, loc, gpu::Dimension::z);
  completeCoords(b, loc, args, c, g);
  return g;
}

GridCoords GridCoords::forTile(OpBuilder &b, Location loc,
                               const KernelArgs &args,
                               const AttentionKernelConfig &c, Value tile) {
  // In 32 bits (the runtime keeps the tile count below 2^31): a 64-bit
  // division costs the producer's 24 registers a spill.
  Type i32 = b.getI32Type();
  auto narrow = [&](Value index) {
    return arith::IndexCastUIOp::create(b, loc, i32, index);
  };
  auto widen = [&](Value x) {
    return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), x);
  };
  Value queryBlocks = narrow(queryBlockCount(b, loc, args, c));
  Value heads = narrow(args.index(b, "q_heads"));
  Value t = narrow(tile);
  Value rank = arith::RemUIOp::create(b, loc, t, queryBlocks);
  Value pair = arith::DivUIOp::create(b, loc, t, queryBlocks);
  GridCoords g;
  g.queryBlock = rank;
  if (c.tileWorkVaries())
    g.queryBlock = arith::SubIOp::create(
        b, loc,
        arith::SubIOp::create(b, loc, queryBlocks,
                              arith::ConstantIntOp::create(b, loc, 1, 32)),
        rank);
  g.queryBlock = widen(g.queryBlock);
  g.head = widen(arith::RemUIOp::create(b, loc, pair, heads));
  g.batch = widen(arith::DivUIOp::create(b, loc, pair, heads));
  completeCoords(b, loc, args, c, g);
  return g;
}

GridCoords GridCoords::forPairedTile(OpBuilder &b, Location loc,
                                     const KernelArgs &args,
                                     const AttentionKernelConfig &c, Value pair,
                                     Value member) {
  // In 32 bits, as forTile.
  Type i32 = b.getI32Type();
  auto c32 = [&](int64_t v) { return arith::ConstantIntOp::create(b, loc, v, 32); };
  auto widen = [&](Value x) {
    return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), x);
  };
  Value queryBlocks =
      arith::IndexCastUIOp::create(b, loc, i32, queryBlockCount(b, loc, args, c));
  Value pairs = arith::DivUIOp::create(
      b, loc, arith::AddIOp::create(b, loc, queryBlocks, c32(1)), c32(2));
  Value heads = arith::IndexCastUIOp::create(b, loc, i32, args.index(b, "q_heads"));
  Value p = arith::IndexCastUIOp::create(b, loc, i32, pair);
  Value k = arith::RemUIOp::create(b, loc, p, pairs);
  Value headBatch = arith::DivUIOp::create(b, loc, p, pairs);
  Value heavy = arith::SubIOp::create(
      b, loc, arith::SubIOp::create(b, loc, queryBlocks, c32(1)), k);
  Value second = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, member, c32(0));
  // The middle block of an odd T is its pair's first member only.
  Value middle = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, heavy, k);
  Value light = arith::SelectOp::create(b, loc, middle, queryBlocks, k);
  GridCoords g;
  g.queryBlock = widen(arith::SelectOp::create(b, loc, second, light, heavy));
  g.head = widen(arith::RemUIOp::create(b, loc, headBatch, heads));
  g.batch = widen(arith::DivUIOp::create(b, loc, headBatch, heads));
  completeCoords(b, loc, args, c, g);
  return g;
}

BlockTiles BlockTiles::build(OpBuilder &b, Location loc, const KernelArgs &args,
                             const AttentionKernelConfig &c, TileOrder order) {
  auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  BlockTiles t;
  t.order = order;
  if (order == TileOrder::PerBlock) {
    t.first = cst(0);
    t.count = t.step = cst(1);
    return t;
  }
  auto headsBatches = [&] {
    return arith::MulIOp::create(b, loc, args.index(b, "q_heads"), args.index(b, "batch"));
  };
  if (order == TileOrder::Strided) {
    t.count = arith::MulIOp::create(b, loc, queryBlockCount(b, loc, args, c), headsBatches());
    t.first = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
    t.step = gpu::GridDimOp::create(b, loc, gpu::Dimension::x);
    return t;
  }
  // Paired: this block's pairs b, b + G, ... below ceil(T / 2) · Hq · B,
  // two tiles each.
  Value pairs = arith::MulIOp::create(
      b, loc,
      arith::CeilDivUIOp::create(b, loc, queryBlockCount(b, loc, args, c), cst(2)),
      headsBatches());
  Value block = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value grid = gpu::GridDimOp::create(b, loc, gpu::Dimension::x);
  Value left = arith::SubIOp::create(b, loc, arith::MaxUIOp::create(b, loc, pairs, block),
                                     block);
  t.first = cst(0);
  t.step = cst(1);
  t.count = arith::MulIOp::create(b, loc, arith::CeilDivUIOp::create(b, loc, left, grid),
                                  cst(2));
  t.pairFirst = block;
  t.pairStep = grid;
  return t;
}

GridCoords BlockTiles::coords(OpBuilder &b, Location loc,
                              const KernelArgs &args,
                              const AttentionKernelConfig &c, Value n) const {
  switch (order) {
  case TileOrder::PerBlock:
    return GridCoords::build(b, loc, args, c);
  case TileOrder::Strided:
    return GridCoords::forTile(b, loc, args, c, n);
  case TileOrder::Paired:
    break;
  }
  Value two = arith::ConstantIndexOp::create(b, loc, 2);
  Value pair = arith::AddIOp::create(
      b, loc, pairFirst,
      arith::MulIOp::create(b, loc, arith::DivUIOp::create(b, loc, n, two), pairStep));
  Value member = arith::IndexCastUIOp::create(b, loc, b.getI32Type(),
                                              arith::RemUIOp::create(b, loc, n, two));
  return GridCoords::forPairedTile(b, loc, args, c, pair, member);
}

KeyTiles BlockTiles::keyTiles(OpBuilder &b, Location loc, const KernelArgs &args,
                              const AttentionKernelConfig &c,
                              const GridCoords &grid) const {
  KeyTiles tiles = KeyTiles::build(b, loc, args, c, grid);
  if (order != TileOrder::Paired)
    return tiles;
  // An odd T's null tile (forPairedTile): no rows, so no KV tiles (its
  // range under the mask is not empty: every KV tile at M = N).
  return tiles.onlyIf(b, loc,
                      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                            grid.queryStart, grid.queryLen));
}

KeyTiles KeyTiles::build(OpBuilder &b, Location loc, const KernelArgs &args,
                         const AttentionKernelConfig &c, const GridCoords &grid) {
  KeyTiles t;
  t.blockN = c.blockN;
  if (!c.blockSparse()) {
    std::tie(t.begin, t.count) = grid.visibleKeyBlocks(b, loc, c);
    return t;
  }
  auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  t.kvBlock = c.sparseKvBlock;
  t.partialList = args["kv_indices"];
  t.fullList = args["full_kv_indices"];
  Value kvBlocks = args.index(b, "block_mask_kv_blocks");
  t.lastBlock = arith::SubIOp::create(b, loc, kvBlocks, cst(1));
  // The row of (batch, head, Q block); a null tile's (queryStart >= M)
  // reads the last Q block's.
  Value lastQueryBlock = arith::DivUIOp::create(
      b, loc,
      arith::SubIOp::create(b, loc, arith::AddIOp::create(b, loc, grid.queryLen,
                                                          cst(c.sparseQBlock - 1)),
                            cst(1)),
      cst(c.sparseQBlock));
  Value queryBlock = arith::MinUIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, grid.queryStart, cst(c.sparseQBlock)),
      lastQueryBlock);
  Value row = arith::AddIOp::create(
      b, loc,
      arith::AddIOp::create(
          b, loc,
          arith::MulIOp::create(b, loc, grid.batch,
                                args.index(b, "block_mask_stride_b")),
          arith::MulIOp::create(b, loc, grid.head,
                                args.index(b, "block_mask_stride_h"))),
      queryBlock);
  t.listRow = arith::MulIOp::create(b, loc, row, kvBlocks);
  auto blocksOf = [&](StringRef counts) {
    Value n = arith::IndexCastOp::create(
        b, loc, b.getIndexType(),
        memref::LoadOp::create(b, loc, args[counts], ValueRange{row}));
    return arith::MinSIOp::create(b, loc, arith::MaxSIOp::create(b, loc, n, cst(0)),
                                  kvBlocks)
        .getResult();
  };
  t.partialBlocks = blocksOf("kv_num_blocks");
  Value tilesPerBlock = cst(c.sparseKvBlock / c.blockN);
  t.maskedCount = arith::MulIOp::create(b, loc, t.partialBlocks, tilesPerBlock);
  t.count = arith::MulIOp::create(
      b, loc, arith::AddIOp::create(b, loc, t.partialBlocks, blocksOf("full_kv_num_blocks")),
      tilesPerBlock);
  return t;
}

Value KeyTiles::keyStart(OpBuilder &b, Location loc, Value j) const {
  auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  if (!listed() && matchPattern(j, m_Zero()))
    return begin;
  if (!listed())
    return arith::AddIOp::create(b, loc, begin,
                                 arith::MulIOp::create(b, loc, j, cst(blockN)));
  int64_t tilesPerBlock = kvBlock / blockN;
  Value slot = arith::DivUIOp::create(b, loc, j, cst(tilesPerBlock));
  // Both entries are read in bounds and one is taken: no branch per tile.
  Value zero = cst(0);
  Value partialSlot = arith::MinSIOp::create(b, loc, slot, lastBlock);
  Value fullSlot = arith::MinSIOp::create(
      b, loc,
      arith::MaxSIOp::create(b, loc, arith::SubIOp::create(b, loc, slot, partialBlocks),
                             zero),
      lastBlock);
  auto entry = [&](Value list, Value at) {
    return memref::LoadOp::create(b, loc, list,
                                  ValueRange{arith::AddIOp::create(b, loc, listRow, at)})
        .getResult();
  };
  Value isFull = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, slot,
                                       partialBlocks);
  Value block = arith::IndexCastOp::create(
      b, loc, b.getIndexType(),
      arith::SelectOp::create(b, loc, isFull, entry(fullList, fullSlot),
                              entry(partialList, partialSlot)));
  block = arith::MinSIOp::create(b, loc, arith::MaxSIOp::create(b, loc, block, zero),
                                 lastBlock);
  Value start = arith::MulIOp::create(b, loc, block, cst(kvBlock));
  if (tilesPerBlock == 1)
    return start;
  Value within = arith::RemUIOp::create(b, loc, j, cst(tilesPerBlock));
  return arith::AddIOp::create(b, loc, start,
                               arith::MulIOp::create(b, loc, within, cst(blockN)));
}

KeyTiles KeyTiles::onlyIf(OpBuilder &b, Location loc, Value keep) const {
  KeyTiles t = *this;
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  t.count = arith::SelectOp::create(b, loc, keep, count, zero);
  if (maskedCount)
    t.maskedCount = arith::SelectOp::create(b, loc, keep, maskedCount, zero);
  return t;
}

Value GridCoords::tensorBase(OpBuilder &b, Location loc, const KernelArgs &args,
                             StringRef prefix, Value headIndex) const {
  Value strideB = args.index(b, (prefix + "_stride_b").str());
  Value strideH = args.index(b, (prefix + "_stride_h").str());
  return arith::AddIOp::create(b, loc,
                               arith::MulIOp::create(b, loc, batch, strideB),
                               arith::MulIOp::create(b, loc, headIndex, strideH));
}

std::pair<Value, Value>
GridCoords::visibleKeyBlocks(OpBuilder &b, Location loc,
                             const AttentionKernelConfig &c) const {
  auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  Value rows = arith::MinSIOp::create(
      b, loc, cst(c.blockM), arith::SubIOp::create(b, loc, queryLen, queryStart));
  auto [begin, end] = buildVisibleKeyRange(b, loc, c.mask, queryStart, rows,
                                           queryLen, keyLen, c.blockN);
  if (c.keyBand.bounded()) {
    auto [bandBegin, bandEnd] = buildBandKeyRange(b, loc, c.keyBand, queryStart,
                                                  rows, keyLen, c.blockN);
    begin = arith::MaxSIOp::create(b, loc, begin, bandBegin);
    end = arith::MinSIOp::create(b, loc, end, bandEnd);
  }
  Value span = arith::MaxSIOp::create(
      b, loc, arith::SubIOp::create(b, loc, end, begin), cst(0));
  Value blocks = arith::DivUIOp::create(
      b, loc, arith::AddIOp::create(b, loc, span, cst(c.blockN - 1)),
      cst(c.blockN));
  return {begin, blocks};
}

void mlir::fa::buildIf(OpBuilder &b, Location loc, Value condition,
                       function_ref<void(OpBuilder &)> body) {
  scf::IfOp::create(b, loc, condition, [&](OpBuilder &then, Location) {
    body(then);
    scf::YieldOp::create(then, loc);
  });
}

void mlir::fa::buildIfElse(OpBuilder &b, Location loc, Value condition,
                           function_ref<void(OpBuilder &)> then,
                           function_ref<void(OpBuilder &)> otherwise) {
  scf::IfOp::create(
      b, loc, condition,
      [&](OpBuilder &tb, Location) {
        then(tb);
        scf::YieldOp::create(tb, loc);
      },
      [&](OpBuilder &eb, Location) {
        otherwise(eb);
        scf::YieldOp::create(eb, loc);
      });
}

void mlir::fa::inFirstThread(OpBuilder &b, Location loc, Value threadId,
                             function_ref<void(OpBuilder &)> body) {
  buildIf(b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, threadId,
                                arith::ConstantIndexOp::create(b, loc, 0)),
          body);
}

std::pair<Value, Value>
GridCoords::visibleQueryBlocks(OpBuilder &b, Location loc,
                               const AttentionKernelConfig &c, Value keyStart) const {
  auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  Value cols = arith::MinSIOp::create(
      b, loc, cst(c.blockN), arith::SubIOp::create(b, loc, keyLen, keyStart));
  auto [begin, end] = buildVisibleQueryRange(b, loc, c.mask, keyStart, cols,
                                             queryLen, keyLen, c.blockM);
  // The mask_mod's band too, but in the deterministic mode, whose turns
  // count the KV blocks of each Q block under the built-in mask alone.
  if (c.keyBand.bounded() && !c.deterministic) {
    auto [bandBegin, bandEnd] =
        buildBandQueryRange(b, loc, c.keyBand, keyStart, cols, queryLen, c.blockM);
    begin = arith::MaxSIOp::create(b, loc, begin, bandBegin);
    end = arith::MinSIOp::create(b, loc, end, bandEnd);
  }
  Value span = arith::MaxSIOp::create(
      b, loc, arith::SubIOp::create(b, loc, end, begin), cst(0));
  return {begin, arith::CeilDivUIOp::create(b, loc, span, cst(c.blockM))};
}

SmallVector<Value>
GridCoords::headScoreInputs(OpBuilder &b, Location loc, const KernelArgs &args,
                            ArrayRef<HeadScoreInput> inputs) const {
  SmallVector<Value> values;
  for (const HeadScoreInput &input : inputs) {
    Value index = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, batch, args.index(b, input.strideB)),
        head);
    values.push_back(
        memref::LoadOp::create(b, loc, args[input.values], ValueRange{index}));
  }
  return values;
}

std::pair<Value, Value> GridCoords::descales(OpBuilder &b, Location loc,
                                             const KernelArgs &args) const {
  Value index = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, batch, args.index(b, "descale_stride_b")),
      arith::MulIOp::create(b, loc, kvHead, args.index(b, "descale_stride_h")));
  auto load = [&](StringRef name) {
    return memref::LoadOp::create(b, loc, args[name], ValueRange{index})
        .getResult();
  };
  return {arith::MulFOp::create(b, loc, load("q_descale"), load("k_descale")),
          load("v_descale")};
}

Value mlir::fa::sharedMemoryBase(OpBuilder &b, gpu::GPUModuleOp module,
                                 Location loc, int64_t bytes) {
  // A public zero-sized workgroup global becomes `.extern .shared .align
  // 1024 .b8 fa_smem[]`: what gpu.dynamic_shared_memory should be, and in
  // MLIR 22 is not (docs/toolchain.md).
  MLIRContext *ctx = b.getContext();
  auto workgroup = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  auto globalType = MemRefType::get({0}, b.getI8Type(), nullptr, workgroup);
  if (!SymbolTable::lookupSymbolIn(module, "fa_smem")) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    memref::GlobalOp::create(b, loc, "fa_smem", b.getStringAttr("public"),
                             globalType, Attribute(), /*constant=*/false,
                             b.getI64IntegerAttr(1024));
  }
  Value global = memref::GetGlobalOp::create(b, loc, globalType, "fa_smem");
  auto flatType = MemRefType::get({bytes}, b.getI8Type(), nullptr, workgroup);
  return memref::ReinterpretCastOp::create(b, loc, flatType, global,
                                           /*offset=*/0,
                                           ArrayRef<int64_t>{bytes},
                                           ArrayRef<int64_t>{1});
}

Type mlir::fa::outputElementTypeOf(Type input) {
  return isa<Float8E4M3FNType>(input) ? BFloat16Type::get(input.getContext()) : input;
}

void mlir::fa::storeOutputFromRegisters(OpBuilder &b, Location loc, Value output,
                                        const KernelArgs &args,
                                        const GridCoords &grid) {
  StoreFragmentOp::create(b, loc, output, args["o"],
                          grid.tensorBase(b, loc, args, "o", grid.head),
                          grid.queryStart, grid.queryLen,
                          args.index(b, "o_stride_s"));
}

LogicalResult mlir::fa::emitEpilogueAndStore(
    OpBuilder &b, Location loc, DistributedMath &math, ValueRange loopResults,
    const KernelArgs &args, const GridCoords &grid,
    llvm::function_ref<void(OpBuilder &, Value)> storeOutput) {
  auto epilogue = math.emitEpilogue(b, loopResults);
  if (failed(epilogue))
    return failure();
  auto [output, lse] = *epilogue;
  if (storeOutput)
    storeOutput(b, output);
  else
    storeOutputFromRegisters(b, loc, output, args, grid);
  if (lse)
    StoreFragmentOp::create(b, loc, lse, args["lse"],
                            grid.tensorBase(b, loc, args, "lse", grid.head),
                            grid.queryStart, grid.queryLen, Value());
  return success();
}
