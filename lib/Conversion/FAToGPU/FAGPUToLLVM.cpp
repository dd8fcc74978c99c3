//===- FAGPUToLLVM.cpp - fa.wgmma and fa.wgmma_wait as inline PTX ---------===//
//
// Part of fa-mlir.
//
// The one place where an fa instruction op becomes PTX text: the register-A
// and offset-taking wgmma and the wait that ties accumulators, which the
// NVVM dialect does not give (docs/toolchain.md). Everything else the
// kernels issue is an NVVM or LLVM op.
//
//===----------------------------------------------------------------------===//

#include "fa/Conversion/Passes.h"
#include "fa/Dialect/FA/IR/FAOps.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

#include <string>

namespace mlir {
namespace fa {
#define GEN_PASS_DEF_CONVERTFAGPUTOLLVM
#include "fa/Conversion/Passes.h.inc"
} // namespace fa
} // namespace mlir

using namespace mlir;
using namespace mlir::fa;

/// `count` f32 outputs: "=f,=f,...".
static std::string outputConstraints(size_t count) {
  std::string constraints;
  for (size_t i = 0; i < count; ++i)
    constraints += (i ? ",=f" : "=f");
  return constraints;
}

/// An asm statement's struct result split into its `count` f32 values.
static SmallVector<Value> unpack(OpBuilder &b, Location loc, Value structValue,
                                 size_t count) {
  SmallVector<Value> out;
  for (size_t i = 0; i < count; ++i)
    out.push_back(LLVM::ExtractValueOp::create(
        b, loc, structValue, ArrayRef<int64_t>{static_cast<int64_t>(i)}));
  return out;
}

/// A volatile asm statement with an f32 struct result of `count` members.
static Value sideEffectingAsm(OpBuilder &b, Location loc, size_t count,
                              ValueRange operands, StringRef text,
                              StringRef constraints) {
  SmallVector<Type> types(count, b.getF32Type());
  auto result = LLVM::LLVMStructType::getLiteral(b.getContext(), types);
  // Asm: NVVM has no register-A wgmma, no scale-d = 0 form that leaves the
  // accumulators out, no descriptor offset, and no wait that ties values.
  return LLVM::InlineAsmOp::create(
             b, loc, result, operands, text, constraints,
             /*has_side_effects=*/true, /*is_align_stack=*/false,
             LLVM::tailcallkind::TailCallKind::None,
             /*asm_dialect=*/LLVM::AsmDialectAttr(), /*operand_attrs=*/ArrayAttr())
      .getResult(0);
}

namespace {

/// fa.wgmma: one wgmma.mma_async. The operands are the accumulators (tied
/// to the outputs, when read), A (a descriptor or four registers), B's
/// descriptor and the scale-d flag; each descriptor's offset is added in
/// the PTX, in descriptor units (16 bytes).
struct WgmmaLowering : OpRewritePattern<WgmmaOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(WgmmaOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type inputType = op.getInputType();
    size_t outputs = op.getResults().size();
    size_t inputs = op.getAccumulators().size();
    bool readsAccumulators = inputs != 0;
    std::string type = inputType.isBF16()  ? "bf16"
                       : inputType.isF16() ? "f16"
                                           : "e4m3";
    size_t aOperands = op.getADescriptor() ? 1 : op.getARegisters().size();
    // scale-d is a predicate, set from the last operand (1: accumulate).
    std::string text = "{\n\t.reg .pred accumulate;\n\t.reg .b64 descA, descB;\n\t"
                       "setp.ne.b32 accumulate, $" +
                       std::to_string(outputs + inputs + aOperands + 1) + ", 0;\n\t";
    size_t next = outputs + inputs;
    auto operand = [&]() { return "$" + std::to_string(next++); };
    // The operand as the wgmma names it: its descriptor, or `reg` holding
    // the descriptor plus the offset.
    auto offsetInto = [&](const char *reg, int64_t bytes) {
      std::string descriptor = operand();
      if (!bytes)
        return descriptor;
      text += std::string("add.s64 ") + reg + ", " + descriptor + ", " +
              std::to_string(bytes >> 4) + ";\n\t";
      return std::string(reg);
    };
    std::string aName;
    if (op.getADescriptor()) {
      aName = offsetInto("descA", op.getAOffset());
    } else {
      for (size_t i = 0; i < aOperands; ++i)
        aName += (i ? ", " : "{") + operand();
      aName += "}";
    }
    std::string bName = offsetInto("descB", op.getBOffset());
    text += "wgmma.mma_async.sync.aligned.m64n" + std::to_string(op.getN()) + "k" +
            std::to_string(op.getK()) + ".f32." + type + "." + type + " {";
    for (size_t i = 0; i < outputs; ++i)
      text += (i ? ", $" : "$") + std::to_string(i);
    std::string constraints = outputConstraints(outputs);
    // The accumulators are read and written: inputs tied to the outputs.
    for (size_t i = 0; i < inputs; ++i)
      constraints += "," + std::to_string(i);
    SmallVector<Value> operands(op.getAccumulators());
    text += "}, " + aName + ", " + bName + ", accumulate, 1, 1";
    if (Value a = op.getADescriptor()) {
      constraints += ",l";
      operands.push_back(a);
    } else {
      for (size_t i = 0; i < aOperands; ++i)
        constraints += ",r";
      llvm::append_range(operands, op.getARegisters());
    }
    constraints += ",l,r";
    operands.push_back(op.getBDescriptor());
    operands.push_back(LLVM::ConstantOp::create(
        rewriter, loc, rewriter.getI32Type(),
        rewriter.getI32IntegerAttr(readsAccumulators ? 1 : 0)));
    // scale-a = scale-b = 1; then imm-trans-a (the shared-A form only) and
    // imm-trans-b, which e4m3 does not have (K-major operands only).
    bool transposable = inputType.getIntOrFloatBitWidth() == 16;
    if (op.getADescriptor() && transposable)
      text += op.getTransposeA() ? ", 1" : ", 0";
    if (transposable)
      text += op.getTransposeB() ? ", 1" : ", 0";
    text += ";\n\t}";
    Value result = sideEffectingAsm(rewriter, loc, outputs, operands, text,
                                    constraints);
    rewriter.replaceOp(op, unpack(rewriter, loc, result, outputs));
    return success();
  }
};

/// fa.wgmma_wait: wgmma.wait_group with the values as tied operands, so
/// their copies (the results) exist only after the wait.
struct WgmmaWaitLowering : OpRewritePattern<WgmmaWaitOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(WgmmaWaitOp op,
                                PatternRewriter &rewriter) const override {
    size_t count = op.getValues().size();
    std::string constraints = outputConstraints(count);
    for (size_t i = 0; i < count; ++i)
      constraints += "," + std::to_string(i);
    Value result = sideEffectingAsm(
        rewriter, op.getLoc(), count, op.getValues(),
        "wgmma.wait_group.sync.aligned " + std::to_string(op.getPending()) + ";",
        constraints);
    rewriter.replaceOp(op, unpack(rewriter, op.getLoc(), result, count));
    return success();
  }
};

struct ConvertFAGPUToLLVM
    : public mlir::fa::impl::ConvertFAGPUToLLVMBase<ConvertFAGPUToLLVM> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFAGPUToLLVMPatterns(patterns);
    // A walk, not the greedy driver: nothing but these ops is touched (no
    // folding), so the IR around them reaches LLVM as it was built.
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace

void mlir::fa::populateFAGPUToLLVMPatterns(RewritePatternSet &patterns) {
  patterns.add<WgmmaLowering, WgmmaWaitLowering>(patterns.getContext());
}
