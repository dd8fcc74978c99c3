//===- Tuning.h - a chip's schedule knobs -----------------------*- C++ -*-===//
//
// Part of fa-mlir.
//
// What a chip's schedule chooses by tuning, not by what the tile needs:
// its knobs. Each chip's Tuning.cpp (Ampere/, Hopper/) is their one home:
// it returns the tuned tile and the tuned knobs of a kernel configuration,
// each default with its reason, and names the knobs for the tools. The
// manifest lists a kernel's knobs ("schedule"); #fa.tile's `schedule`
// dictionary and fa-compile's --schedule / --bwd-schedule override them;
// the chip refuses an override it cannot build (resolveSchedule).
// docs/tuning.md documents every knob.
//
//===----------------------------------------------------------------------===//

#ifndef FA_CONVERSION_FATOGPU_TUNING_H
#define FA_CONVERSION_FATOGPU_TUNING_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Support/LLVM.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace mlir {
namespace fa {

struct AttentionKernelConfig;

/// The kernel a knob tunes: the forward, or the backward's main kernel.
enum class KernelKind { Forward, Backward };

/// How a thread block walks the tiles (KernelAbi.h's TileScheduler).
enum class TileOrder {
  /// One tile per block: the grid's (x, y, z).
  PerBlock,
  /// Persistent: tiles first, first + step, ... below count (blockIdx.x,
  /// gridDim.x, ceil(M / block_m) · Hq · B), in GridCoords::forTile's
  /// order. Tiles of equal cost (no mask).
  Strided,
  /// Persistent over pairs of a head's Q blocks, the k-th from the end
  /// and the k-th from the start (GridCoords::forPairedTile): under a
  /// causal mask with M = N every pair sees T + 1 KV tiles (but an odd
  /// T's middle one, (T + 1) / 2), so a static round robin over pairs is
  /// balanced where one over tiles is not. Block b takes pairs b, b +
  /// gridDim.x, ..., each as two tiles in a row (loop index n: pair
  /// pairFirst + (n / 2)·pairStep, member n mod 2). A schedule must give
  /// an odd T's null tile no KV tiles (BlockTiles::visibleKeyBlocks).
  Paired,
};

/// Where the sm_90a forward writes O from.
enum class OutputPlacement {
  /// 4-byte stores from the consumers' registers.
  Registers,
  /// A region of its own after the rings, stored by TMA (o_tmap).
  Shared,
  /// Over the f8e4m3fn kernel's V staging ring, stored by TMA; the next
  /// tile's V copies wait for the store.
  Staging,
};

/// Registers per thread after setmaxnreg: the producer warpgroup's and
/// the consumers'.
struct RegisterBudget {
  int64_t producer = 0, consumer = 0;
  bool operator==(const RegisterBudget &o) const {
    return producer == o.producer && consumer == o.consumer;
  }
};

/// How the backward's warps share a tile, 16 rows per warp: the column
/// groups (#fa.fragment's columnGroups) of the fragments with block_m
/// query rows (S, dP, dS, dQ_i) and of those with block_n key rows (dK_j,
/// dV_j). A side with fewer rows than 16 per warp splits its columns:
/// sm_90a's 64 x 128 (S's keys over two warpgroups) and 64 x 64 with 8
/// warps (D above 128: S's keys and dK's and dV's head dims), sm_80's
/// 64 x 128 with 8 warps (S's keys over two groups of four warps). With
/// S's keys split, dQ_i = dS·K_j reads dS from shared memory
/// (BackwardMath::Sources::gradQueryFromShared), and so may take column
/// groups of its own (`gradQuery`; 0: as S's).
struct BackwardColumnGroups {
  int64_t queryRows = 1, keyRows = 1;
  int64_t gradQuery = 0;
  int64_t gradQueryGroups() const { return gradQuery ? gradQuery : queryRows; }
  bool operator==(const BackwardColumnGroups &o) const {
    return queryRows == o.queryRows && keyRows == o.keyRows &&
           gradQueryGroups() == o.gradQueryGroups();
  }
};

/// Every knob of both chips; a chip reads its own (its scheduleKnobs
/// list names them). The schedule reads them from the kernel's
/// configuration (AttentionKernelConfig::schedule) and nowhere decides
/// them itself.
struct ScheduleKnobs {
  /// fa.apply_mask decided per warp (a warp-uniform branch) instead of
  /// per tile (FragmentLoweringOptions::maskPerWarp).
  bool maskPerWarp = false;

  // sm_80, forward.
  /// Q's MMA A fragments held in registers for the whole KV loop, rather
  /// than re-read from shared memory per KV tile.
  bool queryInRegisters = false;

  // sm_80, backward.
  /// LSE_i and D_i loaded a Q block ahead and carried (FA2's order)
  /// instead of where the step first uses them.
  bool loadsQueryRowsAhead = false;
  /// copyTileAsync's interior fast path: a uniform branch picks copies
  /// without the row check where every row of the tile exists.
  bool copiesInteriorFast = false;
  /// dK_j and dV_j staged through the Q and dO rings and stored 16 bytes
  /// a thread, instead of 32-bit stores from the fragments.
  bool storesGradientsThroughShared = false;
  /// The backward's warp layout.
  BackwardColumnGroups columnGroups;

  // sm_90a, forward.
  /// The KV tiles that need no mask run in a loop of their own, without
  /// the mask's branch.
  bool splitsUnmaskedTiles = false;
  /// f8e4m3fn: V's staging slot released by the producer's transpose, not
  /// with Vᵀ's slot by the consumers.
  bool stagingReleasedByTranspose = false;
  OutputPlacement outputStaging = OutputPlacement::Registers;
  TileOrder tileOrder = TileOrder::PerBlock;

  // sm_90a, forward and backward.
  RegisterBudget registerBudget;

  // sm_90a, backward.
  /// The Q blocks that see every key of K_j run in a loop of their own,
  /// without the mask's branch.
  bool splitsUnmaskedQueryBlocks = false;

  // Both chips, backward.
  /// The L2 section of the backward's KV-block order (KeyBlockPlace), in
  /// MiB.
  int64_t sectionMiB = 0;
};

/// A knob as the tools name it (#fa.tile's schedule, fa-compile's
/// --schedule, the manifest's "schedule").
struct ScheduleKnob {
  /// How the manifest writes the value: a JSON bool, number or string.
  enum class Json { Bool, Number, String };
  llvm::StringLiteral name;
  /// The values it takes, for messages ("true or false").
  llvm::StringLiteral values;
  Json json;
  /// Its value in `knobs` as text ("true", "16", "paired", "24/240").
  std::string (*print)(const ScheduleKnobs &knobs);
  /// Sets it from `text`; false if `text` is none of its values.
  bool (*parse)(llvm::StringRef text, ScheduleKnobs &knobs);
  /// Null where the knob means something for `c`; otherwise the kernels
  /// it is for ("f8e4m3fn kernels"), and it is neither listed nor set.
  const char *(*onlyFor)(const AttentionKernelConfig &c) = nullptr;
};

/// Knobs named with their values as text, in the order given.
using ScheduleOverrides = std::vector<std::pair<std::string, std::string>>;

/// #fa.tile's schedule dictionary as text (a bool "true" / "false", an
/// integer in decimal, a string as it is); none for a null one.
ScheduleOverrides scheduleOverridesOf(DictionaryAttr schedule);
/// The dictionary of `overrides` for #fa.tile: "true" and "false" as
/// bools, decimal integers as i64, the rest as strings; null if empty.
DictionaryAttr scheduleAttrOf(MLIRContext *context,
                              const ScheduleOverrides &overrides);

/// Parses fa-compile's "name=value[,name=value...]"; false with the reason
/// in `error`.
bool parseScheduleOverrides(llvm::StringRef text, ScheduleOverrides &out,
                            std::string &error);

/// `knobs`' values of the knobs of `list` that mean something for `c`, as
/// a JSON object on one line (the manifest's "schedule").
std::string scheduleJson(llvm::ArrayRef<ScheduleKnob> list,
                         const ScheduleKnobs &knobs,
                         const AttentionKernelConfig &c);

/// The same as "name=value" pairs, comma-separated (diagnostics, tests).
std::string scheduleText(llvm::ArrayRef<ScheduleKnob> list,
                         const ScheduleKnobs &knobs,
                         const AttentionKernelConfig &c);

/// Knob factories for the chips' lists.
namespace knob {
template <bool ScheduleKnobs::*Field>
ScheduleKnob flag(llvm::StringLiteral name,
                  const char *(*onlyFor)(const AttentionKernelConfig &) = nullptr) {
  return {name, "true or false", ScheduleKnob::Json::Bool,
          [](const ScheduleKnobs &k) { return std::string(k.*Field ? "true" : "false"); },
          [](llvm::StringRef text, ScheduleKnobs &k) {
            if (text != "true" && text != "false")
              return false;
            k.*Field = text == "true";
            return true;
          },
          onlyFor};
}
/// The L2 section in MiB, 1 to 4096.
ScheduleKnob sectionMiB();
/// TileOrder: per_block, strided or paired.
ScheduleKnob tileOrder();
/// OutputPlacement: registers, shared or staging.
ScheduleKnob outputStaging();
/// RegisterBudget: "producer/consumer", multiples of 8 from 24 to 256.
ScheduleKnob registerBudget();
/// BackwardColumnGroups: "QxK" or "QxKxG" (G: dQ_i's own groups).
ScheduleKnob columnGroups();
} // namespace knob

} // namespace fa
} // namespace mlir

#endif // FA_CONVERSION_FATOGPU_TUNING_H
