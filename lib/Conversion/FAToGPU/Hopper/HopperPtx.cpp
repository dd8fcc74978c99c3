//===- HopperPtx.cpp - the sm_90a instructions, as inline PTX -------------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "HopperPtx.h"

#include "fa/Conversion/FAToGPU/FragmentPatterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"

#include <string>

using namespace mlir;
using namespace mlir::fa;

static Value i32(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIntOp::create(b, loc, v, 32);
}

void hopper::mbarrierInit(OpBuilder &b, Location loc, Value barrier,
                          int64_t count) {
  inlinePtx(b, loc, Type(), {barrier, i32(b, loc, count)},
            "mbarrier.init.shared::cta.b64 [$0], $1;", "r,r");
}

void hopper::fenceBarrierInit(OpBuilder &b, Location loc) {
  inlinePtx(b, loc, Type(), {},
            "fence.mbarrier_init.release.cluster;\n\t"
            "fence.proxy.async.shared::cta;",
            "");
}

void hopper::arriveExpectTx(OpBuilder &b, Location loc, Value barrier,
                            int64_t bytes) {
  inlinePtx(b, loc, Type(), {barrier, i32(b, loc, bytes)},
            "mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;", "r,r");
}

void hopper::arrive(OpBuilder &b, Location loc, Value barrier) {
  inlinePtx(b, loc, Type(), {barrier},
            "mbarrier.arrive.shared::cta.b64 _, [$0];", "r");
}

void hopper::waitParity(OpBuilder &b, Location loc, Value barrier,
                        Value parity) {
  // Labels inside { } are local to the block: each copy gets its own.
  inlinePtx(b, loc, Type(), {barrier, parity},
            "{\n\t.reg .pred done;\n"
            "fa_wait:\n\t"
            "mbarrier.try_wait.parity.shared::cta.b64 done, [$0], $1;\n\t"
            "@!done bra fa_wait;\n\t}",
            "r,r");
}

void hopper::tmaLoad(OpBuilder &b, Location loc, Value dst, Value tensorMap,
                     ArrayRef<Value> coords, Value barrier) {
  Value map = LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), tensorMap);
  SmallVector<Value> operands = {dst, map};
  operands.append(coords.begin(), coords.end());
  operands.push_back(barrier);
  inlinePtx(b, loc, Type(), operands,
            "cp.async.bulk.tensor.4d.shared::cluster.global.tile"
            ".mbarrier::complete_tx::bytes [$0], [$1, {$2, $3, $4, $5}], [$6];",
            "r,l,r,r,r,r,r");
}

/// A 4-D bulk tensor copy from shared memory (`src`) to the box at
/// `coords` of `tensorMap`, in this thread's current bulk group.
static void bulkTensorFromShared(OpBuilder &b, Location loc, Value src,
                                 Value tensorMap, ArrayRef<Value> coords,
                                 StringRef opcode) {
  Value map = LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), tensorMap);
  SmallVector<Value> operands = {map};
  operands.append(coords.begin(), coords.end());
  operands.push_back(src);
  inlinePtx(b, loc, Type(), operands,
            (opcode + ".bulk_group [$0, {$1, $2, $3, $4}], [$5];").str(),
            "l,r,r,r,r,r");
}

void hopper::tmaReduceAdd(OpBuilder &b, Location loc, Value src,
                          Value tensorMap, ArrayRef<Value> coords) {
  bulkTensorFromShared(
      b, loc, src, tensorMap, coords,
      "cp.reduce.async.bulk.tensor.4d.global.shared::cta.add.tile");
}

void hopper::tmaStore(OpBuilder &b, Location loc, Value src, Value tensorMap,
                      ArrayRef<Value> coords) {
  bulkTensorFromShared(b, loc, src, tensorMap, coords,
                       "cp.async.bulk.tensor.4d.global.shared::cta.tile");
}

void hopper::bulkCommit(OpBuilder &b, Location loc) {
  inlinePtx(b, loc, Type(), {}, "cp.async.bulk.commit_group;", "");
}

void hopper::bulkWait(OpBuilder &b, Location loc, int64_t pending,
                      bool readOnly) {
  inlinePtx(b, loc, Type(), {},
            std::string("cp.async.bulk.wait_group") + (readOnly ? ".read " : " ") +
                std::to_string(pending) + ";",
            "");
}

void hopper::namedBarrierSync(OpBuilder &b, Location loc, Value id,
                              int64_t threads) {
  inlinePtx(b, loc, Type(), {id, i32(b, loc, threads)}, "bar.sync $0, $1;",
            "r,r");
}

void hopper::namedBarrierArrive(OpBuilder &b, Location loc, Value id,
                                int64_t threads, Value condition) {
  if (!condition) {
    inlinePtx(b, loc, Type(), {id, i32(b, loc, threads)},
              "bar.arrive $0, $1;", "r,r");
    return;
  }
  Value flag = arith::ExtUIOp::create(b, loc, b.getI32Type(), condition);
  inlinePtx(b, loc, Type(), {id, i32(b, loc, threads), flag},
            "{\n\t.reg .pred arrive;\n\tsetp.ne.b32 arrive, $2, 0;\n\t"
            "@arrive bar.arrive $0, $1;\n\t}",
            "r,r,r");
}

void hopper::setMaxRegisters(OpBuilder &b, Location loc, int64_t count,
                             bool increase) {
  std::string text = std::string("setmaxnreg.") + (increase ? "inc" : "dec") +
                     ".sync.aligned.u32 " + std::to_string(count) + ";";
  inlinePtx(b, loc, Type(), {}, text, "");
}

void hopper::fenceProxyAsync(OpBuilder &b, Location loc) {
  inlinePtx(b, loc, Type(), {}, "fence.proxy.async.shared::cta;", "");
}

void hopper::fenceProxyAsyncAll(OpBuilder &b, Location loc) {
  inlinePtx(b, loc, Type(), {}, "fence.proxy.async;", "");
}

void hopper::wgmmaFence(OpBuilder &b, Location loc) {
  inlinePtx(b, loc, Type(), {}, "wgmma.fence.sync.aligned;", "");
}

void hopper::wgmmaCommit(OpBuilder &b, Location loc) {
  inlinePtx(b, loc, Type(), {}, "wgmma.commit_group.sync.aligned;", "");
}

void hopper::wgmmaWait(OpBuilder &b, Location loc, int64_t pending) {
  inlinePtx(b, loc, Type(), {},
            "wgmma.wait_group.sync.aligned " + std::to_string(pending) + ";",
            "");
}

SmallVector<Value> hopper::wgmmaWait(OpBuilder &b, Location loc,
                                     int64_t pending, ArrayRef<Value> values) {
  std::string constraints;
  for (size_t i = 0; i < values.size(); ++i)
    constraints += (i ? ",=f" : "=f");
  for (size_t i = 0; i < values.size(); ++i)
    constraints += "," + std::to_string(i);
  SmallVector<Type> types(values.size(), b.getF32Type());
  auto result = LLVM::LLVMStructType::getLiteral(b.getContext(), types);
  Operation *op = inlinePtx(
      b, loc, result, values,
      "wgmma.wait_group.sync.aligned " + std::to_string(pending) + ";",
      constraints);
  SmallVector<Value> out;
  for (size_t i = 0; i < values.size(); ++i)
    out.push_back(LLVM::ExtractValueOp::create(
        b, loc, op->getResult(0), ArrayRef<int64_t>{static_cast<int64_t>(i)}));
  return out;
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
  int64_t n = 2 * static_cast<int64_t>(acc.size());
  std::string type = inputType.isBF16()  ? "bf16"
                     : inputType.isF16() ? "f16"
                                         : "e4m3";
  std::string k = std::to_string(hopper::wgmmaDepth(inputType));
  int64_t aOperands = aShared ? 1 : static_cast<int64_t>(aRegisters.size());
  // A chain's first wgmma onto zeros (S = QKᵀ, dP, dQ_i) does not read its
  // accumulators: scale-d = 0, outputs only. Passing the zeros in would
  // cost one mov per accumulator register per k chain, which LLVM places
  // after the wgmma.fence, where ptxas answers each write with an injected
  // warpgroup.arrive (its C7519 note).
  bool zeroAccumulators = llvm::all_of(acc, isZeroConstant);
  int64_t inputs = zeroAccumulators ? 0 : static_cast<int64_t>(acc.size());
  // scale-d is a predicate: set from an operand (1: accumulate). Each
  // shared operand's offset is added here, in descriptor units (16 bytes).
  std::string text = "{\n\t.reg .pred accumulate;\n\t.reg .b64 descA, descB;\n\t"
                     "setp.ne.b32 accumulate, $" +
                     std::to_string(acc.size() + inputs + aOperands + 1) + ", 0;\n\t";
  int64_t next = static_cast<int64_t>(acc.size()) + inputs;
  auto operand = [&]() { return "$" + std::to_string(next++); };
  // The operand as the wgmma names it: its descriptor, or `reg` holding
  // the descriptor plus the offset.
  auto offsetInto = [&](const char *reg, const hopper::SharedOperand &shared) {
    std::string descriptor = operand();
    if (!shared.bytes)
      return descriptor;
    text += std::string("add.s64 ") + reg + ", " + descriptor + ", " +
            std::to_string(shared.bytes >> 4) + ";\n\t";
    return std::string(reg);
  };
  std::string aName;
  if (aShared) {
    aName = offsetInto("descA", *aShared);
  } else { // four registers
    for (size_t i = 0; i < aRegisters.size(); ++i)
      aName += (i ? ", " : "{") + operand();
    aName += "}";
  }
  std::string bName = offsetInto("descB", bShared);
  text += "wgmma.mma_async.sync.aligned.m64n" + std::to_string(n) + "k" + k +
          ".f32." + type + "." + type + " {";
  std::string constraints;
  for (size_t i = 0; i < acc.size(); ++i) {
    text += (i ? ", $" : "$") + std::to_string(i);
    constraints += (i ? ",=f" : "=f");
  }
  // The accumulators are read and written: inputs tied to the outputs.
  for (int64_t i = 0; i < inputs; ++i)
    constraints += "," + std::to_string(i);
  SmallVector<Value> operands(acc.begin(), acc.begin() + inputs);
  text += "}, " + aName + ", " + bName + ", accumulate, 1, 1";
  if (aShared) { // A from shared memory
    constraints += ",l";
    operands.push_back(aShared->descriptor);
  } else { // A from four registers
    for (size_t i = 0; i < aRegisters.size(); ++i)
      constraints += ",r";
    operands.append(aRegisters.begin(), aRegisters.end());
  }
  constraints += ",l,r";
  operands.push_back(bShared.descriptor);
  operands.push_back(i32(b, loc, zeroAccumulators ? 0 : 1));
  // scale-a = scale-b = 1; then imm-trans-a (the shared-A form only) and
  // imm-trans-b, which e4m3 does not have (K-major operands only).
  bool transposable = inputType.getIntOrFloatBitWidth() == 16;
  assert((transposable || (!transposeA && !transposeB)) &&
         "e4m3 wgmma reads its operands K-major only");
  if (aShared && transposable)
    text += transposeA ? ", 1" : ", 0";
  if (transposable)
    text += std::string(", ") + (transposeB ? "1" : "0");
  text += ";\n\t}";
  SmallVector<Type> types(acc.size(), b.getF32Type());
  auto result = LLVM::LLVMStructType::getLiteral(b.getContext(), types);
  Operation *op = inlinePtx(b, loc, result, operands, text, constraints);
  SmallVector<Value> out;
  for (size_t i = 0; i < acc.size(); ++i)
    out.push_back(LLVM::ExtractValueOp::create(
        b, loc, op->getResult(0), ArrayRef<int64_t>{static_cast<int64_t>(i)}));
  return out;
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

/// "{$first, $first + 1, ...}": `count` operands of an inline PTX string.
static std::string operandList(int64_t first, int64_t count) {
  std::string list = "{";
  for (int64_t i = 0; i < count; ++i)
    list += (i ? ", $" : "$") + std::to_string(first + i);
  return list + "}";
}

SmallVector<Value> hopper::loadMatrixTransposed(OpBuilder &b, Location loc,
                                                Value rowAddress, int64_t offset,
                                                int64_t matrices) {
  assert((matrices == 1 || matrices == 2 || matrices == 4) &&
         "ldmatrix loads one, two or four matrices");
  SmallVector<Type> types(matrices, b.getI32Type());
  Type result = b.getI32Type();
  if (matrices > 1)
    result = LLVM::LLVMStructType::getLiteral(b.getContext(), types);
  std::string constraints;
  for (int64_t i = 0; i < matrices; ++i)
    constraints += "=r,";
  Operation *op = inlinePtx(
      b, loc, result, {rowAddress},
      "ldmatrix.sync.aligned.m8n8.x" + std::to_string(matrices) +
          ".trans.shared.b16 " + operandList(0, matrices) + ", [$" +
          std::to_string(matrices) + "+" + std::to_string(offset) + "];",
      constraints + "r");
  if (matrices == 1)
    return {op->getResult(0)};
  SmallVector<Value> out;
  for (int64_t i = 0; i < matrices; ++i)
    out.push_back(LLVM::ExtractValueOp::create(b, loc, op->getResult(0),
                                               ArrayRef<int64_t>{i}));
  return out;
}

void hopper::storeMatrix(OpBuilder &b, Location loc, Value rowAddress,
                         int64_t offset, ArrayRef<Value> registers) {
  int64_t matrices = registers.size();
  assert((matrices == 1 || matrices == 2 || matrices == 4) &&
         "stmatrix stores one, two or four matrices");
  SmallVector<Value> operands = {rowAddress};
  operands.append(registers.begin(), registers.end());
  std::string constraints = "r";
  for (int64_t i = 0; i < matrices; ++i)
    constraints += ",r";
  inlinePtx(b, loc, Type(), operands,
            "stmatrix.sync.aligned.m8n8.x" + std::to_string(matrices) +
                ".shared.b16 [$0+" + std::to_string(offset) + "], " +
                operandList(1, matrices) + ";",
            constraints);
}

/// Inline PTX without side effects (free to move, CSE or drop).
static Value purePtx(OpBuilder &b, Location loc, Type result,
                     ValueRange operands, StringRef text,
                     StringRef constraints) {
  return LLVM::InlineAsmOp::create(
             b, loc, result, operands, text, constraints,
             /*has_side_effects=*/false, /*is_align_stack=*/false,
             LLVM::tailcallkind::TailCallKind::None,
             /*asm_dialect=*/LLVM::AsmDialectAttr(),
             /*operand_attrs=*/ArrayAttr())
      .getResult(0);
}

Value hopper::bytePermute(OpBuilder &b, Location loc, Value lo, Value hi,
                          Value selector) {
  return purePtx(b, loc, b.getI32Type(), {lo, hi, selector},
                 "prmt.b32 $0, $1, $2, $3;", "=r,r,r,r");
}

Value hopper::packE4M3x4(OpBuilder &b, Location loc, ArrayRef<Value> values) {
  assert(values.size() == 4 && "four bytes to a register");
  // cvt's first source goes to the pair's high byte.
  return purePtx(b, loc, b.getI32Type(), values,
                 "{\n\t.reg .b16 lo, hi;\n\t"
                 "cvt.rn.satfinite.e4m3x2.f32 lo, $2, $1;\n\t"
                 "cvt.rn.satfinite.e4m3x2.f32 hi, $4, $3;\n\t"
                 "mov.b32 $0, {lo, hi};\n\t}",
                 "=r,f,f,f,f");
}
