//===- RandomDraws.h - fa-run's random inputs, on every core ----*- C++ -*-===//
//
// Part of fa-mlir.
//
// fa-run draws its inputs fresh each run (docs/design.md), up to ~10^8 values at
// the benchmark sizes: one thread drawing and rounding them took most of a
// --bench run's ~9 s on the GPU machine. The draws here are split into
// fixed chunks, each with its own generator seeded in order from the run's
// generator, so the values depend on the seed and the size only, not on
// the number of threads, and the CPU and CUDA paths draw the same inputs
// for the same seed.
//
//===----------------------------------------------------------------------===//

#ifndef FA_TOOLS_FA_RUN_RANDOMDRAWS_H
#define FA_TOOLS_FA_RUN_RANDOMDRAWS_H

#include "fa/runtime/Spec.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

namespace fa {

/// Runs `body(begin, end)` over [0, count) in chunks on the machine's cores
/// (at most 16 threads, or FA_RUN_THREADS, and at least `grain` indices a
/// thread); `body` must write disjoint elements per index.
void parallelChunks(size_t count,
                    const std::function<void(size_t, size_t)> &body,
                    size_t grain = size_t(1) << 16);

/// `count` draws of N(0, 1), in chunks of 2^20 whose generators are seeded
/// from `gen` in order.
std::vector<double> drawNormal(size_t count, std::mt19937_64 &gen);

/// `count` draws of N(0, 1) rounded to the 16-bit `type`, as both of
/// fa-run's paths draw their inputs: `values[i]` the rounded value,
/// `bits[place(i)]` its storage bits (`place`: a layout's physical index).
void drawRounded(ElementType type, size_t count, std::mt19937_64 &gen,
                 const std::function<size_t(size_t)> &place,
                 std::vector<uint16_t> &bits, std::vector<double> &values);

} // namespace fa

#endif // FA_TOOLS_FA_RUN_RANDOMDRAWS_H
