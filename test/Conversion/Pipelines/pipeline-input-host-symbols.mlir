// On the CPU path every symbol shares one space with the C library
// functions the lowered code calls: a function named malloc made the
// lowering rename its own allocations (malloc_0, ...), which then resolved
// nowhere, and one named expf would take LLVM's calls for exp. Such a name
// is one line, before any pass runs.
// RUN: not fa-opt %s --split-input-file --fa-compile-cpu 2>&1 | FileCheck %s -DP=fa-compile-cpu --implicit-check-not=error:
// RUN: not fa-opt %s --split-input-file --fa-tile --fa-fuse-online-softmax --fa-recompute-backward --fa-to-cpu 2>&1 | FileCheck %s -DP=fa-to-cpu --implicit-check-not=error:
// RUN: not fa-opt %s --split-input-file --fa-compile-cpu 2>/dev/null | FileCheck %s --check-prefix=TAKEN

// CHECK: :[[@LINE+1]]:1: error: [[P]]: symbol name 'malloc' is a C library function the CPU code calls (malloc, free, expf, tanhf, memcpy, ...): rename it{{$}}
func.func @malloc(%q: tensor<1x1x64x64xbf16>, %k: tensor<1x1x64x64xbf16>, %v: tensor<1x1x64x64xbf16>)
    -> tensor<1x1x64x64xbf16> {
  %o = fa.attention %q, %k, %v
      : (tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16>)
      -> tensor<1x1x64x64xbf16>
  return %o : tensor<1x1x64x64xbf16>
}

// -----

// Any symbol: a helper without fa ops, next to a kernel of a good name.
// CHECK: :[[@LINE+1]]:1: error: [[P]]: symbol name 'free' is a C library function
func.func private @free(%p: i64) -> i64 {
  return %p : i64
}
func.func @attention(%q: tensor<1x1x64x64xbf16>, %k: tensor<1x1x64x64xbf16>, %v: tensor<1x1x64x64xbf16>)
    -> tensor<1x1x64x64xbf16> {
  %o = fa.attention %q, %k, %v {softcap = 30.0 : f32}
      : (tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16>)
      -> tensor<1x1x64x64xbf16>
  return %o : tensor<1x1x64x64xbf16>
}

// -----

// CHECK: :[[@LINE+1]]:1: error: [[P]]: symbol name 'tanhf' is a C library function
func.func @tanhf(%q: tensor<1x1x64x64xbf16>, %k: tensor<1x1x64x64xbf16>, %v: tensor<1x1x64x64xbf16>)
    -> tensor<1x1x64x64xbf16> {
  %o = fa.attention %q, %k, %v {softcap = 30.0 : f32}
      : (tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16>)
      -> tensor<1x1x64x64xbf16>
  return %o : tensor<1x1x64x64xbf16>
}

// -----

// A name that only starts like one is taken.
// TAKEN: llvm.func @mallocate(
func.func @mallocate(%q: tensor<1x1x64x64xbf16>, %k: tensor<1x1x64x64xbf16>, %v: tensor<1x1x64x64xbf16>)
    -> tensor<1x1x64x64xbf16> {
  %o = fa.attention %q, %k, %v
      : (tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16>)
      -> tensor<1x1x64x64xbf16>
  return %o : tensor<1x1x64x64xbf16>
}
