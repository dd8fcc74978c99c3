// The end-to-end check of fa-raise-attention: attention written in linalg
// (4-D generic contractions, a scale, a causal mask from linalg.index, the
// decomposed softmax) is raised, compiled for the CPU, run on fresh random
// inputs and checked against the float64 reference of the spec this test
// states (causal, scale 1/sqrt(64) = 0.125). A reference of another mask or
// scale must be reported as a mismatch (exit 1), as must an input whose
// attention does not raise.

// RUN: fa-run --device cpu --input %s --spec "d=64,dtype=bf16,mask=causal" --b 1 --hq 2 --hkv 2 --m 64 --n 64 --seed 3 --verify | FileCheck %s
// CHECK: fa-run: device=cpu spec=d=64,dtype=bf16,mask=causal
// CHECK: O {{.*}} PASS
// CHECK-NOT: LSE
// CHECK: verdict: PASS

// RUN: %expect-exit 1 fa-run --device cpu --input %s --spec "d=64,dtype=bf16,mask=none" --b 1 --hq 2 --hkv 2 --m 64 --n 64 --seed 3 --verify | FileCheck %s --check-prefix=WRONGMASK
// WRONGMASK: O {{.*}} FAIL
// RUN: %expect-exit 1 fa-run --device cpu --input %s --spec "d=64,dtype=bf16,mask=causal,scale=0.25" --b 1 --hq 2 --hkv 2 --m 64 --n 64 --seed 3 --verify | FileCheck %s --check-prefix=WRONGMASK

// An input that is not attention (the softmax over the queries) is not
// raised: a mismatch (exit 1), never a silent fallback.
// RUN: %expect-exit 1 fa-run --device cpu --input %S/../../Tools/Inputs/raise-near-miss.mlir --spec "d=64,dtype=bf16,mask=causal" --b 1 --hq 2 --hkv 2 --m 64 --n 64 --verify 2>&1 | FileCheck %s --check-prefix=NEAR
// NEAR: fa-run: --input: not raised to one fa.attention (0 fa.attention, linalg.{{[a-z_]+}} left)

// Sizes other than the function's: refused (exit 2).
// RUN: %expect-exit 2 fa-run --device cpu --input %s --spec "d=64,dtype=bf16,mask=causal" --b 1 --hq 2 --hkv 2 --m 32 --n 64 --verify 2>&1 | FileCheck %s --check-prefix=SIZES
// SIZES: fa-run: --input: the function must take Q, K, V [B, H, S, D] and return O as --spec

// A function name the CPU path does not take: refused (exit 2) with the
// pipelines' line. A C library function's name made the lowering rename
// its own allocations, which the JIT then did not find; a name that is no
// identifier made the entry calling it not parse.
// RUN: sed 's/@attention(/@malloc(/' %s > %t.malloc.mlir
// RUN: %expect-exit 2 fa-run --device cpu --input %t.malloc.mlir --spec "d=64,dtype=bf16,mask=causal" --b 1 --hq 2 --hkv 2 --m 64 --n 64 --verify 2>&1 | FileCheck %s --check-prefix=MALLOC
// MALLOC: {{^}}fa-run: --input {{.*}}: fa-compile-cpu: symbol name 'malloc' is a C library function the CPU code calls (malloc, free, expf, tanhf, memcpy, ...): rename it{{$}}
// MALLOC-NOT: {{.}}
// RUN: sed 's/@attention(/@"a-b"(/' %s > %t.dash.mlir
// RUN: %expect-exit 2 fa-run --device cpu --input %t.dash.mlir --spec "d=64,dtype=bf16,mask=causal" --b 1 --hq 2 --hkv 2 --m 64 --n 64 --verify 2>&1 | FileCheck %s --check-prefix=DASH
// DASH: {{^}}fa-run: --input {{.*}}: fa-compile-cpu: function name 'a-b' is not a PTX identifier

#qk_q = affine_map<(b, h, m, n, d) -> (b, h, m, d)>
#qk_k = affine_map<(b, h, m, n, d) -> (b, h, n, d)>
#qk_s = affine_map<(b, h, m, n, d) -> (b, h, m, n)>
#id = affine_map<(b, h, m, n) -> (b, h, m, n)>
#row = affine_map<(b, h, m, n) -> (b, h, m)>
#pv_p = affine_map<(b, h, m, d, n) -> (b, h, m, n)>
#pv_v = affine_map<(b, h, m, d, n) -> (b, h, n, d)>
#pv_o = affine_map<(b, h, m, d, n) -> (b, h, m, d)>
func.func @attention(%q: tensor<1x2x64x64xbf16>, %k: tensor<1x2x64x64xbf16>,
                     %v: tensor<1x2x64x64xbf16>) -> tensor<1x2x64x64xbf16> {
  %zero = arith.constant 0.0 : bf16
  %ninf = arith.constant 0xFF80 : bf16
  %s_init = tensor.empty() : tensor<1x2x64x64xbf16>
  %s_zero = linalg.fill ins(%zero : bf16) outs(%s_init : tensor<1x2x64x64xbf16>) -> tensor<1x2x64x64xbf16>
  %s = linalg.generic {indexing_maps = [#qk_q, #qk_k, #qk_s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>) outs(%s_zero : tensor<1x2x64x64xbf16>) {
  ^bb0(%a: bf16, %b: bf16, %acc: bf16):
    %p = arith.mulf %a, %b : bf16
    %r = arith.addf %acc, %p : bf16
    linalg.yield %r : bf16
  } -> tensor<1x2x64x64xbf16>
  %masked = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<1x2x64x64xbf16>) outs(%s_init : tensor<1x2x64x64xbf16>) {
  ^bb0(%a: bf16, %o: bf16):
    %c = arith.constant 0.125 : bf16
    %scaled = arith.mulf %a, %c : bf16
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %later = arith.cmpi ugt, %j, %i : index
    %m = arith.select %later, %ninf, %zero : bf16
    %r = arith.addf %scaled, %m : bf16
    linalg.yield %r : bf16
  } -> tensor<1x2x64x64xbf16>
  %p = linalg.softmax dimension(3) ins(%masked : tensor<1x2x64x64xbf16>) outs(%s_init : tensor<1x2x64x64xbf16>) -> tensor<1x2x64x64xbf16>
  %o_init = tensor.empty() : tensor<1x2x64x64xbf16>
  %o_zero = linalg.fill ins(%zero : bf16) outs(%o_init : tensor<1x2x64x64xbf16>) -> tensor<1x2x64x64xbf16>
  %o = linalg.generic {indexing_maps = [#pv_p, #pv_v, #pv_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>) outs(%o_zero : tensor<1x2x64x64xbf16>) {
  ^bb0(%a: bf16, %b: bf16, %acc: bf16):
    %m = arith.mulf %a, %b : bf16
    %r = arith.addf %acc, %m : bf16
    linalg.yield %r : bf16
  } -> tensor<1x2x64x64xbf16>
  return %o : tensor<1x2x64x64xbf16>
}
