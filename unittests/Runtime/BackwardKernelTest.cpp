//===- BackwardKernelTest.cpp - the backward's ABI and manifest -----------===//
//
// Part of fa-mlir.
//
// The backward's contract as the runtime holds it, without a GPU: each
// step's parameters bind to values (the workspace's parts where its layout
// puts them), and a backward manifest reads, or is refused with one line.
//
//===----------------------------------------------------------------------===//

#include "fa/runtime/BackwardKernel.h"
#include "fa/runtime/Kernel.h"
#include "fa/runtime/KernelAbi.h"
#include "fa/runtime/fa_runtime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <climits>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

using namespace fa;
using namespace fa::abi;

namespace {

constexpr BackwardStep kSteps[] = {BackwardStep::Preprocess, BackwardStep::Main,
                                   BackwardStep::Postprocess};

std::vector<std::string> namesOf(const std::vector<Param> &params) {
  std::vector<std::string> names;
  for (const Param &p : params)
    names.push_back(p.name);
  return names;
}

TEST(BackwardAbi, StepNames) {
  EXPECT_STREQ(backwardStepName(BackwardStep::Preprocess), "preprocess");
  EXPECT_STREQ(backwardStepName(BackwardStep::Main), "main");
  EXPECT_STREQ(backwardStepName(BackwardStep::Postprocess), "postprocess");
}

/// Within a step each name is listed once, and every name has a value.
TEST(BackwardAbi, EachStepsNamesAreUniqueAndBound) {
  for (BackwardStep step : kSteps)
    for (bool alibi : {false, true}) {
      std::set<std::string> names;
      for (const Param &p : backwardKernelParams(step, alibi)) {
        EXPECT_TRUE(names.insert(p.name).second)
            << backwardStepName(step) << ": duplicate " << p.name;
        int64_t value;
        EXPECT_TRUE(backwardParamValue(BackwardArgs(), 64, p.name, value))
            << backwardStepName(step) << ": " << p.name;
        EXPECT_NE(p.type, ParamType::TensorMap) << p.name;
      }
      EXPECT_FALSE(names.empty()) << backwardStepName(step);
    }
  int64_t value = 42;
  EXPECT_FALSE(
      backwardParamValue(BackwardArgs(), 64, "dq_acc_stride_d", value));
  EXPECT_EQ(value, 42);
}

/// ALiBi adds exactly alibi_slopes and alibi_stride_b, to the main step
/// only; the other names keep their order.
TEST(BackwardAbi, AlibiAddsSlopesToMainOnly) {
  for (BackwardStep step : kSteps) {
    std::vector<std::string> plain = namesOf(backwardKernelParams(step, false));
    std::vector<std::string> withAlibi =
        namesOf(backwardKernelParams(step, true));
    std::vector<std::string> added, kept;
    for (const std::string &name : withAlibi)
      (std::find(plain.begin(), plain.end(), name) == plain.end() ? added
                                                                  : kept)
          .push_back(name);
    EXPECT_EQ(kept, plain) << backwardStepName(step);
    if (step == BackwardStep::Main)
      EXPECT_EQ(added,
                (std::vector<std::string>{"alibi_slopes", "alibi_stride_b"}));
    else
      EXPECT_TRUE(added.empty()) << backwardStepName(step);
  }
}

/// The deterministic mode's two parameters: dq_semaphore (an i32 buffer)
/// right after dq_acc and deterministic (an i64) right after kv_len, in
/// the main step only.
TEST(BackwardAbi, MainStepTakesSemaphoresAndTheFlag) {
  for (bool alibi : {false, true}) {
    std::vector<Param> main = backwardKernelParams(BackwardStep::Main, alibi);
    std::vector<std::string> names = namesOf(main);
    auto at = [&](const std::string &name) {
      return std::find(names.begin(), names.end(), name) - names.begin();
    };
    ASSERT_LT(at("dq_semaphore"), int64_t(names.size()));
    ASSERT_LT(at("deterministic"), int64_t(names.size()));
    EXPECT_EQ(at("dq_semaphore"), at("dq_acc") + 1);
    EXPECT_EQ(at("deterministic"), at("kv_len") + 1);
    EXPECT_EQ(main[at("dq_semaphore")].type, ParamType::I32Buffer);
    EXPECT_EQ(main[at("deterministic")].type, ParamType::Int64);
  }
  for (BackwardStep step :
       {BackwardStep::Preprocess, BackwardStep::Postprocess})
    for (const Param &p : backwardKernelParams(step, true)) {
      EXPECT_NE(p.name, "dq_semaphore") << backwardStepName(step);
      EXPECT_NE(p.name, "deterministic") << backwardStepName(step);
    }
}

/// TMA kernels (the sm_90a main step) take five maps first: Q and dO by
/// block_m rows, K and V by block_n, dq_acc (f32, block_m rows) for the
/// reduce-add; then the plain list unchanged. The other steps take none.
TEST(BackwardAbi, TensorMapMainStepTakesMapsFirst) {
  for (bool alibi : {false, true}) {
    std::vector<std::string> expected =
        namesOf(backwardKernelParams(BackwardStep::Main, alibi));
    expected.insert(expected.begin(),
                    {"q_tmap", "k_tmap", "v_tmap", "do_tmap", "dq_acc_tmap"});
    std::vector<Param> main =
        backwardKernelParams(BackwardStep::Main, alibi, /*tensorMaps=*/true);
    EXPECT_EQ(namesOf(main), expected);
    for (int i = 0; i < 5; ++i) {
      EXPECT_EQ(main[i].type, ParamType::TensorMap);
      TensorMapInfo info;
      ASSERT_TRUE(tensorMapOf(main[i].name, info));
      EXPECT_EQ(info.tensor + "_tmap", std::string(main[i].name));
      EXPECT_EQ(info.queryRows, info.tensor != "k" && info.tensor != "v");
      EXPECT_EQ(info.f32, info.tensor == "dq_acc");
    }
  }
  for (BackwardStep step : {BackwardStep::Preprocess, BackwardStep::Postprocess})
    EXPECT_EQ(namesOf(backwardKernelParams(step, true, true)),
              namesOf(backwardKernelParams(step, true)));
}

/// A BackwardArgs with every field distinct, at B=3, Hq=4, Hkv=2, M=113.
BackwardArgs distinctArgs() {
  BackwardArgs a;
  ForwardArgs &f = a.forward;
  f.q = 1001;
  f.k = 1002;
  f.v = 1003;
  f.o = 1004;
  f.lse = 1005;
  f.alibiSlopes = 1006;
  f.batch = 3;
  f.queryHeads = 4;
  f.kvHeads = 2;
  f.queryLen = 113;
  f.keyLen = 203;
  for (int d = 0; d < 3; ++d) {
    f.qStride[d] = 100 + d;
    f.kStride[d] = 200 + d;
    f.vStride[d] = 300 + d;
    f.oStride[d] = 400 + d;
    a.gradOutStride[d] = 700 + d;
    a.dqStride[d] = 800 + d;
    a.dkStride[d] = 900 + d;
    a.dvStride[d] = 1100 + d;
  }
  f.lseStride[0] = 500;
  f.lseStride[1] = 501;
  f.alibiStrideB = 600;
  a.gradOut = 2001;
  a.dq = 2002;
  a.dk = 2003;
  a.dv = 2004;
  a.workspace = 1 << 20;
  return a;
}

int64_t valueOf(const BackwardArgs &a, int64_t headDim,
                const std::string &name) {
  int64_t value = -1;
  EXPECT_TRUE(backwardParamValue(a, headDim, name, value)) << name;
  return value;
}

/// The tensors and sizes bind to their own fields.
TEST(BackwardAbi, EveryParamHasItsValue) {
  BackwardArgs a = distinctArgs();
  const std::map<std::string, int64_t> expected = {
      {"q", 1001},           {"k", 1002},
      {"v", 1003},           {"o", 1004},
      {"lse", 1005},         {"alibi_slopes", 1006},
      {"do", 2001},          {"dq", 2002},
      {"dk", 2003},          {"dv", 2004},
      {"batch", 3},          {"q_heads", 4},
      {"kv_heads", 2},       {"q_len", 113},
      {"kv_len", 203},       {"q_stride_b", 100},
      {"k_stride_h", 201},   {"v_stride_s", 302},
      {"o_stride_b", 400},   {"do_stride_h", 701},
      {"dq_stride_s", 802},  {"dk_stride_b", 900},
      {"dv_stride_s", 1102}, {"lse_stride_b", 500},
      {"lse_stride_h", 501}, {"alibi_stride_b", 600}};
  for (const auto &[name, value] : expected)
    EXPECT_EQ(valueOf(a, 72, name), value) << name;
}

/// delta and dq_acc are where BackwardWorkspace puts them, with the strides
/// of dense [B, Hq, M] and [B, Hq, M', D] (M' = M rounded up to 8).
TEST(BackwardAbi, WorkspaceParamsFollowItsLayout) {
  BackwardArgs a = distinctArgs();
  const ForwardArgs &f = a.forward;
  for (int64_t d : {64, 72, 128}) {
    BackwardWorkspace w =
        BackwardWorkspace::of(f.batch, f.queryHeads, f.queryLen, d);
    int64_t base = static_cast<int64_t>(a.workspace);
    EXPECT_EQ(valueOf(a, d, "delta"), base + w.deltaOffset);
    EXPECT_EQ(valueOf(a, d, "dq_acc"), base + w.dqAccOffset);
    EXPECT_EQ(valueOf(a, d, "dq_semaphore"), base + w.semaphoreOffset);
    EXPECT_EQ(valueOf(a, d, "delta_stride_b"), f.queryHeads * f.queryLen);
    EXPECT_EQ(valueOf(a, d, "delta_stride_h"), f.queryLen);
    int64_t bandRows = (f.queryLen + 7) / 8 * 8;
    EXPECT_EQ(valueOf(a, d, "dq_acc_stride_b"), f.queryHeads * bandRows * d);
    EXPECT_EQ(valueOf(a, d, "dq_acc_stride_h"), bandRows * d);
    EXPECT_EQ(valueOf(a, d, "dq_acc_stride_s"), d);
  }
}

/// The flag binds as 0 or 1.
TEST(BackwardAbi, DeterministicBindsAsZeroOrOne) {
  BackwardArgs a = distinctArgs();
  EXPECT_EQ(valueOf(a, 64, "deterministic"), 0);
  a.deterministic = true;
  EXPECT_EQ(valueOf(a, 64, "deterministic"), 1);
}

/// Every part 256-byte aligned, apart, and inside the total.
TEST(BackwardWorkspaceTest, OffsetsAlignedAndLargeEnough) {
  for (auto [b, h, m, d] :
       std::vector<std::array<int64_t, 4>>{{1, 1, 1, 64},
                                           {2, 6, 113, 72},
                                           {3, 5, 1, 8},
                                           {1, 1, 65, 256},
                                           {4, 32, 4096, 128},
                                           {1, 1, int64_t(1) << 33, 64}}) {
    BackwardWorkspace w = BackwardWorkspace::of(b, h, m, d);
    int64_t rows = b * h * m, accumulatorRows = b * h * ((m + 7) / 8 * 8);
    EXPECT_EQ(w.deltaOffset % 256, 0);
    EXPECT_EQ(w.dqAccOffset % 256, 0);
    EXPECT_EQ(w.bytes % 256, 0);
    EXPECT_GE(w.deltaOffset, 0);
    // delta ends before dq_acc starts, and dq_acc ends inside the total.
    EXPECT_LE(w.deltaOffset + rows * 4, w.dqAccOffset);
    EXPECT_LE(w.dqAccOffset + accumulatorRows * d * 4, w.bytes);
    // The counters: one i32 per 16 query rows (the smallest block_m) of
    // each (batch, head), after dq_acc, and ending the workspace (up to
    // the alignment).
    int64_t counters = b * h * ((m + 15) / 16);
    EXPECT_EQ(w.semaphoreOffset % 256, 0);
    EXPECT_LE(w.dqAccOffset + accumulatorRows * d * 4, w.semaphoreOffset);
    EXPECT_LE(w.semaphoreOffset + counters * 4, w.bytes);
    EXPECT_GT(w.semaphoreOffset + counters * 4 + 256, w.bytes);
    // The range the runtime zeroes is dq_acc and the counters, exactly:
    // from dq_acc's start to the end, in whole words (cuMemsetD32).
    EXPECT_EQ(w.zeroOffset, w.dqAccOffset);
    EXPECT_EQ(w.zeroOffset + w.zeroBytes, w.bytes);
    EXPECT_EQ(w.zeroBytes % 4, 0);
  }
  // M = 17, D = 64: delta's 68 bytes take 256, dq_acc's 24 rows (three
  // 8-row bands) 6144 exactly, and the two counters (a partial block of
  // rows has one) 256.
  BackwardWorkspace w = BackwardWorkspace::of(1, 1, 17, 64);
  EXPECT_EQ(w.dqAccOffset, 256);
  EXPECT_EQ(w.semaphoreOffset, 256 + 6144);
  EXPECT_EQ(w.bytes, 256 + 6144 + 256);
  EXPECT_EQ(w.zeroBytes, 6144 + 256);
}

//===----------------------------------------------------------------------===//
// The manifest
//===----------------------------------------------------------------------===//

/// The "params" of `step` as fa-compile writes them from the table.
std::string paramsJson(BackwardStep step, bool alibi) {
  std::string text;
  for (const Param &p : backwardKernelParams(step, alibi)) {
    if (!text.empty())
      text += ",\n";
    text += "        {\"name\": \"" + std::string(p.name) + "\", \"type\": \"" +
            paramTypeName(p.type, "bf16") + "\"}";
  }
  return text;
}

/// A backward manifest as the compiler writes it.
std::string backwardManifest(bool alibi = false) {
  std::string steps;
  for (BackwardStep step : kSteps) {
    std::string name = backwardStepName(step);
    bool main = step == BackwardStep::Main;
    if (!steps.empty())
      steps += ",\n";
    steps += "    \"" + name + "\": {\"entry\": \"fa_bwd_k_" + name +
             "\", \"block\": [128, 1, 1], \"grid\": [\"x\", \"y\", \"z\"], "
             "\"dynamic_shared_memory\": " +
             (main ? "57344" : "0") + ",\n      \"params\": [\n" +
             paramsJson(step, alibi) + "\n      ]}";
  }
  return std::string(R"({
  "kernel": "fa_bwd_k",
  "kind": "backward",
  "ptx": "bwd.ptx",
  "target": "sm_80",
  "spec": "d=64,dv=64,dtype=bf16,mask=causal,)") +
         (alibi ? "alibi=head," : "") +
         R"(scale=0.125,block_m=64,block_n=64",
  "dtype": "bf16", "head_dim": 64, "value_dim": 64, "mask": "causal",
  "scale": 0.125,
  "tile": {"block_m": 64, "block_n": 64, "stages": 2, "warps": 4},
  "negative_control": "none",
  "steps": {
)" + steps +
         R"(
  },
  "memref_abi": "5 words",
  "generator": "test"
})";
}

/// Writes `text` as a manifest beside a dummy PTX file; its path.
std::string writeManifest(const std::string &text,
                          const std::string &name = "bwd.json") {
  // One directory per test: ctest runs the tests in parallel.
  std::string dir = testing::TempDir() + "/" +
                    testing::UnitTest::GetInstance()->current_test_info()->name();
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/bwd.ptx") << "// the PTX it names\n";
  std::ofstream(dir + "/" + name) << text;
  return dir + "/" + name;
}

/// Replaces the first `from` in `text` (which must hold it) by `to`.
std::string replaced(std::string text, const std::string &from,
                     const std::string &to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos)
    text.replace(at, from.size(), to);
  return text;
}

TEST(BackwardManifestTest, ReadsWhatTheCompilerWrites) {
  BackwardManifest m;
  std::string error;
  ASSERT_TRUE(
      BackwardManifest::read(writeManifest(backwardManifest()), m, error))
      << error;
  EXPECT_EQ(m.kernelName, "fa_bwd_k");
  EXPECT_EQ(m.target, "sm_80");
  EXPECT_EQ(m.spec.headDim, 64);
  EXPECT_EQ(m.spec.mask.kind, MaskKind::Causal);
  EXPECT_EQ(m.negativeControl, "none");
  EXPECT_FALSE(m.takesAlibiSlopes());
  EXPECT_NE(m.ptxFile.find("bwd.ptx"), std::string::npos);
  for (BackwardStep step : kSteps) {
    const BackwardManifest::Step &s = m.step(step);
    EXPECT_EQ(s.entry, std::string("fa_bwd_k_") + backwardStepName(step));
    EXPECT_EQ(s.blockThreads, 128);
    EXPECT_EQ(s.dynamicSharedMemory, step == BackwardStep::Main ? 57344 : 0);
    std::vector<Param> table = backwardKernelParams(step, false);
    ASSERT_EQ(s.params.size(), table.size());
    for (size_t i = 0; i < table.size(); ++i) {
      EXPECT_EQ(s.params[i].first, table[i].name);
      EXPECT_EQ(s.params[i].second, paramTypeName(table[i].type, "bf16"));
    }
  }
  // The grids come from the step: M=300 rows of 128, N=130 keys of 64.
  ProblemSize size{2, 8, 2, 300, 130};
  EXPECT_EQ(m.grid(BackwardStep::Preprocess, size),
            (std::array<int64_t, 3>{3, 8, 2}));
  EXPECT_EQ(m.grid(BackwardStep::Main, size),
            (std::array<int64_t, 3>{3, 2, 2}));
  EXPECT_EQ(m.grid(BackwardStep::Postprocess, size),
            (std::array<int64_t, 3>{3, 8, 2}));
}

TEST(BackwardManifestTest, AlibiAndNegativeControlAreRead) {
  BackwardManifest m;
  std::string error;
  ASSERT_TRUE(
      BackwardManifest::read(writeManifest(backwardManifest(true)), m, error))
      << error;
  EXPECT_TRUE(m.takesAlibiSlopes());
  EXPECT_EQ(m.spec.alibi, AlibiKind::Head);
  std::string control =
      replaced(backwardManifest(), "\"negative_control\": \"none\"",
               "\"negative_control\": \"no-row-dot\"");
  ASSERT_TRUE(BackwardManifest::read(writeManifest(control), m, error))
      << error;
  EXPECT_EQ(m.negativeControl, "no-row-dot");
}

/// "deterministic_mode": absent is false; a boolean is read.
TEST(BackwardManifestTest, DeterministicModeIsRead) {
  BackwardManifest m;
  std::string error;
  ASSERT_TRUE(
      BackwardManifest::read(writeManifest(backwardManifest()), m, error))
      << error;
  EXPECT_FALSE(m.deterministicMode);
  for (bool mode : {true, false}) {
    std::string text =
        replaced(backwardManifest(), "\"negative_control\": \"none\",",
                 std::string("\"negative_control\": \"none\",\n  "
                             "\"deterministic_mode\": ") +
                     (mode ? "true" : "false") + ",");
    BackwardManifest read;
    ASSERT_TRUE(BackwardManifest::read(writeManifest(text), read, error))
        << error;
    EXPECT_EQ(read.deterministicMode, mode);
  }
}

/// Reads `text` as a backward manifest, expecting a refusal of one line
/// holding `why`.
void expectRefused(const std::string &text, const std::string &why) {
  BackwardManifest m;
  std::string error;
  EXPECT_FALSE(BackwardManifest::read(writeManifest(text), m, error)) << why;
  EXPECT_NE(error.find(why), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
}

TEST(BackwardManifestTest, BrokenManifestsAreRefusedInOneLine) {
  std::string good = backwardManifest();
  // Exactly the three steps.
  expectRefused(replaced(good, "\"postprocess\": {", "\"post\": {"),
                "unknown step \"post\"");
  std::string noPost = good.substr(0, good.find(",\n    \"postprocess\"")) +
                       "\n  },\n  \"generator\": \"test\"\n}";
  expectRefused(noPost, "missing step \"postprocess\"");
  expectRefused(replaced(good, "\"steps\": {", "\"stages\": {"),
                "missing object \"steps\"");
  // Parameters the ABI table does not bind, or not with its type.
  expectRefused(
      replaced(good, "{\"name\": \"dq_acc\"", "{\"name\": \"dq_tmp\""),
      "unknown kernel parameter \"dq_tmp\"");
  expectRefused(replaced(good,
                         "{\"name\": \"delta\", \"type\": \"memref<?xf32>\"",
                         "{\"name\": \"delta\", \"type\": \"memref<?xbf16>\""),
                "step \"preprocess\": kernel parameter \"delta\" has type "
                "\"memref<?xbf16>\" (the ABI table's is \"memref<?xf32>\")");
  expectRefused(replaced(good, "{\"name\": \"q_len\", \"type\": \"i64\"",
                         "{\"name\": \"q_len\", \"type\": \"tensormap\""),
                "kernel parameter \"q_len\" has type \"tensormap\"");
  expectRefused(replaced(good, "{\"name\": \"batch\", \"type\": \"i64\"",
                         "{\"name\": \"q_len\", \"type\": \"i64\""),
                "kernel parameter \"q_len\" is listed twice");
  // Numbers, entries and the rest.
  expectRefused(replaced(good, "\"dynamic_shared_memory\": 57344",
                         "\"dynamic_shared_memory\": -1"),
                "step \"main\": \"dynamic_shared_memory\" must be an integer");
  expectRefused(
      replaced(good, "\"block\": [128, 1, 1]", "\"block\": [0, 1, 1]"),
      "\"block\" must be an integer in [1, 1024]");
  expectRefused(replaced(good, "\"entry\": \"fa_bwd_k_main\"",
                         "\"entry\": \"fa-bwd main\""),
                "\"entry\" must be a PTX identifier");
  expectRefused(replaced(good, "\"negative_control\": \"none\"",
                         "\"negative_control\": \"no-rescale\""),
                "\"negative_control\" must be");
  expectRefused(replaced(good, "\"block_n\": 64, \"stages\"",
                         "\"block_n\": 128, \"stages\""),
                "\"tile\"'s block_n (128) is not the spec's (64)");
  for (const char *value : {"1", "\"true\"", "null"})
    expectRefused(replaced(good, "\"negative_control\": \"none\",",
                           std::string("\"negative_control\": \"none\", "
                                       "\"deterministic_mode\": ") +
                               value + ","),
                  "\"deterministic_mode\" must be true or false");
  // The counters are an i32 buffer: as f32 (same words, wrong type) or as
  // an i64 buffer (no type a launch passes) they are refused.
  expectRefused(replaced(good,
                         "{\"name\": \"dq_semaphore\", \"type\": "
                         "\"memref<?xi32>\"",
                         "{\"name\": \"dq_semaphore\", \"type\": "
                         "\"memref<?xf32>\""),
                "step \"main\": kernel parameter \"dq_semaphore\" has type "
                "\"memref<?xf32>\" (the ABI table's is \"memref<?xi32>\")");
  expectRefused(replaced(good,
                         "{\"name\": \"dq_semaphore\", \"type\": "
                         "\"memref<?xi32>\"",
                         "{\"name\": \"dq_semaphore\", \"type\": "
                         "\"memref<?xi64>\""),
                "kernel parameter \"dq_semaphore\" has type "
                "\"memref<?xi64>\" (i64 or a memref of f32, i32");
  // A backward outside its range would return gradients nobody can trust.
  expectRefused(replaced(replaced(good, "scale=0.125,", "scale=1000,"),
                         "\"scale\": 0.125", "\"scale\": 1000"),
                "scale 1000 is out of range for the backward");
  expectRefused(replaced(good, "\"ptx\": \"bwd.ptx\"", "\"ptx\": \"none.ptx\""),
                "none.ptx cannot be read");
  expectRefused(
      replaced(good, "\"kind\": \"backward\"", "\"kind\": \"sideways\""),
      "unknown \"kind\" \"sideways\"");
}

/// Each kind of manifest names the loader that reads it.
TEST(BackwardManifestTest, KindsAreNotMixedUp) {
  BackwardManifest b;
  std::string error;
  std::string forwardPath =
      FA_SOURCE_DIR "/kernels_generated/fa_fwd_sm80_bf16_d64_none.json";
  EXPECT_FALSE(BackwardManifest::read(forwardPath, b, error));
  EXPECT_EQ(error, forwardPath + " is a forward manifest; load it as the "
                                 "forward kernel");
  // A forward manifest without "kind" (older ones) is still a forward one.
  std::string noKind =
      replaced(backwardManifest(), "\"kind\": \"backward\",", "");
  expectRefused(noKind, "is a forward manifest");

  Manifest f;
  std::string backwardPath = writeManifest(backwardManifest(), "kind.json");
  EXPECT_FALSE(Manifest::read(backwardPath, f, error));
  EXPECT_EQ(error, backwardPath + " is a backward manifest; load it as the "
                                  "backward kernel");
}

/// CUDA's grid limits for each step: x <= 2^31 - 1, y and z <= 65535; the
/// main step's x counts KV blocks and its y KV heads.
TEST(BackwardManifestTest, LaunchLimits) {
  BackwardManifest m;
  m.spec.blockN = 64;
  std::string error;
  int64_t maxRows = kBackwardRowsPerBlock * int64_t(INT32_MAX);
  EXPECT_TRUE(m.checkLaunch(
      {65535, 65535, 65535, maxRows, 64 * int64_t(INT32_MAX)}, error))
      << error;
  EXPECT_FALSE(m.checkLaunch({65536, 1, 1, 1, 1}, error));
  EXPECT_NE(error.find("grid z"), std::string::npos) << error;
  EXPECT_FALSE(m.checkLaunch({1, 65536, 1, 1, 1}, error));
  EXPECT_NE(error.find("hq=65536 is more than a launch's 65535 (grid y) in "
                       "the backward's preprocess step"),
            std::string::npos)
      << error;
  EXPECT_FALSE(m.checkLaunch({1, 1, 1, maxRows + 1, 1}, error));
  EXPECT_NE(error.find("query rows"), std::string::npos) << error;
  EXPECT_FALSE(m.checkLaunch({1, 1, 1, 1, 64 * int64_t(INT32_MAX) + 1}, error));
  EXPECT_NE(error.find("main step"), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
}

/// Without a GPU, loading fails with a message (and the no-GPU flag once
/// the manifest reads); nothing aborts, and null arguments are refused.
TEST(BackwardCApi, ReportsInsteadOfAborting) {
  EXPECT_EQ(fa_backward_kernel_load(nullptr), nullptr);
  EXPECT_EQ(fa_backward_kernel_load("/nonexistent.json"), nullptr);
  EXPECT_NE(std::string(fa_last_error()).find("cannot read"),
            std::string::npos);
  EXPECT_EQ(fa_backward_kernel_load(
                FA_SOURCE_DIR
                "/kernels_generated/fa_fwd_sm80_bf16_d64_none.json"),
            nullptr);
  EXPECT_NE(std::string(fa_last_error()).find("is a forward manifest"),
            std::string::npos)
      << fa_last_error();
  fa_backward_kernel *kernel =
      fa_backward_kernel_load(writeManifest(backwardManifest()).c_str());
  if (kernel) { // a GPU that took the dummy PTX: not expected
    fa_backward_kernel_free(kernel);
  } else {
    EXPECT_NE(std::string(fa_last_error()), "");
  }
  EXPECT_EQ(fa_kernel_backward(nullptr, nullptr, nullptr), -1);
  // The flag is 0 or 1; anything else is refused in one line.
  fa_backward_args args = {};
  args.deterministic = 2;
  EXPECT_EQ(fa_kernel_backward(nullptr, &args, nullptr), -1);
  EXPECT_EQ(std::string(fa_last_error()),
            "fa_kernel_backward: deterministic must be 0 or 1, not 2");
  args.deterministic = 1;
  EXPECT_EQ(fa_kernel_backward(nullptr, &args, nullptr), -1);
  EXPECT_EQ(std::string(fa_last_error()),
            "fa_kernel_backward: null kernel or args");
  EXPECT_EQ(fa_backward_workspace_size(nullptr, 1, 1, 1), -1);
  fa_backward_kernel_free(nullptr);
}

} // namespace
