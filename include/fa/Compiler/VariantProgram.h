//===- VariantProgram.h - an fa.attention's regions for the runtime -*- C++ -*-===//
//
// Part of fa-mlir.
//
// The score_mod / mask_mod regions of an fa.attention, as written, turned
// into the runtime's programs (fa/runtime/Variant.h): what a variant
// kernel's manifest states and what the float64 reference evaluates.
//
//===----------------------------------------------------------------------===//

#ifndef FA_COMPILER_VARIANTPROGRAM_H
#define FA_COMPILER_VARIANTPROGRAM_H

#include "fa/runtime/Variant.h"

#include "mlir/IR/Operation.h"

#include <string>

namespace mlir {
namespace fa {

/// The variant of `attention` (an fa.attention or fa.attention_grad): its
/// captured types and its regions as programs. False with a one-line
/// reason naming what the runtime cannot state or evaluate (an integer
/// wider than 64 bits, an op the evaluator does not know).
bool variantOf(Operation *attention, ::fa::Variant &variant,
               std::string &error);

} // namespace fa
} // namespace mlir

#endif // FA_COMPILER_VARIANTPROGRAM_H
