//===- Compiler.cpp - the kernel compiler in C ----------------------------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "fa-c/Compiler.h"

#include "fa/Compiler/KernelCompiler.h"
#include "fa/Conversion/FAToGPU/AttentionKernel.h"
#include "fa/Dialect/FA/IR/FADialect.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Support.h"

#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

static char *copyString(const std::string &text) {
  char *copy = static_cast<char *>(std::malloc(text.size() + 1));
  std::memcpy(copy, text.data(), text.size() + 1);
  return copy;
}

MlirContext faCreateCompilerContext(void) {
  return wrap(mlir::fa::createCompilerContext().release());
}

/// The spec's text parsed, on `chip`'s tuned tile (the backward's for a
/// backward) where it names no block_m or block_n, as fa-compile does.
static bool specFor(const std::string &text, const std::string &chip,
                    bool backward, bool deterministic, int64_t budgetKB,
                    fa::AttentionSpec &spec, std::string &error) {
  std::vector<std::string> keys;
  if (!fa::parseSpec(text, spec, error, &keys))
    return false;
  mlir::fa::applyTunedTileUnlessGiven(spec, keys, chip, backward, deterministic,
                                      budgetKB);
  return fa::checkSpec(spec, error);
}

faCompileStatus faCompileKernel(MlirContext context, MlirStringRef specText,
                                MlirStringRef chipName, bool backward,
                                bool deterministic, faCompiledKernel *out,
                                MlirStringCallback onError, void *userData) {
  return faCompileKernelWithBudget(context, specText, chipName, backward,
                                   deterministic, /*sharedMemoryBudgetKB=*/0,
                                   out, onError, userData);
}

faCompileStatus faCompileKernelWithBudget(
    MlirContext context, MlirStringRef specText, MlirStringRef chipName,
    bool backward, bool deterministic, int64_t sharedMemoryBudgetKB,
    faCompiledKernel *out, MlirStringCallback onError, void *userData) {
  auto fail = [&](faCompileStatus status, const std::string &message) {
    std::string line = fa::printableText(message, /*keepNewlines=*/true);
    if (onError)
      onError(mlirStringRefCreate(line.data(), line.size()), userData);
    return status;
  };
  // Null arguments are the caller's to fix, said as such (Compiler.h).
  if (!out)
    return fail(FA_COMPILE_BAD_INPUT,
                "out is null: pass a faCompiledKernel to receive the kernel");
  *out = faCompiledKernel{nullptr, nullptr, nullptr};
  if (mlirContextIsNull(context))
    return fail(FA_COMPILE_BAD_INPUT,
                "the context is null: create one with faCreateCompilerContext");
  // The compiler builds fa attributes before it parses anything: a context
  // without the dialect would crash there.
  if (!unwrap(context)->getLoadedDialect<mlir::fa::FADialect>())
    return fail(FA_COMPILE_BAD_INPUT,
                "the context has no fa dialect: create it with "
                "faCreateCompilerContext");
  for (auto [what, text] : {std::pair{"spec", specText}, {"chip", chipName}})
    if (!text.data && text.length)
      return fail(FA_COMPILE_BAD_INPUT,
                  std::string(what) + " is a null string of length " +
                      std::to_string(text.length));
  std::string chip = unwrap(chipName).str();
  if (!mlir::fa::createAttentionStrategy(chip))
    return fail(FA_COMPILE_BAD_INPUT, "unknown chip '" + chip + "' (known: " +
                                          mlir::fa::registeredChips() + ")");
  if (deterministic && !backward)
    return fail(FA_COMPILE_BAD_INPUT, "deterministic describes a backward");
  fa::AttentionSpec spec;
  std::string error;
  if (!specFor(unwrap(specText).str(), chip, backward, deterministic,
               sharedMemoryBudgetKB, spec, error))
    return fail(FA_COMPILE_BAD_INPUT, error);
  mlir::fa::CompiledKernel kernel;
  bool badInput = false;
  bool compiled;
  if (backward) {
    std::string name = mlir::fa::backwardKernelName(spec, chip, deterministic);
    compiled = mlir::fa::compileBackwardKernel(
        *unwrap(context), spec, chip, name, kernel, error, badInput,
        /*omitRowDot=*/false, deterministic, sharedMemoryBudgetKB);
  } else {
    compiled = mlir::fa::compileForwardKernel(
        *unwrap(context), spec, chip, mlir::fa::kernelName(spec, chip), kernel,
        error, badInput, sharedMemoryBudgetKB);
  }
  if (!compiled)
    return fail(badInput ? FA_COMPILE_BAD_INPUT : FA_COMPILE_FAILED, error);
  out->name = copyString(kernel.name);
  out->ptx = copyString(kernel.ptx);
  out->manifest = copyString(kernel.manifest);
  return FA_COMPILE_OK;
}

void faCompiledKernelDestroy(faCompiledKernel *kernel) {
  if (!kernel)
    return;
  std::free(kernel->name);
  std::free(kernel->ptx);
  std::free(kernel->manifest);
  *kernel = faCompiledKernel{nullptr, nullptr, nullptr};
}

MlirStringRef faGeneratorRevision(void) {
  return mlirStringRefCreateFromCString(mlir::fa::generatorRevision());
}
