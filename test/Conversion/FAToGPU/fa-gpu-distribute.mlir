// RUN: fa-opt %s --split-input-file --fa-tile --fa-fuse-online-softmax --fa-gpu-distribute="chip=sm_80" --canonicalize --cse | FileCheck %s

// fa-gpu-distribute places the fused loop (fa-fuse-online-softmax.mlir) in
// one sm_80 kernel. The schedule (grid, shared memory, cp.async) is gpu,
// nvvm and llvm ops; the math is still the L2 tile ops, now on tensors whose
// encoding says how the tile is spread over the threads:
//   #fa.fragment<warps, mTiles>    MMA accumulator tiles and their rows,
//     quadPartial = true             rows summed only over a lane's columns,
//     deferredScale = c              scores held as q·k, c = scale·log2(e)
//                                    (the tanh of a softcap: c = cap·log2(e));
//   #fa.operand<warps, mTiles>     MMA A-operand fragments in registers;
//   #fa.shared<rowElements = W>    a tile in swizzled shared memory.
// FileCheck captures stand in for attribute aliases: [[ROW]], [[PARTIAL]],
// [[SCORES]], [[OPERAND]], [[SHARED]] and [[WG]] are bound once per kernel.

// Causal, D = 64, the default tile (block_m = 64, 4 warps: one m16 tile
// per warp).
// CHECK-LABEL: gpu.module @fa_kernels
// Dynamic shared memory through a public zero-sized global (docs/toolchain.md).
// CHECK: memref.global "public" @fa_smem : memref<0xi8, #gpu.address_space<workgroup>> {alignment = 1024 : i64}
// The ABI (runtime/lib/KernelAbi.cpp): q, k, v, o, lse; batch, q_heads,
// kv_heads, q_len, kv_len; q/k/v/o strides (b, h, s); lse strides (b, h).
// CHECK-LABEL: gpu.func @causal_d64
// CHECK-SAME: (%[[Q:[^:]+]]: memref<?xbf16>, %[[K:[^:]+]]: memref<?xbf16>, %[[V:[^:]+]]: memref<?xbf16>, %[[O:[^:]+]]: memref<?xbf16>, %[[LSE:[^:]+]]: memref<?xf32>,
// CHECK-SAME: %{{[^:]+}}: i64, %[[HQ:[^:]+]]: i64, %[[HKV:[^:]+]]: i64, %[[M:[^:]+]]: i64, %[[N:[^:]+]]: i64,
// CHECK-SAME: {{(%[^:]+: i64, ){9}()}}%[[OSB:[^:]+]]: i64, %[[OSH:[^:]+]]: i64, %[[OSS:[^:]+]]: i64, %[[LSB:[^:]+]]: i64, %[[LSH:[^:]+]]: i64)
// CHECK-SAME: kernel attributes {known_block_size = array<i32: 128, 1, 1>}
// Running statistics, accumulator and the 1 / l epilogue constants:
// CHECK-DAG: %[[ONE:[^ ]+]] = arith.constant dense<1.000000e+00> : tensor<64xf32, [[ROW:#fa.fragment<warps = 4, mTiles = 1>]]>
// CHECK-DAG: %[[ZERO:[^ ]+]] = arith.constant dense<0.000000e+00> : tensor<64xf32, [[ROW]]>
// CHECK-DAG: %[[LN2:[^ ]+]] = arith.constant dense<0.693147182> : tensor<64xf32, [[ROW]]>
// CHECK-DAG: %[[ACC0:[^ ]+]] = arith.constant dense<0.000000e+00> : tensor<64x64xf32, [[ROW]]>
// CHECK-DAG: %[[L0:[^ ]+]] = arith.constant dense<0.000000e+00> : tensor<64xf32, [[PARTIAL:#fa.fragment<warps = 4, mTiles = 1, quadPartial = true>]]>
// CHECK-DAG: %[[M0:[^ ]+]] = arith.constant dense<0xFF800000> : tensor<64xf32, [[ROW]]>
//
// Grid mapping: x = Q block, heaviest (causal: last) blocks first; y = query
// head; z = batch. The KV head of a GQA group is head / (q_heads / kv_heads).
// CHECK: %[[BX:[^ ]+]] = gpu.block_id  x
// CHECK: %[[GX:[^ ]+]] = gpu.grid_dim  x
// CHECK: %[[LASTBLOCK:[^ ]+]] = arith.subi %[[GX]], %c1 : index
// CHECK: %[[QBLOCK:[^ ]+]] = arith.subi %[[LASTBLOCK]], %[[BX]] : index
// CHECK: %[[HEAD:[^ ]+]] = gpu.block_id  y
// CHECK: %[[BATCH:[^ ]+]] = gpu.block_id  z
// CHECK: %[[HKVI:[^ ]+]] = arith.index_cast %[[HKV]] : i64 to index
// CHECK: %[[HQI:[^ ]+]] = arith.index_cast %[[HQ]] : i64 to index
// CHECK: %[[GROUP:[^ ]+]] = arith.divui %[[HQI]], %[[HKVI]] : index
// CHECK: %[[KVHEAD:[^ ]+]] = arith.divui %[[HEAD]], %[[GROUP]] : index
// CHECK: %[[Q0:[^ ]+]] = arith.muli %[[QBLOCK]], %c64 : index
// CHECK: %[[MI:[^ ]+]] = arith.index_cast %[[M]] : i64 to index
// CHECK: %[[NI:[^ ]+]] = arith.index_cast %[[N]] : i64 to index
//
// Shared memory: Q [64][64], K and V [2 stages][64][64], 40 KiB.
// CHECK: %[[SMEM:[^ ]+]] = memref.get_global @fa_smem
// CHECK: %[[BYTES:[^ ]+]] = memref.reinterpret_cast %[[SMEM]] to offset: [0], sizes: [40960], strides: [1] : memref<0xi8, [[WG:#gpu.address_space<workgroup>]]> to memref<40960xi8, [[WG]]>
// CHECK: %[[QS:[^ ]+]] = memref.view %[[BYTES]][%c0][] : memref<40960xi8, [[WG]]> to memref<64x64xbf16, [[WG]]>
// CHECK: %[[KS:[^ ]+]] = memref.view %[[BYTES]][%c8192][] : memref<40960xi8, [[WG]]> to memref<2x64x64xbf16, [[WG]]>
// CHECK: %[[VS:[^ ]+]] = memref.view %[[BYTES]][%c24576][] : memref<40960xi8, [[WG]]> to memref<2x64x64xbf16, [[WG]]>
//
// The cp.async prologue: 16-byte copies, nvvm.cp.async (.cg) with a
// source size of 16 or 0 (rows past the sequence end are zero-filled), 4
// per thread for each 64 x 64 tile. A thread's 4 rounds are 16 rows (2048
// bytes) apart, the same swizzle phase: they share one 32-bit shared
// address (the shared memory's plus the thread's offset, as one pointer),
// and the round and the tile's shift (Q 0, K 8192, V 24576) are a
// constant GEP (the instruction's immediate). Q and K_0
// form the first group, V_0 the second; the kernel starts once the first
// has landed.
// CHECK: %[[SPTR:[^ ]+]] = memref.extract_aligned_pointer_as_index %[[BYTES]] : memref<40960xi8, [[WG]]> -> index
// CHECK-NEXT: %[[SBASE:[^ ]+]] = arith.index_castui %[[SPTR]] : index to i32
// CHECK-NEXT: memref.extract_aligned_pointer_as_index %[[Q]] : memref<?xbf16> -> index
// CHECK: %[[SIZE:[^ ]+]] = arith.select %{{[^,]+}}, %c16_i32, %c0_i32 : i32
// CHECK: %[[ADDR:[^ ]+]] = arith.addi %[[SBASE]], %[[LANE:[^ ]+]] : i32
// CHECK: %[[ADDRP:[^ ]+]] = llvm.inttoptr %[[ADDR]] : i32 to !llvm.ptr<3>
// CHECK-NEXT: nvvm.cp.async.shared.global %[[ADDRP]], %{{[^,]+}}, 16, cache =  cg, %[[SIZE]] : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK: %[[G:[^ ]+]] = llvm.getelementptr %[[ADDRP]][2048] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK-NEXT: nvvm.cp.async.shared.global %[[G]], %{{[^,]+}}, 16, cache =  cg
// CHECK: %[[G:[^ ]+]] = llvm.getelementptr %[[ADDRP]][4096] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK-NEXT: nvvm.cp.async.shared.global %[[G]], %{{[^,]+}}, 16, cache =  cg
// CHECK: %[[G:[^ ]+]] = llvm.getelementptr %[[ADDRP]][6144] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK-NEXT: nvvm.cp.async.shared.global %[[G]], %{{[^,]+}}, 16, cache =  cg
// CHECK-NEXT: scf.if %[[HASKV:[^ ]+]] {
// CHECK: memref.extract_aligned_pointer_as_index %[[K]] : memref<?xbf16> -> index
// CHECK: %[[G:[^ ]+]] = llvm.getelementptr %[[ADDRP]][8192] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK-NEXT: nvvm.cp.async.shared.global %[[G]], %{{[^,]+}}, 16, cache =  cg
// CHECK: %[[G:[^ ]+]] = llvm.getelementptr %[[ADDRP]][10240] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK-NEXT: nvvm.cp.async.shared.global %[[G]], %{{[^,]+}}, 16, cache =  cg
// CHECK: %[[G:[^ ]+]] = llvm.getelementptr %[[ADDRP]][12288] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK-NEXT: nvvm.cp.async.shared.global %[[G]], %{{[^,]+}}, 16, cache =  cg
// CHECK: %[[G:[^ ]+]] = llvm.getelementptr %[[ADDRP]][14336] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK-NEXT: nvvm.cp.async.shared.global %[[G]], %{{[^,]+}}, 16, cache =  cg
// CHECK-NEXT: {{^ *\}$}}
// CHECK-NEXT: nvvm.cp.async.commit.group
// CHECK-NEXT: scf.if %[[HASKV]] {
// CHECK: memref.extract_aligned_pointer_as_index %[[V]] : memref<?xbf16> -> index
// CHECK: %[[G:[^ ]+]] = llvm.getelementptr %[[ADDRP]][24576] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK-NEXT: nvvm.cp.async.shared.global %[[G]], %{{[^,]+}}, 16, cache =  cg
// CHECK: %[[G:[^ ]+]] = llvm.getelementptr %[[ADDRP]][26624] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK-NEXT: nvvm.cp.async.shared.global %[[G]], %{{[^,]+}}, 16, cache =  cg
// CHECK: %[[G:[^ ]+]] = llvm.getelementptr %[[ADDRP]][28672] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK-NEXT: nvvm.cp.async.shared.global %[[G]], %{{[^,]+}}, 16, cache =  cg
// CHECK: %[[G:[^ ]+]] = llvm.getelementptr %[[ADDRP]][30720] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK-NEXT: nvvm.cp.async.shared.global %[[G]], %{{[^,]+}}, 16, cache =  cg
// CHECK-NEXT: {{^ *\}$}}
// CHECK-NEXT: nvvm.cp.async.commit.group
// CHECK-NEXT: nvvm.cp.async.wait.group 1
// CHECK-NEXT: gpu.barrier
//
// Q as operand fragments, once: roundup(D, 16) · mTiles = 64 <= 128
// registers' worth, so it stays in registers for the whole KV loop.
// CHECK-NEXT: %[[QTILE:[^ ]+]] = fa.shared_tile %[[QS]] : memref<64x64xbf16, [[WG]]> -> tensor<64x64xbf16, [[SHARED:#fa.shared<rowElements = 64>]]>
// CHECK-NEXT: %[[QA:[^ ]+]] = fa.load_operand %[[QTILE]] : tensor<64x64xbf16, [[SHARED]]> -> tensor<64x64xbf16, [[OPERAND:#fa.operand<warps = 4, mTiles = 1>]]>
//
// The KV loop carries m, l (quad-partial) and acc on fragments.
// CHECK-NEXT: %[[LOOP:[^ ]+]]:3 = scf.for %[[J:[^ ]+]] = %c0 to %[[NKV:[^ ]+]] step %c1
// CHECK-SAME: iter_args(%[[MOLD:[^ ]+]] = %[[M0]], %[[L:[^ ]+]] = %[[L0]], %[[ACC:[^ ]+]] = %[[ACC0]])
// CHECK-SAME: -> (tensor<64xf32, [[ROW]]>, tensor<64xf32, [[PARTIAL]]>, tensor<64x64xf32, [[ROW]]>)
// CHECK: %[[KV0:[^ ]+]] = arith.muli %[[J]], %c64 : index
// CHECK: %[[STAGE:[^ ]+]] = arith.remui %[[J]], %c2 : index
// CHECK: %[[NEXT:[^ ]+]] = arith.addi %[[J]], %c1 : index
// CHECK: %[[HASNEXT:[^ ]+]] = arith.cmpi slt, %[[NEXT]], %[[NKV]] : index
// CHECK: %[[NEXTSTAGE:[^ ]+]] = arith.remui %[[NEXT]], %c2 : index
// K_{j+1} is prefetched into the other stage while S_j is computed: the
// stage's bytes join the shared memory's address, the thread's offset is
// the prologue's.
// CHECK: scf.if %[[HASNEXT]] {
// CHECK: %[[STAGEBYTES:[^ ]+]] = arith.muli %[[NEXTSTAGE]], %c8192 : index
// CHECK-NEXT: %[[STAGEOFF:[^ ]+]] = arith.index_castui %[[STAGEBYTES]] : index to i32
// CHECK-NEXT: %[[STAGEADDR:[^ ]+]] = arith.addi %[[SBASE]], %[[STAGEOFF]] : i32
// CHECK-NEXT: memref.extract_aligned_pointer_as_index %[[K]] : memref<?xbf16> -> index
// CHECK: %[[KADDR:[^ ]+]] = arith.addi %[[STAGEADDR]], %[[LANE]] : i32
// CHECK: %[[KADDRP:[^ ]+]] = llvm.inttoptr %[[KADDR]] : i32 to !llvm.ptr<3>
// CHECK-NEXT: %[[G:[^ ]+]] = llvm.getelementptr %[[KADDRP]][8192] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK-NEXT: nvvm.cp.async.shared.global %[[G]], %{{[^,]+}}, 16, cache =  cg
// CHECK: %[[G:[^ ]+]] = llvm.getelementptr %[[KADDRP]][10240] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK-NEXT: nvvm.cp.async.shared.global %[[G]], %{{[^,]+}}, 16, cache =  cg
// CHECK: %[[G:[^ ]+]] = llvm.getelementptr %[[KADDRP]][12288] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK-NEXT: nvvm.cp.async.shared.global %[[G]], %{{[^,]+}}, 16, cache =  cg
// CHECK: %[[G:[^ ]+]] = llvm.getelementptr %[[KADDRP]][14336] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK-NEXT: nvvm.cp.async.shared.global %[[G]], %{{[^,]+}}, 16, cache =  cg
// CHECK-NEXT: {{^ *\}$}}
// CHECK-NEXT: nvvm.cp.async.commit.group
// CHECK-NEXT: %[[KT:[^ ]+]] = fa.shared_tile %[[KS]][%[[STAGE]]] : memref<2x64x64xbf16, [[WG]]> -> tensor<64x64xbf16, [[SHARED]]>
// S = Q·K_jᵀ, held unscaled: deferredScale = scale · log2(e) = 0.125 · 1.4427.
// CHECK-NEXT: %[[S:[^ ]+]] = fa.qk_scores %[[QA]], %[[KT]] {log2_domain, scale = 1.250000e-01 : f32}
// CHECK-SAME: : tensor<64x64xbf16, [[OPERAND]]>, tensor<64x64xbf16, [[SHARED]]> -> tensor<64x64xf32, [[SCORES:#fa.fragment<warps = 4, mTiles = 1, deferredScale = 0.180336878 : f32>]]>
// Causal mask at the tile's (row, column) origin in the (q_len, kv_len) problem.
// CHECK-NEXT: %[[SM:[^ ]+]] = fa.apply_mask %[[S]], <causal> at[%[[Q0]], %[[KV0]]] in[%[[MI]], %[[NI]]] : tensor<64x64xf32, [[SCORES]]>
// m_new = max(m, rowmax(S)): the row max applies the deferred scale, once per row.
// CHECK-NEXT: %[[BLOCKMAX:[^ ]+]] = fa.row_max %[[SM]] : tensor<64x64xf32, [[SCORES]]> -> tensor<64xf32, [[ROW]]>
// CHECK-NEXT: %[[MNEW:[^ ]+]] = arith.maxnumf %[[MOLD]], %[[BLOCKMAX]] : tensor<64xf32, [[ROW]]>
// alpha = exp2(m - m_new), the rescale of what is accumulated so far.
// CHECK-NEXT: %[[ALPHA:[^ ]+]] = fa.exp_shifted %[[MOLD]], %[[MNEW]] {base2} : tensor<64xf32, [[ROW]]>, tensor<64xf32, [[ROW]]>{{ *$}}
// P = exp2(c·S - m_new) (the scale folded into the FFMA) has a plain layout,
// and is rounded to bf16 at once: only the MMA reads the narrow copy.
// CHECK-NEXT: %[[P:[^ ]+]] = fa.exp_shifted %[[SM]], %[[MNEW]] {base2} : tensor<64x64xf32, [[SCORES]]>, tensor<64xf32, [[ROW]]> -> tensor<64x64xf32, [[ROW]]>
// CHECK-NEXT: %[[P16:[^ ]+]] = arith.truncf %[[P]] : tensor<64x64xf32, [[ROW]]> to tensor<64x64xbf16, [[ROW]]>
// l = alpha·l + rowsum(P), with l quad-partial: fa.scale_rows on 1-D rows
// (the L2 arith.mulf), and each lane sums only its own columns.
// CHECK-NEXT: %[[LSCALED:[^ ]+]] = fa.scale_rows %[[L]], %[[ALPHA]] : tensor<64xf32, [[PARTIAL]]>, tensor<64xf32, [[ROW]]>
// CHECK-NEXT: %[[ACCSCALED:[^ ]+]] = fa.scale_rows %[[ACC]], %[[ALPHA]] : tensor<64x64xf32, [[ROW]]>, tensor<64xf32, [[ROW]]>
// CHECK-NEXT: %[[PSUM:[^ ]+]] = fa.row_sum %[[P]] : tensor<64x64xf32, [[ROW]]> -> tensor<64xf32, [[PARTIAL]]>
// CHECK-NEXT: %[[LNEW:[^ ]+]] = arith.addf %[[LSCALED]], %[[PSUM]] : tensor<64xf32, [[PARTIAL]]>
// Wait for V_j (K_{j+1} and an empty group may stay in flight), then
// prefetch V_{j+1}.
// CHECK-NEXT: nvvm.cp.async.commit.group
// CHECK-NEXT: nvvm.cp.async.wait.group 2
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: scf.if %[[HASNEXT]] {
// CHECK: %[[VSTAGEBYTES:[^ ]+]] = arith.muli %[[NEXTSTAGE]], %c8192 : index
// CHECK-NEXT: %[[VSTAGEOFF:[^ ]+]] = arith.index_castui %[[VSTAGEBYTES]] : index to i32
// CHECK-NEXT: %[[VSTAGEADDR:[^ ]+]] = arith.addi %[[SBASE]], %[[VSTAGEOFF]] : i32
// CHECK-NEXT: memref.extract_aligned_pointer_as_index %[[V]] : memref<?xbf16> -> index
// CHECK: %[[VADDR:[^ ]+]] = arith.addi %[[VSTAGEADDR]], %[[LANE]] : i32
// CHECK: %[[VADDRP:[^ ]+]] = llvm.inttoptr %[[VADDR]] : i32 to !llvm.ptr<3>
// CHECK-NEXT: %[[G:[^ ]+]] = llvm.getelementptr %[[VADDRP]][24576] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK-NEXT: nvvm.cp.async.shared.global %[[G]], %{{[^,]+}}, 16, cache =  cg
// CHECK: %[[G:[^ ]+]] = llvm.getelementptr %[[VADDRP]][26624] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK-NEXT: nvvm.cp.async.shared.global %[[G]], %{{[^,]+}}, 16, cache =  cg
// CHECK: %[[G:[^ ]+]] = llvm.getelementptr %[[VADDRP]][28672] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK-NEXT: nvvm.cp.async.shared.global %[[G]], %{{[^,]+}}, 16, cache =  cg
// CHECK: %[[G:[^ ]+]] = llvm.getelementptr %[[VADDRP]][30720] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK-NEXT: nvvm.cp.async.shared.global %[[G]], %{{[^,]+}}, 16, cache =  cg
// CHECK-NEXT: {{^ *\}$}}
// CHECK-NEXT: nvvm.cp.async.commit.group
// acc = alpha·acc + P·V_j
// CHECK-NEXT: %[[VT:[^ ]+]] = fa.shared_tile %[[VS]][%[[STAGE]]] : memref<2x64x64xbf16, [[WG]]> -> tensor<64x64xbf16, [[SHARED]]>
// CHECK-NEXT: %[[ACCNEW:[^ ]+]] = fa.matmul %[[P16]], %[[VT]], %[[ACCSCALED]] : tensor<64x64xbf16, [[ROW]]>, tensor<64x64xbf16, [[SHARED]]>, tensor<64x64xf32, [[ROW]]>
// K_{j+1} has landed before the next iteration reads it.
// CHECK-NEXT: nvvm.cp.async.commit.group
// CHECK-NEXT: nvvm.cp.async.wait.group 2
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: scf.yield %[[MNEW]], %[[LNEW]], %[[ACCNEW]]
// CHECK-NEXT: }
//
// Epilogue: l reduced over the quad once (fa.convert_layout), O = acc / l
// (0 for a row with no key), LSE = m·ln 2 + ln l.
// CHECK-NEXT: %[[MNAT:[^ ]+]] = arith.mulf %[[LOOP]]#0, %[[LN2]] : tensor<64xf32, [[ROW]]>
// CHECK-NEXT: %[[LFULL:[^ ]+]] = fa.convert_layout %[[LOOP]]#1 : tensor<64xf32, [[PARTIAL]]> -> tensor<64xf32, [[ROW]]>
// CHECK-NEXT: %[[EMPTY:[^ ]+]] = arith.cmpf oeq, %[[LFULL]], %[[ZERO]] : tensor<64xf32, [[ROW]]>
// CHECK-NEXT: %[[RECIP:[^ ]+]] = arith.divf %[[ONE]], %[[LFULL]] : tensor<64xf32, [[ROW]]>
// CHECK-NEXT: %[[INVL:[^ ]+]] = arith.select %[[EMPTY]], %[[ZERO]], %[[RECIP]] : tensor<64xi1, [[ROW]]>, tensor<64xf32, [[ROW]]>
// CHECK-NEXT: %[[OUT:[^ ]+]] = fa.scale_rows %[[LOOP]]#2, %[[INVL]] : tensor<64x64xf32, [[ROW]]>, tensor<64xf32, [[ROW]]>
// CHECK-NEXT: %[[LOGL:[^ ]+]] = math.log %[[LFULL]] : tensor<64xf32, [[ROW]]>
// CHECK-NEXT: %[[LSEV:[^ ]+]] = arith.addf %[[MNAT]], %[[LOGL]] : tensor<64xf32, [[ROW]]>
// CHECK-NEXT: %[[O16:[^ ]+]] = arith.truncf %[[OUT]] : tensor<64x64xf32, [[ROW]]> to tensor<64x64xbf16, [[ROW]]>
// O rows [q0, q_len) at o + batch·o_stride_b + head·o_stride_h, rows o_stride_s apart.
// CHECK-NEXT: %[[OSSI:[^ ]+]] = arith.index_cast %[[OSS]] : i64 to index
// CHECK-NEXT: %[[OSBI:[^ ]+]] = arith.index_cast %[[OSB]] : i64 to index
// CHECK-NEXT: %[[OSHI:[^ ]+]] = arith.index_cast %[[OSH]] : i64 to index
// CHECK-NEXT: %[[OHEAD:[^ ]+]] = arith.muli %[[HEAD]], %[[OSHI]] : index
// CHECK-NEXT: %[[OBATCH:[^ ]+]] = arith.muli %[[BATCH]], %[[OSBI]] : index
// CHECK-NEXT: %[[OBASE:[^ ]+]] = arith.addi %[[OBATCH]], %[[OHEAD]] : index
// CHECK-NEXT: fa.store_fragment %[[O16]], %[[O]][%[[OBASE]]] rows[%[[Q0]], %[[MI]]] stride %[[OSSI]] : tensor<64x64xbf16, [[ROW]]>, memref<?xbf16>
// The LSE row, contiguous.
// CHECK-NEXT: %[[LSBI:[^ ]+]] = arith.index_cast %[[LSB]] : i64 to index
// CHECK-NEXT: %[[LSHI:[^ ]+]] = arith.index_cast %[[LSH]] : i64 to index
// CHECK-NEXT: %[[LHEAD:[^ ]+]] = arith.muli %[[HEAD]], %[[LSHI]] : index
// CHECK-NEXT: %[[LBATCH:[^ ]+]] = arith.muli %[[BATCH]], %[[LSBI]] : index
// CHECK-NEXT: %[[LBASE:[^ ]+]] = arith.addi %[[LBATCH]], %[[LHEAD]] : index
// CHECK-NEXT: fa.store_fragment %[[LSEV]], %[[LSE]][%[[LBASE]]] rows[%[[Q0]], %[[MI]]] : tensor<64xf32, [[ROW]]>, memref<?xf32>
// CHECK-NEXT: gpu.return
// The host function is gone: the kernel replaces it.
// CHECK-NOT: func.func
func.func @causal_d64(%q: tensor<1x1x128x64xbf16>, %k: tensor<1x1x128x64xbf16>, %v: tensor<1x1x128x64xbf16>)
    -> (tensor<1x1x128x64xbf16>, tensor<1x1x128xf32>) {
  %o, %lse = fa.attention %q, %k, %v {mask = #fa.mask<causal>}
      : (tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>)
      -> (tensor<1x1x128x64xbf16>, tensor<1x1x128xf32>)
  return %o, %lse : tensor<1x1x128x64xbf16>, tensor<1x1x128xf32>
}

// -----

// Softcap: S = cap·log2(e)·tanh(scale·q·k / cap) is formed per score, on
// the fragments; fa.qk_scores carries the softcap. The registers hold the
// tanh: deferredScale = cap·log2(e) = 30 · 1.4427 (folded into the row max
// and the exponent's FFMA, as for plain scores).
// CHECK-LABEL: gpu.func @softcap
// CHECK: %[[QA:[^ ]+]] = fa.load_operand %{{.*}} -> tensor<64x64xbf16, [[OPERAND:#fa.operand<warps = 4, mTiles = 1>]]>
// CHECK: scf.for
// CHECK: %[[KT:[^ ]+]] = fa.shared_tile
// CHECK-NEXT: %[[S:[^ ]+]] = fa.qk_scores %[[QA]], %[[KT]] {log2_domain, scale = 1.250000e-01 : f32, softcap = 3.000000e+01 : f32}
// CHECK-SAME: -> tensor<64x64xf32, [[SCORES:#fa.fragment<warps = 4, mTiles = 1, deferredScale = 43.2808495 : f32>]]>
// No mask: fa.apply_mask <none> still clips the last KV tile.
// CHECK-NEXT: %[[SM:[^ ]+]] = fa.apply_mask %[[S]], <none> at[%{{.*}}, %{{.*}}] in[%{{.*}}, %{{.*}}] : tensor<64x64xf32, [[SCORES]]>
// CHECK-NEXT: %[[BLOCKMAX:[^ ]+]] = fa.row_max %[[SM]] : tensor<64x64xf32, [[SCORES]]> -> tensor<64xf32, [[ROW:#fa.fragment<warps = 4, mTiles = 1>]]>
// CHECK-NEXT: %[[MNEW:[^ ]+]] = arith.maxnumf %{{.*}}, %[[BLOCKMAX]]
// CHECK-NEXT: fa.exp_shifted
// CHECK-NEXT: %[[P:[^ ]+]] = fa.exp_shifted %[[SM]], %[[MNEW]] {base2} : tensor<64x64xf32, [[SCORES]]>, tensor<64xf32, [[ROW]]> -> tensor<64x64xf32, [[ROW]]>
// CHECK: gpu.return
func.func @softcap(%q: tensor<1x1x128x64xbf16>, %k: tensor<1x1x128x64xbf16>, %v: tensor<1x1x128x64xbf16>)
    -> tensor<1x1x128x64xbf16> {
  %o = fa.attention %q, %k, %v {softcap = 30.0 : f32}
      : (tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>) -> tensor<1x1x128x64xbf16>
  return %o : tensor<1x1x128x64xbf16>
}

// -----

// ALiBi: the kernel takes the slopes after lse and their batch stride last
// (0 for [Hq] slopes, Hq for [B, Hq]); each block loads its head's slope once
// and fa.alibi_bias adds slope·(column - row) at the kernel's coordinates,
// before the mask. Scores are biased per element, so not deferred.
// CHECK-LABEL: gpu.func @alibi
// CHECK-SAME: (%{{[^:]+}}: memref<?xbf16>, %{{[^:]+}}: memref<?xbf16>, %{{[^:]+}}: memref<?xbf16>, %{{[^:]+}}: memref<?xbf16>, %{{[^:]+}}: memref<?xf32>, %[[SLOPES:[^:]+]]: memref<?xf32>,
// CHECK-SAME: %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %[[M:[^:]+]]: i64, %[[N:[^:]+]]: i64,
// CHECK-SAME: {{(%[^:]+: i64, ){14}()}}%[[ASB:[^:]+]]: i64)
// CHECK-NOT: deferredScale
// CHECK: %[[HEAD:[^ ]+]] = gpu.block_id  y
// CHECK: %[[BATCH:[^ ]+]] = gpu.block_id  z
// CHECK: %[[Q0:[^ ]+]] = arith.muli %{{.*}}, %c64 : index
// CHECK: %[[MI:[^ ]+]] = arith.index_cast %[[M]] : i64 to index
// CHECK: %[[NI:[^ ]+]] = arith.index_cast %[[N]] : i64 to index
// CHECK: gpu.barrier
// CHECK-NEXT: %[[ASBI:[^ ]+]] = arith.index_cast %[[ASB]] : i64 to index
// CHECK-NEXT: %[[SROW:[^ ]+]] = arith.muli %[[BATCH]], %[[ASBI]] : index
// CHECK-NEXT: %[[SIDX:[^ ]+]] = arith.addi %[[SROW]], %[[HEAD]] : index
// CHECK-NEXT: %[[SLOPE:[^ ]+]] = memref.load %[[SLOPES]][%[[SIDX]]] : memref<?xf32>
// CHECK: scf.for %[[J:[^ ]+]] =
// CHECK-NEXT: %[[KV0:[^ ]+]] = arith.muli %[[J]], %c64 : index
// CHECK: %[[S:[^ ]+]] = fa.qk_scores
// CHECK-SAME: -> tensor<64x64xf32, [[ROW:#fa.fragment<warps = 4, mTiles = 1>]]>
// CHECK-NEXT: %[[SB:[^ ]+]] = fa.alibi_bias %[[S]], %[[SLOPE]] at[%[[Q0]], %[[KV0]]] in[%[[MI]], %[[NI]]] {log2_domain} : tensor<64x64xf32, [[ROW]]>
// CHECK-NEXT: %{{.*}} = fa.apply_mask %[[SB]], <causal> at[%[[Q0]], %[[KV0]]] in[%[[MI]], %[[NI]]] : tensor<64x64xf32, [[ROW]]>
// CHECK-NOT: deferredScale
// CHECK: gpu.return
func.func @alibi(%q: tensor<1x2x128x64xbf16>, %k: tensor<1x2x128x64xbf16>, %v: tensor<1x2x128x64xbf16>, %slopes: tensor<2xf32>)
    -> (tensor<1x2x128x64xbf16>, tensor<1x2x128xf32>) {
  %o, %lse = fa.attention %q, %k, %v alibi(%slopes) {mask = #fa.mask<causal>}
      : (tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<2xf32>)
      -> (tensor<1x2x128x64xbf16>, tensor<1x2x128xf32>)
  return %o, %lse : tensor<1x2x128x64xbf16>, tensor<1x2x128xf32>
}

// -----

// D = 256, f16: roundup(D, 16) · mTiles = 256 > 128, so Q is not held in
// registers; fa.qk_scores reads its A operand from #fa.shared each KV tile.
// 160 KiB of shared memory: Q [64][256], K and V [2][64][256].
// CHECK-LABEL: gpu.func @d256_f16
// CHECK: memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [163840], strides: [1]
// CHECK: %[[QS:[^ ]+]] = memref.view %{{.*}}[%c0][] : memref<163840xi8, [[WG:#gpu.address_space<workgroup>]]> to memref<64x256xf16, [[WG]]>
// CHECK: %[[KS:[^ ]+]] = memref.view %{{.*}}[%c32768][] : memref<163840xi8, [[WG]]> to memref<2x64x256xf16, [[WG]]>
// CHECK: %[[VS:[^ ]+]] = memref.view %{{.*}}[%c98304][] : memref<163840xi8, [[WG]]> to memref<2x64x256xf16, [[WG]]>
// CHECK: %[[QT:[^ ]+]] = fa.shared_tile %[[QS]] : memref<64x256xf16, [[WG]]> -> tensor<64x256xf16, [[SHARED:#fa.shared<rowElements = 256>]]>
// CHECK-NOT: fa.load_operand
// CHECK: scf.for
// CHECK: %[[KT:[^ ]+]] = fa.shared_tile %[[KS]]
// scale = 1/16, deferredScale = 0.0625 · log2(e).
// CHECK-NEXT: %[[S:[^ ]+]] = fa.qk_scores %[[QT]], %[[KT]] {log2_domain, scale = 6.250000e-02 : f32}
// CHECK-SAME: : tensor<64x256xf16, [[SHARED]]>, tensor<64x256xf16, [[SHARED]]> -> tensor<64x64xf32, #fa.fragment<warps = 4, mTiles = 1, deferredScale = 0.0901684388 : f32>>
// P in f16 for the f16 MMA.
// CHECK: fa.exp_shifted %{{.*}} {base2} : tensor<64xf32
// CHECK-NEXT: %[[P:[^ ]+]] = fa.exp_shifted
// CHECK-NEXT: arith.truncf %[[P]] : tensor<64x64xf32, [[ROW:#fa.fragment<warps = 4, mTiles = 1>]]> to tensor<64x64xf16, [[ROW]]>
// CHECK: fa.matmul %{{.*}}, %{{.*}}, %{{.*}} : tensor<64x64xf16, [[ROW]]>, tensor<64x256xf16, [[SHARED]]>, tensor<64x256xf32, [[ROW]]>
// CHECK: fa.store_fragment %{{.*}} : tensor<64x256xf16, [[ROW]]>, memref<?xf16>
func.func @d256_f16(%q: tensor<1x1x128x256xf16>, %k: tensor<1x1x128x256xf16>, %v: tensor<1x1x128x256xf16>)
    -> tensor<1x1x128x256xf16> {
  %o = fa.attention %q, %k, %v
      : (tensor<1x1x128x256xf16>, tensor<1x1x128x256xf16>, tensor<1x1x128x256xf16>) -> tensor<1x1x128x256xf16>
  return %o : tensor<1x1x128x256xf16>
}

// -----

// D = 40, Dv = 24: shared rows are padded to a multiple of 64 elements
// (rowElements = 64, the swizzle's 8 chunks); the tiles keep their logical
// widths, and the accumulator and O are 24 wide.
// CHECK-LABEL: gpu.func @d40_dv24
// CHECK: %[[QS:[^ ]+]] = memref.view %{{.*}}[%c0][] : memref<40960xi8, [[WG:#gpu.address_space<workgroup>]]> to memref<64x64xbf16, [[WG]]>
// CHECK: %[[KS:[^ ]+]] = memref.view %{{.*}}[%c8192][] : memref<40960xi8, [[WG]]> to memref<2x64x64xbf16, [[WG]]>
// CHECK: %[[VS:[^ ]+]] = memref.view %{{.*}}[%c24576][] : memref<40960xi8, [[WG]]> to memref<2x64x64xbf16, [[WG]]>
// CHECK: %[[QT:[^ ]+]] = fa.shared_tile %[[QS]] : memref<64x64xbf16, [[WG]]> -> tensor<64x40xbf16, [[SHARED:#fa.shared<rowElements = 64>]]>
// CHECK-NEXT: %[[QA:[^ ]+]] = fa.load_operand %[[QT]] : tensor<64x40xbf16, [[SHARED]]> -> tensor<64x40xbf16, #fa.operand<warps = 4, mTiles = 1>>
// CHECK-NEXT: scf.for
// CHECK-SAME: -> (tensor<64xf32, [[ROW:#fa.fragment<warps = 4, mTiles = 1>]]>, tensor<64xf32, #fa.fragment<warps = 4, mTiles = 1, quadPartial = true>>, tensor<64x24xf32, [[ROW]]>)
// CHECK: %[[KT:[^ ]+]] = fa.shared_tile %[[KS]][%{{.*}}] : memref<2x64x64xbf16, [[WG]]> -> tensor<64x40xbf16, [[SHARED]]>
// scale = 1/sqrt(40).
// CHECK-NEXT: fa.qk_scores %[[QA]], %[[KT]] {log2_domain, scale = 0.158113882 : f32}
// CHECK-SAME: -> tensor<64x64xf32, #fa.fragment<warps = 4, mTiles = 1, deferredScale = 0.22811012 : f32>>
// CHECK: %[[VT:[^ ]+]] = fa.shared_tile %[[VS]][%{{.*}}] : memref<2x64x64xbf16, [[WG]]> -> tensor<64x24xbf16, [[SHARED]]>
// CHECK-NEXT: fa.matmul %{{.*}}, %[[VT]], %{{.*}} : tensor<64x64xbf16, [[ROW]]>, tensor<64x24xbf16, [[SHARED]]>, tensor<64x24xf32, [[ROW]]>
// CHECK: fa.store_fragment %{{.*}} : tensor<64x24xbf16, [[ROW]]>, memref<?xbf16>
func.func @d40_dv24(%q: tensor<1x1x128x40xbf16>, %k: tensor<1x1x128x40xbf16>, %v: tensor<1x1x128x24xbf16>)
    -> tensor<1x1x128x24xbf16> {
  %o = fa.attention %q, %k, %v
      : (tensor<1x1x128x40xbf16>, tensor<1x1x128x40xbf16>, tensor<1x1x128x24xbf16>) -> tensor<1x1x128x24xbf16>
  return %o : tensor<1x1x128x24xbf16>
}

// -----

// block_m = 128 with 4 warps: two m16 tiles per warp (mTiles = 2). D = 64
// still fits in registers (64 · 2 = 128) ...
// CHECK-LABEL: gpu.func @two_m_tiles_d64
// CHECK: fa.load_operand %{{.*}} : tensor<128x64xbf16, #fa.shared<rowElements = 64>> -> tensor<128x64xbf16, #fa.operand<warps = 4, mTiles = 2>>
// CHECK: fa.qk_scores
// CHECK-SAME: -> tensor<128x64xf32, #fa.fragment<warps = 4, mTiles = 2, deferredScale = 0.180336878 : f32>>
func.func @two_m_tiles_d64(%q: tensor<1x1x256x64xbf16>, %k: tensor<1x1x256x64xbf16>, %v: tensor<1x1x256x64xbf16>)
    -> tensor<1x1x256x64xbf16> {
  %o = fa.attention %q, %k, %v {tile = #fa.tile<block_m = 128, block_n = 64, stages = 2, warps = 4>}
      : (tensor<1x1x256x64xbf16>, tensor<1x1x256x64xbf16>, tensor<1x1x256x64xbf16>) -> tensor<1x1x256x64xbf16>
  return %o : tensor<1x1x256x64xbf16>
}

// -----

// ... D = 128 does not (128 · 2 > 128): Q stays in shared memory.
// CHECK-LABEL: gpu.func @two_m_tiles_d128
// CHECK-NOT: fa.load_operand
// CHECK: fa.qk_scores %{{.*}}, %{{.*}} {log2_domain, scale = 0.0883883461 : f32} : tensor<128x128xbf16, #fa.shared<rowElements = 128>>, tensor<64x128xbf16, #fa.shared<rowElements = 128>>
// CHECK-SAME: -> tensor<128x64xf32, #fa.fragment<warps = 4, mTiles = 2, deferredScale = {{.*}} : f32>>
// CHECK-NOT: fa.load_operand
// CHECK: gpu.return
func.func @two_m_tiles_d128(%q: tensor<1x1x256x128xbf16>, %k: tensor<1x1x256x128xbf16>, %v: tensor<1x1x256x128xbf16>)
    -> tensor<1x1x256x128xbf16> {
  %o = fa.attention %q, %k, %v {tile = #fa.tile<block_m = 128, block_n = 64, stages = 2, warps = 4>}
      : (tensor<1x1x256x128xbf16>, tensor<1x1x256x128xbf16>, tensor<1x1x256x128xbf16>) -> tensor<1x1x256x128xbf16>
  return %o : tensor<1x1x256x128xbf16>
}
