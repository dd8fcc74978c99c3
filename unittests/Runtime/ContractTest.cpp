//===- ContractTest.cpp - the C API's spec language and call checks -------===//
//
// Part of fa-mlir.
//
// fa_spec.h: the enumerations the compiler, the runtime and the spec share;
// fa_spec_parse / fa_spec_set / fa_spec_format round-tripping good specs
// and refusing bad ones with one line; fa_check_forward and
// fa_check_backward refusing each bad call with its message. The Python
// package and its C++ launch call exactly these (python/fa_mlir).
//
//===----------------------------------------------------------------------===//

#include "fa/runtime/Mask.h"
#include "fa/runtime/Spec.h"
#include "fa/runtime/fa_runtime.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

using namespace fa;

namespace {

std::string lastError() { return fa_last_error(); }

/// `spec`'s text through fa_spec_format (empty on refusal).
std::string format(const fa_spec &spec) {
  int64_t length = fa_spec_format(&spec, nullptr, 0);
  if (length < 0)
    return "";
  std::string text(static_cast<size_t>(length) + 1, '\0');
  EXPECT_EQ(fa_spec_format(&spec, text.data(), length + 1), length);
  text.resize(static_cast<size_t>(length));
  return text;
}

void expectSameSpec(const fa_spec &a, const fa_spec &b, const std::string &what) {
  EXPECT_EQ(a.head_dim, b.head_dim) << what;
  EXPECT_EQ(a.value_dim, b.value_dim) << what;
  EXPECT_EQ(a.dtype, b.dtype) << what;
  EXPECT_EQ(a.mask, b.mask) << what;
  EXPECT_EQ(a.window_left, b.window_left) << what;
  EXPECT_EQ(a.window_right, b.window_right) << what;
  EXPECT_EQ(a.scale, b.scale) << what;
  EXPECT_EQ(a.softcap, b.softcap) << what;
  EXPECT_EQ(a.alibi, b.alibi) << what;
  EXPECT_EQ(a.descale, b.descale) << what;
  EXPECT_EQ(a.block_m, b.block_m) << what;
  EXPECT_EQ(a.block_n, b.block_n) << what;
}

/// The mask kinds: one enumeration, the C API's values, the keywords of
/// spec text and #fa.mask.
TEST(Contract, OneMaskEnumeration) {
  static_assert(static_cast<int32_t>(MaskKind::None) == FA_MASK_NONE);
  static_assert(static_cast<int32_t>(MaskKind::Causal) == FA_MASK_CAUSAL);
  static_assert(static_cast<int32_t>(MaskKind::CausalTopLeft) ==
                FA_MASK_CAUSAL_TOP_LEFT);
  static_assert(static_cast<int32_t>(MaskKind::Window) == FA_MASK_WINDOW);
  const char *keywords[] = {"none", "causal", "causal_top_left", "window"};
  int32_t value = 0;
  for (MaskKind kind : kFaMaskKinds) {
    EXPECT_EQ(static_cast<int32_t>(kind), value);
    EXPECT_STREQ(faMaskKindKeyword(kind), keywords[value]);
    EXPECT_EQ(faMaskKindOfKeyword(keywords[value]), kind);
    EXPECT_EQ(faMaskKindOfValue(value), kind);
    ++value;
  }
  EXPECT_EQ(faMaskKindOfKeyword("Causal"), std::nullopt);
  EXPECT_EQ(faMaskKindOfValue(4), std::nullopt);
  EXPECT_EQ(faMaskKindOfValue(-1), std::nullopt);
}

/// Good specs parse, format and parse back to the same struct and text.
TEST(Contract, SpecsRoundTrip) {
  for (const char *text :
       {"d=128", "d=64,dtype=f16,mask=causal",
        "d=128,dv=64,mask=causal_top_left,scale=0.1",
        "d=128,mask=window(256,0)", "d=64,mask=window:-1:16",
        "d=96,softcap=30.123456789,alibi=head",
        "d=64,alibi=batch_head,block_m=128",
        "d=128,dtype=f8e4m3fn,descale=head,block_m=128,block_n=176",
        "d=256,scale=-0.0625,block_n=32", "d=64,softcap=-0"}) {
    fa_spec spec;
    ASSERT_EQ(fa_spec_parse(text, &spec), 0) << text << ": " << lastError();
    EXPECT_NE(spec.value_dim, 0) << text; // resolved
    EXPECT_NE(spec.scale, 0.0) << text;   // resolved
    std::string formatted = format(spec);
    ASSERT_FALSE(formatted.empty()) << text << ": " << lastError();
    fa_spec back;
    ASSERT_EQ(fa_spec_parse(formatted.c_str(), &back), 0)
        << formatted << ": " << lastError();
    expectSameSpec(spec, back, formatted);
    EXPECT_EQ(format(back), formatted);
    // The C++ parser reads the same text the same way.
    AttentionSpec cxx;
    std::string error;
    ASSERT_TRUE(parseSpec(formatted, cxx, error)) << error;
    EXPECT_EQ(cxx.headDim, spec.head_dim);
    EXPECT_EQ(static_cast<int32_t>(cxx.mask.kind), spec.mask);
    EXPECT_EQ(cxx.mask.left, spec.window_left);
  }
  // Each key's value as the spec language has it.
  fa_spec spec;
  ASSERT_EQ(fa_spec_parse("d=64,dv=32,dtype=f16,mask=window(8,-1),"
                          "softcap=20,alibi=head,scale=0.25,block_m=128",
                          &spec),
            0)
      << lastError();
  EXPECT_EQ(spec.head_dim, 64);
  EXPECT_EQ(spec.value_dim, 32);
  EXPECT_EQ(spec.dtype, FA_DTYPE_F16);
  EXPECT_EQ(spec.mask, FA_MASK_WINDOW);
  EXPECT_EQ(spec.window_left, 8);
  EXPECT_EQ(spec.window_right, -1);
  EXPECT_EQ(spec.softcap, 20.0);
  EXPECT_EQ(spec.alibi, FA_ALIBI_HEAD);
  EXPECT_EQ(spec.scale, 0.25);
  EXPECT_EQ(spec.block_m, 128);
  EXPECT_EQ(spec.block_n, 0); // not stated: the compiler's tuned tile
  EXPECT_EQ(format(spec), "d=64,dv=32,dtype=f16,mask=window(8,-1),softcap=20,"
                          "alibi=head,scale=0.25,block_m=128");
  // The default scale keeps every bit of 1/sqrt(D).
  ASSERT_EQ(fa_spec_parse("d=128", &spec), 0);
  EXPECT_EQ(spec.scale, 1.0 / std::sqrt(128.0));
  EXPECT_EQ(format(spec), "d=128,dv=128,dtype=bf16,mask=none,"
                          "scale=0.08838834764831843");
}

/// Bad specs are refused with one line that says what is wrong.
TEST(Contract, BadSpecsAreRefused) {
  struct Case {
    const char *text, *message;
  };
  for (const Case &c : std::vector<Case>{
           {"mask=causal", "spec needs d=<head dimension>"},
           {"d=64,d=128", "spec key 'd' is given twice"},
           {"d=64,depth=3", "unknown spec key 'depth'"},
           {"d=64,causal", "spec field 'causal' is not key=value"},
           {"d=64,mask=diagonal", "bad value 'diagonal' for spec key 'mask'"},
           {"d=64,mask=window(1,2", "bad value 'window(1,2' for spec key"},
           {"d=64,dtype=f32", "bad value 'f32' for spec key 'dtype'"},
           {"d=64,alibi=row", "(expected none, head or batch_head)"},
           {"d=64,scale=1e30", "[1e-06, 1e+06]"},
           {"d=64,softcap=-1", "softcap -1 is out of range"},
           {"d=64,block_m=3", "bad value '3' for spec key 'block_m'"},
           {"d=0", "bad value '0' for spec key 'd'"},
           {"d=64,descale=head", "descale=head is for dtype=f8e4m3fn"},
           {"d=64,mask=window(2199023255553,0)", "window bounds"}}) {
    fa_spec spec;
    EXPECT_EQ(fa_spec_parse(c.text, &spec), -1) << c.text;
    std::string error = lastError();
    EXPECT_NE(error.find(c.message), std::string::npos)
        << c.text << ": " << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  }
  EXPECT_EQ(fa_spec_parse(nullptr, nullptr), -1);
  EXPECT_NE(lastError().find("null"), std::string::npos);
}

/// fa_spec_set reads each value as the spec language does, field by
/// field; a value is never pasted into spec text.
TEST(Contract, SpecFieldByField) {
  fa_spec spec;
  fa_spec_init(&spec);
  EXPECT_EQ(spec.dtype, FA_DTYPE_BF16);
  EXPECT_EQ(spec.mask, FA_MASK_NONE);
  EXPECT_EQ(spec.window_left, -1);
  EXPECT_EQ(spec.block_m, 0);
  EXPECT_EQ(fa_spec_check(&spec), -1); // no D yet
  EXPECT_NE(lastError().find("head dimensions must be >= 1"), std::string::npos)
      << lastError();
  for (auto [key, value] : {std::pair<const char *, const char *>{"d", "128"},
                            {"dtype", "f16"},
                            {"mask", "window(64,0)"},
                            {"softcap", "30"},
                            {"alibi", "head"}})
    ASSERT_EQ(fa_spec_set(&spec, key, value), 0) << key << ": " << lastError();
  EXPECT_EQ(spec.value_dim, 0); // not stated: D
  EXPECT_EQ(spec.scale, 0.0);   // not stated: 1/sqrt(D)
  EXPECT_EQ(fa_spec_check(&spec), 0) << lastError();
  fa_spec parsed;
  ASSERT_EQ(fa_spec_parse("d=128,dtype=f16,mask=window(64,0),softcap=30,"
                          "alibi=head",
                          &parsed),
            0);
  EXPECT_EQ(format(spec), format(parsed));
  // A value that holds another key is a bad value, not a second key.
  EXPECT_EQ(fa_spec_set(&spec, "mask", "causal,d=64"), -1);
  EXPECT_NE(lastError().find("bad value 'causal,d=64' for spec key 'mask'"),
            std::string::npos)
      << lastError();
  EXPECT_EQ(spec.mask, FA_MASK_WINDOW); // unchanged
  EXPECT_EQ(fa_spec_set(&spec, "depth", "3"), -1);
  EXPECT_NE(lastError().find("unknown spec key 'depth'"), std::string::npos);
  ASSERT_EQ(fa_spec_set(&spec, "block_n", "32"), 0);
  EXPECT_EQ(spec.block_n, 32);
  EXPECT_EQ(spec.block_m, 0);
  EXPECT_NE(format(spec).find(",block_n=32"), std::string::npos);
  EXPECT_EQ(format(spec).find("block_m"), std::string::npos);
}

/// A backward's spec: the forward's ranges, then its own (16-bit inputs,
/// |scale| <= 100, where P recomputed from the f32 LSE stays accurate).
TEST(Contract, BackwardSpecRange) {
  fa_spec spec;
  ASSERT_EQ(fa_spec_parse("d=64,scale=100", &spec), 0);
  EXPECT_EQ(fa_spec_check_backward(&spec), 0) << lastError();
  ASSERT_EQ(fa_spec_parse("d=64,scale=-100", &spec), 0);
  EXPECT_EQ(fa_spec_check_backward(&spec), 0) << lastError();
  ASSERT_EQ(fa_spec_parse("d=64", &spec), 0); // 1/sqrt(D)
  EXPECT_EQ(fa_spec_check_backward(&spec), 0) << lastError();
  for (const char *text : {"d=64,scale=100.5", "d=64,scale=1e6", "d=8,scale=-1e4"}) {
    ASSERT_EQ(fa_spec_parse(text, &spec), 0) << text; // a forward's spec
    EXPECT_EQ(fa_spec_check(&spec), 0) << text;
    EXPECT_EQ(fa_spec_check_backward(&spec), -1) << text;
    EXPECT_NE(lastError().find("is out of range for the backward (|scale| <= "
                               "100: P is recomputed from the f32 LSE"),
              std::string::npos)
        << lastError();
  }
  ASSERT_EQ(fa_spec_parse("d=64,dtype=f8e4m3fn", &spec), 0);
  EXPECT_EQ(fa_spec_check_backward(&spec), -1);
  EXPECT_NE(lastError().find("dtype f8e4m3fn has no backward"), std::string::npos)
      << lastError();
  EXPECT_EQ(fa_spec_check_backward(nullptr), -1);
  EXPECT_NE(lastError().find("fa_spec_check_backward: null spec"),
            std::string::npos)
      << lastError();
}

/// fa_spec_format checks the struct it is given: enumerators, window
/// bounds only on a window, the ranges; and it writes only what fits.
TEST(Contract, FormatChecksTheStruct) {
  fa_spec spec;
  ASSERT_EQ(fa_spec_parse("d=64,mask=causal", &spec), 0);
  int64_t length = fa_spec_format(&spec, nullptr, 0);
  ASSERT_GT(length, 10);
  char small[8] = "xxxxxxx";
  EXPECT_EQ(fa_spec_format(&spec, small, sizeof(small)), length);
  EXPECT_STREQ(small, "xxxxxxx"); // too small: nothing written
  struct Case {
    void (*breakIt)(fa_spec &);
    const char *message;
  };
  for (const Case &c : std::vector<Case>{
           {[](fa_spec &s) { s.mask = 7; }, "fa_spec.mask is 7"},
           {[](fa_spec &s) { s.dtype = FA_DTYPE_F32; }, "fa_spec.dtype is 3"},
           {[](fa_spec &s) { s.alibi = -1; }, "fa_spec.alibi is -1"},
           {[](fa_spec &s) { s.window_left = 5; },
            "only a window mask takes bounds, but causal has (5, -1)"},
           {[](fa_spec &s) { s.scale = 1e9; }, "scale 1000000000 is out of range"},
           {[](fa_spec &s) { s.block_m = 3; }, "block_m must be"},
           {[](fa_spec &s) { s.head_dim = -4; }, "head dimensions must be >= 1"}}) {
    fa_spec bad = spec;
    c.breakIt(bad);
    EXPECT_EQ(fa_spec_format(&bad, nullptr, 0), -1) << c.message;
    EXPECT_NE(lastError().find(c.message), std::string::npos)
        << c.message << " vs " << lastError();
    EXPECT_EQ(fa_spec_check(&bad), -1);
  }
}

/// Tensors for the checks: shapes owned here.
struct Tensor {
  std::vector<int64_t> shape;
  int32_t dtype = FA_DTYPE_BF16;
  int32_t device = 0;
  const char *deviceName = nullptr;
  fa_tensor_desc desc() const {
    return {shape.data(), static_cast<int64_t>(shape.size()), dtype, device,
            nullptr, deviceName};
  }
};

struct Call {
  // [B, S, H, D]: B=2, M=100, N=150, Hq=8, Hkv=2, D=64, Dv=32.
  Tensor q{{2, 100, 8, 64}}, k{{2, 150, 2, 64}}, v{{2, 150, 2, 32}};
  Tensor alibi{{8}, FA_DTYPE_F32};
  bool withAlibi = false;
  Tensor out{{2, 100, 8, 32}}, lse{{2, 8, 100}, FA_DTYPE_F32},
      dOut{{2, 100, 8, 32}};

  int forward(int32_t layout = FA_LAYOUT_BSHD) const {
    fa_tensor_desc dq = q.desc(), dk = k.desc(), dv = v.desc(),
                   da = alibi.desc();
    return fa_check_forward(layout, &dq, &dk, &dv, withAlibi ? &da : nullptr);
  }
  int backward() const {
    fa_tensor_desc dq = q.desc(), dk = k.desc(), dv = v.desc(),
                   da = alibi.desc(), o = out.desc(), l = lse.desc(),
                   d = dOut.desc();
    return fa_check_backward(FA_LAYOUT_BSHD, &dq, &dk, &dv,
                             withAlibi ? &da : nullptr, &o, &l, &d);
  }
};

/// Each forward check refuses its bad case with its one line.
TEST(Contract, ForwardChecks) {
  Call good;
  EXPECT_EQ(good.forward(), 0) << lastError();
  good.withAlibi = true;
  EXPECT_EQ(good.forward(), 0) << lastError();
  good.alibi.shape = {2, 8};
  EXPECT_EQ(good.forward(), 0) << lastError();
  // SDPA's layout: [B, H, S, D].
  Call bhsd;
  bhsd.q.shape = {2, 8, 100, 64};
  bhsd.k.shape = {2, 2, 150, 64};
  bhsd.v.shape = {2, 2, 150, 32};
  EXPECT_EQ(bhsd.forward(FA_LAYOUT_BHSD), 0) << lastError();
  // Read as [B, S, H, D], the same tensors have 100 query heads.
  EXPECT_EQ(bhsd.forward(FA_LAYOUT_BSHD), -1);
  EXPECT_EQ(lastError(),
            "query heads (100) must be a multiple of key/value heads (150)");

  struct Case {
    void (*breakIt)(Call &);
    const char *message;
  };
  for (const Case &c : std::vector<Case>{
           {[](Call &c) { c.q.shape = {100, 8, 64}; },
            "q must be [batch, seqlen, heads, head_dim], got [100, 8, 64]"},
           {[](Call &c) {
              c.k.device = -1;
              c.k.deviceName = "cpu";
            },
            "k is on cpu; fa-mlir runs on CUDA devices"},
           {[](Call &c) { c.v.device = -1; },
            "v is on a non-CUDA device; fa-mlir runs on CUDA devices"},
           {[](Call &c) { c.v.device = 1; }, "v is on cuda:1, q on cuda:0"},
           {[](Call &c) { c.q.device = c.k.device = c.v.device = 1; },
            "tensors on cuda:1: the runtime runs on cuda:0 only"},
           {[](Call &c) { c.k.dtype = FA_DTYPE_F16; },
            "q, k, v must all be bfloat16 or float16, got bfloat16, float16, "
            "bfloat16"},
           {[](Call &c) { c.q.dtype = c.k.dtype = c.v.dtype = FA_DTYPE_F32; },
            "q, k, v must all be bfloat16 or float16, got float32, float32, "
            "float32"},
           {[](Call &c) { c.k.shape[3] = 128; },
            "shapes do not agree: q [2, 100, 8, 64], k [2, 150, 2, 128], "
            "v [2, 150, 2, 32]"},
           {[](Call &c) { c.v.shape[1] = 149; }, "shapes do not agree"},
           {[](Call &c) { c.q.shape[2] = 3; },
            "query heads (3) must be a multiple of key/value heads (2)"},
           {[](Call &c) { c.q.shape[1] = 0; },
            "sizes must be >= 1 (got b=2 hq=8 hkv=2 m=0 n=150)"},
           {[](Call &c) { c.k.shape[2] = c.v.shape[2] = 0; },
            "sizes must be >= 1 (got b=2 hq=8 hkv=0 m=100 n=150)"},
           {[](Call &c) { c.v.shape[3] = 0; },
            "head dimensions must be >= 1 (got d=64 dv=0)"},
           {[](Call &c) { c.q.shape[1] = int64_t(1) << 41; },
            "m and n must be at most 1099511627776"},
           {[](Call &c) { c.q.shape[0] = c.k.shape[0] = c.v.shape[0] = int64_t(1) << 30; },
            "the problem is too large: Q, dQ"},
           {[](Call &c) {
              c.withAlibi = true;
              c.alibi.device = -1;
              c.alibi.deviceName = "cpu";
            },
            "alibi_slopes is on cpu, q on cuda:0"},
           {[](Call &c) {
              c.withAlibi = true;
              c.alibi.shape = {2};
            },
            "alibi_slopes must be float32 [8] or [2, 8], got float32 [2]"},
           {[](Call &c) {
              c.withAlibi = true;
              c.alibi.dtype = FA_DTYPE_BF16;
            },
            "alibi_slopes must be float32 [8] or [2, 8], got bfloat16 [8]"}}) {
    Call call;
    c.breakIt(call);
    EXPECT_EQ(call.forward(), -1) << c.message;
    std::string error = lastError();
    EXPECT_EQ(error.find(c.message), 0u) << c.message << " vs " << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  }
  // The caller's names of its dtypes, where it gives them.
  Call named;
  named.q.dtype = FA_DTYPE_OTHER;
  fa_tensor_desc q = named.q.desc(), k = named.k.desc(), v = named.v.desc();
  q.dtype_name = "torch.int64";
  k.dtype_name = "torch.bfloat16";
  EXPECT_EQ(fa_check_forward(FA_LAYOUT_BSHD, &q, &k, &v, nullptr), -1);
  EXPECT_EQ(lastError(), "q, k, v must all be bfloat16 or float16, got "
                         "torch.int64, torch.bfloat16, bfloat16");
  EXPECT_EQ(fa_check_forward(7, &q, &k, &v, nullptr), -1);
  EXPECT_NE(lastError().find("unknown layout 7"), std::string::npos);
  EXPECT_EQ(fa_check_forward(FA_LAYOUT_BSHD, nullptr, &k, &v, nullptr), -1);
}

/// The backward's: the forward's, then O, dO and LSE against them.
TEST(Contract, BackwardChecks) {
  Call good;
  EXPECT_EQ(good.backward(), 0) << lastError();
  struct Case {
    void (*breakIt)(Call &);
    const char *message;
  };
  for (const Case &c : std::vector<Case>{
           {[](Call &c) { c.k.shape[3] = 32; }, "shapes do not agree"},
           {[](Call &c) { c.out.shape[3] = 64; },
            "out must be bfloat16 [2, 100, 8, 32] (q's batch, seqlen and "
            "heads, v's head_dim), got bfloat16 [2, 100, 8, 64]"},
           {[](Call &c) { c.dOut.dtype = FA_DTYPE_F16; },
            "d_out must be bfloat16 [2, 100, 8, 32] (q's batch, seqlen and "
            "heads, v's head_dim), got float16 [2, 100, 8, 32]"},
           {[](Call &c) { c.dOut.shape = {2, 100, 8}; },
            "d_out must be [batch, seqlen, heads, head_dim], got [2, 100, 8]"},
           {[](Call &c) { c.out.device = 1; }, "out is on cuda:1, q on cuda:0"},
           {[](Call &c) { c.lse.dtype = FA_DTYPE_BF16; },
            "lse must be float32 [2, 8, 100] ([batch, heads, seqlen]), got "
            "bfloat16 [2, 8, 100]"},
           {[](Call &c) { c.lse.shape = {2, 100, 8}; },
            "lse must be float32 [2, 8, 100] ([batch, heads, seqlen]), got "
            "float32 [2, 100, 8]"},
           {[](Call &c) {
              c.lse.device = -1;
              c.lse.deviceName = "cpu";
            },
            "lse is on cpu, q on cuda:0"}}) {
    Call call;
    c.breakIt(call);
    EXPECT_EQ(call.backward(), -1) << c.message;
    std::string error = lastError();
    EXPECT_EQ(error.find(c.message), 0u) << c.message << " vs " << error;
  }
}

} // namespace
