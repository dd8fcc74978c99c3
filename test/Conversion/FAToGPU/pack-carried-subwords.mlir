// RUN: fa-opt %s --fa-tile --fa-fuse-online-softmax --fa-gpu-distribute="chip=sm_90a" \
// RUN:   --fa-gpu-lower-fragments="chip=sm_90a" | FileCheck %s
// RUN: rm -rf %t && fa-compile --d 128 --block-m 128 --block-n 176 --target sm_90a --name n176 -o %t > /dev/null
// RUN: FileCheck %s --check-prefix=PTX < %t/n176.ptx

// P, computed in iteration j and read by P·V in j + 1, is loop-carried.
// At block_n = 176 one thread holds 88 of its bf16 elements: LLVM splits a
// non-power-of-two vector into scalars where it crosses a block, and ptxas
// gives each 16-bit scalar a 32-bit register (the consumer spilled 270 B).
// fa-gpu-lower-fragments carries it as 44 i32 words instead, packed pair by
// pair where it is truncated (PackCarriedPatterns.cpp).

// CHECK-LABEL: gpu.func @n176(
// CHECK:       scf.if {{.*}} -> (vector<2xf32>, vector<2xf32>, vector<64xf32>, vector<44xi32>)
// CHECK:         arith.truncf {{.*}} : vector<2xf32> to vector<2xbf16>
// CHECK:         vector.bitcast {{.*}} : vector<2xbf16> to vector<1xi32>
// CHECK:       scf.for {{.*}} -> (vector<2xf32>, vector<2xf32>, vector<64xf32>, vector<44xi32>)
// CHECK-NEXT:    vector.bitcast %{{.*}} : vector<44xi32> to vector<88xbf16>
// CHECK-NOT:   vector<88xbf16>, vector<88xbf16>

// A power-of-two count (block_n = 128: 64 elements) stays as it was: LLVM
// keeps it in bf16x2 registers.
// CHECK-LABEL: gpu.func @n128(
// CHECK-NOT:   vector<32xi32>
// CHECK:       scf.for {{.*}} -> (vector<2xf32>, vector<2xf32>, vector<64xf32>, vector<64xbf16>)

// In the PTX every P pair is rounded by one cvt.rn.bf16x2.f32, none
// element by element (what the scalarised vector was).
// PTX-NOT:  cvt.rn.bf16.f32
// PTX:      cvt.rn.bf16x2.f32
// PTX-NOT:  cvt.rn.bf16.f32

func.func @n176(%q: tensor<1x1x512x128xbf16>, %k: tensor<1x1x512x128xbf16>, %v: tensor<1x1x512x128xbf16>)
    -> (tensor<1x1x512x128xbf16>, tensor<1x1x512xf32>) {
  %o, %lse = fa.attention %q, %k, %v
      {tile = #fa.tile<block_m = 128, block_n = 176, stages = 2, warps = 8>}
      : (tensor<1x1x512x128xbf16>, tensor<1x1x512x128xbf16>, tensor<1x1x512x128xbf16>)
      -> (tensor<1x1x512x128xbf16>, tensor<1x1x512xf32>)
  return %o, %lse : tensor<1x1x512x128xbf16>, tensor<1x1x512xf32>
}

func.func @n128(%q: tensor<1x1x512x128xbf16>, %k: tensor<1x1x512x128xbf16>, %v: tensor<1x1x512x128xbf16>)
    -> (tensor<1x1x512x128xbf16>, tensor<1x1x512xf32>) {
  %o, %lse = fa.attention %q, %k, %v
      {tile = #fa.tile<block_m = 128, block_n = 128, stages = 2, warps = 8>}
      : (tensor<1x1x512x128xbf16>, tensor<1x1x512x128xbf16>, tensor<1x1x512x128xbf16>)
      -> (tensor<1x1x512x128xbf16>, tensor<1x1x512xf32>)
  return %o, %lse : tensor<1x1x512x128xbf16>, tensor<1x1x512xf32>
}
