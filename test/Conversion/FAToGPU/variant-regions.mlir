// RUN: fa-opt %s --fa-tile --fa-fuse-online-softmax --fa-gpu-distribute="chip=sm_80" --canonicalize --cse | FileCheck %s --check-prefix=DIST
// RUN: fa-opt %s --fa-tile --fa-fuse-online-softmax --fa-gpu-distribute="chip=sm_80" \
// RUN:   | fa-opt --fa-gpu-lower-fragments="chip=sm_80" --canonicalize --cse \
// RUN:   | FileCheck %s --check-prefix=LOWER --implicit-check-not="fa.score_mod" --implicit-check-not="fa.mask_mod"

// Variant regions on the GPU. fa-gpu-distribute places fa.score_mod and
// fa.mask_mod in the kernel like any tile op: their positions are the
// kernel's (the Q block's first row, the KV tile's first key, M, N), their
// head the grid's (batch = block z, head = block y), and their captures the
// kernel's trailing parameters (KernelAbi.h's captureParams): the captured
// [2, ?] table a buffer with its dynamic extent (capture0, capture0_extent1)
// viewed with the tensor's shape, the f32 scalar as it is (capture1).
// DIST-LABEL: gpu.func @variant(
// DIST-SAME: %[[TABLE:arg[0-9]+]]: memref<?xf32>, %[[EXTENT:arg[0-9]+]]: i64, %[[T:arg[0-9]+]]: f32) kernel
// DIST: %[[N:.*]] = arith.index_cast %[[EXTENT]] : i64 to index
// DIST: %[[VIEW:.*]] = memref.reinterpret_cast %[[TABLE]] to offset: [0], sizes: [2, %[[N]]], strides: [%[[N]], 1] : memref<?xf32> to memref<2x?xf32, strided<[?, 1]>>
// DIST: fa.score_mod %{{.*}} at[%{{.*}}, %{{.*}}] in[%{{.*}}, %{{.*}}] head[%block_id_z, %block_id_y] captures(%[[VIEW]], %[[T]] : memref<2x?xf32, strided<[?, 1]>>, f32) {log2_domain}
// DIST-SAME: #fa.fragment
// DIST: fa.mask_mod %{{.*}} head[%block_id_z, %block_id_y] captures(%[[VIEW]], %[[T]] :

// fa-gpu-lower-fragments inlines the regions per element of the thread's
// fragment: the score in natural units (times ln 2), the table read at
// indices clamped to its extent (memref.dim), the division by the captured
// temperature as div.full (the kernel's approximation, like ex2), the result
// back in log2 units (times log2 e); the mask_mod's i1 selects -inf.
// LOWER-LABEL: gpu.func @variant(
// LOWER: %[[LN2:.*]] = arith.constant 0.693147{{[0-9]*}} : f32
// LOWER: %[[S:.*]] = arith.mulf %{{.*}}, %[[LN2]] : f32
// LOWER: %[[EXT:.*]] = memref.dim %{{.*}}, %c1 : memref<2x?xf32, strided<[?, 1]>>
// LOWER: %[[LAST:.*]] = arith.subi %[[EXT]], %c1 : index
// LOWER: %[[HI:.*]] = arith.minsi %{{.*}}, %[[LAST]] : index
// LOWER: %[[AT:.*]] = arith.maxsi %[[HI]], %c0 : index
// LOWER: %[[BIAS:.*]] = memref.load %{{.*}}[%{{.*}}, %[[AT]]] : memref<2x?xf32, strided<[?, 1]>>
// LOWER: %[[Q:.*]] = llvm.call_intrinsic "llvm.nvvm.div.full"(%[[S]], %{{.*}}) : (f32, f32) -> f32
// LOWER: %[[SUM:.*]] = arith.addf %[[Q]], %[[BIAS]] : f32
// LOWER: arith.mulf %[[SUM]], %{{.*}} : f32
// LOWER: %[[VISIBLE:.*]] = arith.cmpi ule, %{{.*}}, %{{.*}} : index
// LOWER: arith.select %[[VISIBLE]], %{{.*}}, %{{.*}} : f32
func.func @variant(%q: tensor<1x2x128x64xbf16>, %k: tensor<1x2x128x64xbf16>,
                   %v: tensor<1x2x128x64xbf16>, %bias: tensor<2x?xf32>,
                   %t: f32) -> tensor<1x2x128x64xbf16> {
  %o = fa.attention %q, %k, %v captures(%bias, %t)
      {tile = #fa.tile<block_m = 64, block_n = 64, stages = 2, warps = 4>}
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index,
           %tb: tensor<2x?xf32>, %tt: f32):
        %d = arith.subi %i, %j : index
        %x = tensor.extract %tb[%h, %d] : tensor<2x?xf32>
        %y = arith.divf %s, %tt : f32
        %r = arith.addf %y, %x : f32
        fa.yield %r : f32
      }
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index,
           %tb: tensor<2x?xf32>, %tt: f32):
        %c = arith.cmpi ule, %j, %i : index
        fa.yield %c : i1
      }
      : (tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>,
         tensor<2x?xf32>, f32) -> tensor<1x2x128x64xbf16>
  return %o : tensor<1x2x128x64xbf16>
}
