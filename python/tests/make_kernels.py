"""Generates the kernels python/tests/test_torch.py needs into a cache
directory, here (where fa-compile is built), for the GPU machine (which has
no MLIR): there, FA_MLIR_CACHE_DIR=DIR points the kernel store at them.

Usage: PYTHONPATH=python python3 python/tests/make_kernels.py DIR [target [budget_kb]]
(budget_kb: the GPU's shared memory per block, as the torch op reads it
there and keys its cache by; default 227, the H100's.)
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fa_mlir import KernelSpec, KernelStore  # noqa: E402
from fa_mlir._kernels import mask_of  # noqa: E402


def specs():
    """(spec, backward, deterministic) of every call the tests make."""
    from cases import CASES  # the table, without PyTorch

    for B, M, N, Hq, Hkv, D, causal, window, softcap, alibi in CASES:
        for dtype in ("bf16", "f16"):
            spec = KernelSpec(dtype, D, D, mask_of(causal, window), D ** -0.5, softcap,
                              alibi or "none")
            yield spec, False, False
            yield spec, True, False
    yield KernelSpec("bf16", 128, 128, "causal", 128 ** -0.5), True, True
    for mask in ("none", "causal_top_left"):  # SdpaTest
        yield KernelSpec("bf16", 64, 64, mask, 64 ** -0.5), False, False
    for D in (64, 32):  # CompileTest, TrainingTest (64); the Llama (32)
        spec = KernelSpec("bf16", D, D, "causal", D ** -0.5)
        yield spec, False, False
        yield spec, True, False


def main():
    directory = Path(sys.argv[1])
    target = sys.argv[2] if len(sys.argv) > 2 else "sm_90a"
    budget_kb = int(sys.argv[3]) if len(sys.argv) > 3 else 227
    store = KernelStore(target, cache_dir=directory, shipped_dirs=[],
                        shared_memory_budget_kb=budget_kb)
    for spec, backward, deterministic in specs():
        store.manifest(spec, backward=backward, deterministic=deterministic)
    print(f"{store.compiles} kernels compiled into {directory} for {target}")


if __name__ == "__main__":
    main()
