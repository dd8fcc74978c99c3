# Twenty-first session, call 2: ncu source pages of the sm_80 D64 backward
# (standard set, 128 x 128, none) beside FA2's, B1 H16 N4k (0.98x FA2 in
# fwd+bwd; the twentieth session's D256 pages as the method).
set -o pipefail; F=build-gpu/bin/fa-run; K=kernels_generated; start=$SECONDS
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
S="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section SourceCounters --section InstructionStats --section Occupancy --section MemoryWorkloadAnalysis --section LaunchStats"
G="Duration|Executed Ipc A|Warp Cycles Per Issued|Issued Warp|No Eligible|Eligible Warps|Achieved Occ|Registers Per|Block Limit|Shared Memory Config|Dynamic Shared|L2 Hit|Mem Busy|Max Bandwidth|Grid Size|Waves"
timeout 200 ncu $S --import-source no -k regex:fa_bwd_sm80_bf16_d64_none_main --launch-count 1 -o /tmp/ours -f \
  $F --device cuda --kernel $K/fa_fwd_sm80_bf16_d64_none.json --bwd-kernel $K/fa_bwd_sm80_bf16_d64_none.json --bwd --b 1 --hq 16 --hkv 16 --m 4096 --n 4096 > /dev/null 2>&1
ncu --import /tmp/ours.ncu-rep --print-summary none 2>&1 | grep -E "$G" | sed "s/^/ours d64: /"
ncu --import /tmp/ours.ncu-rep --page source --csv --print-source sass 2>/dev/null | gzip > $OUT/ours-d64-source.csv.gz
timeout 150 ncu $S --import-source no -k regex:flash_bwd_dq_dk_dv --launch-skip 1 --launch-count 1 -o /tmp/fa2 -f \
  python3 -c "
import torch, torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
q,k,v,do=(torch.randn(1,16,4096,64,device='cuda',dtype=torch.bfloat16,requires_grad=True) for _ in range(4))
with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
    for _ in range(3):
        o=F.scaled_dot_product_attention(q,k,v); o.backward(do)
torch.cuda.synchronize()" > /dev/null 2>&1
ncu --import /tmp/fa2.ncu-rep --print-summary none 2>&1 | grep -E "$G" | sed "s/^/FA2 d64: /"
ncu --import /tmp/fa2.ncu-rep --page source --csv --print-source sass 2>/dev/null | gzip > $OUT/fa2-d64-source.csv.gz
# The other kernels of each backward (preprocess, postprocess; FA2's dot_do_o and convert_dq), nsys-free: ncu durations.
timeout 100 ncu --section SpeedOfLight -k regex:"fa_bwd_sm80_bf16_d64_none_(pre|post)process|fa_fwd_sm80" --launch-count 3 \
  $F --device cuda --kernel $K/fa_fwd_sm80_bf16_d64_none.json --bwd-kernel $K/fa_bwd_sm80_bf16_d64_none.json --bwd --b 1 --hq 16 --hkv 16 --m 4096 --n 4096 2>&1 | grep -E "^  [a-z_].*\(|Duration" | sed "s/^/ours other: /"
timeout 100 ncu --section SpeedOfLight -k regex:"flash_bwd_dot|flash_bwd_convert|flash_fwd" --launch-skip 3 --launch-count 3 python3 -c "
import torch, torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
q,k,v,do=(torch.randn(1,16,4096,64,device='cuda',dtype=torch.bfloat16,requires_grad=True) for _ in range(4))
with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
    for _ in range(3):
        o=F.scaled_dot_product_attention(q,k,v); o.backward(do)
torch.cuda.synchronize()" 2>&1 | grep -E "^  [a-z_].*\(|Duration" | sed "s/^/FA2 other: /"
echo "   ($((SECONDS - start)) s)"
