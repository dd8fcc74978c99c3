#!/usr/bin/env python3
"""The issue's variants as score_mod / mask_mod regions, timed in one process
beside the built-in fa-mlir kernel of the same meaning, FlexAttention
(torch.compile'd, with a block mask for the masks) and SDPA's cuDNN backend,
bf16, D = 128, B 1, H 16. Each variant's output is first cross-checked
against FlexAttention's on the same inputs (the same function written in
Python).

usage: python3 bench/flex_variants.py LIBFA_RUNTIME.so KERNEL_DIR N[,N...]
"""
import ctypes
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from bench import ForwardArgs, load, load_runtime, make_args, time_interleaved  # noqa: E402


class Capture(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("extents", ctypes.POINTER(ctypes.c_int64)),
                ("rank", ctypes.c_int64), ("real", ctypes.c_double),
                ("integer", ctypes.c_int64)]


def capture_array(tensors):
    """fa_capture[] for device tensors (kept alive by the caller)."""
    array = (Capture * len(tensors))()
    keep = []
    for i, t in enumerate(tensors):
        extents = (ctypes.c_int64 * t.dim())(*t.shape)
        keep.append(extents)
        array[i] = Capture(t.data_ptr(), extents, t.dim(), 0.0, 0)
    return array, keep


B, H, D = 1, 16, 128
TABLE = 16384  # the captured tables' reach (bench/variants/*.mlir)


def variants(n):
    """(name, built-in kernel, capture tensors, flex score_mod, flex mask_mod,
    SDPA causal or None)."""
    docs = (torch.arange(TABLE, device="cuda") * 8 // n).clamp(max=7).to(torch.int32)
    slopes = torch.tensor([2.0 ** (-8 * (h + 1) / H) for h in range(H)], device="cuda")
    bias = torch.randn(H, 2 * TABLE - 1, device="cuda") * 0.5
    causal = lambda b, h, q, kv: kv <= q  # noqa: E731
    return [
        ("causal", "builtin_causal", [], None, causal, True),
        ("window 1024", "builtin_window", [], None,
         lambda b, h, q, kv: (kv <= q) & (q <= kv + 1023), None),
        ("prefix-LM 2048", "builtin_none", [], None,
         lambda b, h, q, kv: (kv < 2048) | (kv <= q), None),
        ("document (8 docs) + causal", "builtin_causal", [docs], None,
         lambda b, h, q, kv: (docs[q] == docs[kv]) & (kv <= q), None),
        ("softcap 30", "builtin_softcap", [], lambda s, b, h, q, kv: 30 * torch.tanh(s / 30),
         None, False),
        ("ALiBi", "builtin_alibi", [slopes],
         lambda s, b, h, q, kv: s - slopes[h] * (q - kv).abs(), None, None),
        ("relative bias[h, q-kv] + causal", "builtin_causal", [bias],
         lambda s, b, h, q, kv: s + bias[h, q - kv + TABLE - 1], causal, None),
    ], {"causal": "variant_causal", "window 1024": "variant_window",
        "prefix-LM 2048": "variant_prefix", "document (8 docs) + causal": "variant_document",
        "softcap 30": "variant_softcap", "ALiBi": "variant_alibi",
        "relative bias[h, q-kv] + causal": "variant_relbias"}


def main():
    lib = load_runtime(sys.argv[1])
    lib.fa_kernel_forward_captures.restype = ctypes.c_int
    lib.fa_kernel_forward_captures.argtypes = [
        ctypes.c_void_p, ctypes.POINTER(ForwardArgs), ctypes.POINTER(Capture), ctypes.c_int64,
        ctypes.c_void_p]
    kernel_dir, seqs = sys.argv[2], [int(n) for n in sys.argv[3].split(",")]
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    torch._dynamo.config.cache_size_limit = 256
    torch._dynamo.config.accumulated_cache_size_limit = 4096
    compiled = torch.compile(flex_attention, dynamic=False)
    print(f"device: {torch.cuda.get_device_name()}  kernels: {kernel_dir}  bf16 D={D} B={B} H={H}; ms, forward")
    print("| variant | N | region | built-in | FlexAttention | SDPA cuDNN | region / built-in "
          "| Flex / region | rel. diff to Flex |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n in seqs:
        table, names = variants(n)
        sets = []
        for _ in range(2):
            q, k, v = (torch.randn(B, H, n, D, device="cuda", dtype=torch.bfloat16)
                       for _ in range(3))
            o, lse = torch.empty_like(q), torch.empty(B, H, n, device="cuda")
            sets.append((q, k, v, o, lse, make_args(q, k, v, o, lse)))
        for label, builtin, captures, score_mod, mask_mod, sdpa_causal in table:
            region = load(lib, f"{kernel_dir}/{names[label]}.json")
            base = load(lib, f"{kernel_dir}/{builtin}.json")
            array, keep = capture_array(captures)
            slopes = captures[0] if builtin == "builtin_alibi" else None
            base_sets = [(s[0], s[1], s[2], s[3], s[4], make_args(*s[:5], slopes)) for s in sets]

            def run_region(s, region=region, array=array):
                if lib.fa_kernel_forward_captures(region, ctypes.byref(s[5]), array,
                                                  len(captures), None):
                    raise RuntimeError(lib.fa_last_error().decode())

            def run_base(s, base=base):
                t = base_sets[0] if s is sets[0] else base_sets[1]
                if lib.fa_kernel_forward(base, ctypes.byref(t[5]), None):
                    raise RuntimeError(lib.fa_last_error().decode())
            block_mask = (create_block_mask(mask_mod, B, H, n, n, device="cuda")
                          if mask_mod else None)

            def run_flex(s, score_mod=score_mod, block_mask=block_mask):
                return compiled(s[0], s[1], s[2], score_mod=score_mod, block_mask=block_mask)
            q, k, v, o, _, _ = sets[0]
            o.fill_(float("nan"))
            run_region(sets[0])
            ref = run_flex(sets[0]).float()
            torch.cuda.synchronize()
            diff = ((o.float() - ref).norm() / ref.norm()).item()
            launches = [run_region, run_base, run_flex]
            if sdpa_causal is not None:
                def run_sdpa(s, c=sdpa_causal):
                    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                        F.scaled_dot_product_attention(s[0], s[1], s[2], is_causal=c)
                launches.append(run_sdpa)
            times = time_interleaved(launches, sets)
            t_sdpa = f"{times[3]:.3f}" if len(times) > 3 else "-"
            print(f"| {label} | {n} | {times[0]:.3f} | {times[1]:.3f} | {times[2]:.3f} | {t_sdpa} "
                  f"| {times[0] / times[1]:.2f} | {times[2] / times[0]:.2f} | {diff:.1e} |")
            del keep


if __name__ == "__main__":
    main()
