//===- FADialect.td - The fa (FlashAttention) dialect ------*- tablegen -*-===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#ifndef FA_DIALECT_FA_IR_FADIALECT_TD
#define FA_DIALECT_FA_IR_FADIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def FA_Dialect : Dialect {
  let name = "fa";
  let cppNamespace = "::mlir::fa";
  let summary = "Semantic attention operations that fa-mlir lowers to FlashAttention kernels.";
  let description = [{
    The `fa` dialect holds attention at the level a framework states it:
    `fa.attention` (forward) and `fa.attention_grad` (backward) on tensors,
    with shapes, mask, scale, softcap and element type, and nothing about how
    the computation is scheduled. The fa passes lower these ops through
    tiling, online-softmax fusion and recompute-based backward to loops, and
    from there to the CPU or to GPU kernels.

    Logical shapes (the memory layout is a run-time matter of strides):

    * `Q`   is `[B, Hq, M, D]`,
    * `K`   is `[B, Hkv, N, D]`,
    * `V`   is `[B, Hkv, N, Dv]`,
    * `O`   is `[B, Hq, M, Dv]`,
    * `LSE` is `[B, Hq, M]` in f32.

    Query head `h` reads key/value head `h / (Hq / Hkv)` (MHA, GQA and MQA).
    Scores are `s = scale * q.k` (scale defaults to `1/sqrt(D)`), then, when
    softcap > 0, `s = softcap * tanh(s / softcap)`. The mask decides which keys
    each query sees. `O[i] = sum_j softmax_j(s_ij) * V[j]` and
    `LSE[i] = log sum_j exp(s_ij)`; a query row with no visible key gives
    `O = 0` and `LSE = -inf`, never NaN. Accumulation and softmax statistics
    are f32.
  }];
  // The ops a score_mod / mask_mod region may hold parse wherever fa does.
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::tensor::TensorDialect"];
  let useDefaultAttributePrinterParser = 1;
  // `fa.tile` on the loop nest fa-tile builds: the config the GPU lowering
  // reads back (typed access through FADialect::getTileAttrHelper()).
  // `fa.block_sparse` on the same nest: the op's block mask declaration.
  let discardableAttrs = (ins "::mlir::fa::TileAttr":$tile,
                              "::mlir::fa::BlockSparseAttr":$block_sparse);
  let extraClassDeclaration = [{
    /// Registers the attributes; defined in FAAttrs.cpp, next to their storage.
    void registerAttributes();
  }];
}

class FA_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<FA_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

class FA_Op<string mnemonic, list<Trait> traits = []>
    : Op<FA_Dialect, mnemonic, traits>;

#endif // FA_DIALECT_FA_IR_FADIALECT_TD
