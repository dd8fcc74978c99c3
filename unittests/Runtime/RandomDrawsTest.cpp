//===- RandomDrawsTest.cpp - fa-run's draws do not depend on threads ------===//
//
// Part of fa-mlir.
//
// fa-run's inputs are drawn on every core (tools/fa-run/RandomDraws.h); a
// run is reproducible from its seed only if the values do not depend on how
// many threads drew them.
//
//===----------------------------------------------------------------------===//

#include "RandomDraws.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

namespace {

std::vector<double> drawWith(const char *threads, size_t count, uint64_t seed) {
  if (threads)
    setenv("FA_RUN_THREADS", threads, 1);
  else
    unsetenv("FA_RUN_THREADS");
  std::mt19937_64 gen(seed);
  std::vector<double> values = fa::drawNormal(count, gen);
  unsetenv("FA_RUN_THREADS");
  return values;
}

TEST(RandomDrawsTest, ValuesDependOnTheSeedAndSizeOnly) {
  // Three chunks and a partial one: 2^20 values a chunk.
  size_t count = 3 * (size_t(1) << 20) + 12345;
  std::vector<double> one = drawWith("1", count, 7);
  EXPECT_EQ(one, drawWith("2", count, 7));
  EXPECT_EQ(one, drawWith("5", count, 7));
  EXPECT_EQ(one, drawWith(nullptr, count, 7));
  EXPECT_NE(one, drawWith("1", count, 8));
  // N(0, 1): chunks are not copies of each other, and the moments hold.
  size_t chunk = size_t(1) << 20;
  EXPECT_NE(one[0], one[chunk]);
  double sum = 0, squares = 0;
  for (double v : one) {
    sum += v;
    squares += v * v;
  }
  double mean = sum / count, variance = squares / count - mean * mean;
  EXPECT_LT(std::fabs(mean), 5e-3);
  EXPECT_LT(std::fabs(variance - 1.0), 5e-3);
}

TEST(RandomDrawsTest, ParallelChunksCoverEveryIndexOnce) {
  for (size_t count : {size_t(0), size_t(1), size_t(70000), size_t(1) << 20}) {
    std::vector<int> hits(count, 0);
    fa::parallelChunks(count, [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i)
        ++hits[i];
    });
    for (size_t i = 0; i < count; ++i)
      ASSERT_EQ(hits[i], 1) << "count " << count << " index " << i;
  }
}

} // namespace
