// RUN: fa-opt %s -split-input-file --fa-recompute-backward="block-m=64 block-n=64" --fa-gpu-distribute="chip=sm_80 deterministic" --canonicalize --cse | FileCheck %s
// RUN: fa-opt %s -split-input-file --fa-recompute-backward="block-m=64 block-n=64" --fa-gpu-distribute="chip=sm_90a deterministic" --canonicalize --cse | FileCheck %s

// The deterministic mode's order (BackwardOrder.cpp), on both chips: the
// launch's linear block index is read in sections of (KV head, batch)
// pairs, the pairs fastest; the KV blocks of a Q block take their turns in
// the order they reach it.

// Under a causal mask KV block j starts at its diagonal, so the last
// visible KV block reaches Q block i first: the blocks are launched last
// KV block first, and KV block j's turn at Q block i is its distance from
// the last KV block Q block i sees.
// CHECK-LABEL: gpu.func @causal_main
// CHECK: %[[SECTION:.+]] = arith.divui %[[LINEAR:.+]], %{{.*}} : i32
// CHECK: %[[WITHIN:.+]] = arith.subi %[[LINEAR]], %{{.*}} : i32
// CHECK: %[[LAUNCHED:.+]] = arith.divui %[[WITHIN]], %{{.*}} : i32
// CHECK: %[[LASTKV:.+]] = arith.subi %{{.*}}, %c1_i32 : i32
// CHECK: %[[KVB:.+]] = arith.subi %[[LASTKV]], %[[LAUNCHED]] : i32
// CHECK: %[[KVBI:.+]] = arith.index_castui %[[KVB]] : i32 to index
// CHECK: %[[K0:.+]] = arith.muli %[[KVBI]], %c64 : index
// CHECK: %[[J:.+]] = arith.divui %[[K0]], %c64 : index
// CHECK: %[[LASTQ:.+]] = arith.subi %{{.*}}, %c1 : index
// CHECK-NEXT: %[[RANK:.+]] = arith.subi %[[LASTQ]], %[[J]] : index
// CHECK-NEXT: arith.index_cast %[[RANK]] : index to i32
// CHECK: scf.while
func.func @causal(%q: tensor<1x4x96x64xbf16>, %k: tensor<1x2x80x64xbf16>, %v: tensor<1x2x80x64xbf16>,
                  %o: tensor<1x4x96x64xbf16>, %do: tensor<1x4x96x64xbf16>, %lse: tensor<1x4x96xf32>)
    -> (tensor<1x4x96x64xbf16>, tensor<1x2x80x64xbf16>, tensor<1x2x80x64xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %do, %lse
      {mask = #fa.mask<causal>}
      : (tensor<1x4x96x64xbf16>, tensor<1x2x80x64xbf16>, tensor<1x2x80x64xbf16>,
         tensor<1x4x96x64xbf16>, tensor<1x4x96x64xbf16>, tensor<1x4x96xf32>)
      -> (tensor<1x4x96x64xbf16>, tensor<1x2x80x64xbf16>, tensor<1x2x80x64xbf16>)
  return %dq, %dk, %dv : tensor<1x4x96x64xbf16>, tensor<1x2x80x64xbf16>, tensor<1x2x80x64xbf16>
}

// -----

// Without a mask every KV block starts at Q block 0: launched first KV
// block first, turns in increasing j (the first visible KV block is 0).
// CHECK-LABEL: gpu.func @unmasked_main
// CHECK: %[[SECTION:.+]] = arith.divui %[[LINEAR:.+]], %{{.*}} : i32
// CHECK: %[[WITHIN:.+]] = arith.subi %[[LINEAR]], %{{.*}} : i32
// CHECK: %[[LAUNCHED:.+]] = arith.divui %[[WITHIN]], %{{.*}} : i32
// CHECK-NOT: arith.subi %{{.*}}, %[[LAUNCHED]]
// CHECK: %[[KVBI:.+]] = arith.index_castui %[[LAUNCHED]] : i32 to index
// CHECK: %[[K0:.+]] = arith.muli %[[KVBI]], %c64 : index
// CHECK: %[[J:.+]] = arith.divui %[[K0]], %c64 : index
// CHECK: arith.index_cast %[[J]] : index to i32
// CHECK: scf.while
func.func @unmasked(%q: tensor<1x4x96x64xbf16>, %k: tensor<1x2x80x64xbf16>, %v: tensor<1x2x80x64xbf16>,
                    %o: tensor<1x4x96x64xbf16>, %do: tensor<1x4x96x64xbf16>, %lse: tensor<1x4x96xf32>)
    -> (tensor<1x4x96x64xbf16>, tensor<1x2x80x64xbf16>, tensor<1x2x80x64xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %do, %lse
      : (tensor<1x4x96x64xbf16>, tensor<1x2x80x64xbf16>, tensor<1x2x80x64xbf16>,
         tensor<1x4x96x64xbf16>, tensor<1x4x96x64xbf16>, tensor<1x4x96xf32>)
      -> (tensor<1x4x96x64xbf16>, tensor<1x2x80x64xbf16>, tensor<1x2x80x64xbf16>)
  return %dq, %dk, %dv : tensor<1x4x96x64xbf16>, tensor<1x2x80x64xbf16>, tensor<1x2x80x64xbf16>
}

// -----

// A KV block none of whose keys any query sees (top-left causal, N > M:
// keys at or past M) walks no Q block: its first visible row clamps to M,
// and the range is made empty there rather than rounded down onto the
// last Q block, which that Q block's own count of its KV blocks leaves
// out (its turns, taken in decreasing order, would never come).
// CHECK-LABEL: gpu.func @top_left_main
// CHECK: %[[NONE:.+]] = arith.cmpi sge, %[[FIRST:.+]], %[[QLEN:.+]] : index
// CHECK-NEXT: %[[BLOCKS:.+]] = arith.divui %[[FIRST]], %c64 : index
// CHECK-NEXT: %[[ROUNDED:.+]] = arith.muli %[[BLOCKS]], %c64 : index
// CHECK-NEXT: %[[END:.+]] = arith.select %[[NONE]], %[[ROUNDED]], %[[QLEN]] : index
// CHECK-NEXT: arith.subi %[[END]], %[[ROUNDED]] : index
func.func @top_left(%q: tensor<1x4x96x64xbf16>, %k: tensor<1x2x200x64xbf16>, %v: tensor<1x2x200x64xbf16>,
                    %o: tensor<1x4x96x64xbf16>, %do: tensor<1x4x96x64xbf16>, %lse: tensor<1x4x96xf32>)
    -> (tensor<1x4x96x64xbf16>, tensor<1x2x200x64xbf16>, tensor<1x2x200x64xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %do, %lse
      {mask = #fa.mask<causal_top_left>}
      : (tensor<1x4x96x64xbf16>, tensor<1x2x200x64xbf16>, tensor<1x2x200x64xbf16>,
         tensor<1x4x96x64xbf16>, tensor<1x4x96x64xbf16>, tensor<1x4x96xf32>)
      -> (tensor<1x4x96x64xbf16>, tensor<1x2x200x64xbf16>, tensor<1x2x200x64xbf16>)
  return %dq, %dk, %dv : tensor<1x4x96x64xbf16>, tensor<1x2x200x64xbf16>, tensor<1x2x200x64xbf16>
}
