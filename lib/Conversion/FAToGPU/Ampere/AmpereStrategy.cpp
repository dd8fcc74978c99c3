//===- AmpereStrategy.cpp - the sm_80 FlashAttention-2 forward kernel -----===//
//
// Part of fa-mlir.
//
// The kernel's skeleton: prologue (Q tile, first K/V tile in flight), the
// KV loop (wait; prefetch the next tile into the other stage; S = QKᵀ;
// mask; online softmax; O += PV), and the epilogue (O = acc / l, LSE).
//
//===----------------------------------------------------------------------===//

#include "AmpereKernelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>
#include <limits>
#include <sstream>

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::ampere;

//===----------------------------------------------------------------------===//
// Scalar helpers
//===----------------------------------------------------------------------===//

Value AmpereKernelBuilder::index(int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}
Value AmpereKernelBuilder::i32(int64_t v) {
  return arith::ConstantIntOp::create(b, loc, v, 32);
}
Value AmpereKernelBuilder::f32(double v) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
}
Value AmpereKernelBuilder::add(Value x, Value y) {
  return arith::AddIOp::create(b, loc, x, y);
}
Value AmpereKernelBuilder::sub(Value x, Value y) {
  return arith::SubIOp::create(b, loc, x, y);
}
Value AmpereKernelBuilder::mul(Value x, Value y) {
  return arith::MulIOp::create(b, loc, x, y);
}
Value AmpereKernelBuilder::div(Value x, Value y) {
  return arith::DivUIOp::create(b, loc, x, y);
}
Value AmpereKernelBuilder::rem(Value x, Value y) {
  return arith::RemUIOp::create(b, loc, x, y);
}
Value AmpereKernelBuilder::minIndex(Value x, Value y) {
  return arith::MinSIOp::create(b, loc, x, y);
}
Value AmpereKernelBuilder::maxIndex(Value x, Value y) {
  return arith::MaxSIOp::create(b, loc, x, y);
}
Value AmpereKernelBuilder::select(Value cond, Value x, Value y) {
  return arith::SelectOp::create(b, loc, cond, x, y);
}
Value AmpereKernelBuilder::cmp(arith::CmpIPredicate pred, Value x, Value y) {
  return arith::CmpIOp::create(b, loc, pred, x, y);
}
Value AmpereKernelBuilder::cmpf(arith::CmpFPredicate pred, Value x, Value y) {
  return arith::CmpFOp::create(b, loc, pred, x, y);
}

//===----------------------------------------------------------------------===//
// The kernel
//===----------------------------------------------------------------------===//

namespace {

/// The per-thread state the KV loop carries. A warp owns `mTiles` m16
/// tiles; in each, a thread holds two rows (lane/4 and lane/4 + 8). Per row
/// r (= 2·mt + h): the running max m (unscaled score units), the thread's
/// partial running sum l; per m-tile: the O accumulator fragments (Dv/8
/// n-tiles of 4 f32).
struct LoopState {
  SmallVector<Value> rowMax, rowSum;
  SmallVector<SmallVector<CFragment>> acc;

  SmallVector<Value> flatten() const {
    SmallVector<Value> values(rowMax);
    values.append(rowSum.begin(), rowSum.end());
    for (const auto &tile : acc)
      for (const CFragment &f : tile)
        values.append(f.begin(), f.end());
    return values;
  }
  static LoopState unflatten(ValueRange values, int64_t mTiles,
                             int64_t accTiles) {
    LoopState s;
    int64_t rows = 2 * mTiles, next = 0;
    for (int64_t r = 0; r < rows; ++r)
      s.rowMax.push_back(values[next++]);
    for (int64_t r = 0; r < rows; ++r)
      s.rowSum.push_back(values[next++]);
    s.acc.resize(mTiles);
    for (int64_t mt = 0; mt < mTiles; ++mt)
      for (int64_t t = 0; t < accTiles; ++t) {
        s.acc[mt].push_back({values[next], values[next + 1], values[next + 2],
                             values[next + 3]});
        next += 4;
      }
    return s;
  }
};

/// Index of a kernel argument in the ABI (AttentionKernel.h).
enum Arg : unsigned {
  kQ, kK, kV, kO, kLse,
  kBatch, kQHeads, kKvHeads, kQLen, kKvLen,
  kQStrideB, kQStrideH, kQStrideS,
  kKStrideB, kKStrideH, kKStrideS,
  kVStrideB, kVStrideH, kVStrideS,
  kOStrideB, kOStrideH, kOStrideS,
  kLseStrideB, kLseStrideH,
  kNumArgs
};

class AmpereStrategy : public AttentionGPUStrategy {
public:
  StringRef chip() const override { return "sm_80"; }

  std::string unsupportedReason(const AttentionKernelConfig &c) const override {
    std::ostringstream os;
    if (!c.elementType.isF16() && !c.elementType.isBF16())
      os << "sm_80 kernels take f16 or bf16";
    else if (c.headDim % 64 || c.valueDim % 64 || c.headDim > 256 ||
             c.valueDim > 256)
      os << "sm_80 kernels need D and Dv in {64, 128, 192, 256}, got D="
         << c.headDim << " Dv=" << c.valueDim;
    else if (c.blockM != 16 * c.warps && c.blockM != 32 * c.warps)
      os << "block_m must be 16 * warps or 32 * warps (" << 16 * c.warps
         << " or " << 32 * c.warps << "), got " << c.blockM;
    else if (c.blockN % 16)
      os << "block_n must be a multiple of 16, got " << c.blockN;
    else if (c.stages != 2)
      os << "the sm_80 pipeline has 2 stages, got " << c.stages;
    else if (c.softcap > 0)
      os << "softcap is not implemented on sm_80 yet";
    else if (!(c.scale > 0))
      os << "sm_80 kernels need scale > 0 (the max is taken before scaling)";
    return os.str();
  }

  int64_t dynamicSharedMemoryBytes(const AttentionKernelConfig &c) const override {
    int64_t bytes = c.elementType.getIntOrFloatBitWidth() / 8;
    return bytes * (c.blockM * c.headDim +
                    c.stages * c.blockN * (c.headDim + c.valueDim));
  }

  gpu::GPUFuncOp emitForwardKernel(OpBuilder &builder, gpu::GPUModuleOp module,
                                   const AttentionKernelConfig &c,
                                   StringRef name) const override;
};

} // namespace

gpu::GPUFuncOp AmpereStrategy::emitForwardKernel(OpBuilder &builder,
                                                 gpu::GPUModuleOp module,
                                                 const AttentionKernelConfig &c,
                                                 StringRef name) const {
  OpBuilder::InsertionGuard guard(builder);
  MLIRContext *ctx = builder.getContext();
  Location loc = module.getLoc();
  builder.setInsertionPointToEnd(module.getBody());

  // Dynamic shared memory: a public zero-sized workgroup global becomes
  // `.extern .shared .align 1024 .b8 fa_smem[]` (TOOLCHAIN.md: what
  // gpu.dynamic_shared_memory should be, and is not, in MLIR 22).
  auto workgroup = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  auto smemGlobalType = MemRefType::get({0}, builder.getI8Type(), nullptr,
                                        workgroup);
  if (!SymbolTable::lookupSymbolIn(module, "fa_smem"))
    memref::GlobalOp::create(builder, loc, "fa_smem",
                             builder.getStringAttr("public"), smemGlobalType,
                             Attribute(), /*constant=*/false,
                             builder.getI64IntegerAttr(1024));

  Type elementType = c.elementType;
  Type f32Type = builder.getF32Type();
  auto bufferType = MemRefType::get({ShapedType::kDynamic}, elementType);
  auto lseType = MemRefType::get({ShapedType::kDynamic}, f32Type);
  SmallVector<Type> argTypes = {bufferType, bufferType, bufferType,
                                bufferType, lseType};
  argTypes.append(kNumArgs - kBatch, builder.getI64Type());
  int64_t threads = 32 * c.warps;
  auto func = gpu::GPUFuncOp::create(builder, loc, name,
                                     builder.getFunctionType(argTypes, {}));
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                builder.getUnitAttr());
  func.setKnownBlockSizeAttr(
      DenseI32ArrayAttr::get(ctx, {static_cast<int32_t>(threads), 1, 1}));

  Block &entry = func.getBody().front();
  builder.setInsertionPointToStart(&entry);
  AmpereKernelBuilder kb(builder, loc, c);
  OpBuilder &b = builder;
  auto arg = [&](Arg a) -> Value { return entry.getArgument(a); };
  auto indexArg = [&](Arg a) -> Value {
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), arg(a));
  };

  // Who am I: (Q block, head, batch) from the grid; warp and lane.
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value lane = kb.rem(tid, kb.index(32));
  Value warp = kb.div(tid, kb.index(32));
  // Under a causal or window mask the last Q blocks see the most keys:
  // hand them out first (reverse order) so the longest blocks do not form
  // the tail of the grid.
  Value qBlock = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  if (c.mask.getKind() != MaskKind::None)
    qBlock = kb.sub(kb.sub(gpu::GridDimOp::create(b, loc, gpu::Dimension::x),
                           kb.index(1)),
                    qBlock);
  Value head = gpu::BlockIdOp::create(b, loc, gpu::Dimension::y);
  Value batch = gpu::BlockIdOp::create(b, loc, gpu::Dimension::z);
  Value qLen = indexArg(kQLen), kvLen = indexArg(kKvLen);
  // GQA/MQA: query head h reads KV head h / (Hq / Hkv).
  Value kvHead =
      kb.div(head, kb.div(indexArg(kQHeads), indexArg(kKvHeads)));
  Value q0 = kb.mul(qBlock, kb.index(c.blockM));
  Value rows = kb.minIndex(kb.index(c.blockM), kb.sub(qLen, q0));

  // Shared memory: Q [BM][D], K [stages][BN][D], V [stages][BN][Dv].
  int64_t elementBytes = elementType.getIntOrFloatBitWidth() / 8;
  int64_t smemBytes = dynamicSharedMemoryBytes(c);
  Value global = memref::GetGlobalOp::create(b, loc, smemGlobalType, "fa_smem");
  auto flatType = MemRefType::get({smemBytes}, b.getI8Type(), nullptr, workgroup);
  Value flat = memref::ReinterpretCastOp::create(
      b, loc, flatType, global, /*offset=*/0, ArrayRef<int64_t>{smemBytes},
      ArrayRef<int64_t>{1});
  auto view = [&](int64_t byteOffset, ArrayRef<int64_t> shape) -> Value {
    auto type = MemRefType::get(shape, elementType, nullptr, workgroup);
    return memref::ViewOp::create(b, loc, type, flat, kb.index(byteOffset),
                                  ValueRange{});
  };
  int64_t kOffset = elementBytes * c.blockM * c.headDim;
  int64_t vOffset = kOffset + elementBytes * c.stages * c.blockN * c.headDim;
  Value sQ = view(0, {c.blockM, c.headDim});
  Value sK = view(kOffset, {c.stages, c.blockN, c.headDim});
  Value sV = view(vOffset, {c.stages, c.blockN, c.valueDim});

  auto tileOf = [&](Arg buffer, Arg strideB, Arg strideH, Arg strideS,
                    Value h, Value limit) {
    GlobalTile t;
    t.buffer = arg(buffer);
    t.base = kb.add(kb.mul(batch, indexArg(strideB)),
                    kb.mul(h, indexArg(strideH)));
    t.rowStride = indexArg(strideS);
    t.rowLimit = limit;
    return t;
  };
  GlobalTile qTile = tileOf(kQ, kQStrideB, kQStrideH, kQStrideS, head, qLen);
  GlobalTile kTile = tileOf(kK, kKStrideB, kKStrideH, kKStrideS, kvHead, kvLen);
  GlobalTile vTile = tileOf(kV, kVStrideB, kVStrideH, kVStrideS, kvHead, kvLen);

  // Prologue. Groups are committed unconditionally so that wait_group
  // counts stay uniform: G0 = {Q, K_0}, G1 = {V_0}.
  auto [kvBegin, kvEnd] = kb.visibleKeyRange(q0, rows, qLen, kvLen);
  Value span = kb.maxIndex(kb.sub(kvEnd, kvBegin), kb.index(0));
  Value numBlocks =
      kb.div(kb.add(span, kb.index(c.blockN - 1)), kb.index(c.blockN));
  Value hasBlocks = kb.cmp(arith::CmpIPredicate::sgt, numBlocks, kb.index(0));
  auto copyIf = [&](Value condition, const GlobalTile &tile, Value k0, Value dst,
                    Value stage, int64_t width) {
    scf::IfOp::create(b, loc, condition, [&](OpBuilder &, Location) {
      kb.copyTileAsync(tile, k0, dst, stage, c.blockN, width, tid);
      scf::YieldOp::create(b, loc);
    });
  };
  kb.copyTileAsync(qTile, q0, sQ, Value(), c.blockM, c.headDim, tid);
  copyIf(hasBlocks, kTile, kvBegin, sK, kb.index(0), c.headDim);
  kb.commitGroup({});
  copyIf(hasBlocks, vTile, kvBegin, sV, kb.index(0), c.valueDim);
  Value newest = kb.commitGroup({});
  kb.waitUntilPending(newest, 1); // Q and K_0 have landed
  gpu::BarrierOp::create(b, loc);

  // Each warp owns mTiles m16 tiles (block_m = 16·warps·mTiles). Two
  // tiles per warp share every K and V fragment between them, halving the
  // ldmatrix traffic per mma.
  int64_t mTiles = c.blockM / (16 * c.warps);
  // Q as A fragments: in registers for the whole loop when they fit;
  // otherwise re-read from shared memory each KV tile (D/16 ldmatrix per
  // m-tile per warp, for D/2 fewer registers per m-tile).
  bool queryInRegisters = c.headDim * mTiles <= 128;
  Value warpRow0 = kb.mul(warp, kb.index(16 * mTiles));
  auto tileRow0 = [&](int64_t mt) { return kb.add(warpRow0, kb.index(16 * mt)); };
  SmallVector<SmallVector<AFragment>> queryFrags(mTiles);
  if (queryInRegisters)
    for (int64_t mt = 0; mt < mTiles; ++mt)
      for (int64_t kc = 0; kc < c.headDim / 16; ++kc)
        queryFrags[mt].push_back(
            kb.loadA(sQ, tileRow0(mt), kc, lane));

  double minusInf = -std::numeric_limits<double>::infinity();
  int64_t accTiles = c.valueDim / 8;
  int64_t rowsPerThread = 2 * mTiles;
  Value zero = kb.f32(0.0);
  LoopState init;
  init.rowMax.assign(rowsPerThread, kb.f32(minusInf));
  init.rowSum.assign(rowsPerThread, zero);
  init.acc.assign(mTiles, SmallVector<CFragment>(
                              accTiles, CFragment{zero, zero, zero, zero}));

  // The rows of this thread (r = 2·mt + h), and its fragments' column base.
  Value rowInTile = kb.div(lane, kb.index(4));
  SmallVector<Value> myRows;
  for (int64_t mt = 0; mt < mTiles; ++mt)
    for (int64_t h = 0; h < 2; ++h)
      myRows.push_back(
          kb.add(q0, kb.add(tileRow0(mt), kb.add(rowInTile, kb.index(8 * h)))));
  Value colInTile = kb.mul(kb.rem(lane, kb.index(4)), kb.index(2));
  // c = scale · log2(e): exp(scale·s - m) = exp2(c·s - c·m), one FFMA each.
  // Scores stay unscaled until then (scale > 0 keeps the max in place).
  Value log2Scale = kb.f32(c.scale * M_LOG2E);
  Value shiftKeys = kb.sub(kvLen, qLen); // bottom-right diagonal offset
  int64_t scoreTiles = c.blockN / 8;

  auto loop = scf::ForOp::create(
      b, loc, kb.index(0), numBlocks, kb.index(1), init.flatten(),
      [&](OpBuilder &, Location, Value j, ValueRange carried) {
        // Invariant: K_j has landed and is visible; V_j may be in flight.
        LoopState state = LoopState::unflatten(carried, mTiles, accTiles);
        Value k0 = kb.add(kvBegin, kb.mul(j, kb.index(c.blockN)));
        Value stage = kb.rem(j, kb.index(2));
        Value next = kb.add(j, kb.index(1));
        Value hasNext = kb.cmp(arith::CmpIPredicate::slt, next, numBlocks);
        Value nextK0 = kb.add(k0, kb.index(c.blockN));
        Value nextStage = kb.rem(next, kb.index(2));
        // K_{j+1} streams in under S = QKᵀ and the softmax.
        copyIf(hasNext, kTile, nextK0, sK, nextStage, c.headDim);
        kb.commitGroup({});

        // S = Q Kᵀ on mma.sync: per m-tile, BN/8 n-tiles of 16 x 8; each
        // K fragment pair feeds every m-tile.
        SmallVector<SmallVector<CFragment>> scores(
            mTiles, SmallVector<CFragment>(scoreTiles,
                                           CFragment{zero, zero, zero, zero}));
        for (int64_t kc = 0; kc < c.headDim / 16; ++kc) {
          SmallVector<AFragment> query;
          for (int64_t mt = 0; mt < mTiles; ++mt)
            query.push_back(queryInRegisters
                                ? queryFrags[mt][kc]
                                : kb.loadA(sQ, tileRow0(mt), kc, lane));
          for (int64_t pair = 0; pair < scoreTiles / 2; ++pair) {
            auto keyFrags =
                kb.loadBFromRows(sK, stage, 16 * pair, kc, lane);
            for (int64_t mt = 0; mt < mTiles; ++mt)
              for (int64_t half = 0; half < 2; ++half)
                scores[mt][2 * pair + half] = kb.mma(
                    query[mt], keyFrags[half], scores[mt][2 * pair + half]);
          }
        }

        // Mask only tiles that need it: the last partial tile, and tiles the
        // mask cuts (on the diagonal, at a window's edge). Others skip the
        // per-element index arithmetic entirely.
        using Pred = arith::CmpIPredicate;
        Value lastKey = kb.add(k0, kb.index(c.blockN - 1));
        Value needMask = kb.cmp(Pred::sge, lastKey, kvLen);
        auto orNeed = [&](Value cond) {
          needMask = arith::OrIOp::create(b, loc, needMask, cond);
        };
        Value firstRowDiagonal = kb.add(q0, shiftKeys);
        Value lastRowDiagonal = kb.add(firstRowDiagonal, kb.index(c.blockM - 1));
        switch (c.mask.getKind()) {
        case MaskKind::None:
          break;
        case MaskKind::Causal:
          orNeed(kb.cmp(Pred::sgt, lastKey, firstRowDiagonal));
          break;
        case MaskKind::CausalTopLeft:
          orNeed(kb.cmp(Pred::sgt, lastKey, q0));
          break;
        case MaskKind::Window:
          if (c.mask.getRight() >= 0)
            orNeed(kb.cmp(Pred::sgt, lastKey,
                          kb.add(firstRowDiagonal, kb.index(c.mask.getRight()))));
          if (c.mask.getLeft() >= 0)
            orNeed(kb.cmp(Pred::slt, k0,
                          kb.sub(lastRowDiagonal, kb.index(c.mask.getLeft()))));
          break;
        }
        SmallVector<Value> flatScores;
        for (const auto &tile : scores)
          for (const CFragment &f : tile)
            flatScores.append(f.begin(), f.end());
        auto masked = scf::IfOp::create(
            b, loc, needMask,
            [&](OpBuilder &, Location) {
              SmallVector<Value> out;
              for (int64_t mt = 0; mt < mTiles; ++mt)
                for (int64_t t = 0; t < scoreTiles; ++t)
                  for (int64_t i = 0; i < 4; ++i) {
                    Value col =
                        kb.add(k0, kb.add(kb.index(8 * t + i % 2), colInTile));
                    out.push_back(kb.maskScore(scores[mt][t][i],
                                               myRows[2 * mt + i / 2], col,
                                               qLen, kvLen));
                  }
              scf::YieldOp::create(b, loc, out);
            },
            [&](OpBuilder &, Location) {
              scf::YieldOp::create(b, loc, flatScores);
            });
        int64_t next_ = 0;
        for (auto &tile : scores)
          for (CFragment &f : tile)
            for (Value &v : f)
              v = masked.getResult(next_++);

        // Online softmax, per row r = 2·mt + h (registers 2h, 2h + 1 of
        // each of the m-tile's fragments).
        SmallVector<SmallVector<std::array<Value, 2>>> packedProbs(
            mTiles, SmallVector<std::array<Value, 2>>(scoreTiles));
        LoopState out;
        out.acc = state.acc;
        out.rowMax.resize(rowsPerThread);
        out.rowSum.resize(rowsPerThread);
        for (int64_t mt = 0; mt < mTiles; ++mt)
          for (int64_t h = 0; h < 2; ++h) {
            int64_t r = 2 * mt + h;
            Value local = kb.f32(minusInf);
            for (int64_t t = 0; t < scoreTiles; ++t)
              for (int64_t i = 2 * h; i < 2 * h + 2; ++i)
                local =
                    arith::MaximumFOp::create(b, loc, local, scores[mt][t][i]);
            // m_new = max(m, rowmax(S)); alpha = exp2(c·m - c·m_new)
            Value newMax = arith::MaximumFOp::create(
                b, loc, state.rowMax[r], kb.rowAllReduceMax(local));
            Value shift =
                arith::MulFOp::create(b, loc, kb.safeMax(newMax), log2Scale);
            Value rescale =
                kb.exp2(kb.scaledMinus(state.rowMax[r], log2Scale, shift));
            // P = exp2(c·S - c·m_new); l = alpha·l + rowsum(P) (this thread's)
            Value partial = kb.f32(0.0);
            for (int64_t t = 0; t < scoreTiles; ++t)
              for (int64_t i = 2 * h; i < 2 * h + 2; ++i) {
                scores[mt][t][i] =
                    kb.exp2(kb.scaledMinus(scores[mt][t][i], log2Scale, shift));
                partial =
                    arith::AddFOp::create(b, loc, partial, scores[mt][t][i]);
              }
            out.rowSum[r] = arith::AddFOp::create(
                b, loc,
                arith::MulFOp::create(b, loc, state.rowSum[r], rescale),
                partial);
            out.rowMax[r] = newMax;
            // acc = alpha·acc
            for (CFragment &f : out.acc[mt])
              for (int64_t i = 2 * h; i < 2 * h + 2; ++i)
                f[i] = arith::MulFOp::create(b, loc, f[i], rescale);
            // P goes to 16-bit pairs at once: the f32 scores die here, not
            // after the V wait, which keeps D=128 inside the register file.
            for (int64_t t = 0; t < scoreTiles; ++t)
              packedProbs[mt][t][h] =
                  kb.pack(scores[mt][t][2 * h], scores[mt][t][2 * h + 1]);
          }

        // V_j must have landed (K_{j+1} may still stream); then V_{j+1}
        // streams in under O += PV.
        kb.waitUntilPending(kb.commitGroup({}), 2);
        gpu::BarrierOp::create(b, loc);
        copyIf(hasNext, vTile, nextK0, sV, nextStage, c.valueDim);
        kb.commitGroup({});

        // O += P V: two adjacent S tiles form one A fragment of P (the C
        // layout of m16n8 pairs is the A layout of m16k16); each V fragment
        // pair feeds every m-tile.
        for (int64_t kc = 0; kc < c.blockN / 16; ++kc) {
          SmallVector<AFragment> probs;
          for (int64_t mt = 0; mt < mTiles; ++mt) {
            const auto &lo = packedProbs[mt][2 * kc], &hi = packedProbs[mt][2 * kc + 1];
            probs.push_back({lo[0], lo[1], hi[0], hi[1]});
          }
          for (int64_t pair = 0; pair < accTiles / 2; ++pair) {
            auto valueFrags = kb.loadBFromColumns(sV, stage, 16 * pair, kc,
                                                  lane);
            for (int64_t mt = 0; mt < mTiles; ++mt)
              for (int64_t half = 0; half < 2; ++half)
                out.acc[mt][2 * pair + half] =
                    kb.mma(probs[mt], valueFrags[half],
                           out.acc[mt][2 * pair + half]);
          }
        }
        // K_{j+1} must have landed before the next S (V_{j+1} may stream).
        kb.waitUntilPending(kb.commitGroup({}), 2);
        gpu::BarrierOp::create(b, loc);
        scf::YieldOp::create(b, loc, out.flatten());
      });
  LoopState final = LoopState::unflatten(loop.getResults(), mTiles, accTiles);

  // Epilogue: O = acc / l (0 for a row with no visible key), LSE = m·scale
  // + ln(l) (-inf for such a row). Rows past M are not written.
  Value oBase = kb.add(kb.mul(batch, indexArg(kOStrideB)),
                       kb.mul(head, indexArg(kOStrideH)));
  Value lseBase = kb.add(kb.mul(batch, indexArg(kLseStrideB)),
                         kb.mul(head, indexArg(kLseStrideH)));
  Value isRowLeader =
      kb.cmp(arith::CmpIPredicate::eq, kb.rem(lane, kb.index(4)), kb.index(0));
  for (int64_t mt = 0; mt < mTiles; ++mt)
    for (int64_t h = 0; h < 2; ++h) {
      int64_t r = 2 * mt + h;
      Value total = kb.rowAllReduceSum(final.rowSum[r]);
      Value empty = kb.cmpf(arith::CmpFPredicate::OEQ, total, kb.f32(0.0));
      Value inverse =
          kb.select(empty, kb.f32(0.0),
                    arith::DivFOp::create(b, loc, kb.f32(1.0), total));
      Value row = myRows[r];
      Value exists = kb.cmp(arith::CmpIPredicate::slt, row, qLen);
      scf::IfOp::create(b, loc, exists, [&](OpBuilder &, Location) {
        Value rowBase = kb.add(oBase, kb.mul(row, indexArg(kOStrideS)));
        for (int64_t t = 0; t < accTiles; ++t) {
          Value lo =
              arith::MulFOp::create(b, loc, final.acc[mt][t][2 * h], inverse);
          Value hi = arith::MulFOp::create(b, loc, final.acc[mt][t][2 * h + 1],
                                           inverse);
          Value offset = kb.add(rowBase, kb.add(kb.index(8 * t), colInTile));
          // One 32-bit store per pair: the column is even and rows are
          // 16-byte aligned (the ABI's cp.async requirement), so 4 holds.
          vector::StoreOp::create(b, loc, kb.pack(lo, hi), arg(kO),
                                  ValueRange{offset}, /*nontemporal=*/false,
                                  llvm::MaybeAlign(4));
        }
        scf::IfOp::create(b, loc, isRowLeader, [&](OpBuilder &, Location) {
          Value lse = arith::AddFOp::create(
              b, loc,
              arith::MulFOp::create(b, loc, final.rowMax[r], kb.f32(c.scale)),
              kb.naturalLog(total));
          memref::StoreOp::create(b, loc, lse, arg(kLse),
                                  ValueRange{kb.add(lseBase, row)});
          scf::YieldOp::create(b, loc);
        });
        scf::YieldOp::create(b, loc);
      });
    }
  gpu::ReturnOp::create(b, loc);
  return func;
}

AttentionGPUStrategy::~AttentionGPUStrategy() = default;

std::unique_ptr<AttentionGPUStrategy> mlir::fa::createAmpereAttentionStrategy() {
  return std::make_unique<AmpereStrategy>();
}

std::unique_ptr<AttentionGPUStrategy>
mlir::fa::createAttentionStrategy(StringRef chip) {
  if (chip == "sm_80")
    return createAmpereAttentionStrategy();
  return nullptr;
}
