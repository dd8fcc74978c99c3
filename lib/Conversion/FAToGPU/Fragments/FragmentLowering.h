//===- FragmentLowering.h - the chip-neutral pattern groups -----*- C++ -*-===//
//
// Part of fa-mlir.
//
// One populate function per file; FragmentPatterns.cpp lists them all.
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_CONVERSION_FATOGPU_FRAGMENTS_FRAGMENTLOWERING_H
#define FA_LIB_CONVERSION_FATOGPU_FRAGMENTS_FRAGMENTLOWERING_H

#include "fa/Conversion/FAToGPU/FragmentPatterns.h"

namespace mlir {
namespace fa {

/// row_max, row_sum, convert_layout, exp_shifted, scale_rows.
void populateRowPatterns(const TypeConverter &converter,
                         RewritePatternSet &patterns);
/// apply_mask and the score modifications that need (row, column).
void populateScoreModPatterns(const TypeConverter &converter,
                              RewritePatternSet &patterns,
                              const FragmentLoweringOptions &options);
/// arith and math ops, and constants, on distributed tiles.
void populateElementwisePatterns(const TypeConverter &converter,
                                 RewritePatternSet &patterns);
/// softmax_grad and softcap_grad (the backward's elementwise math).
void populateGradientPatterns(const TypeConverter &converter,
                              RewritePatternSet &patterns);
/// shared_tile, store_fragment, load_fragment, store_shared and
/// accumulate_fragment.
void populateMemoryPatterns(const TypeConverter &converter,
                            RewritePatternSet &patterns);

} // namespace fa
} // namespace mlir

#endif // FA_LIB_CONVERSION_FATOGPU_FRAGMENTS_FRAGMENTLOWERING_H
