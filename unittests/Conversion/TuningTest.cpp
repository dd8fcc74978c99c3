//===- TuningTest.cpp - schedule knobs: text, overrides, refusals ---------===//
//
// Part of fa-mlir.
//
// The knobs of every chip and kernel round-trip through their text (what
// the manifest writes and #fa.tile / --schedule read back), overrides land
// on the knob they name, and what a chip cannot build is refused with a
// line that names the knob (Tuning.h, resolveSchedule).
//
//===----------------------------------------------------------------------===//

#include "fa/Conversion/FAToGPU/AttentionKernel.h"
#include "fa/Conversion/FAToGPU/Tuning.h"

#include "fa/Dialect/FA/IR/FADialect.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::fa;

namespace {

class Tuning : public ::testing::Test {
protected:
  Tuning() { context.loadDialect<FADialect>(); }

  /// A forward config of the chip's tuned tile and pipeline.
  AttentionKernelConfig forward(StringRef chip, int64_t d, MaskKind mask,
                                Type element = Type()) {
    auto strategy = createAttentionStrategy(chip);
    AttentionKernelConfig c;
    c.elementType = element ? element : BFloat16Type::get(&context);
    bool e4m3 = isa<Float8E4M3FNType>(c.elementType);
    c.headDim = c.valueDim = d;
    auto tile = strategy->tunedTile(d, d, mask, e4m3);
    c.blockM = tile.blockM;
    c.blockN = tile.blockN;
    auto pipeline = strategy->forwardPipeline(c.blockM, c.blockN, d, d, e4m3);
    c.warps = pipeline.warps;
    c.stages = pipeline.stages;
    c.mask = MaskAttr::get(&context, mask);
    return c;
  }
  /// A backward config of the chip's tuned tile and warps.
  AttentionKernelConfig backward(StringRef chip, int64_t d, MaskKind mask,
                                 bool deterministic = false) {
    auto strategy = createAttentionStrategy(chip);
    AttentionKernelConfig c;
    c.elementType = BFloat16Type::get(&context);
    c.headDim = c.valueDim = d;
    auto tile = strategy->tunedBackwardTile(d, d, mask != MaskKind::None,
                                            deterministic, 0);
    c.blockM = tile.blockM;
    c.blockN = tile.blockN;
    c.warps = strategy->backwardWarpsFor(c.blockM, c.blockN, d, d);
    c.mask = MaskAttr::get(&context, mask);
    c.deterministic = deterministic;
    return c;
  }
  /// resolveSchedule's answer for `c` with `overrides`.
  std::string resolve(StringRef chip, AttentionKernelConfig c, KernelKind kind,
                      ScheduleOverrides overrides) {
    c.scheduleOverrides = std::move(overrides);
    return resolveSchedule(*createAttentionStrategy(chip), c, kind);
  }

  MLIRContext context;
};

TEST_F(Tuning, ParsesTheFlagsText) {
  ScheduleOverrides knobs;
  std::string error;
  ASSERT_TRUE(parseScheduleOverrides("tile_order=strided, section_mib = 8", knobs,
                                     error));
  ASSERT_EQ(knobs.size(), 2u);
  EXPECT_EQ(knobs[0], std::make_pair(std::string("tile_order"), std::string("strided")));
  EXPECT_EQ(knobs[1], std::make_pair(std::string("section_mib"), std::string("8")));
  for (const char *bad : {"tile_order", "=1", "a=", "a=1,,b=2", ""}) {
    ScheduleOverrides none;
    EXPECT_FALSE(parseScheduleOverrides(bad, none, error)) << bad;
  }
}

TEST_F(Tuning, EveryKnobRoundTripsThroughItsText) {
  std::vector<std::pair<StringRef, AttentionKernelConfig>> forwards = {
      {"sm_80", forward("sm_80", 64, MaskKind::None)},
      {"sm_80", forward("sm_80", 256, MaskKind::Causal)},
      {"sm_90a", forward("sm_90a", 128, MaskKind::Causal)},
      {"sm_90a", forward("sm_90a", 256, MaskKind::None,
                         Float8E4M3FNType::get(&context))}};
  std::vector<std::pair<StringRef, AttentionKernelConfig>> backwards = {
      {"sm_80", backward("sm_80", 64, MaskKind::Causal)},
      {"sm_80", backward("sm_80", 128, MaskKind::None, /*deterministic=*/true)},
      {"sm_90a", backward("sm_90a", 256, MaskKind::Causal)}};
  for (auto [configs, kind] : {std::pair{&forwards, KernelKind::Forward},
                               std::pair{&backwards, KernelKind::Backward}})
    for (auto &[chip, c] : *configs) {
      auto strategy = createAttentionStrategy(chip);
      ScheduleKnobs tuned = strategy->tunedSchedule(c, kind);
      for (const ScheduleKnob &k : strategy->scheduleKnobs(kind)) {
        ScheduleKnobs read;
        std::string text = k.print(tuned);
        ASSERT_TRUE(k.parse(text, read)) << chip.str() << " " << k.name.str() << "=" << text;
        EXPECT_EQ(k.print(read), text) << chip.str() << " " << k.name.str();
      }
      // The tuned knobs are always buildable.
      c.schedule = tuned;
      EXPECT_EQ(strategy->unsupportedSchedule(c, kind), "") << chip.str();
    }
}

TEST_F(Tuning, TunedDefaults) {
  auto strategy80 = createAttentionStrategy("sm_80");
  auto strategy90 = createAttentionStrategy("sm_90a");
  ScheduleKnobs d128 = strategy80->tunedSchedule(
      backward("sm_80", 128, MaskKind::Causal), KernelKind::Backward);
  EXPECT_TRUE(d128.loadsQueryRowsAhead);
  EXPECT_FALSE(d128.copiesInteriorFast);
  EXPECT_EQ(d128.columnGroups, (BackwardColumnGroups{4, 2}));
  EXPECT_EQ(d128.sectionMiB, 16);
  ScheduleKnobs causal = strategy90->tunedSchedule(
      forward("sm_90a", 128, MaskKind::Causal), KernelKind::Forward);
  EXPECT_EQ(causal.tileOrder, TileOrder::Paired);
  EXPECT_TRUE(causal.maskPerWarp);
  EXPECT_EQ(causal.registerBudget, (RegisterBudget{24, 240}));
  ScheduleKnobs fp8 = strategy90->tunedSchedule(
      forward("sm_90a", 128, MaskKind::None, Float8E4M3FNType::get(&context)),
      KernelKind::Forward);
  EXPECT_EQ(fp8.registerBudget, (RegisterBudget{40, 232}));
  EXPECT_EQ(fp8.outputStaging, OutputPlacement::Shared);
}

TEST_F(Tuning, OverridesLandOnTheirKnob) {
  AttentionKernelConfig c = forward("sm_90a", 128, MaskKind::Causal);
  c.scheduleOverrides = {{"tile_order", "strided"}, {"register_budget", "32/232"},
                         {"mask_per_warp", "false"}};
  ASSERT_EQ(resolveSchedule(*createAttentionStrategy("sm_90a"), c,
                            KernelKind::Forward),
            "");
  EXPECT_EQ(c.schedule.tileOrder, TileOrder::Strided);
  EXPECT_EQ(c.schedule.registerBudget, (RegisterBudget{32, 232}));
  EXPECT_FALSE(c.schedule.maskPerWarp);
  EXPECT_TRUE(c.schedule.splitsUnmaskedTiles); // untouched: tuned
}

TEST_F(Tuning, RefusalsNameTheKnob) {
  AttentionKernelConfig f80 = forward("sm_80", 128, MaskKind::None);
  AttentionKernelConfig b80 = backward("sm_80", 128, MaskKind::None);
  AttentionKernelConfig f90 = forward("sm_90a", 128, MaskKind::None);
  EXPECT_EQ(resolve("sm_80", f80, KernelKind::Forward, {{"unroll", "2"}}),
            "unknown schedule knob 'unroll' (the sm_80 forward's: "
            "mask_per_warp, query_in_registers)");
  EXPECT_EQ(resolve("sm_80", f80, KernelKind::Forward,
                    {{"loads_query_rows_ahead", "true"}}),
            "schedule knob 'loads_query_rows_ahead' tunes the sm_80 backward, "
            "not the forward");
  EXPECT_EQ(resolve("sm_80", f80, KernelKind::Forward, {{"stages", "1"}}),
            "'stages' is the tile's, not a schedule knob (#fa.tile's stages)");
  EXPECT_EQ(resolve("sm_80", b80, KernelKind::Backward, {{"section_mib", "0"}}),
            "schedule knob 'section_mib' takes an integer from 1 to 4096 (MiB), "
            "got '0'");
  EXPECT_EQ(resolve("sm_80", b80, KernelKind::Backward,
                    {{"section_mib", "8"}, {"section_mib", "16"}}),
            "schedule knob 'section_mib' is given twice");
  EXPECT_EQ(resolve("sm_80", b80, KernelKind::Backward, {{"column_groups", "4x4"}}),
            "column_groups 4x4 is no layout the sm_80 backward builds on 64 x "
            "128 with 8 warps at D=128 (it builds 4x2 or 2x2)");
  EXPECT_EQ(resolve("sm_90a", f90, KernelKind::Forward,
                    {{"staging_released_by_transpose", "true"}}),
            "schedule knob 'staging_released_by_transpose' is for f8e4m3fn "
            "kernels only");
  EXPECT_EQ(resolve("sm_90a", f90, KernelKind::Forward,
                    {{"register_budget", "20/240"}}),
            "schedule knob 'register_budget' takes producer/consumer registers "
            "per thread, multiples of 8 from 24 to 256, got '20/240'");
  EXPECT_EQ(resolve("sm_90a", f90, KernelKind::Forward,
                    {{"register_budget", "32/240"}}),
            "register_budget 32/240 hands out 65536 registers, more than the "
            "64512 the block holds at entry (168 per thread, 384 threads, 1 "
            "block per SM): setmaxnreg.inc would wait for ever");
  EXPECT_EQ(resolve("sm_90a", f90, KernelKind::Forward,
                    {{"output_staging", "staging"}}),
            "output_staging=staging stages O over V's staging ring, which "
            "only f8e4m3fn kernels have");
}

} // namespace
