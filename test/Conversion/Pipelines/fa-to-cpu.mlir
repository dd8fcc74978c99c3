// fa-to-cpu takes the tiled, fused IR all the way to the LLVM dialect.
// RUN: fa-opt %s --fa-tile="block-m=32 block-n=32" --fa-fuse-online-softmax --fa-to-cpu | FileCheck %s
// fa-compile-cpu is the same, from L1.
// RUN: fa-opt %s --fa-compile-cpu="block-m=32 block-n=32" | FileCheck %s

// CHECK-NOT: fa.
// CHECK-NOT: linalg.
// CHECK-NOT: scf.
// CHECK-NOT: memref.
// CHECK-NOT: tensor.
// exp2 of the online softmax is the LLVM intrinsic; tiles are freed.
// CHECK-DAG: llvm.intr.exp2
// CHECK-DAG: llvm.call @free
// CHECK: llvm.func @_mlir_ciface_attention
func.func @attention(%q: tensor<1x2x100x16xbf16>, %k: tensor<1x1x70x16xbf16>, %v: tensor<1x1x70x8xbf16>)
    -> (tensor<1x2x100x8xbf16>, tensor<1x2x100xf32>) attributes {llvm.emit_c_interface} {
  %o, %lse = fa.attention %q, %k, %v {mask = #fa.mask<causal>}
      : (tensor<1x2x100x16xbf16>, tensor<1x1x70x16xbf16>, tensor<1x1x70x8xbf16>)
      -> (tensor<1x2x100x8xbf16>, tensor<1x2x100xf32>)
  return %o, %lse : tensor<1x2x100x8xbf16>, tensor<1x2x100xf32>
}
