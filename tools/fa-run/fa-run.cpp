//===- fa-run.cpp - run and verify fa-mlir attention ----------------------===//
//
// Part of fa-mlir.
//
// fa-run --device cpu --spec "d=72,dv=72,dtype=bf16,mask=causal,softcap=0"
//        --b 2 --hq 6 --hkv 2 --m 113 --n 203 --seed 7 --verify [--bwd]
//        [--dump DIR]
// fa-run --device cuda --kernel F.json [--bwd [--bwd-kernel B.json]
//        [--deterministic]] ...
//
// Fresh random normal inputs (rounded to the dtype), outputs poisoned with
// NaN before every launch, every element checked against the float64
// reference under docs/design.md's tolerance policy.
//
// Exit codes: 0 pass, 1 numerical mismatch, 2 bad input, 77 no GPU.
//
//===----------------------------------------------------------------------===//

#include "FaRun.h"

#include "fa/Version.h"
#ifdef FA_ENABLE_COMPILER
#include "fa/Compiler/KernelCompiler.h"
#endif

#include <cerrno>
#include <cstdlib>
#include <iostream>
#include <map>
#include <unistd.h>

using namespace fa;

namespace {

const char *kUsage =
    "usage: fa-run --device cpu|cuda (--spec SPEC | --kernel NAME.json)\n"
    "              [--b B] [--hq HQ] [--hkv HKV] [--m M] [--n N] [--seed S]\n"
    "              [--verify] [--bwd] [--bench] [--iters K] [--layout bhsd|bshd]\n"
    "              [--dump DIR] [--target CHIP] [--shared-memory-budget KB]\n"
    "              [--bwd-kernel B.json]\n"
    "              [--deterministic] [--input F.mlir]\n"
    "              [--negative-control none|no-rescale|no-row-dot|no-alibi|\n"
    "                                  no-descale|no-regions|no-score-mod-grad|\n"
    "                                  block-lists]\n"
    "SPEC: d=..,dv=..,dtype=f16|bf16|f8e4m3fn,mask=none|causal|causal_top_left|\n"
    "      window(L,R),softcap=..,alibi=none|head|batch_head,scale=..,\n"
    "      block_m=..,block_n=..\n"
    "Sizes: each >= 1, m and n <= 2^40, each tensor <= 2^45 elements, and\n"
    "      the run's host tensors within half of this machine's memory.\n"
    "--target: the chip a --spec is compiled for with --device cuda (the\n"
    "      default chip otherwise; fa-compile --help lists them)\n"
    "--shared-memory-budget: KB of shared memory per block for a --spec\n"
    "      (1 to 227; 0: the chip's default; by default the device's opt-in\n"
    "      maximum, an H100's 227, an A100's 163: the tiles this GPU holds)\n"
    "--bwd with --device cuda: runs the forward kernel, then the backward\n"
    "      kernel on its O and LSE, and checks dQ, dK, dV (--verify);\n"
    "      --bench times both. The backward kernel: --bwd-kernel B.json,\n"
    "      else the one fa-compile --bwd wrote beside the forward: fa_bwd_X\n"
    "      beside fa_fwd_X, X_bwd beside a --name X (with --deterministic\n"
    "      its _det kernel where there is one), or with\n"
    "      --spec (no --kernel) compiled here. Its negative control:\n"
    "      --negative-control no-row-dot (a kernel built so; must FAIL).\n"
    "dtype=f8e4m3fn: Q, K, V quantised to e4m3 over descales (one per\n"
    "      tensor, or [B, Hkv] with descale=head), O in bf16, checked\n"
    "      against 2x the naive fp8 attention's error; a forward only (no\n"
    "      --bwd). --negative-control no-descale gives the kernel 1 for V's\n"
    "      descale (the reference keeps the true one; must FAIL), on either\n"
    "      device.\n"
    "--deterministic with --device cuda --bwd: the backward's deterministic\n"
    "      mode (manifest \"deterministic_mode\": true); after the run it runs\n"
    "      9 more times on the same inputs and needs dQ, dK, dV bit-identical\n"
    "      (else exit 1); --bench also times both modes, interleaved.\n"
    "--input F.mlir with --device cpu --spec: F's function (Q, K, V in,\n"
    "      O out) in linalg is raised to one fa.attention, run and checked\n"
    "      against --spec's reference (O; F computes no LSE).\n"
    "      F may hold fa.attention with score_mod / mask_mod regions: F's\n"
    "      arguments after Q, K, V are their captures, drawn fresh (floats\n"
    "      in [-1, 1], integers in {0..3}), and the reference evaluates the\n"
    "      regions in float64; --bwd works too. Negative controls (must\n"
    "      FAIL): no-regions (the regions as the identity; cuda: the\n"
    "      reference without them), no-score-mod-grad (--bwd; d = 1).\n"
    "A block-sparse kernel (cuda): fa-run builds its block mask from the\n"
    "      masks; --negative-control block-lists drops each row's last block.\n"
    "--version: fa-mlir's version (and the generator's, with the compiler)\n"
    "exit: 0 pass, 1 mismatch, 2 bad input, 77 no GPU\n";

bool parseInt64(const std::string &text, int64_t &out) {
  errno = 0;
  char *end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || errno || *end)
    return false;
  out = v;
  return true;
}

/// Parses argv; on error returns false with a one-line reason.
bool parseOptions(int argc, char **argv, Options &o, std::string &error) {
  std::map<std::string, std::string *> strings = {
      {"device", &o.device}, {"spec", &o.spec}, {"kernel", &o.kernel},
      {"dump", &o.dump}, {"negative-control", &o.negativeControl},
      {"layout", &o.layout}, {"target", &o.target},
      {"bwd-kernel", &o.bwdKernel}, {"input", &o.input}};
  std::map<std::string, int64_t *> ints = {
      {"b", &o.batch}, {"hq", &o.queryHeads}, {"hkv", &o.kvHeads},
      {"m", &o.queryLen}, {"n", &o.keyLen}, {"iters", &o.benchIters},
      {"shared-memory-budget", &o.sharedMemoryBudget}};
  std::map<std::string, bool *> flags = {
      {"verify", &o.verify}, {"bwd", &o.backward}, {"bench", &o.bench},
      {"deterministic", &o.deterministic}};
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::cout << kUsage;
      std::exit(0);
    }
    if (arg == "--version") {
      std::cout << "fa-run (fa-mlir " << FA_MLIR_VERSION
#ifdef FA_ENABLE_COMPILER
                << ", generator " << mlir::fa::generatorRevision()
#else
                << ", runtime only"
#endif
                << ")\n";
      std::exit(0);
    }
    if (arg.rfind("--", 0) != 0) {
      error = "unexpected argument '" + arg + "'";
      return false;
    }
    std::string key = arg.substr(2), value;
    bool inlineValue = false;
    if (size_t eq = key.find('='); eq != std::string::npos) {
      value = key.substr(eq + 1);
      key = key.substr(0, eq);
      inlineValue = true;
    }
    bool known = flags.count(key) || strings.count(key) || ints.count(key) ||
                 key == "seed";
    if (!known) {
      error = "unknown option '--" + key + "'";
      return false;
    }
    // The last of a repeated option used to win unseen.
    if (!o.given.insert(key).second) {
      error = "--" + key + " is given more than once";
      return false;
    }
    if (flags.count(key)) {
      if (inlineValue) {
        error = "--" + key + " takes no value";
        return false;
      }
      *flags[key] = true;
      continue;
    }
    if (!inlineValue) {
      if (i + 1 >= argc) {
        error = "option '--" + key + "' needs a value";
        return false;
      }
      value = argv[++i];
    }
    if (strings.count(key)) {
      *strings[key] = value;
    } else if (key == "seed") {
      int64_t seed;
      if (!parseInt64(value, seed) || seed < 0) {
        error = "--seed wants a non-negative integer, not '" + value + "'";
        return false;
      }
      o.seed = static_cast<uint64_t>(seed);
    } else if (!parseInt64(value, *ints[key])) {
      error = "--" + key + " wants an integer, not '" + value + "'";
      return false;
    }
  }
  if (o.benchIters < 1) {
    error = "--iters must be >= 1, not " + std::to_string(o.benchIters);
    return false;
  }
  return true;
}

int badInput(const std::string &message) {
  printError(message);
  return kBadInput;
}

} // namespace

void fa::printError(const std::string &message) {
  std::cerr << "fa-run: " << printableText(message, /*keepNewlines=*/true)
            << "\n";
}

bool fa::checkHostMemory(const AttentionSpec &spec, const ProblemSize &size,
                         bool backward, std::string &error) {
  // validateProblem bounds each tensor by kMaxTensorElements (2^45), so
  // none of these sums or products overflows.
  int64_t B = size.batch, Hq = size.queryHeads, Hkv = size.kvHeads,
          M = size.queryLen, N = size.keyLen, D = spec.headDim,
          Dv = spec.valueDim;
  int64_t elements = B * Hq * M * D + B * Hkv * N * (D + Dv) +
                     B * Hq * M * Dv + 2 * B * Hq * M;
  if (backward)
    elements *= 2;
  int64_t bytes = elements * kHostBytesPerElement;
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
  int64_t cap = pages > 0 && pageSize > 0
                    ? static_cast<int64_t>(pages) / 2 * pageSize
                    : int64_t(1) << 34;
  if (bytes <= cap)
    return true;
  error = "the problem needs about " + std::to_string(bytes) +
          " bytes of host memory, more than fa-run's cap of " +
          std::to_string(cap) + " (half this machine's memory)";
  return false;
}

#ifndef FA_ENABLE_COMPILER
int fa::runCpu(const Options &) {
  return badInput("--device cpu needs the compiler (this fa-run was built "
                  "with FA_ENABLE_COMPILER=OFF)");
}
#endif

int main(int argc, char **argv) {
  Options options;
  std::string error;
  if (!parseOptions(argc, argv, options, error))
    return badInput(error);
  // --target picks the chip a --spec is compiled for: nothing else reads it.
  if (options.given.count("target") &&
      (options.device != "cuda" || options.spec.empty() ||
       !options.kernel.empty()))
    return badInput("--target chooses the chip a --spec is compiled for: it "
                    "needs --device cuda and --spec, without --kernel");
  // The budget is the --spec compile's, as --target is.
  if (options.given.count("shared-memory-budget") &&
      (options.device != "cuda" || options.spec.empty() ||
       !options.kernel.empty()))
    return badInput("--shared-memory-budget is the budget a --spec is "
                    "compiled within: it needs --device cuda and --spec, "
                    "without --kernel");
  // The mode belongs to the GPU backward kernels (their dQ is a sum over
  // KV blocks finishing in any order); nothing else would read the flag.
  if (options.given.count("input") && options.device != "cpu")
    return badInput("--input is a --device cpu option");
  if (options.deterministic && (options.device != "cuda" || !options.backward))
    return badInput("--deterministic needs --device cuda and --bwd");
  if (options.device == "cuda") {
#ifdef FA_ENABLE_COMPILER
    // --spec without --kernel: compile it here, as fa-compile would.
    if (options.kernel.empty() && !options.spec.empty()) {
      bool rejected = false;
      std::string given = options.bwdKernel;
      if (!compileSpecKernel(options, error, rejected)) {
        printError(error);
        return rejected ? kBadInput : kMismatch;
      }
      std::cout << "fa-run: compiled --spec to " << options.kernel;
      if (options.bwdKernel != given)
        std::cout << " and " << options.bwdKernel;
      if (options.sharedMemoryBudget)
        std::cout << " within " << options.sharedMemoryBudget
                  << " KB of shared memory per block";
      std::cout << "\n";
    }
#endif
    return runCuda(options);
  }
  if (options.device != "cpu")
    return badInput("--device must be cpu or cuda, not '" + options.device + "'");
  return runCpu(options);
}
