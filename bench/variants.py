#!/usr/bin/env python3
"""Times variants of one kernel spec (e.g. other tiles or stage counts, made
with fa-compile from an .mlir whose fa.attention states its #fa.tile) in the
same interleaved rounds, at the standard problem shapes (B = 16384/N,
H = 2048/D), checking each against SDPA first. For tuning experiments.

usage: python3 bench/variants.py LIBFA_RUNTIME.so N[,N...] LABEL=MANIFEST ...
SDPA's flash (FA2) and cuDNN backends are timed in the same rounds, so each
variant's ratio to them carries no clock bias.
"""
import json
import sys

import torch

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from bench import (cross_check, launcher, load, load_runtime, make_sets, sdpa,  # noqa: E402
                   time_interleaved)
from torch.nn.attention import SDPBackend  # noqa: E402


def main():
    lib = load_runtime(sys.argv[1])
    seqs = [int(n) for n in sys.argv[2].split(",")]
    variants = [arg.split("=", 1) for arg in sys.argv[3:]]
    manifest = json.load(open(variants[0][1]))
    d, causal = manifest["head_dim"], manifest["mask"] != "none"
    kernels = [(label, load(lib, path)) for label, path in variants]
    print(f"device: {torch.cuda.get_device_name()}  D={d} causal={causal}")
    print("| N | " + " | ".join(label for label, _ in kernels) + " | FA2 | cuDNN | "
          + " | ".join(f"{label}/cuDNN" for label, _ in kernels) + " |")
    for n in seqs:
        b, h = 16384 // n, 2048 // d
        sets = make_sets(b, h, n, d, torch.bfloat16)
        for label, kernel in kernels:
            rel = cross_check(launcher(lib, kernel), sets, causal)
            if not rel < 1e-2:
                print(f"{label}: rel_vs_sdpa {rel:.1e}: WRONG")
        flops = 4 * b * h * n * n * d / (2 if causal else 1)
        runs = [launcher(lib, k) for _, k in kernels]
        runs += [sdpa(SDPBackend.FLASH_ATTENTION, causal), sdpa(SDPBackend.CUDNN_ATTENTION, causal)]
        ms = time_interleaved(runs, sets, rounds=7)
        tflops = [flops / (t * 1e-3) / 1e12 for t in ms]
        print(f"| {n} | " + " | ".join(f"{t:.1f}" for t in tflops) + " | "
              + " | ".join(f"{t / tflops[-1]:.2f}" for t in tflops[:len(kernels)]) + " |",
              flush=True)
        del sets
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
