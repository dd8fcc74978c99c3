//===- FAGPUOps.td - fa ops of the distributed (GPU) level --*- tablegen -*-===//
//
// Part of fa-mlir.
//
// The few ops fa-gpu-distribute adds around the L2 tile ops when it places
// them in a kernel: a shared-memory tile read as a value, its MMA-operand
// fragments, a layout change of row statistics, and the store of a
// distributed tile. The tile ops themselves (fa.qk_scores, fa.row_max, ...)
// are unchanged; only their tensor types gain layout encodings
// (#fa.fragment, #fa.operand, #fa.shared). fa-gpu-lower-fragments lowers all
// of them per op. At the end, the instruction ops the sm_90a patterns build
// where the NVVM dialect falls short (fa.wgmma, fa.wgmma_wait), which
// convert-fa-gpu-to-llvm turns into PTX.
//
//===----------------------------------------------------------------------===//

#ifndef FA_DIALECT_FA_IR_FAGPUOPS_TD
#define FA_DIALECT_FA_IR_FAGPUOPS_TD

include "fa/Dialect/FA/IR/FADialect.td"
include "fa/Dialect/FA/IR/FAAttrs.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def FA_SharedTileOp : FA_Op<"shared_tile"> {
  let summary = "The current contents of a shared-memory tile, as a tile value";
  let description = [{
    Reads `[R, C]` from `buffer` (`[R, W]`, or `[stages, R, W]` with a
    `stage` index), whose rows hold `W >= C` elements in the swizzled
    layout `#fa.shared<rowElements = W>`. The schedule orders the read after
    the copy that filled the buffer landed (a wait and a barrier).

    ```mlir
    %k = fa.shared_tile %smem_k[%stage] : memref<2x64x128xbf16, #gpu.address_space<workgroup>>
        -> tensor<64x128xbf16, #fa.shared<rowElements = 128>>
    ```
  }];
  let arguments = (ins Arg<AnyStaticShapeMemRef, "", [MemRead]>:$buffer,
                       Optional<Index>:$stage);
  let results = (outs AnyRankedTensor:$tile);
  let assemblyFormat = [{
    $buffer (`[` $stage^ `]`)? attr-dict `:` type($buffer) `->` type($tile)
  }];
  let hasVerifier = 1;
}

def FA_LoadOperandOp : FA_Op<"load_operand", [Pure]> {
  let summary = "A shared tile's MMA A-operand fragments, into registers";
  let description = [{
    Converts `#fa.shared` to `#fa.operand`: the query tile kept in registers
    for the whole KV loop when it fits.

    ```mlir
    %qa = fa.load_operand %q : tensor<128x64xbf16, #fa.shared<rowElements = 64>>
        -> tensor<128x64xbf16, #fa.operand<warps = 4, mTiles = 2>>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$tile);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$tile attr-dict `:` type($tile) `->` type($result)";
  let hasVerifier = 1;
}

def FA_ConvertLayoutOp : FA_Op<"convert_layout", [Pure]> {
  let summary = "Change the layout of a distributed tile (quad-partial rows to full)";
  let description = [{
    Today one conversion exists: rows with `quadPartial` to rows without,
    the sum over the four lanes of each row (two xor shuffles).

    ```mlir
    %l = fa.convert_layout %partial : tensor<128xf32, #fa.fragment<warps = 4, mTiles = 2, quadPartial = true>>
        -> tensor<128xf32, #fa.fragment<warps = 4, mTiles = 2>>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def FA_StoreFragmentOp : FA_Op<"store_fragment"> {
  let summary = "Store a distributed tile's existing rows to a global buffer";
  let description = [{
    Writes row `i` of `tile` (`#fa.fragment`) to
    `buffer[base + (row0 + i)·row_stride + j]` for every `row0 + i <
    row_limit` (rows of a partial last Q block are not written). A 1-D tile
    (row statistics such as the LSE) is written with stride 1, once per row.

    ```mlir
    fa.store_fragment %o, %out[%base] rows [%q0, %m] stride %s
        : tensor<128x64xbf16, #fa.fragment<warps = 4, mTiles = 2>>, memref<?xbf16>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$tile,
                       Arg<AnyMemRef, "", [MemWrite]>:$buffer,
                       Index:$base, Index:$row0, Index:$row_limit,
                       Optional<Index>:$row_stride);
  let assemblyFormat = [{
    $tile `,` $buffer `[` $base `]` `rows` `[` $row0 `,` $row_limit `]`
    (`stride` $row_stride^)? attr-dict `:` type($tile) `,` type($buffer)
  }];
  let hasVerifier = 1;
}

def FA_LoadFragmentOp : FA_Op<"load_fragment"> {
  let summary = "Read a global tile's rows into a distributed tile";
  let description = [{
    The inverse of `fa.store_fragment`: element `(i, j)` of the
    `#fa.fragment` result is `buffer[base + (row0 + i)·row_stride + j]`
    when `row0 + i < row_limit`, else `padding` (the rows of a partial last
    block). A 1-D result (per-row values) reads `buffer[base + row0 + i]`.
    The backward reads the saved LSE (padding +inf: P of a missing row is
    exactly 0), D = rowsum(dO ∘ O) (padding 0), and the tiles its
    preprocess and postprocess kernels work on this way. With `mma_blocks`
    (a 2-D f32 tile) the buffer is in the order `fa.accumulate_fragment`
    writes under the same flag. With `predicated` (a 1-D f32 tile) a
    missing row's load is not issued at all: the padding is the register's
    value before a predicated load, and nothing waits for the load before
    the value's first use (for loads issued a step ahead of it; without
    the flag the padding is selected after the load, and the select waits).

    ```mlir
    %lse = fa.load_fragment %lse_buf[%base] rows [%q0, %m] padding 0x7F800000
        : memref<?xf32> -> tensor<64xf32, #fa.fragment<warps = 4, mTiles = 1>>
    %do = fa.load_fragment %do_buf[%base] rows [%q0, %m] stride %s padding 0.0
        : memref<?xbf16> -> tensor<128x64xbf16, #fa.fragment<warps = 8, mTiles = 1>>
    ```
  }];
  let arguments = (ins Arg<AnyMemRef, "", [MemRead]>:$buffer, Index:$base,
                       Index:$row0, Index:$row_limit,
                       Optional<Index>:$row_stride, F32Attr:$padding,
                       UnitAttr:$mma_blocks, UnitAttr:$predicated);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $buffer `[` $base `]` `rows` `[` $row0 `,` $row_limit `]`
    (`stride` $row_stride^)? `padding` $padding (`mma_blocks` $mma_blocks^)?
    (`predicated` $predicated^)?
    attr-dict `:` type($buffer) `->` type($result)
  }];
  let hasVerifier = 1;
}

def FA_StoreSharedOp : FA_Op<"store_shared"> {
  let summary = "Write a distributed tile into a shared-memory buffer";
  let description = [{
    Writes the `#fa.fragment` tile `[R, C]` into `buffer` (`[R, W]`, `W >=
    C`). A 16-bit tile is written in the swizzled layout
    `#fa.shared<rowElements = W>` (`fa.shared_tile` reads it back after a
    barrier): the backward writes P and dS this way, because Pᵀ·dO and
    dSᵀ·Q read them transposed, which the accumulator's registers cannot
    give. An f32 tile is written row-major. Into a buffer `[P, R, W]` the tile is written
    as 128-byte panels (`W` = 64 16-bit or 32 f32 columns each) in the
    128-byte swizzle TMA uses: `#fa.tma_shared`, which sm_90a's wgmma reads
    by descriptor, or an f32 tile that a TMA reduce-add reads.

    ```mlir
    fa.store_shared %p, %smem_p : tensor<64x64xbf16, #fa.fragment<warps = 4, mTiles = 1>>,
        memref<64x64xbf16, #gpu.address_space<workgroup>>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$tile,
                       Arg<AnyStaticShapeMemRef, "", [MemWrite]>:$buffer);
  let assemblyFormat = "$tile `,` $buffer attr-dict `:` type($tile) `,` type($buffer)";
  let hasVerifier = 1;
}

def FA_AccumulateFragmentOp : FA_Op<"accumulate_fragment"> {
  let summary = "Add a distributed f32 tile's existing rows into a global f32 buffer, atomically";
  let description = [{
    `buffer[base + (row0 + i)·row_stride + j] += tile[i, j]` for every
    `row0 + i < row_limit`, each addition atomic (`red.global.add.f32`), so
    thread blocks that own different KV blocks may add into the same rows:
    the backward's dQ accumulator.

    In that row-major order one warp's additions of an element slot fall on
    eight rows, four lanes' every other float: half of each of eight 32-byte
    sectors. With `mma_blocks` the buffer keeps each 8 × 8 block of its
    rows in the accumulator's lane order instead: element (r, c) at
    `base + (r / 8)·8·row_stride + (c / 8)·64 + (c % 2)·32 + (r % 8)·4 +
    (c % 8) / 2`, so each slot's 32 additions fill 128 contiguous bytes
    (FlashAttention-2's dQ accumulator is laid out for the same reason).
    `row0` must then be a multiple of 8 and the buffer hold whole 8-row
    bands; `fa.load_fragment` reads it back under the same flag.

    ```mlir
    fa.accumulate_fragment %dq, %dq_acc[%base] rows [%q0, %m] stride %s mma_blocks
        : tensor<64x128xf32, #fa.fragment<warps = 4, mTiles = 1>>, memref<?xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$tile,
                       Arg<AnyMemRef, "", [MemRead, MemWrite]>:$buffer,
                       Index:$base, Index:$row0, Index:$row_limit,
                       Index:$row_stride, UnitAttr:$mma_blocks);
  let assemblyFormat = [{
    $tile `,` $buffer `[` $base `]` `rows` `[` $row0 `,` $row_limit `]`
    `stride` $row_stride (`mma_blocks` $mma_blocks^)? attr-dict `:` type($tile)
    `,` type($buffer)
  }];
  let hasVerifier = 1;
}

def FA_MmaWaitOp : FA_Op<"mma_wait", [AllTypesMatch<["input", "result"]>]> {
  let summary = "An asynchronous MMA's result, once at most `pending` MMA groups are in flight";
  let description = [{
    An MMA (`fa.qk_scores`, `fa.matmul`) whose result feeds `fa.mma_wait` is
    issued asynchronously: on sm_90a its wgmmas are committed as one group
    and not waited for. Its value is usable only through this op, which
    waits until at most `pending` groups issued after the operand's are
    still running (`wgmma.wait_group pending`) and carries the fragment's
    registers through the wait, so nothing reads them earlier. The
    schedule places it: S(j+1) issued before P·V(j) and waited with one
    group outstanding lets the softmax run under P·V.

    ```mlir
    %s = fa.mma_wait %s_pending pending = 1
        : tensor<128x128xf32, #fa.fragment<warps = 8, mTiles = 1>>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, I64Attr:$pending);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input `pending` `=` $pending attr-dict `:` type($input)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Instruction ops: the sm_90a instructions MLIR's NVVM dialect does not give
// in the form the schedule needs. Built by the Hopper patterns next to NVVM
// ops, turned into PTX by convert-fa-gpu-to-llvm just before NVVM becomes
// LLVM (docs/toolchain.md says which NVVM op falls short, and how).
//===----------------------------------------------------------------------===//

def FA_WgmmaOp : FA_Op<"wgmma", [AttrSizedOperandSegments]> {
  let summary = "One asynchronous warpgroup MMA (wgmma.mma_async) on f32 accumulators";
  let description = [{
    `wgmma.mma_async.sync.aligned.m64nNkK.f32.T.T`, issued by the 128
    threads of a warpgroup: D (N/2 f32 values per thread, `results`) =
    A·B (+ `accumulators`, when given). T is `input_type` (f16, bf16 or
    f8E4M3FN; K is 16 for the 16-bit types and 32 for e4m3).

    A is either a shared-memory operand, `a_descriptor` (an i64 matrix
    descriptor) plus `a_offset` bytes, or four i32 registers
    (`a_registers`, the m64 x kK fragment); B is always a descriptor plus
    `b_offset`. The offsets (multiples of 16) are added to the descriptor
    inside the instruction's PTX, so a loop-invariant descriptor stays one
    register rather than one per k step. `transpose_a` (shared A only) and
    `transpose_b` read the operand M- or N-major; e4m3 reads K-major only.

    Without `accumulators` the wgmma does not read D (scale-d = 0): a
    chain's first product onto zeros. With them, each accumulator is read
    and the result is its updated value. The instruction is asynchronous:
    the results may only be read after a `fa.wgmma_wait` that carries them,
    and the wgmmas of one group sit between `nvvm.wgmma.fence.aligned` and
    `nvvm.wgmma.commit.group.sync.aligned`.

    ```mlir
    %d:8 = fa.wgmma a(desc %qa + 0) b(desc %kb + 32) : bf16 -> f32, f32, f32, f32, f32, f32, f32, f32
    %e:8 = fa.wgmma a(%p0, %p1, %p2, %p3) b(desc %vb + 0) acc(%d#0, ...) {transpose_b} : bf16 -> ...
    ```

    (NVVM's `nvvm.wgmma.mma_async` has no register-A form, passes the
    accumulators in even when scale-d is 0, and takes no offset.)
  }];
  let arguments = (ins Optional<I64>:$a_descriptor, Variadic<I32>:$a_registers,
                       I64:$b_descriptor, Variadic<F32>:$accumulators,
                       TypeAttr:$input_type,
                       DefaultValuedAttr<I64Attr, "0">:$a_offset,
                       DefaultValuedAttr<I64Attr, "0">:$b_offset,
                       UnitAttr:$transpose_a, UnitAttr:$transpose_b);
  let results = (outs Variadic<F32>:$results);
  let assemblyFormat = [{
    `a` `(` custom<WgmmaOperandA>($a_descriptor, $a_offset, $a_registers) `)`
    `b` `(` `desc` $b_descriptor `+` $b_offset `)`
    (`acc` `(` $accumulators^ `)`)?
    attr-dict `:` $input_type `->` type($results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// N of m64nNkK: two columns per result.
    int64_t getN() { return 2 * static_cast<int64_t>(getResults().size()); }
    /// K of m64nNkK: 32 bytes of the input type.
    int64_t getK() {
      return 256 / getInputType().getIntOrFloatBitWidth();
    }
  }];
}

def FA_WgmmaWaitOp : FA_Op<"wgmma_wait"> {
  let summary = "wgmma.wait_group that carries the awaited accumulators through it";
  let description = [{
    `wgmma.wait_group.sync.aligned pending`: waits until at most `pending`
    committed wgmma groups of this warpgroup are still running. The results
    are `values` (f32 results of the awaited wgmmas) after the wait: they
    are tied to the instruction, so no read of an accumulator is placed
    before it, whatever LLVM or ptxas reorder. (A wait without values is
    `nvvm.wgmma.wait.group.sync.aligned`, which ties nothing: a later
    instruction reading a wgmma result may be scheduled above it.)

    ```mlir
    %s:2 = fa.wgmma_wait 1, %d#0, %d#1 : f32, f32
    ```
  }];
  let arguments = (ins I64Attr:$pending, Variadic<F32>:$values);
  let results = (outs Variadic<F32>:$results);
  let assemblyFormat = "$pending `,` $values attr-dict `:` type($results)";
  let hasVerifier = 1;
}

#endif // FA_DIALECT_FA_IR_FAGPUOPS_TD
