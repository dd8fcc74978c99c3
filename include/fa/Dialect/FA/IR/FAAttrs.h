//===- FAAttrs.h - fa dialect attributes ------------------------*- C++ -*-===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#ifndef FA_DIALECT_FA_IR_FAATTRS_H
#define FA_DIALECT_FA_IR_FAATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#include "fa/runtime/Mask.h"

#include <optional>

namespace mlir {
namespace fa {

/// The mask enumeration the runtime and the spec language use
/// (fa/runtime/Mask.h), which #fa.mask holds: the compiler has no enum of
/// its own to keep in step with it.
using MaskKind = ::FaMaskKind;

/// The keyword #fa.mask prints for `kind` ("causal_top_left").
inline llvm::StringRef stringifyMaskKind(MaskKind kind) {
  return faMaskKindKeyword(kind);
}
/// The kind a #fa.mask keyword names, if any.
inline std::optional<MaskKind> symbolizeMaskKind(llvm::StringRef keyword) {
  return faMaskKindOfKeyword(std::string_view(keyword.data(), keyword.size()));
}

} // namespace fa
} // namespace mlir

#define GET_ATTRDEF_CLASSES
#include "fa/Dialect/FA/IR/FAAttrs.h.inc"

#endif // FA_DIALECT_FA_IR_FAATTRS_H
