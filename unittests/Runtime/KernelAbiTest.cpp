//===- KernelAbiTest.cpp - the forward kernel's parameter table -----------===//
//
// Part of fa-mlir.
//
// KernelAbi.cpp is the one home of the kernel's parameters: the compiler
// builds the gpu.func signature and the manifest from it, the runtime binds
// the manifest's names back to values through it. These tests pin the
// contract both sides rely on.
//
//===----------------------------------------------------------------------===//

#include "fa/runtime/Kernel.h"
#include "fa/runtime/KernelAbi.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <string>
#include <vector>

using namespace fa;
using namespace fa::abi;

namespace {

std::vector<std::string> namesOf(const std::vector<Param> &params) {
  std::vector<std::string> names;
  for (const Param &p : params)
    names.push_back(p.name);
  return names;
}

/// The launch order fa-compile writes and the committed manifests hold.
const std::vector<std::string> kPlainOrder = {
    "q",          "k",          "v",          "o",          "lse",
    "batch",      "q_heads",    "kv_heads",   "q_len",      "kv_len",
    "q_stride_b", "q_stride_h", "q_stride_s", "k_stride_b", "k_stride_h",
    "k_stride_s", "v_stride_b", "v_stride_h", "v_stride_s", "o_stride_b",
    "o_stride_h", "o_stride_s", "lse_stride_b", "lse_stride_h"};

TEST(KernelAbi, PlainKernelTakesNoAlibiParams) {
  std::vector<Param> params = forwardKernelParams(/*alibi=*/false);
  EXPECT_EQ(namesOf(params), kPlainOrder);
  for (const Param &p : params)
    EXPECT_EQ(p.use, ParamUse::Always) << p.name;
}

/// ALiBi adds exactly two parameters: the slopes right after lse (with the
/// other buffers) and their batch stride last; the rest keep their order.
TEST(KernelAbi, AlibiKernelAddsSlopesAndBatchStride) {
  std::vector<std::string> expected = kPlainOrder;
  expected.insert(expected.begin() + 5, "alibi_slopes");
  expected.push_back("alibi_stride_b");
  std::vector<Param> params = forwardKernelParams(/*alibi=*/true);
  EXPECT_EQ(namesOf(params), expected);
  for (const Param &p : params) {
    bool alibiParam = std::string(p.name).rfind("alibi_", 0) == 0;
    EXPECT_EQ(p.use == ParamUse::Alibi, alibiParam) << p.name;
  }
  EXPECT_EQ(params[5].type, ParamType::F32Buffer);
  EXPECT_EQ(params.back().type, ParamType::Int64);
}

/// TMA kernels (sm_90a) take the three tensor maps first (the compiler
/// marks them grid-constant by position), then the plain list unchanged.
TEST(KernelAbi, TensorMapKernelTakesMapsFirst) {
  std::vector<std::string> expected = kPlainOrder;
  expected.insert(expected.begin(), {"q_tmap", "k_tmap", "v_tmap"});
  std::vector<Param> params =
      forwardKernelParams(/*alibi=*/false, /*tensorMaps=*/true);
  EXPECT_EQ(namesOf(params), expected);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(params[i].type, ParamType::TensorMap);
    TensorMapInfo info;
    ASSERT_TRUE(tensorMapOf(params[i].name, info));
    EXPECT_EQ(info.tensor, std::string(1, "qkv"[i]));
    EXPECT_EQ(info.queryRows, i == 0);
  }
  TensorMapInfo info;
  EXPECT_FALSE(tensorMapOf("q", info));
  EXPECT_EQ(paramTypeName(ParamType::TensorMap, "bf16"), "tensormap");
}

TEST(KernelAbi, NamesAreUnique) {
  std::vector<Param> params = forwardKernelParams(/*alibi=*/true, true);
  std::set<std::string> names;
  for (const Param &p : params)
    EXPECT_TRUE(names.insert(p.name).second) << "duplicate " << p.name;
}

TEST(KernelAbi, TypeNames) {
  EXPECT_EQ(paramTypeName(ParamType::ElementBuffer, "bf16"), "memref<?xbf16>");
  EXPECT_EQ(paramTypeName(ParamType::ElementBuffer, "f16"), "memref<?xf16>");
  EXPECT_EQ(paramTypeName(ParamType::F32Buffer, "bf16"), "memref<?xf32>");
  EXPECT_EQ(paramTypeName(ParamType::I32Buffer, "bf16"), "memref<?xi32>");
  EXPECT_EQ(paramTypeName(ParamType::Int64, "bf16"), "i64");
  std::vector<Param> params = forwardKernelParams(/*alibi=*/true);
  auto typeOf = [&](const std::string &name) {
    for (const Param &p : params)
      if (name == p.name)
        return p.type;
    ADD_FAILURE() << "no parameter " << name;
    return ParamType::Int64;
  };
  for (const char *name : {"q", "k", "v", "o"})
    EXPECT_EQ(typeOf(name), ParamType::ElementBuffer) << name;
  for (const char *name : {"lse", "alibi_slopes"})
    EXPECT_EQ(typeOf(name), ParamType::F32Buffer) << name;
}

/// Every parameter binds to its own field of ForwardArgs: with each field
/// set to a distinct value, each name reads back exactly that value.
TEST(KernelAbi, EveryParamHasItsValue) {
  ForwardArgs args;
  args.q = 1001;
  args.k = 1002;
  args.v = 1003;
  args.o = 1004;
  args.lse = 1005;
  args.alibiSlopes = 1006;
  args.batch = 11;
  args.queryHeads = 12;
  args.kvHeads = 13;
  args.queryLen = 14;
  args.keyLen = 15;
  for (int d = 0; d < 3; ++d) {
    args.qStride[d] = 100 + d;
    args.kStride[d] = 200 + d;
    args.vStride[d] = 300 + d;
    args.oStride[d] = 400 + d;
  }
  args.lseStride[0] = 500;
  args.lseStride[1] = 501;
  args.alibiStrideB = 600;
  const std::vector<std::pair<std::string, int64_t>> expected = {
      {"q", 1001},          {"k", 1002},          {"v", 1003},
      {"o", 1004},          {"lse", 1005},        {"alibi_slopes", 1006},
      {"batch", 11},        {"q_heads", 12},      {"kv_heads", 13},
      {"q_len", 14},        {"kv_len", 15},       {"q_stride_b", 100},
      {"q_stride_h", 101},  {"q_stride_s", 102},  {"k_stride_b", 200},
      {"k_stride_h", 201},  {"k_stride_s", 202},  {"v_stride_b", 300},
      {"v_stride_h", 301},  {"v_stride_s", 302},  {"o_stride_b", 400},
      {"o_stride_h", 401},  {"o_stride_s", 402},  {"lse_stride_b", 500},
      {"lse_stride_h", 501}, {"alibi_stride_b", 600}};
  std::vector<Param> params = forwardKernelParams(/*alibi=*/true);
  ASSERT_EQ(params.size(), expected.size());
  for (const auto &[name, value] : expected) {
    int64_t got = -1;
    ASSERT_TRUE(forwardParamValue(args, name, got)) << name;
    EXPECT_EQ(got, value) << name;
  }
  // And every name the table lists has a binding (no list to keep in sync).
  for (const Param &p : params) {
    int64_t got;
    EXPECT_TRUE(forwardParamValue(args, p.name, got)) << p.name;
  }
}

TEST(KernelAbi, UnknownNameHasNoValue) {
  int64_t value = 42;
  EXPECT_FALSE(forwardParamValue(ForwardArgs(), "q_stride_d", value));
  EXPECT_FALSE(forwardParamValue(ForwardArgs(), "", value));
  EXPECT_EQ(value, 42);
}

/// A manifest as fa-compile writes it, with the given parameter names.
std::string manifestWithParams(const std::vector<std::string> &names) {
  std::string params;
  for (const std::string &name : names) {
    if (!params.empty())
      params += ",\n";
    params += "    {\"name\": \"" + name + "\", \"type\": \"i64\"}";
  }
  return R"({
  "kernel": "k",
  "kind": "forward",
  "ptx": "k.ptx",
  "target": "sm_80",
  "spec": "d=64,dv=64,dtype=bf16,mask=none,scale=0.125,block_m=128,block_n=64",
  "tile": {"block_m": 128, "block_n": 64, "stages": 2, "warps": 4},
  "block": [128, 1, 1],
  "dynamic_shared_memory": 49152,
  "params": [
)" + params + R"(
  ],
  "generator": "test"
})";
}

TEST(KernelAbi, ManifestWithTheTableReads) {
  std::string path = testing::TempDir() + "/abi-known.json";
  std::vector<std::string> names;
  for (const Param &p : forwardKernelParams(/*alibi=*/true))
    names.push_back(p.name);
  std::ofstream(path) << manifestWithParams(names);
  std::ofstream(testing::TempDir() + "/k.ptx") << "// the PTX it names\n";
  Manifest m;
  std::string error;
  ASSERT_TRUE(Manifest::read(path, m, error)) << error;
  ASSERT_EQ(m.params.size(), names.size());
  for (size_t i = 0; i < names.size(); ++i)
    EXPECT_EQ(m.params[i].first, names[i]);
}

/// A kernel newer than the runtime (a parameter it cannot bind) is refused
/// when the manifest is read, not launched with a wrong argument list.
TEST(KernelAbi, ManifestWithUnknownParamIsRefused) {
  std::string path = testing::TempDir() + "/abi-unknown.json";
  std::ofstream(path) << manifestWithParams({"q", "k", "v", "o", "lse",
                                             "window_stride", "batch"});
  Manifest m;
  std::string error;
  EXPECT_FALSE(Manifest::read(path, m, error));
  EXPECT_NE(error.find("unknown kernel parameter \"window_stride\""),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("abi-unknown.json"), std::string::npos) << error;
}

/// A parameter whose type is not one the launch knows how to pass (here a
/// buffer of another element type) is refused when the manifest is read.
TEST(KernelAbi, ManifestWithUnknownParamTypeIsRefused) {
  std::string path = testing::TempDir() + "/abi-type.json";
  std::string text = manifestWithParams({"q", "batch"});
  text.replace(text.find("\"type\": \"i64\""), 13, "\"type\": \"memref<?xf16>\"");
  std::ofstream(path) << text;
  Manifest m;
  std::string error;
  EXPECT_FALSE(Manifest::read(path, m, error));
  EXPECT_NE(error.find("kernel parameter \"q\" has type \"memref<?xf16>\""),
            std::string::npos)
      << error;
}

/// Tensor maps are passed by value, so their type is checked both ways: a
/// map declared as an integer, or a buffer declared as a map, is refused.
TEST(KernelAbi, ManifestTensorMapTypesAreChecked) {
  std::string path = testing::TempDir() + "/abi-tmap.json";
  std::ofstream(path) << manifestWithParams({"q_tmap", "q"});
  Manifest m;
  std::string error;
  EXPECT_FALSE(Manifest::read(path, m, error));
  EXPECT_NE(error.find("kernel parameter \"q_tmap\" has type \"i64\" (a "
                       "tensormap expected)"),
            std::string::npos)
      << error;
  std::string text = manifestWithParams({"q", "batch"});
  text.replace(text.find("\"type\": \"i64\""), 13, "\"type\": \"tensormap\"");
  std::ofstream(path) << text;
  EXPECT_FALSE(Manifest::read(path, m, error));
  EXPECT_NE(error.find("kernel parameter \"q\" has type \"tensormap\""),
            std::string::npos)
      << error;
}

/// The committed sm_90a manifests list the TMA table: maps first, typed
/// "tensormap", then the plain parameters.
TEST(KernelAbi, CommittedHopperManifestMatchesTheTable) {
  Manifest m;
  std::string error;
  ASSERT_TRUE(Manifest::read(FA_SOURCE_DIR
                             "/kernels_generated/fa_fwd_sm90a_bf16_d128_none.json",
                             m, error))
      << error;
  EXPECT_EQ(m.target, "sm_90a");
  EXPECT_EQ(m.blockThreads, 384);
  std::vector<Param> params =
      forwardKernelParams(/*alibi=*/false, /*tensorMaps=*/true);
  ASSERT_EQ(m.params.size(), params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    EXPECT_EQ(m.params[i].first, params[i].name);
    EXPECT_EQ(m.params[i].second, paramTypeName(params[i].type, "bf16"));
  }
}

/// The committed ALiBi kernel's manifest lists exactly the ALiBi table.
TEST(KernelAbi, CommittedAlibiManifestMatchesTheTable) {
  Manifest m;
  std::string error;
  ASSERT_TRUE(Manifest::read(FA_SOURCE_DIR
                             "/kernels_generated/fa_fwd_sm80_bf16_d128_none_alibi.json",
                             m, error))
      << error;
  EXPECT_EQ(m.spec.alibi, AlibiKind::Head);
  std::vector<Param> params = forwardKernelParams(/*alibi=*/true);
  ASSERT_EQ(m.params.size(), params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    EXPECT_EQ(m.params[i].first, params[i].name);
    EXPECT_EQ(m.params[i].second, paramTypeName(params[i].type, "bf16"));
  }
}

} // namespace
