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
// of them per op.
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

#endif // FA_DIALECT_FA_IR_FAGPUOPS_TD
