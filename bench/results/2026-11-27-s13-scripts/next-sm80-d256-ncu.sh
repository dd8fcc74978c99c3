# For the next session (written 2026-11-27, thirteenth session, not yet
# run): where the sm_80 D256 backward (32 x 64, 8 warps; ~0.94x FA2 on its
# own after the forward reached 1.00x) spends its cycles beside FA2's
# backward on the same problem (B1 H8 N4k bf16, none): ncu summaries and
# per-instruction stall samples (SASS source page) of both main kernels,
# as bench/results/2026-11-26c-scripts/ncu-source.sh did for D64 / D128.
# Device: run(command="bash bench/results/2026-11-27-s13-scripts/next-sm80-d256-ncu.sh 2>&1 | tee $OUT/log")
# Local: python3 over the CSVs (columns "# Samples", "stall_*", "Source").
set -o pipefail; export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
S="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section SourceCounters --section InstructionStats --section Occupancy"
G="Duration|Executed Ipc A|Warp Cycles Per Issued|Issued Warp|No Eligible|Eligible Warps|Achieved Occ|Registers Per"
timeout 200 ncu $S --import-source no -k regex:fa_bwd_sm80_bf16_d256_none_main --launch-count 1 -o /tmp/fa256 -f \
  build-gpu/bin/fa-run --device cuda --kernel kernels_generated/fa_fwd_sm80_bf16_d256_none.json \
  --bwd-kernel kernels_generated/fa_bwd_sm80_bf16_d256_none.json --bwd --b 1 --hq 8 --hkv 8 --m 4096 --n 4096 > /dev/null 2>&1
ncu --import /tmp/fa256.ncu-rep --print-summary none 2>&1 | grep -E "$G" | sed "s/^/fa d256: /"
ncu --import /tmp/fa256.ncu-rep --page source --csv --print-source sass 2>/dev/null | gzip > $OUT/fa-d256-source.csv.gz
timeout 200 ncu $S --import-source no -k regex:flash_bwd_dq_dk_dv --launch-skip 1 --launch-count 1 -o /tmp/fa2256 -f \
  python3 -c "
import torch, torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
q,k,v,do=(torch.randn(1,8,4096,256,device='cuda',dtype=torch.bfloat16,requires_grad=True) for _ in range(4))
with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
    for _ in range(3):
        o=F.scaled_dot_product_attention(q,k,v); o.backward(do)
torch.cuda.synchronize()" > /dev/null 2>&1
ncu --import /tmp/fa2256.ncu-rep --print-summary none 2>&1 | grep -E "$G" | sed "s/^/FA2 d256: /"
ncu --import /tmp/fa2256.ncu-rep --page source --csv --print-source sass 2>/dev/null | gzip > $OUT/fa2-d256-source.csv.gz
ls -la $OUT
