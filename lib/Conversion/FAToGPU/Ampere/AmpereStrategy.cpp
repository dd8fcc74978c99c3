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

/// The per-thread state the KV loop carries: for the thread's two rows
/// (lane/4 and lane/4 + 8 of its warp's 16), the running max m (log2
/// units), the thread's partial running sum l, and the O accumulator
/// fragments (Dv/8 n-tiles of 4 f32).
struct LoopState {
  std::array<Value, 2> rowMax, rowSum;
  SmallVector<CFragment> acc;

  SmallVector<Value> flatten() const {
    SmallVector<Value> values = {rowMax[0], rowMax[1], rowSum[0], rowSum[1]};
    for (const CFragment &f : acc)
      values.append(f.begin(), f.end());
    return values;
  }
  static LoopState unflatten(ValueRange values, int64_t tiles) {
    LoopState s;
    s.rowMax = {values[0], values[1]};
    s.rowSum = {values[2], values[3]};
    for (int64_t t = 0; t < tiles; ++t)
      s.acc.push_back({values[4 + 4 * t], values[5 + 4 * t],
                       values[6 + 4 * t], values[7 + 4 * t]});
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
    else if (c.blockM != 16 * c.warps)
      os << "block_m must be 16 * warps (" << 16 * c.warps << "), got "
         << c.blockM;
    else if (c.blockN % 16)
      os << "block_n must be a multiple of 16, got " << c.blockN;
    else if (c.stages != 2)
      os << "the sm_80 pipeline has 2 stages, got " << c.stages;
    else if (c.softcap > 0)
      os << "softcap is not implemented on sm_80 yet";
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
  Value qBlock = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
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

  // Prologue: Q, and the first K/V tile, in flight together.
  kb.commitGroup(kb.copyTileAsync(qTile, q0, sQ, Value(), c.blockM, c.headDim, tid));
  auto [kvBegin, kvEnd] = kb.visibleKeyRange(q0, rows, qLen, kvLen);
  Value span = kb.maxIndex(kb.sub(kvEnd, kvBegin), kb.index(0));
  Value numBlocks =
      kb.div(kb.add(span, kb.index(c.blockN - 1)), kb.index(c.blockN));
  auto issueKV = [&](Value k0, Value stage) {
    SmallVector<Value> tokens =
        kb.copyTileAsync(kTile, k0, sK, stage, c.blockN, c.headDim, tid);
    SmallVector<Value> vTokens =
        kb.copyTileAsync(vTile, k0, sV, stage, c.blockN, c.valueDim, tid);
    tokens.append(vTokens);
    kb.commitGroup(tokens);
  };
  Value hasBlocks = kb.cmp(arith::CmpIPredicate::sgt, numBlocks, kb.index(0));
  scf::IfOp::create(b, loc, hasBlocks, [&](OpBuilder &, Location) {
    issueKV(kvBegin, kb.index(0));
    scf::YieldOp::create(b, loc);
  });
  kb.waitAll();
  gpu::BarrierOp::create(b, loc);

  // Q stays in registers as A fragments for the whole loop.
  Value warpRow0 = kb.mul(warp, kb.index(16));
  SmallVector<AFragment> queryFrags;
  for (int64_t kc = 0; kc < c.headDim / 16; ++kc)
    queryFrags.push_back(kb.loadA(sQ, warpRow0, kc, lane, c.headDim));

  double minusInf = -std::numeric_limits<double>::infinity();
  int64_t accTiles = c.valueDim / 8;
  LoopState init;
  init.rowMax = {kb.f32(minusInf), kb.f32(minusInf)};
  init.rowSum = {kb.f32(0.0), kb.f32(0.0)};
  Value zero = kb.f32(0.0);
  init.acc.assign(accTiles, CFragment{zero, zero, zero, zero});

  // The rows of this thread, and the column base of its fragments.
  Value rowInWarp = kb.div(lane, kb.index(4));
  std::array<Value, 2> myRows = {
      kb.add(q0, kb.add(warpRow0, rowInWarp)),
      kb.add(q0, kb.add(warpRow0, kb.add(rowInWarp, kb.index(8))))};
  Value colInTile = kb.mul(kb.rem(lane, kb.index(4)), kb.index(2));
  // scale · log2(e): scores come out in log2 units, so every exp is exp2.
  Value scoreScale = kb.f32(c.scale * M_LOG2E);

  auto loop = scf::ForOp::create(
      b, loc, kb.index(0), numBlocks, kb.index(1), init.flatten(),
      [&](OpBuilder &, Location, Value j, ValueRange carried) {
        LoopState state = LoopState::unflatten(carried, accTiles);
        Value k0 = kb.add(kvBegin, kb.mul(j, kb.index(c.blockN)));
        Value stage = kb.rem(j, kb.index(2));
        // Tile j has landed (it was the only group in flight).
        kb.waitAll();
        gpu::BarrierOp::create(b, loc);
        // Prefetch tile j + 1 into the other stage while this one computes.
        Value next = kb.add(j, kb.index(1));
        scf::IfOp::create(
            b, loc, kb.cmp(arith::CmpIPredicate::slt, next, numBlocks),
            [&](OpBuilder &, Location) {
              issueKV(kb.add(k0, kb.index(c.blockN)), kb.rem(next, kb.index(2)));
              scf::YieldOp::create(b, loc);
            });

        // S = Q Kᵀ on mma.sync: BN/8 n-tiles of 16 x 8.
        int64_t scoreTiles = c.blockN / 8;
        SmallVector<CFragment> scores(scoreTiles,
                                      CFragment{zero, zero, zero, zero});
        for (int64_t pair = 0; pair < scoreTiles / 2; ++pair)
          for (int64_t kc = 0; kc < c.headDim / 16; ++kc) {
            auto keyFrags =
                kb.loadBFromRows(sK, stage, 16 * pair, kc, lane, c.headDim);
            scores[2 * pair] =
                kb.mma(queryFrags[kc], keyFrags[0], scores[2 * pair]);
            scores[2 * pair + 1] =
                kb.mma(queryFrags[kc], keyFrags[1], scores[2 * pair + 1]);
          }

        // Scale, then mask: keys past N and keys the mask hides are -inf.
        for (int64_t t = 0; t < scoreTiles; ++t)
          for (int64_t i = 0; i < 4; ++i) {
            Value s = arith::MulFOp::create(b, loc, scores[t][i], scoreScale);
            Value col = kb.add(k0, kb.add(kb.index(8 * t + i % 2), colInTile));
            scores[t][i] = kb.maskScore(s, myRows[i / 2], col, qLen, kvLen);
          }

        // Online softmax, per row of this thread (registers 2h, 2h + 1).
        LoopState out;
        out.acc = state.acc;
        for (int64_t h = 0; h < 2; ++h) {
          Value local = kb.f32(minusInf);
          for (int64_t t = 0; t < scoreTiles; ++t)
            for (int64_t i = 2 * h; i < 2 * h + 2; ++i)
              local = arith::MaximumFOp::create(b, loc, local, scores[t][i]);
          // m_new = max(m, rowmax(S)); alpha = exp2(m - m_new)
          Value newMax = arith::MaximumFOp::create(
              b, loc, state.rowMax[h], kb.rowAllReduceMax(local));
          Value shift = kb.safeMax(newMax);
          Value rescale = kb.exp2Shifted(state.rowMax[h], shift);
          // P = exp2(S - m_new); l = alpha·l + rowsum(P) (this thread's part)
          Value partial = kb.f32(0.0);
          for (int64_t t = 0; t < scoreTiles; ++t)
            for (int64_t i = 2 * h; i < 2 * h + 2; ++i) {
              scores[t][i] = kb.exp2Shifted(scores[t][i], shift);
              partial = arith::AddFOp::create(b, loc, partial, scores[t][i]);
            }
          out.rowSum[h] = arith::AddFOp::create(
              b, loc, arith::MulFOp::create(b, loc, state.rowSum[h], rescale),
              partial);
          out.rowMax[h] = newMax;
          // acc = alpha·acc
          for (CFragment &f : out.acc)
            for (int64_t i = 2 * h; i < 2 * h + 2; ++i)
              f[i] = arith::MulFOp::create(b, loc, f[i], rescale);
        }

        // O += P V: two adjacent S tiles form one A fragment of P (the C
        // layout of m16n8 pairs is the A layout of m16k16).
        for (int64_t kc = 0; kc < c.blockN / 16; ++kc) {
          const CFragment &lo = scores[2 * kc], &hi = scores[2 * kc + 1];
          AFragment probs = {kb.pack(lo[0], lo[1]), kb.pack(lo[2], lo[3]),
                             kb.pack(hi[0], hi[1]), kb.pack(hi[2], hi[3])};
          for (int64_t pair = 0; pair < accTiles / 2; ++pair) {
            auto valueFrags = kb.loadBFromColumns(sV, stage, 16 * pair, kc,
                                                  lane, c.valueDim);
            out.acc[2 * pair] =
                kb.mma(probs, valueFrags[0], out.acc[2 * pair]);
            out.acc[2 * pair + 1] =
                kb.mma(probs, valueFrags[1], out.acc[2 * pair + 1]);
          }
        }
        scf::YieldOp::create(b, loc, out.flatten());
      });
  LoopState final = LoopState::unflatten(loop.getResults(), accTiles);

  // Epilogue: O = acc / l (0 for a row with no visible key), LSE = m·ln2 +
  // ln(l) (-inf for such a row). Rows past M are not written.
  Value oBase = kb.add(kb.mul(batch, indexArg(kOStrideB)),
                       kb.mul(head, indexArg(kOStrideH)));
  Value lseBase = kb.add(kb.mul(batch, indexArg(kLseStrideB)),
                         kb.mul(head, indexArg(kLseStrideH)));
  Value isRowLeader =
      kb.cmp(arith::CmpIPredicate::eq, kb.rem(lane, kb.index(4)), kb.index(0));
  for (int64_t h = 0; h < 2; ++h) {
    Value total = kb.rowAllReduceSum(final.rowSum[h]);
    Value empty = kb.cmpf(arith::CmpFPredicate::OEQ, total, kb.f32(0.0));
    Value inverse = kb.select(
        empty, kb.f32(0.0), arith::DivFOp::create(b, loc, kb.f32(1.0), total));
    Value row = myRows[h];
    Value exists = kb.cmp(arith::CmpIPredicate::slt, row, qLen);
    scf::IfOp::create(b, loc, exists, [&](OpBuilder &, Location) {
      Value rowBase = kb.add(oBase, kb.mul(row, indexArg(kOStrideS)));
      for (int64_t t = 0; t < accTiles; ++t) {
        Value lo = arith::MulFOp::create(b, loc, final.acc[t][2 * h], inverse);
        Value hi =
            arith::MulFOp::create(b, loc, final.acc[t][2 * h + 1], inverse);
        Value offset = kb.add(rowBase, kb.add(kb.index(8 * t), colInTile));
        vector::StoreOp::create(b, loc, kb.pack(lo, hi), arg(kO),
                                ValueRange{offset});
      }
      scf::IfOp::create(b, loc, isRowLeader, [&](OpBuilder &, Location) {
        Value lse = arith::AddFOp::create(
            b, loc,
            arith::MulFOp::create(b, loc, final.rowMax[h], kb.f32(M_LN2)),
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
