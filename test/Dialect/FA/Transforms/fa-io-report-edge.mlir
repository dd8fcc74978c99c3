// Degenerate options and huge problems: a report or one diagnostic, never a
// signal.
// sram-bytes below one element used to give B_c = 0 and a division by zero
// (SIGFPE); the paper's choice now keeps at least one row.
// RUN: fa-opt %s --fa-io-report="sram-bytes=1" -o /dev/null | FileCheck %s --check-prefix=SRAM1
// SRAM1: tiled from sram block_m=1 block_n=1: read
// A block larger than M: ceil(M / block_m) = 1 (it used to form M + block_m - 1,
// which wraps).
// RUN: fa-opt %s --fa-io-report="block-m=1099511627776" -o /dev/null | FileCheck %s --check-prefix=HUGEBLOCK
// HUGEBLOCK: tiled block_m=1099511627776 block_n=64: read 1536 B
// Blocks follow fa-tile's rule; sram-bytes must be positive.
// RUN: not fa-opt %s --fa-io-report="block-n=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: error: fa-io-report: block-n must be a power of two or a multiple of 16 in [1, 2^40], but is 0
// RUN: not fa-opt %s --fa-io-report="block-m=9223372036854775807" -o /dev/null 2>&1 | FileCheck %s --check-prefix=HUGE
// HUGE: error: fa-io-report: block-m must be a power of two or a multiple of 16 in [1, 2^40], but is 9223372036854775807
// RUN: not fa-opt %s --fa-io-report="sram-bytes=-1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SRAMNEG
// SRAMNEG: error: fa-io-report: sram-bytes must be > 0, but is -1

func.func @small(%q: tensor<1x1x4x64xbf16>, %k: tensor<1x1x4x64xbf16>, %v: tensor<1x1x4x64xbf16>)
    -> tensor<1x1x4x64xbf16> {
  %o = fa.attention %q, %k, %v
      : (tensor<1x1x4x64xbf16>, tensor<1x1x4x64xbf16>, tensor<1x1x4x64xbf16>) -> tensor<1x1x4x64xbf16>
  return %o : tensor<1x1x4x64xbf16>
}
