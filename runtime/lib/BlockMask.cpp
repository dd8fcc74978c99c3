//===- BlockMask.cpp - a block-sparse kernel's block mask on the host -----===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "fa/runtime/BlockMask.h"

#include <algorithm>

using namespace fa;

HostBlockMask fa::buildBlockMask(const VisibilityFn &visible, int64_t batch,
                                 int64_t heads, int64_t queryLen, int64_t keyLen,
                                 int64_t qBlockSize, int64_t kvBlockSize) {
  HostBlockMask m;
  m.batch = batch;
  m.heads = heads;
  m.qBlockSize = qBlockSize;
  m.kvBlockSize = kvBlockSize;
  m.qBlocks = (queryLen + qBlockSize - 1) / qBlockSize;
  m.kvBlocks = (keyLen + kvBlockSize - 1) / kvBlockSize;
  int64_t rows = batch * heads * m.qBlocks;
  m.kvNumBlocks.assign(rows, 0);
  m.fullKvNumBlocks.assign(rows, 0);
  m.kvIndices.assign(rows * m.kvBlocks, 0);
  m.fullKvIndices.assign(rows * m.kvBlocks, 0);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t qb = 0; qb < m.qBlocks; ++qb) {
        int64_t row = (b * heads + h) * m.qBlocks + qb;
        int64_t i0 = qb * qBlockSize, i1 = std::min(queryLen, i0 + qBlockSize);
        for (int64_t kb = 0; kb < m.kvBlocks; ++kb) {
          int64_t j0 = kb * kvBlockSize, j1 = std::min(keyLen, j0 + kvBlockSize);
          int64_t seen = 0;
          for (int64_t i = i0; i < i1; ++i)
            for (int64_t j = j0; j < j1; ++j)
              seen += visible(b, h, i, j);
          if (seen == 0)
            continue;
          bool full = seen == (i1 - i0) * (j1 - j0);
          int32_t &count = full ? m.fullKvNumBlocks[row] : m.kvNumBlocks[row];
          (full ? m.fullKvIndices : m.kvIndices)[row * m.kvBlocks + count++] =
              static_cast<int32_t>(kb);
        }
      }
  return m;
}

void fa::dropLastListedBlocks(HostBlockMask &mask) {
  for (size_t row = 0; row < mask.kvNumBlocks.size(); ++row) {
    int32_t &count = mask.fullKvNumBlocks[row] ? mask.fullKvNumBlocks[row]
                                               : mask.kvNumBlocks[row];
    if (count > 0)
      --count;
  }
}

double fa::listedFraction(const HostBlockMask &mask) {
  int64_t listed = 0;
  for (size_t row = 0; row < mask.kvNumBlocks.size(); ++row)
    listed += mask.kvNumBlocks[row] + mask.fullKvNumBlocks[row];
  int64_t all = static_cast<int64_t>(mask.kvNumBlocks.size()) * mask.kvBlocks;
  return all ? static_cast<double>(listed) / all : 0.0;
}
