// Minimal TU: instantiate exactly the FA3 Hopper fwd kernel that run_mha_fwd_<90, e4m3, 256, 256, Split=false, PagedKVNonTMA=false, Softcap=false, PackGQA=false>
// dispatches to for: non-causal, non-local, V rowmajor, !Varlen, !AppendKV, !HasQv, ClusterM=1 (Enable_cluster is false for fp8 unless hdim==192).
// tile_size_fwd_sm90(256, 256, element_size=1) -> 128 x 128, MmaPV_is_RS, IntraWGOverlap; out bf16.
#include "flash_fwd_launch_template.h"
template void run_flash_fwd<90, 256, 256, /*ClusterM=*/1, cutlass::float_e4m3_t, cutlass::bfloat16_t,
    /*Is_causal=*/false, /*Is_local=*/false, /*Has_softcap=*/false, /*Varlen=*/false, /*PagedKVNonTMA=*/false,
    /*AppendKV=*/false, /*HasQv=*/false, /*PackGQA=*/false, /*Split=*/false, /*V_colmajor=*/false>(Flash_fwd_params &params, cudaStream_t stream);
