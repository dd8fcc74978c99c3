#!/usr/bin/env python3
"""Times two builds of the same kernels against each other in one process:
the A/B check for a compiler change that alters PTX. For every manifest in
NEW_DIR (fa_fwd_* and fa_bwd_*, filtered by --filter) with a namesake in
OLD_DIR, the old and the new kernel run on the same inputs:

  1. outputs first: both write into buffers poisoned with NaN, and the new
     kernel's O and LSE (forward) or dQ, dK and dV (backward) are compared
     with the old one's. A change that only renames instructions keeps the
     arithmetic, so the forward must agree bit for bit (reported as
     "identical"); the backward's dQ is a sum of atomic adds in whatever
     order the blocks arrive, so it is compared as a relative difference
     (dK, dV bit for bit; dQ too for a kernel with a deterministic mode,
     which runs in it). Anything else is printed as DIFFERS and the
     script exits 1 at the end.
  2. then the time: old and new in the same interleaved rounds (bench.py's
     method: a warm-up at full load, bursts rotating among input sets
     larger than L2, the order rotating each round, the median), so both
     see the same clock. new/old < 1 is faster.

Shapes: the standard ones (B = 16384/N, H = 2048/D, MHA, [B, H, N, D]) at each
--n. The backward is timed alone, on O and LSE from the old forward
(fa_fwd_X beside the old backward's manifest fa_bwd_X or fa_bwd_X_det).

usage: python3 bench/ptx_ab.py LIBFA_RUNTIME.so OLD_DIR NEW_DIR
           [--filter TEXT] [--n 4096,16384] [--rounds 6]
"""
import argparse
import ctypes
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import load, load_runtime, make_args, time_interleaved  # noqa: E402
from bwd_variants import backward_args, bind_backward  # noqa: E402

DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16, "f8E4M3FN": torch.float8_e4m3fn}


def inputs(manifest, n, count):
    """`count` input sets for a manifest's kernel at sequence length n."""
    d, dv = manifest["head_dim"], manifest.get("value_dim", manifest["head_dim"])
    dtype = DTYPES[manifest["dtype"]]
    out_dtype = torch.bfloat16 if dtype == torch.float8_e4m3fn else dtype
    b, h = max(1, 16384 // n), max(1, 2048 // d)
    slopes = torch.rand(h, device="cuda", dtype=torch.float32) * 0.5 + 0.01
    sets = []
    for _ in range(count):
        q, k = (torch.randn(b, h, n, d, device="cuda").to(dtype) for _ in range(2))
        v = torch.randn(b, h, n, dv, device="cuda").to(dtype)
        o = torch.empty(b, h, n, dv, device="cuda", dtype=out_dtype)
        lse = torch.empty(b, h, n, device="cuda", dtype=torch.float32)
        s = dict(q=q, k=k, v=v, o=o, lse=lse, slopes=slopes,
                 fwd=make_args(q, k, v, o, lse, slopes))
        if dtype == torch.float8_e4m3fn:
            # One descale per tensor (strides 0), as fa_runtime.h allows.
            s["descales"] = torch.rand(3, device="cuda", dtype=torch.float32) + 0.5
            base, size = s["descales"].data_ptr(), s["descales"].element_size()
            s["fwd"].q_descale, s["fwd"].k_descale, s["fwd"].v_descale = (
                base, base + size, base + 2 * size)
            s["fwd"].descale_stride[:] = [0, 0]
        if manifest["kind"] == "backward":
            s["do"] = torch.randn(b, h, n, dv, device="cuda", dtype=out_dtype)
            s["dq"], s["dk"] = torch.empty_like(q), torch.empty_like(k)
            s["dv"] = torch.empty_like(v)
        sets.append(s)
    return sets, b, h


def forward_manifest(directory, backward_name):
    """The forward beside a backward manifest: fa_fwd_X for fa_bwd_X and
    for its deterministic variant fa_bwd_X_det."""
    name = backward_name.replace("fa_bwd_", "fa_fwd_", 1)
    path = os.path.join(directory, name)
    if not os.path.exists(path) and name.endswith("_det.json"):
        path = os.path.join(directory, name[:-len("_det.json")] + ".json")
    return path


def forward_launch(lib, kernel):
    def run(s):
        if lib.fa_kernel_forward(kernel, ctypes.byref(s["fwd"]), None) != 0:
            raise RuntimeError(lib.fa_last_error().decode())
    return run


def backward_launch(lib, kernel, workspace, deterministic):
    def run(s):
        key = ("bwd", kernel)
        if key not in s:
            s[key] = backward_args(s, workspace, deterministic)
        if lib.fa_kernel_backward(kernel, ctypes.byref(s[key]), None) != 0:
            raise RuntimeError(lib.fa_last_error().decode())
    return run


def outputs_of(run, s, names):
    for t in names:
        s[t].view(torch.uint8).fill_(0xFF)  # NaN in every float format
    run(s)
    torch.cuda.synchronize()
    return [s[t].clone() for t in names]


def compare(old, new, names, atomic):
    """'identical', or each output's relative difference; ok is False where
    an output that must be bit-identical is not, or one differs by more
    than an atomic sum's reordering could explain."""
    words, ok = [], True
    for t, a, b in zip(names, old, new):
        if torch.equal(a.view(torch.uint8), b.view(torch.uint8)):
            continue
        af, bf = a.float(), b.float()
        rel = ((af - bf).norm() / af.norm().clamp_min(1e-30)).item()
        words.append(f"{t} {rel:.1e}")
        # A reordered fp32 sum of n terms moves by ~n·2^-24 relative; the
        # bf16/f16 output rounding can double that into one ulp (2^-8).
        ok = ok and t in atomic and rel < 1e-2
    return ("identical" if not words else ", ".join(words)), ok


def main():
    p = argparse.ArgumentParser()
    p.add_argument("lib")
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("--filter", default="")
    p.add_argument("--n", default="4096")
    p.add_argument("--rounds", type=int, default=6)
    a = p.parse_args()
    lib = load_runtime(a.lib)
    bind_backward(lib)
    seqs = [int(x) for x in a.n.split(",")]
    print(f"device: {torch.cuda.get_device_name()}")
    print("| kernel | N | old ms | new ms | new/old | outputs |")
    print("|---|---|---|---|---|---|")
    failed = False
    names = sorted(f for f in os.listdir(a.new) if f.endswith(".json") and a.filter in f
                   and f.startswith(("fa_fwd_", "fa_bwd_"))
                   and os.path.exists(os.path.join(a.old, f)))
    for name in names:
        manifest = json.load(open(os.path.join(a.new, name)))
        backward = manifest["kind"] == "backward"
        loader = lib.fa_backward_kernel_load if backward else lib.fa_kernel_load
        old, new = (loader(os.path.join(d, name).encode()) for d in (a.old, a.new))
        if not old or not new:
            print(f"| {name} | load failed: {lib.fa_last_error().decode()} |")
            failed = True
            continue
        for n in seqs:
            sets, b, h = inputs(manifest, n, 2 if backward else 3)
            if backward:
                fwd = load(lib, forward_manifest(a.old, name))
                if not fwd:
                    failed = True
                    break
                size = max(lib.fa_backward_workspace_size(k, b, h, n) for k in (old, new))
                workspace = torch.empty(max(size, 256), device="cuda", dtype=torch.uint8)
                for s in sets:
                    forward_launch(lib, fwd)(s)
                # A deterministic-mode kernel runs in that mode: its dQ
                # turn order is fixed, so its dQ must be bit-identical too.
                det = bool(manifest.get("deterministic_mode"))
                runs = [backward_launch(lib, k, workspace, det) for k in (old, new)]
                outs, atomic = ("dq", "dk", "dv"), (() if det else ("dq",))
            else:
                runs = [forward_launch(lib, k) for k in (old, new)]
                outs, atomic = ("o", "lse"), ()
            verdict, ok = compare(outputs_of(runs[0], sets[0], outs),
                                  outputs_of(runs[1], sets[0], outs), outs, atomic)
            if not ok:
                verdict, failed = "DIFFERS: " + verdict, True
            ms = time_interleaved(runs, sets, rounds=a.rounds)
            print(f"| {name[:-5]} | {n} | {ms[0]:.3f} | {ms[1]:.3f} | {ms[1] / ms[0]:.3f} "
                  f"| {verdict} |", flush=True)
            del sets
            torch.cuda.empty_cache()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
