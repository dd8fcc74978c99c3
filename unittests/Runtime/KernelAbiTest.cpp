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
#include <map>
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

/// A kernel that stores O through TMA (sm_90a e4m3 where O fits in shared
/// memory) takes o_tmap right after the three input maps: query rows, in
/// boxes of one consumer warpgroup's rows. No other kernel takes it.
TEST(KernelAbi, OutputMapFollowsTheInputMaps) {
  std::vector<std::string> expected = kPlainOrder;
  expected.insert(expected.begin(), {"q_tmap", "k_tmap", "v_tmap", "o_tmap"});
  std::vector<Param> params = forwardKernelParams(
      /*alibi=*/false, /*tensorMaps=*/true, /*descale=*/false,
      /*outputTensorMap=*/true);
  EXPECT_EQ(namesOf(params), expected);
  EXPECT_EQ(params[3].type, ParamType::TensorMap);
  EXPECT_EQ(params[3].use, ParamUse::OutputTensorMap);
  TensorMapInfo info;
  ASSERT_TRUE(tensorMapOf("o_tmap", info));
  EXPECT_EQ(info.tensor, "o");
  EXPECT_TRUE(info.queryRows);
  EXPECT_TRUE(info.warpgroupRows);
  EXPECT_FALSE(info.f32);
  ASSERT_TRUE(tensorMapOf("q_tmap", info));
  EXPECT_FALSE(info.warpgroupRows);
  for (bool maps : {false, true})
    for (bool descale : {false, true})
      for (const Param &p : forwardKernelParams(true, maps, descale))
        EXPECT_NE(std::string(p.name), "o_tmap");
}

/// f8E4M3FN kernels take Q's, K's and V's descales (f32 buffers) right
/// after lse and the ALiBi slopes, and their two strides last; nothing
/// else moves, and no other kernel takes them.
TEST(KernelAbi, Fp8KernelAddsDescalesAfterTheOthers) {
  const std::vector<std::string> buffers = {"q_descale", "k_descale",
                                            "v_descale"};
  const std::vector<std::string> strides = {"descale_stride_b",
                                            "descale_stride_h"};
  std::vector<std::string> expected = kPlainOrder;
  expected.insert(expected.begin() + 5, buffers.begin(), buffers.end());
  expected.insert(expected.end(), strides.begin(), strides.end());
  std::vector<Param> params = forwardKernelParams(
      /*alibi=*/false, /*tensorMaps=*/false, /*descale=*/true);
  EXPECT_EQ(namesOf(params), expected);
  for (const Param &p : params) {
    bool descaleParam = std::string(p.name).find("descale") != std::string::npos;
    EXPECT_EQ(p.use == ParamUse::Descale, descaleParam) << p.name;
  }
  for (int i = 5; i < 8; ++i)
    EXPECT_EQ(params[i].type, ParamType::F32Buffer) << params[i].name;
  for (size_t i = params.size() - 2; i < params.size(); ++i)
    EXPECT_EQ(params[i].type, ParamType::Int64) << params[i].name;

  // The sm_90a fp8 kernel with ALiBi: maps first, the descales after the
  // slopes, their strides after alibi_stride_b.
  expected = kPlainOrder;
  expected.insert(expected.begin() + 5, "alibi_slopes");
  expected.insert(expected.begin() + 6, buffers.begin(), buffers.end());
  expected.push_back("alibi_stride_b");
  expected.insert(expected.end(), strides.begin(), strides.end());
  expected.insert(expected.begin(), {"q_tmap", "k_tmap", "v_tmap"});
  EXPECT_EQ(namesOf(forwardKernelParams(true, true, true)), expected);

  // Without descale, none of them (the default: 16-bit kernels).
  for (bool alibi : {false, true})
    for (bool maps : {false, true})
      for (const Param &p : forwardKernelParams(alibi, maps))
        EXPECT_EQ(std::string(p.name).find("descale"), std::string::npos)
            << p.name;
}

TEST(KernelAbi, NamesAreUnique) {
  std::vector<Param> params = forwardKernelParams(/*alibi=*/true, true, true);
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
  for (const char *name : {"q", "k", "v"})
    EXPECT_EQ(typeOf(name), ParamType::ElementBuffer) << name;
  EXPECT_EQ(typeOf("o"), ParamType::OutputBuffer);
  for (const char *name : {"lse", "alibi_slopes"})
    EXPECT_EQ(typeOf(name), ParamType::F32Buffer) << name;
}

/// O is of the kernel's output type: its input type, but bf16 for
/// f8E4M3FN, in either spelling (the spec's "f8e4m3fn", MLIR's and the
/// manifests' "f8E4M3FN"); Q, K and V stay e4m3.
TEST(KernelAbi, OutputTypeNames) {
  EXPECT_EQ(outputElementTypeName("bf16"), "bf16");
  EXPECT_EQ(outputElementTypeName("f16"), "f16");
  EXPECT_EQ(outputElementTypeName("f8e4m3fn"), "bf16");
  EXPECT_EQ(outputElementTypeName("f8E4M3FN"), "bf16");
  EXPECT_EQ(outputElementTypeName(elementTypeName(ElementType::F8E4M3FN)),
            "bf16");
  EXPECT_EQ(outputElementType(ElementType::F8E4M3FN), ElementType::BF16);
  EXPECT_EQ(outputElementType(ElementType::F16), ElementType::F16);
  EXPECT_EQ(outputElementType(ElementType::BF16), ElementType::BF16);

  EXPECT_EQ(paramTypeName(ParamType::OutputBuffer, "bf16"), "memref<?xbf16>");
  EXPECT_EQ(paramTypeName(ParamType::OutputBuffer, "f16"), "memref<?xf16>");
  EXPECT_EQ(paramTypeName(ParamType::OutputBuffer, "f8e4m3fn"),
            "memref<?xbf16>");
  EXPECT_EQ(paramTypeName(ParamType::OutputBuffer, "f8E4M3FN"),
            "memref<?xbf16>");
  EXPECT_EQ(paramTypeName(ParamType::ElementBuffer, "f8E4M3FN"),
            "memref<?xf8E4M3FN>");
  EXPECT_EQ(paramTypeName(ParamType::F32Buffer, "f8E4M3FN"), "memref<?xf32>");
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
  args.qDescale = 1007;
  args.kDescale = 1008;
  args.vDescale = 1009;
  args.descaleStride[0] = 700;
  args.descaleStride[1] = 701;
  const std::vector<std::pair<std::string, int64_t>> expected = {
      {"q", 1001},          {"k", 1002},          {"v", 1003},
      {"o", 1004},          {"lse", 1005},        {"alibi_slopes", 1006},
      {"batch", 11},        {"q_heads", 12},      {"kv_heads", 13},
      {"q_len", 14},        {"kv_len", 15},       {"q_stride_b", 100},
      {"q_stride_h", 101},  {"q_stride_s", 102},  {"k_stride_b", 200},
      {"k_stride_h", 201},  {"k_stride_s", 202},  {"v_stride_b", 300},
      {"v_stride_h", 301},  {"v_stride_s", 302},  {"o_stride_b", 400},
      {"o_stride_h", 401},  {"o_stride_s", 402},  {"lse_stride_b", 500},
      {"lse_stride_h", 501}, {"alibi_stride_b", 600},
      {"q_descale", 1007},  {"k_descale", 1008},  {"v_descale", 1009},
      {"descale_stride_b", 700}, {"descale_stride_h", 701}};
  std::vector<Param> params =
      forwardKernelParams(/*alibi=*/true, /*tensorMaps=*/false,
                          /*descale=*/true);
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

/// A manifest as fa-compile writes it for a kernel of `dtype`, with the
/// given parameter names, each of the ABI table's type ("i64" for a name
/// the table lacks) unless `types` names another.
std::string manifestWithParams(const std::vector<std::string> &names,
                               const std::string &dtype = "bf16",
                               const std::map<std::string, std::string> &types = {}) {
  std::map<std::string, std::string> table;
  for (const Param &p : forwardKernelParams(true, true, true))
    table[p.name] = paramTypeName(p.type, dtype);
  std::string params;
  for (const std::string &name : names) {
    if (!params.empty())
      params += ",\n";
    std::string type = types.count(name)   ? types.at(name)
                       : table.count(name) ? table.at(name)
                                           : "i64";
    params += "    {\"name\": \"" + name + "\", \"type\": \"" + type + "\"}";
  }
  return R"({
  "kernel": "k",
  "kind": "forward",
  "ptx": "k.ptx",
  "target": "sm_80",
  "spec": "d=64,dv=64,dtype=)" + dtype + R"(,mask=none,scale=0.125,block_m=128,block_n=64",
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
  std::ofstream(path) << manifestWithParams({"q", "batch"}, "bf16",
                                            {{"q", "memref<?xf16>"}});
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
  std::ofstream(path) << manifestWithParams({"q_tmap", "q"}, "bf16",
                                            {{"q_tmap", "i64"}});
  Manifest m;
  std::string error;
  EXPECT_FALSE(Manifest::read(path, m, error));
  EXPECT_NE(error.find("kernel parameter \"q_tmap\" has type \"i64\" (a "
                       "tensormap expected)"),
            std::string::npos)
      << error;
  std::ofstream(path) << manifestWithParams({"q", "batch"}, "bf16",
                                            {{"q", "tensormap"}});
  EXPECT_FALSE(Manifest::read(path, m, error));
  EXPECT_NE(error.find("kernel parameter \"q\" has type \"tensormap\""),
            std::string::npos)
      << error;
}

/// A type the launch could pass but not the table's for that name (here
/// lse as an i64) is refused too: it would shift every later launch word.
TEST(KernelAbi, ManifestParamOfAnotherTypeThanTheTablesIsRefused) {
  std::string path = testing::TempDir() + "/abi-table-type.json";
  std::ofstream(path) << manifestWithParams({"q", "lse", "batch"}, "bf16",
                                            {{"lse", "i64"}});
  Manifest m;
  std::string error;
  EXPECT_FALSE(Manifest::read(path, m, error));
  EXPECT_NE(error.find("kernel parameter \"lse\" has type \"i64\" (the ABI "
                       "table's is \"memref<?xf32>\")"),
            std::string::npos)
      << error;
}

/// An f8E4M3FN sm_90a kernel's manifest, as fa-compile writes it from the
/// table (Q, K, V memref<?xf8E4M3FN>, O memref<?xbf16>, the descales),
/// reads back in order; O typed as e4m3 is refused.
TEST(KernelAbi, Fp8ManifestReads) {
  std::string dir = testing::TempDir();
  std::string dtype = elementTypeName(ElementType::F8E4M3FN);
  std::vector<Param> params = forwardKernelParams(false, true, true);
  std::vector<std::string> names = namesOf(params);
  std::ofstream(dir + "/abi-fp8.json") << manifestWithParams(names, dtype);
  std::ofstream(dir + "/k.ptx") << "// the PTX it names\n";
  Manifest m;
  std::string error;
  ASSERT_TRUE(Manifest::read(dir + "/abi-fp8.json", m, error)) << error;
  EXPECT_EQ(m.spec.dtype, ElementType::F8E4M3FN);
  EXPECT_TRUE(m.takesDescales());
  EXPECT_FALSE(m.takesAlibiSlopes());
  ASSERT_EQ(m.params.size(), params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    EXPECT_EQ(m.params[i].first, params[i].name);
    EXPECT_EQ(m.params[i].second, paramTypeName(params[i].type, dtype));
  }
  auto typeOf = [&](const std::string &name) {
    for (const auto &[n, t] : m.params)
      if (n == name)
        return t;
    return std::string("(absent)");
  };
  EXPECT_EQ(typeOf("q"), "memref<?xf8E4M3FN>");
  EXPECT_EQ(typeOf("o"), "memref<?xbf16>");
  EXPECT_EQ(typeOf("v_descale"), "memref<?xf32>");
  EXPECT_EQ(typeOf("descale_stride_h"), "i64");

  std::ofstream(dir + "/abi-fp8-o.json")
      << manifestWithParams(names, dtype, {{"o", "memref<?xf8E4M3FN>"}});
  EXPECT_FALSE(Manifest::read(dir + "/abi-fp8-o.json", m, error));
  EXPECT_NE(error.find("kernel parameter \"o\" has type \"memref<?xf8E4M3FN>\" "
                       "(the ABI table's is \"memref<?xbf16>\")"),
            std::string::npos)
      << error;

  // A 16-bit kernel takes no descales.
  std::ofstream(dir + "/abi-bf16.json")
      << manifestWithParams(namesOf(forwardKernelParams(false, true)));
  Manifest plain;
  ASSERT_TRUE(Manifest::read(dir + "/abi-bf16.json", plain, error)) << error;
  EXPECT_FALSE(plain.takesDescales());
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
