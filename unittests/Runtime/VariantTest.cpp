//===- VariantTest.cpp - variant programs and capture parameters ----------===//
//
// Part of fa-mlir.
//
// A variant kernel's manifest states its captures and its regions as
// programs (fa/runtime/Variant.h); the runtime evaluates those in float64
// and binds the captures to the kernel's trailing parameters
// (KernelAbi.h's captureParams). These tests pin both contracts.
//
//===----------------------------------------------------------------------===//

#include "fa/runtime/KernelAbi.h"
#include "fa/runtime/Numerics.h"
#include "fa/runtime/Variant.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace fa;
using namespace fa::abi;

namespace {

/// score_mod: s + t[h, i - j + 2] · 2; mask_mod: docs[i] == docs[j].
Variant biasAndDocuments() {
  Variant v;
  v.captures = {{"f32", {2, 5}}, {"i32", {CaptureType::kDynamicExtent}}};
  v.scoreMod.arguments = {"f32", "index", "index", "index", "index", "tensor",
                          "tensor"};
  v.scoreMod.ops = {{"arith.constant", {}, "index", "2", ""},      // 7
                    {"arith.subi", {3, 4}, "index", "", ""},       // 8
                    {"arith.addi", {8, 7}, "index", "", ""},       // 9
                    {"tensor.extract", {5, 2, 9}, "f32", "", ""},  // 10
                    {"arith.constant", {}, "f32", "2", ""},        // 11
                    {"arith.mulf", {10, 11}, "f32", "", ""},       // 12
                    {"arith.addf", {0, 12}, "f32", "", ""}};       // 13
  v.scoreMod.result = 13;
  v.maskMod.arguments = {"index", "index", "index", "index", "tensor", "tensor"};
  v.maskMod.ops = {{"tensor.extract", {5, 2}, "i32", "", ""},      // 6
                   {"tensor.extract", {5, 3}, "i32", "", ""},      // 7
                   {"arith.cmpi", {6, 7}, "i1", "", "eq"}};        // 8
  v.maskMod.result = 8;
  return v;
}

TEST(Variant, JsonRoundTripAndEvaluation) {
  Variant written = biasAndDocuments();
  json::Value value;
  std::string error;
  ASSERT_TRUE(json::parse(variantJson(written), value, error)) << error;
  Variant read;
  ASSERT_TRUE(parseVariant(value, read, error)) << error;
  EXPECT_EQ(variantJson(read), variantJson(written));

  std::vector<CaptureValue> captures = {
      {{2, 5}, {0, 1, 2, 3, 4, 10, 11, 12, 13, 14}}, {{4}, {7, 7, 9, 7}}};
  auto score = scoreModOf(read.scoreMod, captures);
  // h = 1, i - j + 2 = 3: t[1, 3] = 13.
  EXPECT_EQ(score(0.5, 0, 1, 2, 1), 0.5 + 2 * 13);
  // Indices clamp to the extent: i - j + 2 = -3 reads t[1, 0].
  EXPECT_EQ(score(0.0, 0, 1, 0, 5), 2 * 10);
  auto mask = maskModOf(read.maskMod, captures);
  EXPECT_TRUE(mask(0, 0, 0, 3));
  EXPECT_FALSE(mask(0, 0, 0, 2));
  EXPECT_TRUE(mask(0, 0, 9, 0)); // i clamps to 3: docs[3] == docs[0]
}

TEST(Variant, BadProgramsAreRefused) {
  std::string text = variantJson(biasAndDocuments());
  auto refused = [&](const std::string &from, const std::string &to,
                     const std::string &reason) {
    std::string broken = text;
    size_t at = broken.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    broken.replace(at, from.size(), to);
    json::Value value;
    std::string error;
    ASSERT_TRUE(json::parse(broken, value, error)) << error;
    Variant v;
    EXPECT_FALSE(parseVariant(value, v, error)) << broken;
    EXPECT_NE(error.find(reason), std::string::npos) << error;
  };
  refused("\"arith.mulf\"", "\"math.lgamma\"", "does not evaluate 'math.lgamma'");
  refused("[10, 11]", "[10, 99]", "names a value not defined before it");
  refused("\"shape\": [2, 5]", "\"shape\": [2, 0]", "positive or -1");
  refused("\"result\": 13", "\"result\": 8", "yields index, not f32");
  refused("[5, 2, 9]", "[5, 2]", "indices do not match the capture's rank");
  refused("\"type\": \"i32\"", "\"type\": \"i3\"", "element \"type\"");
}

TEST(Variant, DrawnCapturesAreStoredAsTheirType) {
  std::vector<std::vector<uint8_t>> bytes;
  std::vector<CaptureValue> values =
      drawCaptures({{"bf16", {3}}, {"i1", {4}}, {"index", {}}}, 7, bytes);
  ASSERT_EQ(values.size(), 3u);
  EXPECT_EQ(bytes[0].size(), 6u);
  EXPECT_EQ(bytes[1].size(), 4u);
  EXPECT_EQ(bytes[2].size(), 8u);
  for (double x : values[0].elements)
    EXPECT_EQ(x, fromBF16Bits(toBF16Bits(static_cast<float>(x))));
  for (double x : values[1].elements)
    EXPECT_TRUE(x == 0 || x == 1);
  EXPECT_TRUE(values[2].shape.empty());
}

TEST(CaptureParams, NamesTypesAndRows) {
  std::vector<Param> params =
      captureParams({{"f32", {2, CaptureType::kDynamicExtent}},
                     {"f32", {}},
                     {"index", {}},
                     {"index", {8}}});
  std::vector<std::string> names, types;
  for (const Param &p : params) {
    names.push_back(p.name);
    types.push_back(paramTypeName(p, "bf16"));
  }
  EXPECT_EQ(names, (std::vector<std::string>{"capture0", "capture0_extent1",
                                             "capture1", "capture2",
                                             "capture3"}));
  EXPECT_EQ(types, (std::vector<std::string>{"memref<?xf32>", "i64", "f32",
                                             "i64", "memref<?xi64>"}));
  int capture, dimension;
  EXPECT_TRUE(captureParamOf("capture12_extent3", capture, dimension));
  EXPECT_EQ(capture, 12);
  EXPECT_EQ(dimension, 3);
  for (const char *bad : {"capture", "capturex", "capture01", "capture1_extent",
                          "capture1_extentx", "q"})
    EXPECT_FALSE(captureParamOf(bad, capture, dimension)) << bad;

  ForwardArgs args;
  args.captures = {{0x1000, {2, 77}, 0, 0.0}, {0, {}, f32Bits(0.5), 0.5}};
  EXPECT_EQ(forwardParamValueAt(forwardParamRow("capture0"), args), 0x1000);
  EXPECT_EQ(forwardParamValueAt(forwardParamRow("capture0_extent1"), args), 77);
  float half = 0.5f;
  uint32_t bits;
  std::memcpy(&bits, &half, 4);
  EXPECT_EQ(forwardParamValueAt(forwardParamRow("capture1"), args), bits);
}

} // namespace
