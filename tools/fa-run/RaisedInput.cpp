//===- RaisedInput.cpp - fa-run --input: attention written in linalg ------===//
//
// Part of fa-mlir.
//
// fa-run --device cpu --input F.mlir --spec S: the end-to-end check of
// fa-raise-attention. F holds one function taking Q, K, V [B, H, S, D] and
// returning O, its attention written in linalg on tensors. It is raised,
// must become exactly one fa.attention with no linalg op left, and is then
// compiled (through an fa_forward entry calling it) and run by the CPU
// path like a spec's module; the float64 reference is --spec's, the
// test's own statement of what F computes. A raise that took the wrong
// mask or scale is a mismatch; one that raised nothing is refused.
// F may also hold fa.attention itself, with score_mod / mask_mod regions
// reading captured values: the run then goes through entries built around
// a copy of that op (VariantEntries.cpp), forward and backward, and the
// reference evaluates the regions (fa/runtime/Variant.h).
//
//===----------------------------------------------------------------------===//

#include "CpuBackend.h"

#include "fa/Compiler/AttentionModule.h"
#include "fa/Dialect/FA/IR/FADialect.h"
#include "fa/Dialect/FA/IR/FAOps.h"
#include "fa/Dialect/FA/Transforms/Passes.h"
#include "fa/Dialect/FA/Utils/ParseGuard.h"
#include "fa/Dialect/FA/Utils/PipelineInput.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

mlir::OwningOpRef<mlir::ModuleOp>
fa::loadRaisedInput(mlir::MLIRContext &context, const std::string &path,
                    const AttentionSpec &spec, const ProblemSize &size,
                    bool withBackward, std::string &error, bool &badInput) {
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    os << d.str() << "; ";
    return mlir::success();
  });
  badInput = true;
  std::unique_ptr<llvm::MemoryBuffer> text = mlir::fa::readGuardedInput(path, error);
  if (!text) {
    error = "--input: " + error;
    return nullptr;
  }
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(text), llvm::SMLoc());
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  if (!module) {
    error = "--input " + path + ": cannot parse: " + diagnostics;
    return nullptr;
  }
  mlir::PassManager pm(&context);
  pm.addNestedPass<mlir::func::FuncOp>(mlir::fa::createFARaiseAttention());
  if (mlir::failed(pm.run(*module))) {
    error = "--input: fa-raise-attention failed: " + diagnostics;
    return nullptr;
  }
  // What the raise left: one fa.attention, no linalg.
  llvm::SmallVector<mlir::fa::AttentionOp> raised;
  mlir::Operation *linalgLeft = nullptr;
  module->walk([&](mlir::Operation *op) {
    if (auto attention = llvm::dyn_cast<mlir::fa::AttentionOp>(op))
      raised.push_back(attention);
    else if (!linalgLeft &&
             llvm::isa<mlir::linalg::LinalgDialect>(op->getDialect()))
      linalgLeft = op;
  });
  badInput = false; // from here on, a raise that fell short: a mismatch
  if (raised.size() != 1 || linalgLeft) {
    error = "--input: not raised to one fa.attention (" +
            std::to_string(raised.size()) + " fa.attention" +
            (linalgLeft ? ", " + linalgLeft->getName().getStringRef().str() + " left"
                        : std::string()) +
            ")";
    return nullptr;
  }
  // The names the CPU path takes (a kernel's, and none the C library's
  // functions it calls have), before an entry calls the function by its.
  badInput = true;
  mlir::fa::PipelineInput takes;
  takes.name = "fa-compile-cpu";
  takes.takesAttention = true;
  takes.gpu = false;
  if (mlir::failed(mlir::fa::checkPipelineInput(*module, takes))) {
    error = "--input " + path + ": " + llvm::StringRef(diagnostics).rtrim("; ").str();
    return nullptr;
  }
  badInput = false;
  auto function = raised.front()->getParentOfType<mlir::func::FuncOp>();
  if (!raised.front().getScoreMod().empty() ||
      !raised.front().getMaskMod().empty()) {
    // A variant: entries around a copy of the op; the function goes. The
    // copy takes nothing the run does not draw: Q, K, V and the captures
    // come from the entry, so they must be the function's arguments.
    mlir::fa::AttentionOp variant = raised.front();
    bool fromArguments = llvm::all_of(variant->getOperands(), [&](mlir::Value v) {
      auto arg = llvm::dyn_cast<mlir::BlockArgument>(v);
      return arg && arg.getOwner()->getParentOp() == function;
    });
    if (variant.getAlibiSlopes() || !variant.getDescale().empty() ||
        !fromArguments) {
      badInput = true;
      error = "--input: a variant's fa.attention takes Q, K, V and its "
              "captured values as arguments of the function, with no alibi "
              "or descale operands (fa-run draws them all)";
      return nullptr;
    }
    if (!buildVariantEntries(*module, raised.front(), withBackward)) {
      error = "--input: internal: the entry points do not build: " + diagnostics;
      return nullptr;
    }
    function.erase();
    if (mlir::failed(mlir::verify(*module))) {
      badInput = true;
      error = "--input: the fa.attention must take Q, K, V as --spec, --b, "
              "--hq, --hkv, --m and --n state: " + diagnostics;
      return nullptr;
    }
    return module;
  }
  if (withBackward) {
    badInput = true;
    error = "--input with --bwd needs an fa.attention with score_mod or "
            "mask_mod regions (a raised forward has no backward)";
    return nullptr;
  }
  // The entry calls it by the signature --spec and the sizes state; the
  // verifier refuses a call whose types differ from the function's.
  // (Verified once moved next to its callee.)
  mlir::ParserConfig config(&context, /*verifyAfterParse=*/false);
  mlir::OwningOpRef<mlir::ModuleOp> entry = mlir::parseSourceString<mlir::ModuleOp>(
      mlir::fa::buildForwardEntryText(spec, size, function.getSymName().str()),
      config);
  if (!entry) {
    error = "--input: internal: the entry point does not parse: " + diagnostics;
    return nullptr;
  }
  function.setPrivate();
  for (mlir::Operation &op : llvm::make_early_inc_range(*entry->getBody()))
    op.moveBefore(module->getBody(), module->getBody()->end());
  if (mlir::failed(mlir::verify(*module))) {
    badInput = true;
    error = "--input: the function must take Q, K, V [B, H, S, D] and return "
            "O as --spec, --b, --hq, --hkv, --m and --n state: " +
            diagnostics;
    return nullptr;
  }
  return module;
}
