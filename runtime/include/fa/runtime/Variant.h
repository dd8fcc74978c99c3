//===- Variant.h - score_mod / mask_mod regions as the runtime sees them -*- C++ -*-===//
//
// Part of fa-mlir.
//
// A kernel compiled from an fa.attention with score_mod / mask_mod regions
// states its variant in its manifest: the captured operands (the kernel's
// trailing parameters, KernelAbi.h's capture params) and each region as a
// straight-line program of arith / math / tensor.extract ops, exactly as the
// user wrote it (before any pass). The runtime evaluates those programs in
// float64 for the reference, so a GPU machine without MLIR verifies a
// variant kernel against the user's own function, independently of how the
// compiler lowered it.
//
// No MLIR here: the runtime builds on machines without LLVM.
//
//===----------------------------------------------------------------------===//

#ifndef FA_RUNTIME_VARIANT_H
#define FA_RUNTIME_VARIANT_H

#include "fa/runtime/Json.h"

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace fa {

/// A captured operand's type: its element ("f32", "f16", "bf16", "i1",
/// "i8", "i16", "i32", "i64" or "index") and its shape (empty for a
/// scalar; kDynamicExtent for a size given at launch).
struct CaptureType {
  static constexpr int64_t kDynamicExtent = -1;
  std::string element;
  std::vector<int64_t> shape;
  bool isScalar() const { return shape.empty(); }
  bool isFloat() const;
};

/// Bytes of one stored element of `element` (i1 as one byte, index as
/// eight); 0 for a name that is no capturable element.
size_t captureElementBytes(const std::string &element);

/// One captured value as the reference sees it: its shape (empty for a
/// scalar) and its elements, row-major, as doubles (integers exactly).
struct CaptureValue {
  std::vector<int64_t> shape;
  std::vector<double> elements;
};

/// Random captured values of `types` (static shapes): floats uniform in
/// [-1, 1] rounded to their type, integers in {0..3}, i1 in {0, 1}. `bytes`
/// gets each value's storage (little-endian, row-major) to upload.
std::vector<CaptureValue> drawCaptures(const std::vector<CaptureType> &types,
                                       uint64_t seed,
                                       std::vector<std::vector<uint8_t>> &bytes);

/// One op of a region program: its MLIR name, its operands (value
/// numbers: the region's arguments first, then each op's result in
/// order), its result type (an element name as CaptureType's), and for
/// arith.constant its value, for arith.cmpf / arith.cmpi its predicate
/// (MLIR's spelling: "olt", "sge", ...).
struct VariantOp {
  std::string name;
  std::vector<int32_t> operands;
  std::string type;
  std::string value;
  std::string predicate;
};

/// A region's body: `arguments` types (score_mod: f32 then four index;
/// mask_mod: four index; then one per capture, "tensor" for a captured
/// tensor), its ops, and the value number it yields.
struct VariantProgram {
  std::vector<std::string> arguments;
  std::vector<VariantOp> ops;
  int32_t result = -1;
  bool empty() const { return ops.empty() && result < 0; }
};

/// Whether `program` reads value `value` (an argument's number: a
/// mask_mod's b is 0, h 1).
bool programReads(const VariantProgram &program, int32_t value);

/// What a variant kernel computes beyond its spec.
struct Variant {
  std::vector<CaptureType> captures;
  VariantProgram scoreMod, maskMod;
  bool empty() const {
    return captures.empty() && scoreMod.empty() && maskMod.empty();
  }
};

/// The manifest's "variant" object, and back. parseVariant checks every op
/// is one the evaluator knows, every operand names an earlier value, and
/// the programs' arguments match the captures; false with a reason.
std::string variantJson(const Variant &variant);
bool parseVariant(const json::Value &value, Variant &variant,
                  std::string &error);

/// Empty if the evaluator knows op `name` with `operands` operands; else a
/// one-line reason naming it.
std::string unsupportedVariantOp(const std::string &name, size_t operands);

/// The programs' functions for ref::Problem (score_mod: (score, b, h, i, j)
/// -> score; mask_mod: (b, h, i, j) -> visible), evaluated op by op in
/// float64 on `captures`, an index into a captured tensor clamped to its
/// extent. `captures` must outlive the results.
std::function<double(double, int64_t, int64_t, int64_t, int64_t)>
scoreModOf(const VariantProgram &program,
           const std::vector<CaptureValue> &captures);
std::function<bool(int64_t, int64_t, int64_t, int64_t)>
maskModOf(const VariantProgram &program,
          const std::vector<CaptureValue> &captures);

} // namespace fa

#endif // FA_RUNTIME_VARIANT_H
