#!/usr/bin/env python3
"""Re-times chosen cells of the speed table, the rebuilt kernel against the
baseline (bench/baseline/sm80-fwd-0fa98a2), with more interleaved rounds: for cells whose ratio in a
bench.py run sits near a threshold, to tell a difference from drift.

usage: python3 bench/recheck.py LIBFA_RUNTIME.so KERNEL_DIR BASELINE_DIR ROUNDS D:CAUSAL:N ...
"""
import sys

import torch

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from bench import launcher, load, load_runtime, make_sets, time_interleaved  # noqa: E402


def main():
    lib = load_runtime(sys.argv[1])
    kernel_dir, baseline_dir, rounds = sys.argv[2], sys.argv[3], int(sys.argv[4])
    print(f"device: {torch.cuda.get_device_name()}, {rounds} interleaved rounds per cell")
    print("| D | causal | N | fa-mlir | baseline | new/baseline |\n|---|---|---|---|---|---|")
    for cell in sys.argv[5:]:
        d, causal, n = (int(x) for x in cell.split(":"))
        name = f"fa_fwd_sm80_bf16_d{d}_{'causal' if causal else 'none'}"
        new, old = load(lib, f"{kernel_dir}/{name}.json"), load(lib, f"{baseline_dir}/{name}.json")
        b, h = 16384 // n, 2048 // d
        sets = make_sets(b, h, n, d, torch.bfloat16)
        flops = 4 * b * h * n * n * d / (2 if causal else 1)
        ms = time_interleaved([launcher(lib, new), launcher(lib, old)], sets, rounds)
        mine, base = (flops / (t * 1e-3) / 1e12 for t in ms)
        print(f"| {d} | {'yes' if causal else 'no'} | {n} | {mine:.1f} | {base:.1f} | {mine / base:.3f} |",
              flush=True)
        del sets
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
