"""PyTorch SDPA (flash = FA2, cuDNN) forward + backward, for the same shapes
as bench/verify-backward.sh step 4: the reference speeds.
FLOPs: 3.5x the forward's 4*B*H*M*N*D (halved when causal).
Usage: python3 bench/bwd_sdpa.py [D ...]   (default: 64 128)"""
import sys
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

B, H, N = 4, 16, 4096
def bench(fn, iters=20):
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); torch.cuda.synchronize()
        times.append(s.elapsed_time(e))
    return sorted(times)[len(times) // 2]

for d in [int(a) for a in sys.argv[1:]] or [64, 128]:
    for causal in (False, True):
        q, k, v = (torch.randn(B, H, N, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
                   for _ in range(3))
        do = torch.randn(B, H, N, d, device="cuda", dtype=torch.bfloat16)
        flops = 3.5 * 4 * B * H * N * N * d / (2 if causal else 1)
        row = []
        for name, backend in (("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)):
            def step():
                with sdpa_kernel(backend):
                    o = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
                o.backward(do)
            try:
                ms = bench(step)
                row.append(f"{name} {ms:.3f} ms {flops / ms / 1e9:.0f} TFLOP/s")
            except Exception as exc:  # a backend that cannot run this shape
                row.append(f"{name} n/a ({type(exc).__name__})")
        print(f"sdpa d={d} causal={causal}: " + "; ".join(row))
        sys.stdout.flush()
