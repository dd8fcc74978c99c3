"""SDPA flash (FA2) forward + backward, B4 H16 N4k, bf16: a few calls, for ncu."""
import sys
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
d = int(sys.argv[1]); causal = sys.argv[2] == "causal"
backend = SDPBackend.FLASH_ATTENTION if len(sys.argv) < 4 else SDPBackend.CUDNN_ATTENTION
q, k, v, do = (torch.randn(4, 16, 4096, d, device="cuda", dtype=torch.bfloat16,
                           requires_grad=True) for _ in range(4))
with sdpa_kernel(backend):
    for _ in range(3):
        o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        o.backward(do)
torch.cuda.synchronize()
