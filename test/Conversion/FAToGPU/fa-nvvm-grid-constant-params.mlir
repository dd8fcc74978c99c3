// RUN: fa-opt %s --split-input-file --pass-pipeline="builtin.module(gpu.module(fa-nvvm-grid-constant-params))" --verify-diagnostics | FileCheck %s

// The positions listed in fa.grid_constant_params (the sm_90a TMA tensor
// maps, first in the ABI) become by-value 128-byte, 64-aligned grid
// constants; the list is consumed; other arguments are untouched.
// CHECK-LABEL: llvm.func @kernel
// CHECK-SAME: (%{{[^:]+}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant},
// CHECK-SAME: %{{[^:]+}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant},
// CHECK-SAME: %{{[^:]+}}: i64)
// CHECK-NOT: fa.grid_constant_params
gpu.module @m {
  llvm.func @kernel(%qmap: !llvm.ptr, %kmap: !llvm.ptr, %n: i64)
      attributes {nvvm.kernel, fa.grid_constant_params = array<i64: 0, 1>} {
    llvm.return
  }
}

// -----

// A listed argument that is not a pointer is an error, not a silent skip.
gpu.module @m {
  // expected-error @+1 {{fa.grid_constant_params names argument 1, which is not a pointer}}
  llvm.func @kernel(%qmap: !llvm.ptr, %n: i64)
      attributes {nvvm.kernel, fa.grid_constant_params = array<i64: 0, 1>} {
    llvm.return
  }
}
