//===- FragmentPatterns.h - tile ops over register fragments ----*- C++ -*-===//
//
// Part of fa-mlir.
//
// The chip-neutral half of fa-gpu-lower-fragments. A tile with a
// #fa.fragment layout becomes, per thread, one vector of the elements that
// thread holds (FragmentShape says which); every op that works row by row or
// element by element (masks, score modifications, row max and sum, exp2,
// rescale, the epilogue, stores) is lowered here once, for every chip whose
// MMA accumulator has this layout (mma.sync m16n8k16, wgmma m64nNk16). A
// chip adds only its MMA patterns (AttentionGPUStrategy::
// populateFragmentLoweringPatterns).
//
//===----------------------------------------------------------------------===//

#ifndef FA_CONVERSION_FATOGPU_FRAGMENTPATTERNS_H
#define FA_CONVERSION_FATOGPU_FRAGMENTPATTERNS_H

#include "fa/Dialect/FA/IR/FAOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/Transforms/DialectConversion.h"

#include <array>

namespace mlir {
namespace fa {

/// Which elements of a #fa.fragment tile one thread holds, and in which
/// order its vector stores them: m-tile, then 8-column n-tile, then the
/// four accumulator registers (rows lane/4 and lane/4 + 8, two columns each).
struct FragmentShape {
  int64_t warps, mTiles;
  int64_t columns; ///< a thread's columns: C / columnGroups of [R, C]; 0 for rows
  int64_t columnGroups = 1; ///< #fa.fragment's: > 1 splits C over warp groups

  static FragmentShape of(RankedTensorType type);
  int64_t nTiles() const { return columns / 8; }
  /// Values per thread: 4 per (m-tile, n-tile), or 2 rows per m-tile.
  int64_t size() const { return columns ? mTiles * nTiles() * 4 : 2 * mTiles; }
  /// Position of register `reg` (0..3) of piece (mTile, nTile).
  int64_t index(int64_t mTile, int64_t nTile, int64_t reg) const {
    return (mTile * nTiles() + nTile) * 4 + reg;
  }
  /// The row slot (0 .. 2·mTiles) of element `i` of a 2-D fragment.
  int64_t rowSlot(int64_t i) const { return 2 * (i / (4 * nTiles())) + (i % 4) / 2; }
  /// Its n-tile and column parity.
  int64_t nTile(int64_t i) const { return (i / 4) % nTiles(); }
  int64_t columnParity(int64_t i) const { return i % 2; }
};

/// A thread's coordinates in a fragment layout: its rows and columns
/// within the tile, as index values.
class ThreadFragment {
public:
  ThreadFragment(OpBuilder &b, Location loc, FragmentLayoutAttr layout);
  /// Tile row of row slot `slot` (= 2·mTile + half).
  Value row(int64_t slot);
  /// row(slot) - row(0): 16 rows an m-tile, 8 the second half.
  static constexpr int64_t rowDelta(int64_t slot) {
    return 16 * (slot / 2) + 8 * (slot % 2);
  }
  /// Tile column of element `i` of a fragment of `shape`.
  Value column(const FragmentShape &shape, int64_t i);
  /// True in the one lane of each quad that writes a row's statistic.
  Value isRowLeader();
  Value lane, warp;

private:
  OpBuilder &b;
  Location loc;
  FragmentLayoutAttr layout;
};

/// Registers the per-thread types of the layouts: #fa.fragment tiles become
/// vector<size x T>, #fa.operand tiles vector<n x 2 x T> (A-fragment
/// registers), #fa.shared tiles the strided shared-memory memref they view.
void addFragmentTypeConversions(TypeConverter &converter);

/// True if `type` is a tensor with one of the fa layouts.
bool hasFragmentLayout(Type type);

/// True if every tensor `op` takes or makes has an fa layout: the patterns
/// here lower only what fa-gpu-distribute placed (plain L2 tile ops are the
/// CPU lowering's).
bool isDistributed(Operation *op);

/// How a chip wants the chip-neutral patterns to lower (its strategy's
/// fragmentLoweringOptions).
struct FragmentLoweringOptions {
  /// fa.apply_mask decided per warp (a warp-uniform branch) instead of
  /// per tile: the chip's mask_per_warp knob (Tuning.h).
  bool maskPerWarp = false;
};

/// A kernel's mask_per_warp knob where it is not its chip's, as a bool on
/// each of its fa.apply_mask ops (fa-gpu-distribute sets it, the lowering
/// reads it before FragmentLoweringOptions::maskPerWarp).
constexpr llvm::StringLiteral kMaskPerWarpAttrName = "fa.mask_per_warp";

/// The chip-neutral patterns (one per op; see the .cpp's list).
void populateFragmentPatterns(const TypeConverter &converter,
                              RewritePatternSet &patterns,
                              const FragmentLoweringOptions &options = {});

/// After the conversion: loop-carried (scf.for) and if-yielded (scf.if)
/// vectors of sub-32-bit elements whose count is not a power of two (P at
/// block_n 176 or 80: vector<88xbf16>, vector<40xbf16>) carried as i32
/// words instead. LLVM's type legalization splits such a vector into one
/// scalar per element where it crosses a block (a phi), and ptxas gives
/// each 16-bit scalar a 32-bit register: P took twice its registers and
/// the consumer spilled. The vectors of
/// power-of-two size are left as they are (LLVM keeps them packed).
/// Rewrites only the scf ops in `ops` and the bitcasts it makes.
LogicalResult packCarriedSubwordVectors(MLIRContext *context,
                                        ArrayRef<Operation *> ops);
/// Whether `type` is such a vector (what packCarriedSubwordVectors takes).
bool isScalarizedSubwordVector(Type type);

//===----------------------------------------------------------------------===//
// Scalar helpers every lowering of the math shares
//===----------------------------------------------------------------------===//

/// The vector's elements, and a vector from elements.
SmallVector<Value> unpackVector(OpBuilder &b, Location loc, Value vector);
Value packVector(OpBuilder &b, Location loc, Type type, ArrayRef<Value> elements);

/// An accumulator-layout fragment (P) as the A operand of the MMA that
/// reads it from registers, in the MMA's element type `mmaType`: two n8
/// tiles of the m16n8 C layout are one m16k16 A fragment (PTX ISA), so
/// k16 step `k` of m-tile `mTile` is the element pairs {0, 1} and {2, 3}
/// of n-tiles 2k and 2k + 1: four vector<2 x mmaType> registers.
struct AccumulatorOperand {
  AccumulatorOperand(OpBuilder &b, Location loc, Value fragment,
                     RankedTensorType type, Type mmaType);
  std::array<Value, 4> registers(int64_t mTile, int64_t k) const;
  int64_t kSteps() const { return shape.nTiles() / 2; }

private:
  OpBuilder &b;
  Location loc;
  Value values; ///< vector<size x mmaType>
  FragmentShape shape;
};

/// #fa.shared's swizzle: the column (in elements) where 16-byte chunk
/// `chunk` of `row` is stored, chunk ^ (row % 8). The copies that fill a
/// shared tile, fa.store_shared and the ldmatrix reads all use this map.
Value sharedSwizzledColumn(OpBuilder &b, Location loc, Value row, Value chunk);

/// The shared-window address (i32) of a workgroup memref's first element,
/// as PTX's `.shared` forms take it (ldmatrix, st.shared, the sm_90a
/// instructions): half the registers of a 64-bit generic address.
Value sharedWindowAddress(OpBuilder &b, Location loc, Value memref);

/// The 64-bit generic address (i64) of a global memref's first element
/// (its aligned pointer plus its offset), as PTX's `.global` forms take it.
Value globalElementAddress(OpBuilder &b, Location loc, Value memref);

/// A workgroup memref's first element as `base + bytes`, the compile-time
/// part apart: a tile carved out of the kernel's shared memory by a
/// memref.view at a constant shift (through a cast or a stage's subview)
/// gives the shared memory's address (plus the stage's dynamic offset) and
/// the shift, so that tiles addressed with the same lane offsets share
/// one register per offset and differ only in their instructions'
/// immediates (LLVM hoists each tile's sums out of the loops otherwise).
struct SharedWindowAddress {
  Value base;        ///< i32
  int64_t bytes = 0; ///< added by the instruction (`[addr+imm]`)
};
SharedWindowAddress splitSharedWindowAddress(OpBuilder &b, Location loc,
                                             Value memref);

/// A shared-window address (i32) as the `!llvm.ptr<3>` NVVM and LLVM
/// memory ops take, `offset` bytes further by a constant GEP (which stays
/// the instruction's immediate, `[addr+imm]`). `addressSpace` 7 gives the
/// shared::cluster pointer of the same bytes: an address in this CTA's
/// shared::cta window names this CTA's memory in the cluster window.
Value sharedPointer(OpBuilder &b, Location loc, Value address, int64_t offset = 0,
                    unsigned addressSpace = 3);

/// A 64-bit global address (i64, globalElementAddress) as `!llvm.ptr<1>`.
Value globalPointer(OpBuilder &b, Location loc, Value address);

/// fa.qk_scores' epilogue on one raw dot product q·k: scale, softcap,
/// log2(e) in log2 units (the op's attributes).
Value transformScore(OpBuilder &b, Location loc, QKScoresOp op, Value dot);

/// ex2.approx.ftz.f32 and lg2.approx.f32 through their NVVM intrinsics
/// (math.exp2/math.log would become libdevice calls).
Value fastExp2(OpBuilder &b, Location loc, Value x);
Value fastLog2(OpBuilder &b, Location loc, Value x);
/// max.f32 (NaN-ignoring, as arith.maxnumf) through its NVVM intrinsic.
Value fastMax(OpBuilder &b, Location loc, Value x, Value y);

/// Butterfly over the four lanes of a row (xor 1, 2).
Value quadAllReduce(OpBuilder &b, Location loc, Value v, bool isMax);

} // namespace fa
} // namespace mlir

#endif // FA_CONVERSION_FATOGPU_FRAGMENTPATTERNS_H
