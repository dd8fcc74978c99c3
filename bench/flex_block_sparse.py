#!/usr/bin/env python3
"""Block-sparse variant kernels (#fa.block_sparse) on FlexAttention's own
block masks, timed in one process beside the dense region kernel of the
same mask, FlexAttention (torch.compile'd, same block mask), fa-mlir's
built-in causal kernel and SDPA's cuDNN causal, bf16, D = 128, B 1, H 16.
Each output is first cross-checked against FlexAttention's.

usage: python3 bench/flex_block_sparse.py LIBFA_RUNTIME.so KERNEL_DIR N[,N...]
"""
import ctypes
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from bench import ForwardArgs, load, load_runtime, make_args, time_interleaved  # noqa: E402
from flex_variants import Capture, capture_array  # noqa: E402


class BlockMask(ctypes.Structure):
    _fields_ = [("kv_num_blocks", ctypes.c_void_p), ("kv_indices", ctypes.c_void_p),
                ("full_kv_num_blocks", ctypes.c_void_p), ("full_kv_indices", ctypes.c_void_p),
                ("batch", ctypes.c_int64), ("heads", ctypes.c_int64),
                ("q_blocks", ctypes.c_int64), ("kv_blocks", ctypes.c_int64),
                ("q_block_size", ctypes.c_int64), ("kv_block_size", ctypes.c_int64)]


def block_mask_of(bm):
    """fa_block_mask over a FlexAttention BlockMask's tensors (kept alive by bm)."""
    parts = [bm.kv_num_blocks, bm.kv_indices, bm.full_kv_num_blocks, bm.full_kv_indices]
    parts = [p.contiguous().to(torch.int32) for p in parts]
    q_size, kv_size = bm.BLOCK_SIZE
    b, h, qb, kb = parts[1].shape
    return BlockMask(*(p.data_ptr() for p in parts), b, h, qb, kb, q_size, kv_size), parts


B, H, D = 1, 16, 128
TABLE = 16384  # the captured tables' reach (bench/variants/*.mlir)


def variants(n):
    """(label, sparse kernel, dense region kernel or None, captures, flex mask_mod)."""
    docs = (torch.arange(TABLE, device="cuda") * 8 // n).clamp(max=7).to(torch.int32)
    gen = torch.Generator(device="cuda").manual_seed(0)
    table = (torch.rand(128, 128, device="cuda", generator=gen) < 0.5).to(torch.int8)
    return [
        ("causal", "variant_causal_sparse", "variant_causal", [],
         lambda b, h, q, kv: kv <= q),
        ("document (8 docs) + causal", "variant_document_sparse", "variant_document", [docs],
         lambda b, h, q, kv: (docs[q] == docs[kv]) & (kv <= q)),
        ("random blocks, 50% dense", "variant_blocks", None, [table],
         lambda b, h, q, kv: table[q // 128, kv // 128] != 0),
    ]


def main():
    lib = load_runtime(sys.argv[1])
    lib.fa_kernel_forward_sparse.restype = ctypes.c_int
    lib.fa_kernel_forward_sparse.argtypes = [
        ctypes.c_void_p, ctypes.POINTER(ForwardArgs), ctypes.POINTER(Capture), ctypes.c_int64,
        ctypes.POINTER(BlockMask), ctypes.c_void_p]
    kernel_dir, seqs = sys.argv[2], [int(n) for n in sys.argv[3].split(",")]
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    torch._dynamo.config.cache_size_limit = 256
    torch._dynamo.config.accumulated_cache_size_limit = 4096
    compiled = torch.compile(flex_attention, dynamic=False)
    causal_kernel = load(lib, f"{kernel_dir}/builtin_causal.json")
    print(f"device: {torch.cuda.get_device_name()}  kernels: {kernel_dir}  bf16 D={D} B={B} H={H}; "
          "ms, forward; blocks: listed / all 128x128 blocks")
    print("| variant | N | blocks | block-sparse | dense region | FlexAttention | built-in causal "
          "| SDPA cuDNN causal | Flex / sparse | causal / sparse | rel. diff to Flex |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for n in seqs:
        sets = []
        for _ in range(2):
            q, k, v = (torch.randn(B, H, n, D, device="cuda", dtype=torch.bfloat16)
                       for _ in range(3))
            o, lse = torch.empty_like(q), torch.empty(B, H, n, device="cuda")
            sets.append((q, k, v, o, lse, make_args(q, k, v, o, lse)))
        for label, sparse_name, dense_name, captures, mask_mod in variants(n):
            sparse = load(lib, f"{kernel_dir}/{sparse_name}.json")
            dense = load(lib, f"{kernel_dir}/{dense_name}.json") if dense_name else None
            array, keep = capture_array(captures)
            bm = create_block_mask(mask_mod, None, None, n, n, device="cuda")
            blocks, parts = block_mask_of(bm)
            listed = (parts[0].sum() + parts[2].sum()).item() / (parts[1].shape[-2] * parts[1].shape[-1])

            def run_sparse(s, kernel=sparse, array=array, blocks=blocks):
                if lib.fa_kernel_forward_sparse(kernel, ctypes.byref(s[5]), array,
                                                len(captures), ctypes.byref(blocks), None):
                    raise RuntimeError(lib.fa_last_error().decode())

            def run_dense(s, kernel=dense, array=array):
                if lib.fa_kernel_forward_sparse(kernel, ctypes.byref(s[5]), array,
                                                len(captures), None, None):
                    raise RuntimeError(lib.fa_last_error().decode())

            def run_causal(s):
                if lib.fa_kernel_forward(causal_kernel, ctypes.byref(s[5]), None):
                    raise RuntimeError(lib.fa_last_error().decode())

            def run_flex(s, bm=bm):
                return compiled(s[0], s[1], s[2], block_mask=bm)

            def run_sdpa(s):
                with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                    F.scaled_dot_product_attention(s[0], s[1], s[2], is_causal=True)
            q, k, v, o, _, _ = sets[0]
            o.fill_(float("nan"))
            run_sparse(sets[0])
            ref = run_flex(sets[0]).float()
            torch.cuda.synchronize()
            # Rows with no visible key: 0 in both.
            diff = ((o.float() - ref).norm() / ref.norm()).item()
            launches = [run_sparse] + ([run_dense] if dense else []) + [run_flex, run_causal, run_sdpa]
            times = time_interleaved(launches, sets)
            if not dense:
                times.insert(1, None)
            t_dense = f"{times[1]:.3f}" if times[1] else "-"
            print(f"| {label} | {n} | {listed:.3f} | {times[0]:.3f} | {t_dense} | {times[2]:.3f} "
                  f"| {times[3]:.3f} | {times[4]:.3f} | {times[2] / times[0]:.2f} "
                  f"| {times[3] / times[0]:.2f} | {diff:.1e} |")
            del keep, parts


if __name__ == "__main__":
    main()
