//===- KernelTest.cpp - manifests, JSON and the no-GPU path ---------------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "fa/runtime/Json.h"
#include "fa/runtime/Kernel.h"
#include "fa/runtime/fa_runtime.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

using namespace fa;

namespace {

TEST(Json, ParsesWhatManifestsHold) {
  json::Value v;
  std::string error;
  ASSERT_TRUE(json::parse(R"({"a": [1, 2.5, "x"], "b": {"c": true, "d": null}})",
                          v, error))
      << error;
  ASSERT_EQ(v.kind, json::Value::Object);
  const json::Value *a = v.get("a");
  ASSERT_TRUE(a && a->kind == json::Value::Array && a->array.size() == 3);
  EXPECT_EQ(a->array[1].number, 2.5);
  EXPECT_EQ(a->array[2].string, "x");
  EXPECT_TRUE(v.get("b")->get("c")->boolean);
  EXPECT_EQ(v.get("missing"), nullptr);
}

TEST(Json, RejectsBrokenText) {
  json::Value v;
  std::string error;
  EXPECT_FALSE(json::parse(R"({"a": [1, 2})", v, error));
  EXPECT_NE(error.find("offset"), std::string::npos);
  EXPECT_FALSE(json::parse(R"({"a": 1} trailing)", v, error));
  EXPECT_EQ(json::quote("a\"b\\c\n"), "\"a\\\"b\\\\c\\n\"");
}

/// The committed manifests are readable and describe their kernel.
TEST(Manifest, ReadsACommittedKernel) {
  Manifest m;
  std::string error;
  ASSERT_TRUE(Manifest::read(
      FA_SOURCE_DIR "/kernels_generated/fa_fwd_sm80_bf16_d128_causal.json", m,
      error))
      << error;
  EXPECT_EQ(m.kernelName, "fa_fwd_sm80_bf16_d128_causal");
  EXPECT_EQ(m.target, "sm_80");
  EXPECT_EQ(m.spec.headDim, 128);
  EXPECT_EQ(m.spec.dtype, ElementType::BF16);
  EXPECT_EQ(m.spec.mask.kind, ref::MaskKind::Causal);
  EXPECT_EQ(m.blockThreads, 128);
  EXPECT_EQ(m.params.size(), 24u);
  EXPECT_GT(m.dynamicSharedMemory, 48 * 1024); // needs the opt-in attribute
}

TEST(Manifest, MissingFieldIsAMessage) {
  std::string path = testing::TempDir() + "/bad.json";
  std::ofstream(path) << R"({"kernel": "k", "ptx": "k.ptx"})";
  Manifest m;
  std::string error;
  EXPECT_FALSE(Manifest::read(path, m, error));
  EXPECT_NE(error.find("missing string \"target\""), std::string::npos) << error;
}

/// Without a GPU (CI, the development machine) loading fails with a
/// message and the no-GPU flag; nothing aborts. With one it loads.
TEST(CApi, LoadReportsInsteadOfAborting) {
  fa_kernel *kernel = fa_kernel_load(
      FA_SOURCE_DIR "/kernels_generated/fa_fwd_sm80_bf16_d64_none.json");
  if (kernel) {
    EXPECT_EQ(fa_kernel_head_dim(kernel), 64);
    fa_kernel_free(kernel);
    return;
  }
  EXPECT_NE(std::string(fa_last_error()), "");
  EXPECT_EQ(fa_no_gpu(), 1) << fa_last_error();
  EXPECT_EQ(fa_kernel_load("/nonexistent.json"), nullptr);
  EXPECT_NE(std::string(fa_last_error()).find("cannot read"), std::string::npos);
  EXPECT_EQ(fa_kernel_forward(nullptr, nullptr, nullptr), -1);
}

} // namespace
