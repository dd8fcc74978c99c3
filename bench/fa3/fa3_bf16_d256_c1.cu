// Minimal TU: FA3 Hopper fwd kernel selected by run_mha_fwd_<90, bf16, 256, 256, false, false, false, false> for non-causal, non-local,
// !Varlen, !AppendKV, !HasQv, ClusterM=1 (ClusterM=2 is chosen at runtime when ceil_div(seqlen_q,128) is even, else 1).
// tile_size_fwd_sm90(256, 256, element_size=2) -> 128 x 80, MmaPV_is_RS, IntraWGOverlap.
#include "flash_fwd_launch_template.h"
template void run_flash_fwd<90, 256, 256, /*ClusterM=*/1, cutlass::bfloat16_t, cutlass::bfloat16_t,
    /*Is_causal=*/false, /*Is_local=*/false, /*Has_softcap=*/false, /*Varlen=*/false, /*PagedKVNonTMA=*/false,
    /*AppendKV=*/false, /*HasQv=*/false, /*PackGQA=*/false, /*Split=*/false, /*V_colmajor=*/false>(Flash_fwd_params &params, cudaStream_t stream);
