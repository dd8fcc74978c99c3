#!/usr/bin/env python3
"""Side-by-side forward timing on the GPU machine: fa-mlir's sm_80 kernels
(through libfa_runtime.so's C API) against PyTorch SDPA's flash backend
(FlashAttention-2) and its cuDNN backend, in one process, on the sizes of
docs/targets.md: 16k tokens per batch (B = 16384/N), hidden 2048 (H = 2048/D).

Every implementation is timed the same way, in the same interleaved
rounds (the order rotating): after a 150 ms warm-up at full load (the
clock settles to what the power draw allows), CUDA events around a burst
of launches that rotate among input sets larger than L2, the median of
bursts and rounds, FLOPs = 4·B·H·N²·D (halved when causal). Before timing, fa-mlir's
output is compared with SDPA's on the same inputs (a cross-check; the
float64 verification is fa-run's job).

With --baseline DIR, the same kernels from DIR (bench/baseline/sm80-fwd-0fa98a2:
the sm_80 PTX of revision 0fa98a2, before the GPU lowering became passes)
are timed in the same process, and the ratio new/baseline is printed per
cell. With --chip sm90a, the sm_90a kernels are timed beside the sm_80
kernel of the same spec instead. bench/report.py ingest reads the output. Then the cost of
softcap and ALiBi: the D=128 kernel with each against the same kernel
without, where KERNEL_DIR has them.

usage: python3 bench/bench.py LIBFA_RUNTIME.so KERNEL_DIR [--quick] [--baseline DIR] [--flex]
       [--features-only]
"""
import ctypes
import math
import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel


class ForwardArgs(ctypes.Structure):
    _fields_ = [("q", ctypes.c_void_p), ("k", ctypes.c_void_p), ("v", ctypes.c_void_p),
                ("o", ctypes.c_void_p), ("lse", ctypes.c_void_p),
                ("batch", ctypes.c_int64), ("q_heads", ctypes.c_int64),
                ("kv_heads", ctypes.c_int64), ("q_len", ctypes.c_int64),
                ("kv_len", ctypes.c_int64),
                ("q_stride", ctypes.c_int64 * 3), ("k_stride", ctypes.c_int64 * 3),
                ("v_stride", ctypes.c_int64 * 3), ("o_stride", ctypes.c_int64 * 3),
                ("lse_stride", ctypes.c_int64 * 2),
                ("alibi_slopes", ctypes.c_void_p), ("alibi_stride_b", ctypes.c_int64),
                # f8e4m3fn kernels' descales (fa_runtime.h); NULL here.
                ("q_descale", ctypes.c_void_p), ("k_descale", ctypes.c_void_p),
                ("v_descale", ctypes.c_void_p), ("descale_stride", ctypes.c_int64 * 2)]


def load_runtime(path):
    lib = ctypes.CDLL(path)
    lib.fa_kernel_load.restype = ctypes.c_void_p
    lib.fa_kernel_load.argtypes = [ctypes.c_char_p]
    lib.fa_kernel_forward.restype = ctypes.c_int
    lib.fa_kernel_forward.argtypes = [ctypes.c_void_p, ctypes.POINTER(ForwardArgs), ctypes.c_void_p]
    lib.fa_last_error.restype = ctypes.c_char_p
    return lib


def make_args(q, k, v, o, lse, slopes=None):
    """[B, H, S, D] tensors (any strides with a contiguous last dim)."""
    a = ForwardArgs()
    a.q, a.k, a.v, a.o, a.lse = q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(), lse.data_ptr()
    a.batch, a.q_heads, a.q_len = q.shape[0], q.shape[1], q.shape[2]
    a.kv_heads, a.kv_len = k.shape[1], k.shape[2]
    for field, t in (("q_stride", q), ("k_stride", k), ("v_stride", v), ("o_stride", o)):
        getattr(a, field)[:] = [t.stride(0), t.stride(1), t.stride(2)]
    a.lse_stride[:] = [lse.stride(0), lse.stride(1)]
    if slopes is not None:
        a.alibi_slopes, a.alibi_stride_b = slopes.data_ptr(), 0
    return a


def warm_up(launch, sets, seconds=0.15):
    """Runs `launch` back to back for about `seconds`. The H100's clock
    follows its power draw within milliseconds: a kernel timed right after
    a lighter one (the sm80 kernel, an idle gap) runs on a higher clock.
    Three warm-up launches left a bias of 4-10% against the first kernel
    of an A/A pair (docs/performance.md); a warm-up this long
    removes it."""
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for i in range(3):
        launch(sets[i % len(sets)])
    stop.record()
    stop.synchronize()
    per_launch = max(start.elapsed_time(stop) / 3, 1e-3) * 1e-3
    for i in range(int(seconds / per_launch)):
        launch(sets[i % len(sets)])


def time_bursts(launch, sets, bursts=3, per_burst=None):
    """Median ms per launch over bursts of back-to-back launches."""
    per_burst = per_burst or max(10, 4 * len(sets))
    warm_up(launch, sets)
    torch.cuda.synchronize()
    times = []
    for _ in range(bursts):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for i in range(per_burst):
            launch(sets[i % len(sets)])
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / per_burst)
    times.sort()
    return times[len(times) // 2]


def time_interleaved(launches, sets, rounds=6):
    """Median ms of each launch over `rounds` rounds that take them one after another
    (the order rotating each round; rounds a multiple of the launches, so
    each is first equally often), so that clock and thermal drift during a
    run falls on all of them alike: same-process comparisons."""
    times = [[] for _ in launches]
    rounds = -(-rounds // len(launches)) * len(launches)
    for r in range(rounds):
        order = list(range(len(launches)))
        order = order[r % len(order):] + order[:r % len(order)]
        for i in order:
            times[i].append(time_bursts(launches[i], sets))
    return [sorted(t)[len(t) // 2] for t in times]


def make_sets(b, h, n, d, dtype, slopes=None):
    """Input sets to rotate among: together larger than L2 (50 MB)."""
    set_bytes = 4 * b * h * n * d * 2
    sets = []
    for _ in range(max(2, min(6, math.ceil(2 * 50e6 / set_bytes)))):
        q, k, v = (torch.randn(b, h, n, d, device="cuda", dtype=dtype) for _ in range(3))
        o = torch.empty_like(q)
        lse = torch.empty(b, h, n, device="cuda", dtype=torch.float32)
        sets.append((q, k, v, o, lse, make_args(q, k, v, o, lse, slopes)))
    return sets


def launcher(lib, kernel):
    def run(s):
        if lib.fa_kernel_forward(kernel, ctypes.byref(s[5]), None) != 0:
            raise RuntimeError(lib.fa_last_error().decode())
    return run


def sdpa(backend, causal):
    def run(s):
        with sdpa_kernel(backend):
            F.scaled_dot_product_attention(s[0], s[1], s[2], is_causal=causal)
    return run


def flex(b, h, n, causal):
    """FlexAttention (torch.compile'd flex_attention; causal as a block mask,
    built once per shape outside the timing), or None where this PyTorch has
    none."""
    try:
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    except ImportError:
        return None
    # One compiled graph per cell: past the recompile limit (8) dynamo
    # would run flex_attention eagerly, orders of magnitude slower.
    torch._dynamo.config.cache_size_limit = 256
    torch._dynamo.config.accumulated_cache_size_limit = 4096
    compiled = torch.compile(flex_attention, dynamic=False)
    block_mask = (create_block_mask(lambda b_, h_, q, kv: q >= kv, b, h, n, n, device="cuda")
                  if causal else None)

    def run(s):
        compiled(s[0], s[1], s[2], block_mask=block_mask)
    return run


def load(lib, path):
    kernel = lib.fa_kernel_load(path.encode())
    if not kernel:
        print(f"{path}: load failed: {lib.fa_last_error().decode()}")
    return kernel


def cross_check(fa_mlir, sets, causal):
    """Relative difference to SDPA (flash) on the first set."""
    q, k, v, o, lse, _ = sets[0]
    o.fill_(float("nan"))
    fa_mlir(sets[0])
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    torch.cuda.synchronize()
    return ((o.float() - ref.float()).norm() / ref.float().norm()).item()


def speed_table(lib, kernel_dir, baseline_dir, seqs, dtype, chip="sm80", with_flex=False):
    """fa-mlir's `chip` kernels beside SDPA; the second fa-mlir column is the
    baseline's kernel for sm80, or the sm80 kernel of the same spec for
    another chip, timed interleaved with it."""
    rows = []
    for d in (64, 128, 256):
        for causal in (False, True):
            spec = f"bf16_d{d}_{'causal' if causal else 'none'}"
            kernel = load(lib, f"{kernel_dir}/fa_fwd_{chip}_{spec}.json")
            base = None
            if chip != "sm80":
                old = load(lib, f"{kernel_dir}/fa_fwd_sm80_{spec}.json")
                # An earlier version of this chip's kernel, timed in the same rounds.
                if baseline_dir and os.path.exists(f"{baseline_dir}/fa_fwd_{chip}_{spec}.json"):
                    base = load(lib, f"{baseline_dir}/fa_fwd_{chip}_{spec}.json")
            else:
                old = load(lib, f"{baseline_dir}/fa_fwd_sm80_{spec}.json") if baseline_dir else None
            if not kernel:
                continue
            for n in seqs:
                b, h = 16384 // n, 2048 // d
                sets = make_sets(b, h, n, d, dtype)
                rel = cross_check(launcher(lib, kernel), sets, causal)
                flops = 4 * b * h * n * n * d / (2 if causal else 1)
                result = {"d": d, "causal": causal, "n": n, "rel_vs_sdpa": rel}
                # Every kernel in the same interleaved rounds, SDPA's too:
                # the clock each sees depends on what ran before it.
                runs = [("fa_mlir", launcher(lib, kernel))]
                runs += [("second", launcher(lib, old))] if old else []
                runs += [("base", launcher(lib, base))] if base else []
                peers = [("fa2", sdpa(SDPBackend.FLASH_ATTENTION, causal)),
                         ("cudnn", sdpa(SDPBackend.CUDNN_ATTENTION, causal))]
                if with_flex:
                    peers.append(("flex", flex(b, h, n, causal)))
                for label, fn in peers:
                    try:
                        if fn is None:
                            raise RuntimeError("not in this PyTorch")
                        fn(sets[0])
                        runs.append((label, fn))
                    except Exception as e:  # a backend may refuse a size
                        result[label] = float("nan")
                        print(f"  {label} d={d} n={n}: {e}")
                times = time_interleaved([fn for _, fn in runs], sets)
                for (label, _), ms in zip(runs, times):
                    result[label] = flops / (ms * 1e-3) / 1e12
                rows.append(result)
                second = "baseline" if chip == "sm80" else "sm80"
                other = (f"{second} {result['second']:6.1f}  new/{second} "
                         f"{result['fa_mlir'] / result['second']:.3f}  ") if old else ""
                if base:
                    other += (f"baseline {result['base']:6.1f}  new/baseline "
                           f"{result['fa_mlir'] / result['base']:.3f}  ")
                print(f"d={d:3d} causal={int(causal)} n={n:5d}  fa-mlir {result['fa_mlir']:6.1f}  {other}"
                      f"fa2 {result['fa2']:6.1f}  cudnn {result['cudnn']:6.1f}  "
                      + (f"flex {result['flex']:6.1f}  " if with_flex else "") +
                      f"ratio/fa2 {result['fa_mlir'] / result['fa2']:.2f}  "
                      f"ratio/cudnn {result['fa_mlir'] / result['cudnn']:.2f}  rel_vs_sdpa {rel:.1e}",
                      flush=True)
                del sets
                torch.cuda.empty_cache()
    return rows


def feature_costs(lib, kernel_dir, seqs, dtype):
    """softcap and ALiBi against the same D=128 kernel without them."""
    base = load(lib, f"{kernel_dir}/fa_fwd_sm80_bf16_d128_none.json")
    variants = [(label, load(lib, f"{kernel_dir}/fa_fwd_sm80_bf16_d128_none_{suffix}.json"))
                for label, suffix in (("softcap", "cap"), ("alibi", "alibi"))]
    print("\n| feature | N | without | with | cost |")
    print("|---|---|---|---|---|")
    for n in seqs:
        b, h, d = 16384 // n, 16, 128
        slopes = torch.rand(h, device="cuda", dtype=torch.float32) * 0.5 + 0.01
        sloped = make_sets(b, h, n, d, dtype, slopes)
        flops = 4 * b * h * n * n * d
        for label, kernel in variants:
            if not kernel:
                continue
            # Same inputs for both (a kernel without ALiBi ignores slopes).
            ms = time_interleaved([launcher(lib, base), launcher(lib, kernel)], sloped)
            without, with_it = (flops / (t * 1e-3) / 1e12 for t in ms)
            print(f"| {label} | {n} | {without:.1f} | {with_it:.1f} | "
                  f"{100 * (1 - with_it / without):.1f}% |", flush=True)
        del sloped
        torch.cuda.empty_cache()


def main():
    lib = load_runtime(sys.argv[1])
    kernel_dir = sys.argv[2]
    quick = "--quick" in sys.argv
    # The last --baseline wins (bench/run.sh passes its own first).
    baselines = [sys.argv[i + 1] for i, a in enumerate(sys.argv[:-1]) if a == "--baseline"]
    baseline_dir = baselines[-1] if baselines else None
    chip = sys.argv[sys.argv.index("--chip") + 1] if "--chip" in sys.argv else "sm80"
    dtype = torch.bfloat16
    seqs = [512, 1024, 2048, 4096, 8192, 16384] if not quick else [2048, 8192]
    print("command: python3 " + " ".join(sys.argv))
    print(f"device: {torch.cuda.get_device_name()}  torch {torch.__version__}  "
          f"cudnn {torch.backends.cudnn.version()}")
    if "--features-only" in sys.argv:
        feature_costs(lib, kernel_dir, [4096, 8192], dtype)
        return
    rows = speed_table(lib, kernel_dir, baseline_dir, seqs, dtype, chip, "--flex" in sys.argv)
    second = "baseline" if chip == "sm80" else "sm80"
    print(f"\n| D | causal | N | fa-mlir {chip} | {second} | {chip}/{second} | fa2 | cudnn "
          f"| fa-mlir/fa2 | fa-mlir/cudnn |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        other = r.get("second", float("nan"))
        print(f"| {r['d']} | {'yes' if r['causal'] else 'no'} | {r['n']} | {r['fa_mlir']:.1f} | "
              f"{other:.1f} | {r['fa_mlir'] / other:.3f} | "
              f"{r['fa2']:.1f} | {r['cudnn']:.1f} | {r['fa_mlir'] / r['fa2']:.2f} | "
              f"{r['fa_mlir'] / r['cudnn']:.2f} |")
    if chip == "sm80":
        feature_costs(lib, kernel_dir, [4096, 8192] if not quick else [8192], dtype)


if __name__ == "__main__":
    main()
