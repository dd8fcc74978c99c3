// RUN: fa-opt %s --fa-tile --fa-fuse-online-softmax --fa-gpu-distribute="chip=sm_90a" --canonicalize --cse | FileCheck %s
// RUN: fa-opt %s --fa-tile --fa-fuse-online-softmax --fa-gpu-distribute="chip=sm_90a" | fa-opt --fa-gpu-lower-fragments="chip=sm_90a" | FileCheck %s --check-prefix=LOWER
// RUN: rm -rf %t && fa-compile %s --target sm_90a -o %t > /dev/null
// RUN: FileCheck %s --check-prefix=PTX < %t/fp8_d128.ptx
// RUN: FileCheck %s --check-prefix=NOBF16 < %t/fp8_d128.ptx
// RUN: FileCheck %s --check-prefix=PACK < %t/fp8_d128.ptx
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/fp8_d128.json
// RUN: fa-compile --target sm_90a --dtype f8e4m3fn -d 128 --mask "window(256,0)" -o %t && FileCheck %s --check-prefix=STAGES4 < %t/fa_fwd_sm90a_f8E4M3FN_d128_win256_0.json
// RUN: FileCheck %s --check-prefix=STAGING128 < %t/fa_fwd_sm90a_f8E4M3FN_d128_win256_0.ptx
// RUN: fa-compile --target sm_90a --dtype f8e4m3fn -d 128 --mask causal -o %t && FileCheck %s --check-prefix=N224 < %t/fa_fwd_sm90a_f8E4M3FN_d128_causal.json
// RUN: fa-compile --target sm_90a --dtype f8e4m3fn -d 128 -o %t && FileCheck %s --check-prefix=N224 < %t/fa_fwd_sm90a_f8E4M3FN_d128_none.json
// RUN: FileCheck %s --check-prefix=N224PTX < %t/fa_fwd_sm90a_f8E4M3FN_d128_none.ptx
// RUN: FileCheck %s --check-prefix=N224ST < %t/fa_fwd_sm90a_f8E4M3FN_d128_none.ptx
// RUN: fa-compile --target sm_90a --dtype f8e4m3fn -d 128 --shared-memory-budget 200 -o %t/budget > /dev/null && FileCheck %s --check-prefix=N224BUDGET < %t/budget/fa_fwd_sm90a_f8E4M3FN_d128_none.json
// RUN: FileCheck %s --check-prefix=N224T < %t/fa_fwd_sm90a_f8E4M3FN_d128_none.ptx
// RUN: fa-compile --target sm_90a --dtype f8e4m3fn -d 128 --dv 112 -o %t && FileCheck %s --check-prefix=DV112 < %t/fa_fwd_sm90a_f8E4M3FN_d128_dv112_none.ptx
// RUN: fa-compile --target sm_90a --dtype f8e4m3fn -d 256 -o %t && FileCheck %s --check-prefix=STAGES2 < %t/fa_fwd_sm90a_f8E4M3FN_d256_none.json
// RUN: FileCheck %s --check-prefix=STAGING256 < %t/fa_fwd_sm90a_f8E4M3FN_d256_none.ptx
// RUN: FileCheck %s --check-prefix=BUDGET256 < %t/fa_fwd_sm90a_f8E4M3FN_d256_none.ptx

// e4m3 on the Hopper schedule (docs/fp8-plan.md). wgmma e4m3 reads B
// K-major only, so V (stored [N, Dv] as users pass it) cannot feed P·V:
// the producer warpgroup copies each V tile into a Vᵀ tile
// (#fa.tma_shared<keyMajor = true>) and the consumers read that. At Dv <=
// 128 its producer takes 40 registers, with 232 for each of the two
// consumers (the register_budget knob; 40 + 2·232 fits the 64512
// registers the block holds at entry, more and setmaxnreg.inc waits
// forever). At D256 the consumers need FA3's 240, so the producer
// transposes in 24.
// BUDGET256: setmaxnreg.dec.sync.aligned.u32 24;
// BUDGET256: setmaxnreg.inc.sync.aligned.u32 240;
// CHECK-LABEL: gpu.func @fp8_d128
// CHECK: nvvm.setmaxregister {{ *}}decrease 40
// CHECK: nvvm.setmaxregister {{ *}}increase 232
// S = QKᵀ on the stored values, Q's and K's descales on S:
// CHECK: fa.qk_scores %{{.*}}, %{{.*}} descale(%{{.*}}) {log2_domain, scale = 0.0883883461 : f32} : tensor<128x128xf8E4M3FN, #fa.tma_shared<swizzleBytes = 128>>, tensor<128x128xf8E4M3FN, #fa.tma_shared<swizzleBytes = 128>>
// ... held as q·k: both the scale c and the descale d deferred to the row
// max and the exponent.
// CHECK-SAME: -> tensor<128x128xf32, #fa.fragment<warps = 8, mTiles = 1, deferredScale = 0.127517432 : f32, deferredDescale = true>>
// P rounded to e4m3 in registers, times the transposed V tile:
// CHECK: arith.truncf %{{.*}} : tensor<128x128xf32, #fa.fragment<warps = 8, mTiles = 1>> to tensor<128x128xf8E4M3FN, #fa.fragment<warps = 8, mTiles = 1>>
// CHECK: %[[VT:.+]] = fa.shared_tile %{{.*}} -> tensor<128x128xf8E4M3FN, #fa.tma_shared<swizzleBytes = 128, keyMajor = true>>
// CHECK: fa.matmul %{{.*}}, %[[VT]], %{{.*}} : tensor<128x128xf8E4M3FN, #fa.fragment<warps = 8, mTiles = 1>>, tensor<128x128xf8E4M3FN, #fa.tma_shared<swizzleBytes = 128, keyMajor = true>>
// O in bf16:
// CHECK: arith.truncf %{{.*}} : tensor<128x128xf32, #fa.fragment<warps = 8, mTiles = 1>> to tensor<128x128xbf16

// Lowered: c·d once (d = Q's descale · K's, read before the KV loop), the
// row max times c·d, and the exponent's x·(c·d) - m: no multiply per score.
// LOWER: %[[D:[^ ]+]] = arith.mulf %{{.*}}, %{{.*}} : f32
// LOWER: %[[C:[^ ]+]] = arith.constant 0.127517432 : f32
// LOWER-NEXT: %[[CD:[^ ]+]] = arith.mulf %[[C]], %[[D]] : f32
// LOWER: gpu.shuffle  xor
// LOWER: arith.mulf %{{.*}}, %[[CD]] : f32
// LOWER: %[[C2:[^ ]+]] = arith.constant 0.127517432 : f32
// LOWER-NEXT: %[[CD2:[^ ]+]] = arith.mulf %[[C2]], %[[D]] : f32
// LOWER: %[[X:[^ ]+]] = arith.mulf %{{.*}}, %[[CD2]] fastmath<contract> : f32
// LOWER-NEXT: %[[E:[^ ]+]] = arith.subf %[[X]], %{{.*}} fastmath<contract> : f32
// LOWER-NEXT: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%[[E]])

// In the PTX, the producer's transpose (ldmatrix.trans of byte pairs, the
// two byte permutes 0x6420 = 25632 and 0x7531 = 30001, swapped (0x1111 =
// 4369 apart) for lanes 16 .. 31 so that each stmatrix matrix covers rows
// of all eight residues (conflict-free stores), stmatrix; 8 of each
// matrix instruction at Dv 128: a task is 16 keys by 64 columns, two
// ldmatrix and two stmatrix), P's pairs through cvt.rn.satfinite.e4m3x2,
// and only k32 e4m3 wgmmas (4 for S, 4 for P·V, each in the prologue and
// loop).
// PTX-DAG: setmaxnreg.dec.sync.aligned.u32 40;
// PTX-DAG: setmaxnreg.inc.sync.aligned.u32 232;
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// PTX-DAG: bfe.u32 %[[SWAPPED:r[0-9]+]], %{{r[0-9]+}}, 4, 1;
// PTX-DAG: mul.lo.s32 %[[DELTA:r[0-9]+]], %[[SWAPPED]], 4369;
// PTX-DAG: add.s32 %[[EVEN:r[0-9]+]], %[[DELTA]], 25632;
// PTX-DAG: sub.s32 %[[ODD:r[0-9]+]], 30001, %[[DELTA]];
// PTX-DAG: prmt.b32 {{.*}}, %[[EVEN]];
// PTX-DAG: prmt.b32 {{.*}}, %[[ODD]];
// PTX-DAG: stmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3
// PTX-DAG: cvt.rn.satfinite.e4m3x2.f32
// NOBF16-NOT: wgmma.mma_async{{.*}}bf16
// P is converted straight into wgmma k32's A registers, two pairs to a
// register (TruncToE4M3Lowering): each register joins the two conversions
// just before it, no 16-bit halves joined later.
// PACK: cvt.rn.satfinite.e4m3x2.f32 %rs[[LO:[0-9]+]],
// PACK-NEXT: cvt.rn.satfinite.e4m3x2.f32 %rs[[HI:[0-9]+]],
// PACK-NEXT: mov.b32 %r{{[0-9]+}}, {%rs[[LO]], %rs[[HI]]};

// The manifest: e4m3 inputs, bf16 O, the three descale buffers and their
// strides (a [B, Hkv] descale per head, {0, 0} per tensor).
// MANIFEST: "dtype": "f8E4M3FN",
// MANIFEST: {"name": "q", "type": "memref<?xf8E4M3FN>"},
// MANIFEST: {"name": "o", "type": "memref<?xbf16>"},
// MANIFEST: {"name": "q_descale", "type": "memref<?xf32>"},
// MANIFEST-NEXT: {"name": "k_descale", "type": "memref<?xf32>"},
// MANIFEST-NEXT: {"name": "v_descale", "type": "memref<?xf32>"},
// MANIFEST: {"name": "descale_stride_b", "type": "i64"},
// MANIFEST-NEXT: {"name": "descale_stride_h", "type": "i64"}
func.func @fp8_d128(%q: tensor<1x2x300x128xf8E4M3FN>, %k: tensor<1x2x500x128xf8E4M3FN>, %v: tensor<1x2x500x128xf8E4M3FN>,
                    %dq: f32, %dk: f32, %dv: f32) -> (tensor<1x2x300x128xbf16>, tensor<1x2x300xf32>) {
  %o, %lse = fa.attention %q, %k, %v descale(%dq, %dk, %dv)
      {tile = #fa.tile<block_m = 128, block_n = 128, stages = 2, warps = 8>}
      : (tensor<1x2x300x128xf8E4M3FN>, tensor<1x2x500x128xf8E4M3FN>, tensor<1x2x500x128xf8E4M3FN>, f32, f32, f32)
      -> (tensor<1x2x300x128xbf16>, tensor<1x2x300xf32>)
  return %o, %lse : tensor<1x2x300x128xbf16>, tensor<1x2x300xf32>
}

// The tools' stages for e4m3 (HopperStrategy::forwardPipeline): as many
// K / V / Vᵀ stages as fit in 227 KB, up to 4. D128 under a window (128 x
// 128): 16 KB of Q, 48 KB a stage (K, V's staging, Vᵀ) and 6 barriers a
// stage (the sixth, staging empty, unused below Dv 256).
// STAGES4: "tile": {"block_m": 128, "block_n": 128, "stages": 4, "warps": 8}
// STAGES4: "dynamic_shared_memory": 213200,
// STAGING128-COUNT-22: mbarrier.init.shared.b64
// STAGING128-NOT: mbarrier.init
// STAGING128: fence.mbarrier_init
// D128 without a mask or causal takes FA3's 128 x 224 (tunedTile): 28 KB of K, 28 of
// V's staging and 32 of Vᵀ (two 128-key panels, the second 96 keys) a
// stage, two stages; S is one m64n224 wgmma chain of D / 32 steps. That
// leaves room for O (bf16, 32 KB) before the barriers: each consumer
// warpgroup writes its 64 rows there, and its first thread stores them with
// TMA through o_tmap, a box per 64-column panel (output_staging),
// waiting before the next tile's write (and before exit) until the store
// has read them; only LSE leaves by 4-byte stores (the two row slots).
// N224: "tile": {"block_m": 128, "block_n": 224, "stages": 2, "warps": 8}
// N224: "dynamic_shared_memory": 229488,
// N224: {"name": "v_tmap", "type": "tensormap"},
// N224-NEXT: {"name": "o_tmap", "type": "tensormap"},
// N224PTX-COUNT-4: wgmma.mma_async.sync.aligned.m64n224k32.f32.e4m3.e4m3
// N224PTX: cp.async.bulk.wait_group.read 0;
// N224PTX: fence.proxy.async.shared::cta;
// N224PTX-COUNT-2: cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group
// N224PTX: cp.async.bulk.commit_group;
// N224PTX: cp.async.bulk.wait_group.read 0;
// N224ST-COUNT-2: st.global.b32
// N224ST-NOT: st.global
// Staging O is optional: within a budget the rings fit and O does not,
// O is stored from the registers (no o_tmap) rather than the kernel refused.
// N224BUDGET: "dynamic_shared_memory": 196720,
// N224BUDGET-NOT: o_tmap
// The producer's transpose (transposeValueTile): 224 keys are 7 steps of
// 32 over the four producer warps; the first round (keys 0..127) is every
// warp's, the second (128..223) only warps 0-2's, behind a warp-uniform
// branch: 16 keys by 64 columns a task, four tasks a round, two
// ldmatrix.x4.trans each (keys + 0 .. 7 and + 8 .. 15, at one per-lane
// base plus immediates: the only swizzle xor is the second 64 columns').
// N224T-COUNT-8: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// N224T: @%p{{[0-9]+}} bra
// N224T-COUNT-8: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// N224T-NOT: ldmatrix
// Dv 112 is 7 chunks of 16 columns: per 16 keys, tasks of 4, 2 and 1
// chunks (ldmatrix .x4, .x2, .x1, twice each; the one-chunk task stores
// two matrices, stmatrix .x2), at immediates from three read bases (the
// chunks' start 0, 4, 6 xor the lane's swizzle) and one write base.
// DV112: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {{.*}}, [%[[READ4:rd[0-9]+]]];
// DV112-NEXT: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {{.*}}, [%[[READ4]]+1024];
// DV112: stmatrix.sync.aligned.m8n8.x4.shared.b16 [%[[WRITE:rd[0-9]+]]],
// DV112: stmatrix.sync.aligned.m8n8.x4.shared.b16 [%[[WRITE]]+4096],
// DV112: ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%r{{[0-9]+}}, %r{{[0-9]+}}}, [%[[READ2:rd[0-9]+]]];
// DV112: ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%r{{[0-9]+}}, %r{{[0-9]+}}}, [%[[READ2]]+1024];
// DV112: stmatrix.sync.aligned.m8n8.x4.shared.b16 [%[[WRITE]]+8192],
// DV112: ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%r{{[0-9]+}}}, [%[[READ1:rd[0-9]+]]];
// DV112: ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%r{{[0-9]+}}}, [%[[READ1]]+1024];
// DV112: stmatrix.sync.aligned.m8n8.x2.shared.b16 [%[[WRITE]]+12288], {%r{{[0-9]+}}, %r{{[0-9]+}}};
// D256: 32 KB of Q and 96 KB a stage: two. O (64 KB) has no room of its
// own: it goes over V's staging ring (exactly 64 KB), whose next copies
// wait on one more barrier, output empty (SharedMemoryPlan::outputInStaging).
// STAGES2: "tile": {"block_m": 128, "block_n": 128, "stages": 2, "warps": 8}
// STAGES2: "dynamic_shared_memory": 229496,
// STAGES2: {"name": "o_tmap", "type": "tensormap"},
// At Dv 256 V's staging slot is released by the producer's transpose
// (staging_released_by_transpose): 2 + 6 · 2 barriers, and output empty. The
// issuer's first V copy of a tile waits for it; each consumer warpgroup's
// first thread stores its four O panels, waits for the read and arrives.
// STAGING256-COUNT-15: mbarrier.init.shared.b64
// STAGING256-NOT: mbarrier.init
// STAGING256: fence.mbarrier_init
// A staged tile's threads write O with no sync first: each waited for
// its Vᵀ, copied after the issuer's wait for the last staged O's read.
// Then the fence and the warpgroup's sync before the leader's store.
// STAGING256: cvt.rn.bf16x2.f32
// STAGING256-NOT: bar.sync
// STAGING256: st.shared.b32 [%rd{{[0-9]+}}+163840]
// STAGING256: fence.proxy.async.shared::cta;
// STAGING256: bar.sync
// STAGING256-COUNT-4: cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group
// STAGING256: cp.async.bulk.commit_group;
// STAGING256: cp.async.bulk.wait_group.read 0;
// STAGING256: mbarrier.arrive
// A tile with no KV tiles (its arrivals would need no V, and a phase of
// output empty could go unwaited) stores O from registers instead.
// STAGING256: st.global.b32
