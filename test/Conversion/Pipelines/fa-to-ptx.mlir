// fa-to-ptx: L1 to a gpu.binary holding sm_80 PTX. The PTX is one escaped
// string, so each instruction family gets its own FileCheck run.
// RUN: fa-opt %s --fa-to-ptx="chip=sm_80" > %t
// RUN: FileCheck %s < %t
// RUN: FileCheck %s --check-prefix=CPASYNC < %t
// RUN: FileCheck %s --check-prefix=LDMATRIX < %t
// RUN: FileCheck %s --check-prefix=TRANS < %t
// RUN: FileCheck %s --check-prefix=MMA < %t
// RUN: FileCheck %s --check-prefix=EXP2 < %t
// RUN: FileCheck %s --check-prefix=SHUFFLE < %t
// CHECK: gpu.binary @fa_kernels
// CHECK-SAME: .target sm_80
// CHECK-SAME: .extern .shared .align 1024 .b8 fa_smem[]
// CHECK-SAME: .entry attention(
// cp.async on a shared address plus an immediate (a 32-bit shared-window
// address, which the NVPTX data layout widens to 64 bits), from a 64-bit
// global one, with its source size in a register (0 past the sequence).
// CPASYNC: cp.async.cg.shared.global [%rd{{[0-9]+}}+{{[0-9]+}}], [%rd{{[0-9]+}}], 16, %r{{[0-9]+}};
// LDMATRIX: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// TRANS: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// MMA: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// EXP2: ex2.approx.ftz.f32
// SHUFFLE: shfl.sync.bfly.b32
func.func @attention(%q: tensor<1x1x128x128xbf16>, %k: tensor<1x1x128x128xbf16>, %v: tensor<1x1x128x128xbf16>)
    -> tensor<1x1x128x128xbf16> {
  %o = fa.attention %q, %k, %v {mask = #fa.mask<causal>}
      : (tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>) -> tensor<1x1x128x128xbf16>
  return %o : tensor<1x1x128x128xbf16>
}
