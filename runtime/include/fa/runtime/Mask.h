//===- Mask.h - the mask kinds, once ----------------------------*- C++ -*-===//
//
// Part of fa-mlir.
//
// The one enumeration of attention masks: the C API's fa_mask_kind
// (fa_spec.h) gives the values, the spec language and #fa.mask<...> the
// keywords below. The runtime names the type fa::MaskKind (Reference.h) and
// the fa dialect's MaskAttr holds it as mlir::fa::MaskKind (FAAttrs.h), so
// the compiler, the runtime and the spec share one enum and nothing
// converts between them. It is declared at global scope, as the C API is:
// the dialect's files then see no namespace `fa` beside their mlir::fa.
// Header-only and free of MLIR, like Limits.h.
//
//===----------------------------------------------------------------------===//

#ifndef FA_RUNTIME_MASK_H
#define FA_RUNTIME_MASK_H

#include "fa/runtime/fa_spec.h"

#include <cstdint>
#include <optional>
#include <string_view>

/// Which keys a query may attend to (fa_spec.h says which, for each).
enum class FaMaskKind : int32_t {
  None = FA_MASK_NONE,
  Causal = FA_MASK_CAUSAL,
  CausalTopLeft = FA_MASK_CAUSAL_TOP_LEFT,
  Window = FA_MASK_WINDOW,
};

/// Every kind, in the order of their values.
inline constexpr FaMaskKind kFaMaskKinds[] = {
    FaMaskKind::None, FaMaskKind::Causal, FaMaskKind::CausalTopLeft,
    FaMaskKind::Window};

/// The keyword of spec text and #fa.mask: "none", "causal",
/// "causal_top_left" or "window" (whose bounds follow in parentheses).
constexpr const char *faMaskKindKeyword(FaMaskKind kind) {
  switch (kind) {
  case FaMaskKind::None:
    return "none";
  case FaMaskKind::Causal:
    return "causal";
  case FaMaskKind::CausalTopLeft:
    return "causal_top_left";
  case FaMaskKind::Window:
    return "window";
  }
  return "none";
}

/// The kind `keyword` names, if any.
inline std::optional<FaMaskKind> faMaskKindOfKeyword(std::string_view keyword) {
  for (FaMaskKind kind : kFaMaskKinds)
    if (keyword == faMaskKindKeyword(kind))
      return kind;
  return std::nullopt;
}

/// The kind whose value the C API's int32_t holds, if any.
inline std::optional<FaMaskKind> faMaskKindOfValue(int32_t value) {
  for (FaMaskKind kind : kFaMaskKinds)
    if (value == static_cast<int32_t>(kind))
      return kind;
  return std::nullopt;
}

#endif // FA_RUNTIME_MASK_H
