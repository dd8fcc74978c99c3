#!/usr/bin/env python3
"""Forward + backward timing of fa-mlir's backward kernels beside PyTorch
SDPA's flash (FlashAttention-2) and cuDNN backends doing forward +
backward, all in the same interleaved rounds of one process (bench.py's
method: a 150 ms warm-up at full load, bursts rotating among input sets
larger than L2, the median over bursts and rounds). Each fa-mlir variant
is the forward of FWD_MANIFEST then the backward of its manifest, so that
two backwards (main's PTX and a branch's, or two tiles) and the two SDPA
backends share every round's clock. Before timing, each variant's dQ, dK
and dV are compared with SDPA flash's on the first set (a cross-check;
the float64 verification is fa-run --bwd --verify's job).

FLOPs = 3.5 x 4·B·H·N²·D (halved when causal), as bench/bwd_sdpa.py and
fa-run --bwd --bench count them. MHA, [B, H, S, D], bf16 or f16 as the
manifest says.

usage: python3 bench/bwd_variants.py LIBFA_RUNTIME.so FWD_MANIFEST
           LABEL=BWD_MANIFEST [LABEL=BWD_MANIFEST ...] [--b 4 --h 16 --n 4096]

A label ending in "@det" launches its kernel in the deterministic mode
(the manifest must have one); the cross-check then also compares it bit
for bit with a second run.
"""
import argparse
import ctypes
import json
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from bench import ForwardArgs, load, load_runtime, make_args, time_interleaved  # noqa: E402


class BackwardArgs(ctypes.Structure):
    """fa_runtime.h's fa_backward_args."""
    _fields_ = [("forward", ForwardArgs), ("d_out", ctypes.c_void_p),
                ("dq", ctypes.c_void_p), ("dk", ctypes.c_void_p), ("dv", ctypes.c_void_p),
                ("d_out_stride", ctypes.c_int64 * 3), ("dq_stride", ctypes.c_int64 * 3),
                ("dk_stride", ctypes.c_int64 * 3), ("dv_stride", ctypes.c_int64 * 3),
                ("workspace", ctypes.c_void_p), ("deterministic", ctypes.c_int)]


def bind_backward(lib):
    lib.fa_backward_kernel_load.restype = ctypes.c_void_p
    lib.fa_backward_kernel_load.argtypes = [ctypes.c_char_p]
    lib.fa_backward_workspace_size.restype = ctypes.c_int64
    lib.fa_backward_workspace_size.argtypes = [ctypes.c_void_p, ctypes.c_int64,
                                               ctypes.c_int64, ctypes.c_int64]
    lib.fa_kernel_backward.restype = ctypes.c_int
    lib.fa_kernel_backward.argtypes = [ctypes.c_void_p, ctypes.POINTER(BackwardArgs),
                                       ctypes.c_void_p]


def make_set(b, h, n, d, dtype):
    q, k, v, do = (torch.randn(b, h, n, d, device="cuda", dtype=dtype) for _ in range(4))
    o, dq, dk, dv = (torch.empty_like(q) for _ in range(4))
    lse = torch.empty(b, h, n, device="cuda", dtype=torch.float32)
    return dict(q=q, k=k, v=v, o=o, lse=lse, do=do, dq=dq, dk=dk, dv=dv,
                fwd=make_args(q, k, v, o, lse))


def backward_args(s, workspace, deterministic):
    a = BackwardArgs()
    a.forward = s["fwd"]
    a.d_out, a.dq, a.dk, a.dv = (s[t].data_ptr() for t in ("do", "dq", "dk", "dv"))
    for field, t in (("d_out_stride", "do"), ("dq_stride", "dq"), ("dk_stride", "dk"),
                     ("dv_stride", "dv")):
        getattr(a, field)[:] = list(s[t].stride()[:3])
    a.workspace, a.deterministic = workspace.data_ptr(), int(deterministic)
    return a


def fa_step(lib, forward, backward, workspace, deterministic):
    def run(s):
        key = ("args", backward, deterministic)
        if key not in s:
            s[key] = backward_args(s, workspace, deterministic)
        args = s[key]
        if lib.fa_kernel_forward(forward, ctypes.byref(s["fwd"]), None) != 0 or \
           lib.fa_kernel_backward(backward, ctypes.byref(args), None) != 0:
            raise RuntimeError(lib.fa_last_error().decode())
    return run


def sdpa_step(backend, causal):
    def run(s):
        q, k, v = (s[t].detach().requires_grad_() for t in ("q", "k", "v"))
        with sdpa_kernel(backend):
            o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        torch.autograd.grad(o, (q, k, v), s["do"])
    return run


def sdpa_gradients(s, causal):
    q, k, v = (s[t].detach().requires_grad_() for t in ("q", "k", "v"))
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    return torch.autograd.grad(o, (q, k, v), s["do"])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("lib")
    parser.add_argument("forward")
    parser.add_argument("variants", nargs="+")
    parser.add_argument("--b", type=int, default=4)
    parser.add_argument("--h", type=int, default=16)
    parser.add_argument("--n", type=int, default=4096)
    a = parser.parse_args()
    lib = load_runtime(a.lib)
    bind_backward(lib)
    manifest = json.load(open(a.forward))
    d, causal = manifest["head_dim"], manifest["mask"] != "none"
    dtype = torch.float16 if manifest["dtype"] == "f16" else torch.bfloat16
    forward = load(lib, a.forward)
    variants = []
    for arg in a.variants:
        label, path = arg.split("=", 1)
        kernel = lib.fa_backward_kernel_load(path.encode())
        if not kernel:
            sys.exit(f"{path}: {lib.fa_last_error().decode()}")
        variants.append((label, kernel))
    if not forward:
        sys.exit(1)
    # Two sets: 8 [B, H, N, D] tensors each (~1 GB at D128), past L2.
    sets = [make_set(a.b, a.h, a.n, d, dtype) for _ in range(2)]
    size = max(lib.fa_backward_workspace_size(k, a.b, a.h, a.n) for _, k in variants)
    workspace = torch.empty(max(size, 256), device="cuda", dtype=torch.uint8)
    launches = [(label, fa_step(lib, forward, kernel, workspace, label.endswith("@det")))
                for label, kernel in variants]
    launches += [("FA2", sdpa_step(SDPBackend.FLASH_ATTENTION, causal)),
                 ("cuDNN", sdpa_step(SDPBackend.CUDNN_ATTENTION, causal))]
    reference = sdpa_gradients(sets[0], causal)
    for label, run in launches[:len(variants)]:
        run(sets[0])
        torch.cuda.synchronize()
        diffs = [((sets[0][t].float() - r.float()).norm() / r.float().norm()).item()
                 for t, r in zip(("dq", "dk", "dv"), reference)]
        same = ""
        if label.endswith("@det"):
            first = [sets[0][t].clone() for t in ("dq", "dk", "dv")]
            run(sets[0])
            torch.cuda.synchronize()
            same = ", bit-identical on a second run: " + str(all(
                torch.equal(x, sets[0][t]) for x, t in zip(first, ("dq", "dk", "dv"))))
        print(f"{label}: relative difference to SDPA flash dQ {diffs[0]:.2e} "
              f"dK {diffs[1]:.2e} dV {diffs[2]:.2e}{same}")
    ms = time_interleaved([run for _, run in launches], sets)
    flops = 3.5 * 4 * a.b * a.h * a.n * a.n * d / (2 if causal else 1)
    print(f"device: {torch.cuda.get_device_name()}  B={a.b} H={a.h} N={a.n} D={d} "
          f"causal={causal}, forward + backward")
    cudnn = ms[-1]
    for (label, _), t in zip(launches, ms):
        print(f"| {label} | {t:.3f} ms | {flops / t / 1e9:.1f} TFLOP/s | "
              f"{cudnn / t:.2f}x cuDNN |")


if __name__ == "__main__":
    main()
