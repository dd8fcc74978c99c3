//===- BlockMaskTest.cpp - host block masks and their launch checks -------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "fa/runtime/BlockMask.h"
#include "fa/runtime/Kernel.h"
#include "fa/runtime/KernelAbi.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace fa;

namespace {

/// Causal over 3 x 3 blocks of 4 (M = N = 10: the last block is 2 wide):
/// the diagonal blocks are partial, those below it full, those above it
/// absent; the last block's in-range elements decide whether it is full.
TEST(BlockMask, CausalBlocksAreClassified) {
  auto causal = [](int64_t, int64_t, int64_t i, int64_t j) { return j <= i; };
  HostBlockMask m = buildBlockMask(causal, 1, 1, 10, 10, 4, 4);
  ASSERT_EQ(m.qBlocks, 3);
  ASSERT_EQ(m.kvBlocks, 3);
  EXPECT_EQ(m.kvNumBlocks, (std::vector<int32_t>{1, 1, 1}));
  EXPECT_EQ(m.fullKvNumBlocks, (std::vector<int32_t>{0, 1, 2}));
  // Row i lists its partial block i, and full blocks 0..i-1 in order.
  EXPECT_EQ(m.kvIndices[0 * 3], 0);
  EXPECT_EQ(m.kvIndices[1 * 3], 1);
  EXPECT_EQ(m.kvIndices[2 * 3], 2);
  EXPECT_EQ(m.fullKvIndices[2 * 3 + 0], 0);
  EXPECT_EQ(m.fullKvIndices[2 * 3 + 1], 1);
  EXPECT_DOUBLE_EQ(listedFraction(m), 6.0 / 9.0);
  // A visible-everywhere mask makes every block full, the ragged last
  // ones too.
  HostBlockMask all = buildBlockMask(
      [](int64_t, int64_t, int64_t, int64_t) { return true; }, 1, 1, 10, 10, 4, 4);
  EXPECT_EQ(all.kvNumBlocks, (std::vector<int32_t>{0, 0, 0}));
  EXPECT_EQ(all.fullKvNumBlocks, (std::vector<int32_t>{3, 3, 3}));
}

/// Rows per batch and head where the visibility depends on them.
TEST(BlockMask, RowsPerBatchAndHead) {
  auto perHead = [](int64_t b, int64_t h, int64_t i, int64_t j) {
    return h == 1 && b == 0 && j == i;
  };
  HostBlockMask m = buildBlockMask(perHead, 2, 2, 8, 8, 8, 8);
  EXPECT_EQ(m.kvNumBlocks, (std::vector<int32_t>{0, 1, 0, 0}));
  EXPECT_EQ(m.fullKvNumBlocks, (std::vector<int32_t>{0, 0, 0, 0}));
}

/// The negative control drops a listed block from every row that has one.
TEST(BlockMask, DropLastListedBlocks) {
  auto causal = [](int64_t, int64_t, int64_t i, int64_t j) { return j <= i; };
  HostBlockMask m = buildBlockMask(causal, 1, 1, 12, 12, 4, 4);
  dropLastListedBlocks(m);
  EXPECT_EQ(m.kvNumBlocks, (std::vector<int32_t>{0, 1, 1}));
  EXPECT_EQ(m.fullKvNumBlocks, (std::vector<int32_t>{0, 0, 1}));
}

/// The launch's block mask against a block-sparse kernel's blocks and the
/// problem, each refusal naming what is wrong; a dense kernel takes none.
TEST(BlockMask, LaunchChecks) {
  Manifest dense;
  dense.spec.blockM = dense.spec.blockN = 128;
  Manifest sparse = dense;
  sparse.sparseQBlock = sparse.sparseKvBlock = 128;
  ForwardArgs a;
  a.batch = 2;
  a.queryHeads = 4;
  a.queryLen = 1000;
  a.keyLen = 300;
  std::string error;
  EXPECT_TRUE(dense.checkBlockMask(a, error)) << error;
  EXPECT_FALSE(sparse.checkBlockMask(a, error));
  EXPECT_NE(error.find("must all be given"), std::string::npos) << error;

  ForwardArgs::BlockMask &m = a.blockMask;
  m = {1, 2, 3, 4, 1, 4, 8, 3, 128, 128};
  EXPECT_TRUE(sparse.checkBlockMask(a, error)) << error;
  EXPECT_FALSE(dense.checkBlockMask(a, error));
  EXPECT_NE(error.find("not block-sparse"), std::string::npos) << error;
  // Broadcast strides: batch 1 → 0; heads 4 → q_blocks.
  EXPECT_EQ(m.strideB(), 0);
  EXPECT_EQ(m.strideH(), 8);
  int64_t value = -1;
  ASSERT_TRUE(fa::abi::forwardParamValue(a, "block_mask_kv_blocks", value));
  EXPECT_EQ(value, 3);
  ASSERT_TRUE(fa::abi::forwardParamValue(a, "full_kv_indices", value));
  EXPECT_EQ(value, 4);

  for (auto [change, message] :
       std::initializer_list<std::pair<void (*)(ForwardArgs::BlockMask &), const char *>>{
           {[](ForwardArgs::BlockMask &b) { b.kvBlockSize = 64; }, "built for 128x128"},
           {[](ForwardArgs::BlockMask &b) { b.heads = 3; }, "1 or the problem's"},
           {[](ForwardArgs::BlockMask &b) { b.batch = 3; }, "1 or the problem's"},
           {[](ForwardArgs::BlockMask &b) { b.qBlocks = 7; }, "need 8x3"},
           {[](ForwardArgs::BlockMask &b) { b.kvBlocks = 4; }, "need 8x3"},
           {[](ForwardArgs::BlockMask &b) { b.fullKvIndices = 0; }, "must all be given"}}) {
    ForwardArgs bad = a;
    change(bad.blockMask);
    EXPECT_FALSE(sparse.checkBlockMask(bad, error)) << message;
    EXPECT_NE(error.find(message), std::string::npos) << error;
  }
}

/// The block mask's parameters come last before the captures, and only
/// for a block-sparse kernel.
TEST(BlockMask, AbiParameters) {
  auto names = [](const std::vector<fa::abi::Param> &params) {
    std::vector<std::string> out;
    for (const fa::abi::Param &p : params)
      out.push_back(p.name);
    return out;
  };
  std::vector<std::string> dense = names(fa::abi::forwardKernelParams(false));
  EXPECT_EQ(std::count(dense.begin(), dense.end(), "kv_indices"), 0);
  std::vector<std::string> sparse = names(
      fa::abi::forwardKernelParams(false, false, false, false, {{"i32", {16}}}, true));
  std::vector<std::string> tail(sparse.end() - 8, sparse.end());
  EXPECT_EQ(tail, (std::vector<std::string>{
                      "kv_num_blocks", "kv_indices", "full_kv_num_blocks",
                      "full_kv_indices", "block_mask_stride_b",
                      "block_mask_stride_h", "block_mask_kv_blocks", "capture0"}));
}

} // namespace
