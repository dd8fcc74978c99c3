//===- BlockMask.h - a block-sparse kernel's block mask on the host -*- C++ -*-===//
//
// Part of fa-mlir.
//
// The lists a block-sparse kernel (#fa.block_sparse) walks, in
// FlexAttention's BlockMask layout, built on the host by evaluating a
// visibility function on every element. This is the reference's block
// mask (fa-run's, the tests'): independent of the kernel, O(B·H·M·N).
//
// No MLIR here: the runtime builds on machines without LLVM.
//
//===----------------------------------------------------------------------===//

#ifndef FA_RUNTIME_BLOCKMASK_H
#define FA_RUNTIME_BLOCKMASK_H

#include <cstdint>
#include <functional>
#include <vector>

namespace fa {

/// ForwardArgs::BlockMask's arrays on the host (int32, row-major):
/// kvNumBlocks / fullKvNumBlocks [batch, heads, qBlocks], kvIndices /
/// fullKvIndices [batch, heads, qBlocks, kvBlocks], each row's first
/// counts entries in increasing order, the rest 0.
struct HostBlockMask {
  int64_t batch = 1, heads = 1, qBlocks = 0, kvBlocks = 0;
  int64_t qBlockSize = 0, kvBlockSize = 0;
  std::vector<int32_t> kvNumBlocks, kvIndices, fullKvNumBlocks, fullKvIndices;
};

/// Whether key j is visible to query i in (batch b, query head h).
using VisibilityFn = std::function<bool(int64_t b, int64_t h, int64_t i, int64_t j)>;

/// The block mask of `visible` over an M x N problem, `batch` x `heads`
/// rows (1 where `visible` does not depend on b or h: it broadcasts): a
/// block whose every element within M x N is visible is full, one with some
/// partial, one with none is listed nowhere.
HostBlockMask buildBlockMask(const VisibilityFn &visible, int64_t batch,
                             int64_t heads, int64_t queryLen, int64_t keyLen,
                             int64_t qBlockSize, int64_t kvBlockSize);

/// Each row's last listed block dropped (its last full one, or its last
/// partial one if it has no full one): a block mask that hides visible
/// keys, for negative controls.
void dropLastListedBlocks(HostBlockMask &mask);

/// Listed blocks over all blocks of the mask: the fraction of the work a
/// block-sparse kernel does.
double listedFraction(const HostBlockMask &mask);

} // namespace fa

#endif // FA_RUNTIME_BLOCKMASK_H
