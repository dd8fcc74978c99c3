//===- FragmentPatterns.cpp - the chip-neutral fragment lowering ----------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "FragmentLowering.h"

using namespace mlir;
using namespace mlir::fa;

void mlir::fa::populateFragmentPatterns(const TypeConverter &converter,
                                        RewritePatternSet &patterns,
                                        const FragmentLoweringOptions &options) {
  // fa.row_max, fa.row_sum, fa.convert_layout, fa.exp_shifted,
  // fa.scale_rows: the online-softmax recurrence, per row.
  populateRowPatterns(converter, patterns);
  // fa.apply_mask (+ score modifications): per element, by (row, column).
  populateScoreModPatterns(converter, patterns, options);
  // arith / math on fragments (the recurrence's scalars, the epilogue),
  // and splat constants.
  populateElementwisePatterns(converter, patterns);
  // fa.softmax_grad, fa.softcap_grad: the backward's dS, per element.
  populateGradientPatterns(converter, patterns);
  // fa.shared_tile (a strided view), fa.store_fragment (O and LSE), and
  // the backward's fa.load_fragment (LSE, D), fa.store_shared (P, dS) and
  // fa.accumulate_fragment (dQ).
  populateMemoryPatterns(converter, patterns);
}
