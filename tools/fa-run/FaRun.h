//===- FaRun.h - fa-run's pieces ----------------------------------*- C++ -*-===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#ifndef FA_TOOLS_FARUN_FARUN_H
#define FA_TOOLS_FARUN_FARUN_H

#include "fa/runtime/Numerics.h"
#include "fa/runtime/Spec.h"

#include <cstdint>
#include <set>
#include <string>

namespace fa {

enum ExitCode { kPass = 0, kMismatch = 1, kBadInput = 2, kNoGpu = 77 };

/// Deliberately broken builds: the negative controls of the test suite.
/// NoAlibi compiles the spec without its ALiBi bias (the reference keeps it);
/// NoDescale gives an f8E4M3FN kernel 1 for V's descale (the reference
/// keeps the true one).
/// NoRegions compiles an --input's score_mod as the identity and its
/// mask_mod as all-visible (the reference keeps the user's);
/// NoScoreModGrad compiles the backward with a score_mod's derivative
/// taken as 1.
enum class NegativeControl {
  None,
  NoRescale,
  NoRowDot,
  NoAlibi,
  NoDescale,
  NoRegions,
  NoScoreModGrad
};

/// fa-run's flags (parsed by hand: fa-run builds where there is no LLVM).
struct Options {
  std::string device = "cpu", spec, kernel, dump, negativeControl = "none";
  std::string layout = "bhsd";
  /// The chip a --spec is compiled for (--device cuda); empty: the default.
  std::string target;
  /// --device cuda --bwd: the backward kernel's manifest; empty: the one
  /// named after the forward kernel, beside it (fa_fwd_X -> fa_bwd_X).
  std::string bwdKernel;
  /// --input (--device cpu): attention written in linalg, raised and run
  /// in place of --spec's module, which still states the reference.
  std::string input;
  int64_t batch = 1, queryHeads = 1, kvHeads = 1, queryLen = 128, keyLen = 128;
  uint64_t seed = 0;
  bool verify = false, backward = false, bench = false;
  /// --deterministic (--device cuda --bwd): the backward's deterministic
  /// mode, checked bit for bit over repeated runs.
  bool deterministic = false;
  int64_t benchIters = 50;
  /// --shared-memory-budget (KB) a --spec is compiled within; not given:
  /// the device's opt-in maximum, which compileSpecKernel stores here (0:
  /// the chip's default, where there is no device).
  int64_t sharedMemoryBudget = 0;
  /// The options the command line named (without "--"), each once.
  std::set<std::string> given;
};

/// ALiBi slopes come from their own random stream (seed + this), so that
/// Q, K, V and dO of a seed are the same with and without ALiBi, and the CPU
/// and CUDA runs of one seed draw the same slopes.
constexpr uint64_t kAlibiSeedOffset = 0x5EED;
/// Captured values of variant regions: their own stream too.
constexpr uint64_t kCaptureSeedOffset = 0xCA97;

/// f16/bf16 storage of a value, and back.
inline uint16_t storageBits(ElementType type, double value) {
  return type == ElementType::F16 ? toF16Bits(static_cast<float>(value))
                                  : toBF16Bits(static_cast<float>(value));
}
inline double storageValue(ElementType type, uint16_t bits) {
  return type == ElementType::F16 ? fromF16Bits(bits) : fromBF16Bits(bits);
}
/// A quiet NaN in the storage type: the poison outputs start as.
inline uint16_t poisonBits(ElementType type) {
  return type == ElementType::F16 ? 0x7E00 : 0x7FC0;
}

/// Host bytes a run holds per tensor element: the stored bits and the
/// exact doubles the reference reads, with room for the backend's copies.
constexpr int64_t kHostBytesPerElement = 16;

/// Refuses (false, with a one-line reason) a run whose host tensors would
/// need more than half of this machine's physical memory: fa-run is built
/// without exceptions, so a failed allocation would abort instead of
/// saying why (fa-run.cpp).
bool checkHostMemory(const AttentionSpec &spec, const ProblemSize &size,
                     bool backward, std::string &error);

/// Prints "fa-run: <message>" on stderr, control bytes from the input
/// escaped (printableText), so the report stays the one line it is.
void printError(const std::string &message);

/// --device cpu (CpuRun.cpp; builds with the compiler only).
int runCpu(const Options &options);

/// --device cuda (CudaRun.cpp).
int runCuda(const Options &options);

/// --device cuda: what the dtype rules out or needs. --bwd takes a spec
/// checkBackwardSpec takes (f8e4m3fn has no backward); --negative-control
/// no-descale needs f8e4m3fn. False with a one-line reason (exit 2). Checked before a
/// --spec is compiled, and on the kernel's spec (CudaRun.cpp).
bool checkCudaDtypeOptions(const Options &options, const AttentionSpec &spec,
                           std::string &error);

/// With the compiler built in: compiles --spec for --target (the default
/// chip when empty) into a temporary directory, setting `kernel` to the
/// forward kernel's manifest and, with --bwd and no --bwd-kernel,
/// `bwdKernel` to the backward kernel's (--negative-control no-row-dot:
/// built without the delta term) in the same directory (SpecKernel.cpp).
bool compileSpecKernel(Options &options, std::string &error, bool &badInput);

} // namespace fa

#endif // FA_TOOLS_FARUN_FARUN_H
