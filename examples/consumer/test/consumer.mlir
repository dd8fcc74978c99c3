// RUN: consumer-opt %s --fa-tile --fa-fuse-online-softmax --canonicalize --cse | FileCheck %s
// RUN: consumer-opt %s --fa-compile-cpu | FileCheck %s --check-prefix=CPU

// fa-mlir's passes in a tool built against the installed package, next to
// upstream's (canonicalize, cse): one KV loop per Q block carrying the
// online softmax's running max and sum and the output accumulator.
// CHECK-LABEL: func.func @attention
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>)
// CHECK: fa.qk_scores
// CHECK: fa.row_max
// CHECK: fa.exp_shifted

// And a pipeline: fa.attention to the LLVM dialect for the host.
// CPU: llvm.func @attention(
// CPU-NOT: fa.

func.func @attention(%q: tensor<1x2x80x64xbf16>, %k: tensor<1x2x96x64xbf16>,
                     %v: tensor<1x2x96x64xbf16>)
    -> (tensor<1x2x80x64xbf16>, tensor<1x2x80xf32>) {
  %o, %lse = fa.attention %q, %k, %v
      {mask = #fa.mask<causal>,
       tile = #fa.tile<block_m = 64, block_n = 64, stages = 2, warps = 4>}
      : (tensor<1x2x80x64xbf16>, tensor<1x2x96x64xbf16>, tensor<1x2x96x64xbf16>)
      -> (tensor<1x2x80x64xbf16>, tensor<1x2x80xf32>)
  return %o, %lse : tensor<1x2x80x64xbf16>, tensor<1x2x80xf32>
}
