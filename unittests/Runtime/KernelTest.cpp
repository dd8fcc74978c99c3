//===- KernelTest.cpp - manifests, JSON and the no-GPU path ---------------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "fa/runtime/Json.h"
#include "fa/runtime/Kernel.h"
#include "fa/runtime/Spec.h"
#include "fa/runtime/fa_runtime.h"

#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <filesystem>
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
  EXPECT_EQ(m.spec.mask.kind, MaskKind::Causal);
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

/// The device's shared-memory budget: a GPU's opt-in maximum (at least an
/// sm_80's 48 KB default, at most the 227 KB of an H100), or -1 and the
/// no-GPU flag without one.
TEST(CApi, DeviceSharedMemoryPerBlock) {
  int64_t bytes = fa_device_shared_memory_per_block();
  if (bytes >= 0) {
    EXPECT_GE(bytes, 48 * 1024);
    EXPECT_LE(bytes, 227 * 1024);
    return;
  }
  EXPECT_EQ(bytes, -1);
  EXPECT_EQ(fa_no_gpu(), 1) << fa_last_error();
}

/// fa_forward_args grew the f8e4m3fn descales at its end: the fields
/// before them keep their offsets (callers built against the older header,
/// and the ctypes mirrors in python/fa_mlir/_runtime.py and bench/bench.py,
/// which list the same fields in the same order).
TEST(CApi, ForwardArgsAppendsTheDescales) {
  EXPECT_EQ(offsetof(fa_forward_args, lse_stride), 176u);
  EXPECT_EQ(offsetof(fa_forward_args, alibi_slopes), 192u);
  EXPECT_EQ(offsetof(fa_forward_args, alibi_stride_b), 200u);
  EXPECT_EQ(offsetof(fa_forward_args, q_descale), 208u);
  EXPECT_EQ(offsetof(fa_forward_args, k_descale), 216u);
  EXPECT_EQ(offsetof(fa_forward_args, v_descale), 224u);
  EXPECT_EQ(offsetof(fa_forward_args, descale_stride), 232u);
  EXPECT_EQ(sizeof(fa_forward_args), 248u);
  fa_forward_args args{};
  EXPECT_EQ(args.q_descale, nullptr);
  EXPECT_EQ(args.descale_stride[0], 0);
  EXPECT_EQ(args.descale_stride[1], 0);
}

/// Deep nesting is refused with a message, not a stack overflow (the
/// parser and Value's destructor recurse once per level).
TEST(Json, DeepNestingIsRefused) {
  json::Value v;
  std::string error;
  std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_FALSE(json::parse(deep, v, error));
  EXPECT_NE(error.find("nesting deeper than 64"), std::string::npos) << error;
  std::string objects;
  for (int i = 0; i < 100000; ++i)
    objects += "{\"a\":";
  EXPECT_FALSE(json::parse(objects + "1" + std::string(100000, '}'), v, error));
  std::string ok = std::string(60, '[') + std::string(60, ']');
  EXPECT_TRUE(json::parse(ok, v, error)) << error;
}

/// Only JSON's number grammar, and only finite numbers: strtod alone would
/// take NaN, infinities and hex, and turn 1e999 into inf.
TEST(Json, NumbersAreJsonNumbers) {
  json::Value v;
  std::string error;
  for (const char *bad : {"nan", "NaN", "inf", "-inf", "Infinity", "0x10",
                          "1e999", "-1e999", "1.", ".5", "1e", "+1", "--1",
                          "-", "[1,]"})
    EXPECT_FALSE(json::parse(bad, v, error)) << bad;
  ASSERT_TRUE(json::parse("-0.5e-3", v, error)) << error;
  EXPECT_EQ(v.number, -0.5e-3);
  EXPECT_FALSE(json::parse(R"({"a": 1, "a": 2})", v, error));
  EXPECT_NE(error.find("duplicate key"), std::string::npos) << error;
  EXPECT_FALSE(json::parse(R"("\uZZZZ")", v, error));
}

/// Writes a manifest beside a PTX file (or without one) and reads it.
static bool readManifest(const std::string &fields, bool withPtx,
                         std::string &error) {
  // One directory per test: ctest runs the tests of this binary in
  // parallel, and they must not read each other's manifest.
  std::string dir = testing::TempDir() + "/" +
                    testing::UnitTest::GetInstance()->current_test_info()->name();
  std::filesystem::create_directories(dir);
  std::string ptx = withPtx ? "m.ptx" : "missing.ptx";
  if (withPtx)
    std::ofstream(dir + "/m.ptx") << "// ptx\n";
  std::ofstream(dir + "/m.json")
      << R"({"kernel": "k", "ptx": ")" << ptx
      << R"(", "target": "sm_80", "spec": "d=64", "generator": "g", )"
      << fields << "}";
  Manifest m;
  return Manifest::read(dir + "/m.json", m, error);
}

/// Numbers the runtime casts to integers are checked first (a huge or
/// fractional one would wrap), and the PTX the manifest names must exist.
TEST(Manifest, NumbersAndPtxAreChecked) {
  std::string good = R"("tile": {"stages": 2, "warps": 4}, "block": [128],
      "dynamic_shared_memory": 1024, "params": [])";
  std::string error;
  EXPECT_TRUE(readManifest(good, true, error)) << error;
  EXPECT_FALSE(readManifest(good, false, error));
  EXPECT_NE(error.find("missing.ptx cannot be read"), std::string::npos)
      << error;
  for (const char *bad :
       {R"("tile": {"stages": 1e300, "warps": 4}, "block": [128],
           "dynamic_shared_memory": 0, "params": [])",
        R"("tile": {"stages": 2, "warps": 4}, "block": [128],
           "dynamic_shared_memory": -1, "params": [])",
        R"("tile": {"stages": 2, "warps": 4.5}, "block": [128],
           "dynamic_shared_memory": 0, "params": [])",
        R"("tile": {"stages": 2, "warps": 4}, "block": ["x"],
           "dynamic_shared_memory": 0, "params": [])",
        R"("tile": {"stages": 2, "warps": 4}, "block": [4096],
           "dynamic_shared_memory": 0, "params": [])"}) {
    EXPECT_FALSE(readManifest(bad, true, error)) << bad;
    EXPECT_FALSE(error.empty());
  }
}

/// CUDA's grid limits: x <= 2^31 - 1 blocks of queries, y = Hq and
/// z = B <= 65535.
TEST(Manifest, LaunchLimits) {
  Manifest m;
  m.spec.blockM = 64;
  std::string error;
  EXPECT_TRUE(m.checkLaunch({65535, 65535, 1, 64 * int64_t(INT32_MAX), 1},
                            error))
      << error;
  EXPECT_FALSE(m.checkLaunch({65536, 1, 1, 1, 1}, error));
  EXPECT_NE(error.find("grid z"), std::string::npos) << error;
  EXPECT_FALSE(m.checkLaunch({1, 65536, 1, 1, 1}, error));
  EXPECT_FALSE(m.checkLaunch({1, 1, 1, 64 * int64_t(INT32_MAX) + 1, 1}, error));
}

/// "scheduler": per_block when absent (older manifests), persistent or
/// per_block by name, anything else refused.
TEST(Manifest, SchedulerIsReadAndChecked) {
  std::string base = R"("tile": {"stages": 2, "warps": 4}, "block": [128],
      "dynamic_shared_memory": 0, "params": [])";
  std::string error;
  EXPECT_TRUE(readManifest(base, true, error)) << error;
  EXPECT_TRUE(readManifest(base + R"(, "scheduler": "persistent")", true, error))
      << error;
  EXPECT_TRUE(readManifest(base + R"(, "scheduler": "per_block")", true, error))
      << error;
  for (const char *bad : {R"(, "scheduler": "dynamic")", R"(, "scheduler": 1)"}) {
    EXPECT_FALSE(readManifest(base + bad, true, error)) << bad;
    EXPECT_NE(error.find("\"scheduler\" must be"), std::string::npos) << error;
  }
  fa::abi::TileScheduler scheduler;
  ASSERT_TRUE(fa::abi::tileSchedulerOf("persistent", scheduler));
  EXPECT_EQ(scheduler, fa::abi::TileScheduler::Persistent);
  EXPECT_STREQ(fa::abi::tileSchedulerName(scheduler), "persistent");
  EXPECT_FALSE(fa::abi::tileSchedulerOf("Persistent", scheduler));
}

/// The committed sm_90a kernels are persistent (strided without a mask,
/// over pairs of Q blocks under one: docs/performance.md); sm_80's one
/// tile per block.
TEST(Manifest, CommittedHopperSchedulers) {
  std::string error;
  for (auto [name, scheduler] :
       {std::pair<const char *, fa::abi::TileScheduler>{
            "fa_fwd_sm90a_bf16_d128_none", fa::abi::TileScheduler::Persistent},
        {"fa_fwd_sm90a_bf16_d128_causal", fa::abi::TileScheduler::Persistent},
        {"fa_fwd_sm80_bf16_d128_none", fa::abi::TileScheduler::PerBlock}}) {
    Manifest m;
    ASSERT_TRUE(Manifest::read(FA_SOURCE_DIR "/kernels_generated/" +
                                   std::string(name) + ".json",
                               m, error))
        << error;
    EXPECT_EQ(m.scheduler, scheduler) << name;
  }
}

/// A persistent kernel decodes its tiles in 32 bits: at most 2^31 - 1 of
/// them, whatever the grid's y and z limits.
TEST(Manifest, PersistentLaunchLimits) {
  Manifest m;
  m.spec.blockM = 64;
  m.scheduler = fa::abi::TileScheduler::Persistent;
  std::string error;
  EXPECT_TRUE(m.checkLaunch({1, 65536, 1, 64, 1}, error)) << error;
  EXPECT_TRUE(m.checkLaunch({1, 1, 1, 64 * int64_t(INT32_MAX), 1}, error))
      << error;
  EXPECT_FALSE(m.checkLaunch({2, 1, 1, 64 * int64_t(INT32_MAX), 1}, error));
  EXPECT_NE(error.find("tiles, more than a persistent kernel's"),
            std::string::npos)
      << error;
}

/// parseSpec refuses what it cannot honour exactly, with one line naming
/// the range; specText round-trips every value bit for bit.
TEST(Spec, RangesKeysAndExactText) {
  AttentionSpec spec;
  std::string error;
  for (const char *bad :
       {"d=64,scale=0", "d=64,scale=1e30", "d=64,scale=nan", "d=64,scale=inf",
        "d=64,softcap=1e-300", "d=64,softcap=1e-45", "d=64,softcap=-1",
        "d=64,softcap=nan", "d=64,mask=window(-1,9223372036854775807)",
        "d=64,mask=window(-9223372036854775808,0)", "d=64,block_m=0",
        "d=64,block_n=-64", "d=64,block_m=3",
        "d=64,block_m=4611686018427387904", "d=64,d=128",
        "d=64,mask=causal,mask=none", "d=64,depth=3", "d=0", "d=-1",
        "d=64,dv=0", "d=9223372036854775808", "d=64,mask=window(1,2"}) {
    EXPECT_FALSE(parseSpec(bad, spec, error)) << bad;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  }
  EXPECT_FALSE(parseSpec("d=64,scale=1e30", spec, error));
  EXPECT_NE(error.find("[1e-06, 1e+06]"), std::string::npos) << error;
  // An empty field is malformed wherever it is (",d=64" and "d=64,," were
  // taken, "," was not).
  for (const char *bad : {",d=64", "d=64,,", ",", "d=64,,mask=causal"}) {
    EXPECT_FALSE(parseSpec(bad, spec, error)) << bad;
    EXPECT_EQ(error, "spec '" + std::string(bad) +
                         "' has an empty field (a comma too many)");
  }
  // Control bytes from the text are printed escaped.
  EXPECT_FALSE(parseSpec(std::string("d=64,mask=ca\0us\x1b[2J", 19), spec,
                         error));
  EXPECT_EQ(error.find('\0'), std::string::npos);
  EXPECT_NE(error.find("bad value 'ca\\x00us\\x1B[2J' for spec key 'mask'"),
            std::string::npos)
      << error;
  // The bounds are inclusive (compared as the f32 each value becomes).
  for (const char *bound : {"d=64,scale=1e-6", "d=64,scale=-1e6",
                            "d=64,softcap=1e-3", "d=64,softcap=1e6"})
    EXPECT_TRUE(parseSpec(bound, spec, error)) << bound << ": " << error;
  EXPECT_FALSE(parseSpec("d=64,d=128", spec, error));
  EXPECT_EQ(error, "spec key 'd' is given twice");

  ASSERT_TRUE(parseSpec("d=128,softcap=30.123456789,scale=0.1", spec, error))
      << error;
  std::string text = specText(spec);
  EXPECT_NE(text.find("softcap=30.123456789,"), std::string::npos) << text;
  EXPECT_NE(text.find("scale=0.1,"), std::string::npos) << text;
  spec.scale.reset(); // 1/sqrt(128) is not short: every bit is kept
  AttentionSpec back;
  ASSERT_TRUE(parseSpec(specText(spec), back, error)) << error;
  EXPECT_EQ(*back.scale, 1.0 / std::sqrt(128.0));
  EXPECT_EQ(back.softcap, spec.softcap);
  std::vector<std::string> keys;
  ASSERT_TRUE(parseSpec("d=64,block_n=32", spec, error, &keys));
  EXPECT_EQ(keys, (std::vector<std::string>{"d", "block_n"}));
  // f8E4M3FN's descales: per tensor by default, per head when asked, and
  // only for fp8.
  ASSERT_TRUE(parseSpec("d=64,dtype=f8e4m3fn,descale=head", spec, error)) << error;
  EXPECT_EQ(spec.descale, DescaleKind::Head);
  EXPECT_NE(specText(spec).find(",descale=head,"), std::string::npos);
  ASSERT_TRUE(parseSpec("d=64,dtype=f8e4m3fn", spec, error)) << error;
  EXPECT_EQ(spec.descale, DescaleKind::Tensor);
  EXPECT_EQ(specText(spec).find("descale"), std::string::npos);
  EXPECT_FALSE(parseSpec("d=64,descale=head", spec, error));
  EXPECT_FALSE(parseSpec("d=64,dtype=f8e4m3fn,descale=row", spec, error));
}

/// Every tensor's element count is checked before anything multiplies
/// sizes: 2^32 · 2^32 · 2^32 would wrap to 0 in 64 bits.
TEST(Spec, ProblemProductsCannotWrap) {
  AttentionSpec spec;
  std::string error;
  ASSERT_TRUE(parseSpec("d=64", spec, error));
  int64_t big = int64_t(1) << 32;
  EXPECT_FALSE(validateProblem(spec, {big, big, big, 1, 1}, error));
  EXPECT_NE(error.find("too large"), std::string::npos) << error;
  EXPECT_FALSE(validateProblem(spec, {1, 1, 1, 1, int64_t(1) << 41}, error));
  EXPECT_FALSE(validateProblem(spec, {1, 1, 1, int64_t(1) << 40, 1}, error));
  EXPECT_TRUE(validateProblem(spec, {2, 4, 2, 100, 200}, error)) << error;
}

} // namespace
