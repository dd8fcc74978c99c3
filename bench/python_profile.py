"""Where flash_attn_func's per-call CPU time goes at a launch-bound size
(B=1 S=128 H=8 D=128, causal): cProfile over 3000 eager calls, and the
wall time per call of each stage timed alone. GPU machine.
Usage: PYTHONPATH=python FA_MLIR_CACHE_DIR=... python3 bench/python_profile.py"""

import cProfile
import pstats
import time

import torch

import fa_mlir
from fa_mlir import _ops

q, k, v = (torch.randn(1, 128, 8, 128, device="cuda", dtype=torch.bfloat16) for _ in range(3))
for _ in range(50):
    fa_mlir.flash_attn_func(q, k, v, causal=True)
torch.cuda.synchronize()


def per_call(label, fn, n=3000):
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    torch.cuda.synchronize()
    print(f"{label:44s} {1e6 * (time.perf_counter() - t0) / n:7.1f} us")


per_call("flash_attn_func", lambda: fa_mlir.flash_attn_func(q, k, v, causal=True))
per_call("_attention (no checks)", lambda: _ops._attention(q, k, v, 128 ** -0.5, "causal", 0.0, None, False))
per_call("_forward_impl", lambda: _ops._forward_impl(q, k, v, 128 ** -0.5, "causal", 0.0, None))
per_call("_check", lambda: _ops._check(q, k, v, None))
per_call("torch.empty x2", lambda: (torch.empty((1, 128, 8, 128), dtype=q.dtype, device=q.device),
                                    torch.empty((1, 8, 128), dtype=torch.float32, device=q.device)))
per_call("current_stream().cuda_stream", lambda: torch.cuda.current_stream(q.device).cuda_stream)
per_call("_usable x3", lambda: (_ops._usable(q), _ops._usable(k), _ops._usable(v)))
per_call("_signature", lambda: _ops._signature((q, k, v), ("fwd", 0.1, "causal", 0.0)))
with torch.no_grad():
    per_call("flash_attn_func under no_grad", lambda: fa_mlir.flash_attn_func(q, k, v, causal=True))
profile = cProfile.Profile()
profile.enable()
for _ in range(3000):
    fa_mlir.flash_attn_func(q, k, v, causal=True)
profile.disable()
pstats.Stats(profile).sort_stats("tottime").print_stats(14)
