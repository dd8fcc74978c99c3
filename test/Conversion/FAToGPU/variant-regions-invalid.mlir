// What the GPU lowering does not take of the variant regions, refused
// before any pass in one line naming the construct (the CPU takes them all:
// fa-to-cpu).
// RUN: not fa-opt %s --split-input-file --fa-to-ptx="chip=sm_90a" 2>&1 | FileCheck %s

// A math op the kernel has no libdevice-free form for.
// CHECK: error: fa-to-ptx: score_mod: 'math.erf' on 'f32' is not compiled for the GPU (f32 math.exp, exp2, log, log2, tanh, sin, cos, absf, sqrt, rsqrt, fma, floor, ceil, trunc; the CPU takes every math op)
func.func @erf(%q: tensor<1x2x64x64xbf16>, %k: tensor<1x2x64x64xbf16>,
               %v: tensor<1x2x64x64xbf16>) -> tensor<1x2x64x64xbf16> {
  %o = fa.attention %q, %k, %v
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %e = math.erf %s : f32
        fa.yield %e : f32
      }
      : (tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>)
      -> tensor<1x2x64x64xbf16>
  return %o : tensor<1x2x64x64xbf16>
}

// -----

// Math on f16 (the kernel's approximations are f32).
// CHECK: error: fa-to-ptx: score_mod: 'math.exp' on 'f16' is not compiled for the GPU
func.func @half_math(%q: tensor<1x2x64x64xbf16>, %k: tensor<1x2x64x64xbf16>,
                     %v: tensor<1x2x64x64xbf16>) -> tensor<1x2x64x64xbf16> {
  %o = fa.attention %q, %k, %v
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %x = arith.truncf %s : f32 to f16
        %e = math.exp %x : f16
        %r = arith.extf %e : f16 to f32
        fa.yield %r : f32
      }
      : (tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>)
      -> tensor<1x2x64x64xbf16>
  return %o : tensor<1x2x64x64xbf16>
}

// -----

// A captured integer of a width the kernel ABI has no buffer for.
// CHECK: error: fa-to-ptx: a GPU kernel takes captured integers of 1, 8, 16, 32 or 64 bits, not 'tensor<64xi4>'
func.func @narrow(%q: tensor<1x2x64x64xbf16>, %k: tensor<1x2x64x64xbf16>,
                  %v: tensor<1x2x64x64xbf16>, %ids: tensor<64xi4>)
    -> tensor<1x2x64x64xbf16> {
  %o = fa.attention %q, %k, %v captures(%ids)
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %d: tensor<64xi4>):
        %di = tensor.extract %d[%i] : tensor<64xi4>
        %dj = tensor.extract %d[%j] : tensor<64xi4>
        %same = arith.cmpi eq, %di, %dj : i4
        fa.yield %same : i1
      }
      : (tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>,
         tensor<64xi4>) -> tensor<1x2x64x64xbf16>
  return %o : tensor<1x2x64x64xbf16>
}

// -----

// A block-sparse backward (the forward's lists, transposed, are next).
// CHECK: error: fa-to-ptx: the GPU backward does not take a block mask (block_sparse) yet; the CPU's ignores it
func.func @sparse_backward(
    %q: tensor<1x2x64x64xbf16>, %k: tensor<1x2x64x64xbf16>,
    %v: tensor<1x2x64x64xbf16>, %o: tensor<1x2x64x64xbf16>,
    %do: tensor<1x2x64x64xbf16>, %lse: tensor<1x2x64xf32>)
    -> (tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %do, %lse
      {block_sparse = #fa.block_sparse<q_block = 64, kv_block = 64>}
      : (tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>,
         tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>, tensor<1x2x64xf32>)
      -> (tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>)
  return %dq, %dk, %dv : tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>
}
