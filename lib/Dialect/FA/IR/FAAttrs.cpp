//===- FAAttrs.cpp - fa dialect attributes --------------------------------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "fa/Dialect/FA/IR/FAAttrs.h"
#include "fa/Dialect/FA/IR/FADialect.h"
#include "fa/runtime/Limits.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::fa;

#define GET_ATTRDEF_CLASSES
#include "fa/Dialect/FA/IR/FAAttrs.cpp.inc"

void FADialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "fa/Dialect/FA/IR/FAAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// MaskAttr
//===----------------------------------------------------------------------===//

/// Parses `<none>`, `<causal>`, `<causal_top_left>` or `<window(L, R)>`.
Attribute MaskAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseLess() || parser.parseKeyword(&keyword))
    return {};
  std::optional<MaskKind> kind = symbolizeMaskKind(keyword);
  if (!kind) {
    parser.emitError(loc) << "unknown mask kind '" << keyword
                          << "'; expected none, causal, causal_top_left or "
                             "window(left, right)";
    return {};
  }
  int64_t left = -1, right = -1;
  if (*kind == MaskKind::Window) {
    if (parser.parseLParen() || parser.parseInteger(left) ||
        parser.parseComma() || parser.parseInteger(right) ||
        parser.parseRParen())
      return {};
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<MaskAttr>(loc, parser.getContext(), *kind, left,
                                     right);
}

void MaskAttr::print(AsmPrinter &printer) const {
  printer << '<' << stringifyMaskKind(getKind());
  if (getKind() == MaskKind::Window)
    printer << '(' << getLeft() << ", " << getRight() << ')';
  printer << '>';
}

LogicalResult MaskAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               MaskKind kind, int64_t left, int64_t right) {
  if (kind != MaskKind::Window) {
    if (left != -1 || right != -1)
      return emitError() << "only a window mask takes bounds, but "
                         << stringifyMaskKind(kind) << " has (" << left << ", "
                         << right << ")";
    return success();
  }
  // -1 is the only negative bound: it means "unbounded on that side".
  if (left < -1)
    return emitError() << "window left bound must be -1 (unbounded) or >= 0, "
                          "but is "
                       << left;
  if (right < -1)
    return emitError() << "window right bound must be -1 (unbounded) or >= 0, "
                          "but is "
                       << right;
  // A bound is at most the longest sequence, so i + N - M ± bound stays far
  // inside int64 (a bound past every key is no bound: write -1).
  if (left > ::fa::limits::kMaxSequence)
    return emitError() << "window left bound (" << left
                       << ") exceeds the longest accepted sequence, 2^40 = "
                       << ::fa::limits::kMaxSequence << "; use -1 for unbounded";
  if (right > ::fa::limits::kMaxSequence)
    return emitError() << "window right bound (" << right
                       << ") exceeds the longest accepted sequence, 2^40 = "
                       << ::fa::limits::kMaxSequence << "; use -1 for unbounded";
  return success();
}

//===----------------------------------------------------------------------===//
// TileAttr
//===----------------------------------------------------------------------===//

LogicalResult
BlockSparseAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        int64_t qBlock, int64_t kvBlock) {
  // Powers of two, so that every kernel tile up to the block divides it.
  for (auto [name, size] : {std::pair<const char *, int64_t>{"q_block", qBlock},
                            {"kv_block", kvBlock}})
    if (size < 16 || size > (int64_t(1) << 20) || (size & (size - 1)) != 0)
      return emitError() << name << " must be a power of two in [16, 2^20], but is "
                         << size;
  return success();
}

LogicalResult TileAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               int64_t blockM, int64_t blockN, int64_t stages,
                               int64_t warps, DictionaryAttr schedule) {
  // Powers of two keep tiles aligned with MMA fragments and swizzle periods;
  // a multiple of 16 is whole MMA steps (the chips narrow it further).
  auto checkBlock = [&](StringRef name, int64_t size) -> LogicalResult {
    if (!::fa::limits::blockSizeValid(size))
      return emitError() << name << " must be " << ::fa::limits::blockSizeRule()
                         << ", but is " << size;
    return success();
  };
  if (failed(checkBlock("block_m", blockM)) ||
      failed(checkBlock("block_n", blockN)))
    return failure();
  if (stages < 1)
    return emitError() << "stages must be >= 1, but is " << stages;
  // A thread block holds at most 1024 threads = 32 warps.
  if (warps < 1 || warps > 32)
    return emitError() << "warps must be in [1, 32], but is " << warps;
  // The knobs' names and values are the chip's to check (fa-gpu-distribute);
  // here only their form.
  if (schedule)
    for (NamedAttribute knob : schedule)
      if (!isa<BoolAttr, IntegerAttr, StringAttr>(knob.getValue()))
        return emitError() << "schedule knob '" << knob.getName().getValue()
                           << "' must be a bool, an integer or a string, but is "
                           << knob.getValue();
  return success();
}

//===----------------------------------------------------------------------===//
// GPU layouts
//===----------------------------------------------------------------------===//

static LogicalResult verifyWarpTiles(function_ref<InFlightDiagnostic()> emitError,
                                     int64_t warps, int64_t mTiles) {
  if (warps < 1 || mTiles < 1)
    return emitError() << "warps and mTiles must be >= 1, got " << warps
                       << " and " << mTiles;
  return success();
}

LogicalResult
FragmentLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                           int64_t warps, int64_t mTiles, bool,
                           FloatAttr deferredScale, int64_t columnGroups,
                           bool deferredDescale) {
  if (deferredScale && !(deferredScale.getValueAsDouble() > 0))
    return emitError() << "deferredScale must be > 0 (the row max commutes "
                          "only with a positive scale)";
  if (deferredDescale && !deferredScale)
    return emitError() << "deferredDescale needs a deferredScale";
  if (columnGroups < 1 || warps % columnGroups)
    return emitError() << "columnGroups must divide warps, got " << columnGroups
                       << " for " << warps << " warps";
  return verifyWarpTiles(emitError, warps, mTiles);
}

LogicalResult
OperandLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                          int64_t warps, int64_t mTiles) {
  return verifyWarpTiles(emitError, warps, mTiles);
}

LogicalResult
SharedLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                         int64_t rowElements) {
  // The XOR swizzle permutes eight 16-byte chunks within a row.
  if (rowElements < 64 || rowElements % 64)
    return emitError() << "rowElements must be a positive multiple of 64, got "
                       << rowElements;
  return success();
}

LogicalResult
TmaSharedLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                            int64_t swizzleBytes, bool keyMajor) {
  // The one swizzle the sm_90a schedule uses (wgmma descriptor mode 1).
  if (swizzleBytes != 128)
    return emitError() << "swizzleBytes must be 128, got " << swizzleBytes;
  return success();
}
