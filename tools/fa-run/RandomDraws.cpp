//===- RandomDraws.cpp - fa-run's random inputs, on every core ------------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "RandomDraws.h"

#include "FaRun.h"

#include <algorithm>
#include <cstdlib>
#include <thread>

using namespace fa;

void fa::parallelChunks(size_t count,
                        const std::function<void(size_t, size_t)> &body,
                        size_t grain) {
  size_t threads = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 16);
  if (const char *limit = std::getenv("FA_RUN_THREADS")) // a user's cap
    threads = std::clamp<size_t>(std::strtoul(limit, nullptr, 10), 1, threads);
  // Small tensors (the tests' sizes) are not worth a thread.
  threads = std::min(threads, std::max<size_t>(1, count / std::max<size_t>(grain, 1)));
  if (threads == 1) {
    body(0, count);
    return;
  }
  size_t per = (count + threads - 1) / threads;
  std::vector<std::thread> pool;
  for (size_t t = 0; t < threads; ++t) {
    size_t begin = std::min(count, t * per), end = std::min(count, begin + per);
    if (begin < end)
      pool.emplace_back(body, begin, end);
  }
  for (std::thread &thread : pool)
    thread.join();
}

std::vector<double> fa::drawNormal(size_t count, std::mt19937_64 &gen) {
  constexpr size_t kChunk = size_t(1) << 20;
  size_t chunks = (count + kChunk - 1) / kChunk;
  std::vector<uint64_t> seeds(chunks);
  for (uint64_t &seed : seeds)
    seed = gen();
  std::vector<double> values(count);
  parallelChunks(chunks, [&](size_t first, size_t last) {
    for (size_t c = first; c < last; ++c) {
      std::mt19937_64 chunkGen(seeds[c]);
      std::normal_distribution<double> normal(0.0, 1.0);
      size_t end = std::min(count, (c + 1) * kChunk);
      for (size_t i = c * kChunk; i < end; ++i)
        values[i] = normal(chunkGen);
    }
  }, /*grain=*/1);
  return values;
}

void fa::drawRounded(ElementType type, size_t count, std::mt19937_64 &gen,
                     const std::function<size_t(size_t)> &place,
                     std::vector<uint16_t> &bits, std::vector<double> &values) {
  values = drawNormal(count, gen);
  bits.resize(count);
  parallelChunks(count, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      uint16_t stored = storageBits(type, values[i]);
      bits[place(i)] = stored;
      values[i] = storageValue(type, stored);
    }
  });
}
