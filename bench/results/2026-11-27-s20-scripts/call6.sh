# Twentieth session, call 6: FA2's D256 backward page on the same machine as call 5's.
S="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section SourceCounters --section InstructionStats --section Occupancy"
G="Duration|Executed Ipc A|Warp Cycles Per Issued|Issued Warp|No Eligible|Eligible Warps|Achieved Occ|Registers Per"
timeout 150 ncu $S --import-source no -k regex:flash_bwd_dq_dk_dv --launch-skip 1 --launch-count 1 -o /tmp/fa2256 -f \
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
