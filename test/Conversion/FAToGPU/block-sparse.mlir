// RUN: fa-opt %s --fa-tile | FileCheck %s --check-prefix=TILE
// RUN: fa-opt %s --fa-tile --fa-fuse-online-softmax --fa-gpu-distribute="chip=sm_80" --canonicalize --cse | FileCheck %s --check-prefix=AMPERE
// RUN: sed -e "s/warps = 4/warps = 8/" %s | fa-opt --fa-tile --fa-fuse-online-softmax --fa-gpu-distribute="chip=sm_90a" --canonicalize --cse | FileCheck %s --check-prefix=HOPPER

// A block-sparse attention (#fa.block_sparse): the kernel takes a block
// mask at launch (KernelAbi.h's BlockMask) and walks its lists instead of
// a KV range.

// fa-tile carries the declaration onto the loop nest beside its tiling,
// whose block_n (64) divides the block mask's kv_block (128).
// TILE-LABEL: func.func @sparse(
// TILE: } {fa.block_sparse = #fa.block_sparse<q_block = 128, kv_block = 128>, fa.tile = #fa.tile<block_m = 128, block_n = 64, stages = 2, warps = 4>}

// sm_80: the block mask's parameters follow the ABI table's others. The
// Q block's counts are read once (its row: b·stride_b + h·stride_h + Q
// block); the tiles of its partial blocks come first, in a loop that
// evaluates the mask_mod, then its full blocks' in one that does not and
// keeps only the sequence bound (fa.apply_mask <none>). Each tile's key
// is read from the lists (two 64-key tiles per 128-key block).
// AMPERE-LABEL: gpu.func @sparse(
// AMPERE-SAME: %[[NUM:arg[0-9]+]]: memref<?xi32>, %[[IDX:arg[0-9]+]]: memref<?xi32>, %[[FNUM:arg[0-9]+]]: memref<?xi32>, %[[FIDX:arg[0-9]+]]: memref<?xi32>, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64) kernel
// AMPERE: memref.load %[[NUM]][%[[ROW:.*]]] : memref<?xi32>
// AMPERE: memref.load %[[FNUM]][%[[ROW]]] : memref<?xi32>
// AMPERE: scf.for %{{.*}} = %c0 to %[[PARTIAL:[0-9]+]]
// AMPERE: memref.load %[[IDX]]
// AMPERE: memref.load %[[FIDX]]
// AMPERE: fa.mask_mod
// AMPERE: fa.apply_mask %{{.*}}, <none>
// AMPERE: scf.yield
// AMPERE: scf.for %{{.*}} = %[[PARTIAL]] to
// AMPERE: memref.load %[[IDX]]
// AMPERE-NOT: fa.mask_mod
// AMPERE: fa.apply_mask %{{.*}}, <none>
// AMPERE-NOT: fa.mask_mod
// AMPERE: gpu.return

// sm_90a (the tile with its chip's 8 warps): the producer reads each tile's key from the lists for its TMA
// copy; the consumers' masked loop runs the partial blocks' tiles, the
// unmasked one the full blocks'.
// HOPPER-LABEL: gpu.func @sparse(
// HOPPER-SAME: %[[IDX:arg[0-9]+]]: memref<?xi32>, %{{.*}}: memref<?xi32>, %[[FIDX:arg[0-9]+]]: memref<?xi32>
// HOPPER: %[[ENTRY:.*]] = memref.load %[[IDX]]
// HOPPER: memref.load %[[FIDX]]
// HOPPER: %[[KEY:.*]] = arith.index_cast %{{.*}} : index to i32
// HOPPER: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg1, %{{.*}}, box[%c0_i32, %[[KEY]],
// HOPPER: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg2, %{{.*}}, box[%c0_i32, %[[KEY]],
// HOPPER: fa.mask_mod
// HOPPER: gpu.return

func.func @sparse(%q: tensor<1x2x256x64xbf16>, %k: tensor<1x2x512x64xbf16>,
                  %v: tensor<1x2x512x64xbf16>) -> tensor<1x2x256x64xbf16> {
  %o = fa.attention %q, %k, %v
      {block_sparse = #fa.block_sparse<q_block = 128, kv_block = 128>,
       tile = #fa.tile<block_m = 128, block_n = 64, stages = 2, warps = 4>}
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c = arith.cmpi ule, %j, %i : index
        fa.yield %c : i1
      }
      : (tensor<1x2x256x64xbf16>, tensor<1x2x512x64xbf16>, tensor<1x2x512x64xbf16>)
      -> tensor<1x2x256x64xbf16>
  return %o : tensor<1x2x256x64xbf16>
}
