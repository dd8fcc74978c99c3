// After tiling, fusion and the recompute backward, nothing can hold M×N.
// RUN: fa-opt %s --split-input-file --fa-tile --fa-fuse-online-softmax --fa-recompute-backward \
// RUN:   --fa-check-no-quadratic-buffers="query-len=1000 key-len=1500" | FileCheck %s
// fa-check-no-quadratic-buffers-invalid.mlir shows the check firing.

// CHECK-LABEL: func.func @forward
// CHECK-NOT: fa.attention
func.func @forward(%q: tensor<1x2x1000x64xbf16>, %k: tensor<1x1x1500x64xbf16>, %v: tensor<1x1x1500x64xbf16>)
    -> (tensor<1x2x1000x64xbf16>, tensor<1x2x1000xf32>) {
  %o, %lse = fa.attention %q, %k, %v {mask = #fa.mask<causal>}
      : (tensor<1x2x1000x64xbf16>, tensor<1x1x1500x64xbf16>, tensor<1x1x1500x64xbf16>)
      -> (tensor<1x2x1000x64xbf16>, tensor<1x2x1000xf32>)
  return %o, %lse : tensor<1x2x1000x64xbf16>, tensor<1x2x1000xf32>
}

// -----

// CHECK-LABEL: func.func @backward
// CHECK-NOT: fa.attention_grad
func.func @backward(%q: tensor<1x2x1000x64xbf16>, %k: tensor<1x1x1500x64xbf16>, %v: tensor<1x1x1500x64xbf16>,
                    %o: tensor<1x2x1000x64xbf16>, %do: tensor<1x2x1000x64xbf16>, %lse: tensor<1x2x1000xf32>)
    -> (tensor<1x2x1000x64xbf16>, tensor<1x1x1500x64xbf16>, tensor<1x1x1500x64xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %do, %lse
      : (tensor<1x2x1000x64xbf16>, tensor<1x1x1500x64xbf16>, tensor<1x1x1500x64xbf16>,
         tensor<1x2x1000x64xbf16>, tensor<1x2x1000x64xbf16>, tensor<1x2x1000xf32>)
      -> (tensor<1x2x1000x64xbf16>, tensor<1x1x1500x64xbf16>, tensor<1x1x1500x64xbf16>)
  return %dq, %dk, %dv : tensor<1x2x1000x64xbf16>, tensor<1x1x1500x64xbf16>, tensor<1x1x1500x64xbf16>
}

