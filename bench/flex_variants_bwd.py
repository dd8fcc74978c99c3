#!/usr/bin/env python3
"""Forward + backward of the variant kernels (score_mod / mask_mod regions,
fa-compile F.mlir --bwd), timed in one process beside the built-in fa-mlir
kernels of the same meaning, FlexAttention (torch.compile'd, with a block
mask for the masks) and SDPA's cuDNN backend, bf16, D = 128, B 1, H 16.
Each variant's dQ is first cross-checked against FlexAttention's.

usage: python3 bench/flex_variants_bwd.py LIBFA_RUNTIME.so KERNEL_DIR N[,N...]
"""
import ctypes
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from bench import ForwardArgs, load, load_runtime, time_interleaved  # noqa: E402
from bwd_variants import BackwardArgs, backward_args, bind_backward, make_set  # noqa: E402
from flex_variants import B, D, H, Capture, capture_array, variants  # noqa: E402


def main():
    lib = load_runtime(sys.argv[1])
    bind_backward(lib)
    lib.fa_kernel_forward_captures.restype = ctypes.c_int
    lib.fa_kernel_forward_captures.argtypes = [
        ctypes.c_void_p, ctypes.POINTER(ForwardArgs), ctypes.POINTER(Capture), ctypes.c_int64,
        ctypes.c_void_p]
    lib.fa_kernel_backward_captures.restype = ctypes.c_int
    lib.fa_kernel_backward_captures.argtypes = [
        ctypes.c_void_p, ctypes.POINTER(BackwardArgs), ctypes.POINTER(Capture), ctypes.c_int64,
        ctypes.c_void_p]
    kernel_dir, seqs = sys.argv[2], [int(n) for n in sys.argv[3].split(",")]
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    torch._dynamo.config.cache_size_limit = 256
    torch._dynamo.config.accumulated_cache_size_limit = 4096
    compiled = torch.compile(flex_attention, dynamic=False)
    print(f"device: {torch.cuda.get_device_name()}  kernels: {kernel_dir}  bf16 D={D} B={B} H={H}; "
          "ms, forward + backward")
    print("| variant | N | region | built-in | FlexAttention | SDPA cuDNN | region / built-in "
          "| Flex / region | dQ rel. diff to Flex |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n in seqs:
        table, names = variants(n)
        sets = [make_set(B, H, n, D, torch.bfloat16) for _ in range(2)]
        for label, builtin, captures, score_mod, mask_mod, sdpa_causal in table:
            name = names[label]
            region = load(lib, f"{kernel_dir}/{name}.json")
            region_bwd = lib.fa_backward_kernel_load(f"{kernel_dir}/{name}_bwd.json".encode())
            base = load(lib, f"{kernel_dir}/{builtin}.json")
            base_bwd = lib.fa_backward_kernel_load(f"{kernel_dir}/{builtin}_bwd.json".encode())
            if not region_bwd or not base_bwd:
                raise RuntimeError(lib.fa_last_error().decode())
            size = max(lib.fa_backward_workspace_size(k, B, H, n) for k in (region_bwd, base_bwd))
            workspace = torch.empty(max(size, 256), device="cuda", dtype=torch.uint8)
            array, keep = capture_array(captures)
            slopes = captures[0] if builtin == "builtin_alibi" else None

            def run_region(s, array=array, region=region, region_bwd=region_bwd):
                a = backward_args(s, workspace, False)
                if lib.fa_kernel_forward_captures(region, ctypes.byref(s["fwd"]), array,
                                                  len(captures), None) or \
                   lib.fa_kernel_backward_captures(region_bwd, ctypes.byref(a), array,
                                                   len(captures), None):
                    raise RuntimeError(lib.fa_last_error().decode())

            def run_base(s, base=base, base_bwd=base_bwd, slopes=slopes):
                a = backward_args(s, workspace, False)
                if slopes is not None:
                    a.forward.alibi_slopes = slopes.data_ptr()
                if lib.fa_kernel_forward(base, ctypes.byref(a.forward), None) or \
                   lib.fa_kernel_backward(base_bwd, ctypes.byref(a), None):
                    raise RuntimeError(lib.fa_last_error().decode())
            block_mask = (create_block_mask(mask_mod, B, H, n, n, device="cuda")
                          if mask_mod else None)

            def run_flex(s, score_mod=score_mod, block_mask=block_mask):
                q, k, v = (s[t].detach().requires_grad_() for t in ("q", "k", "v"))
                o = compiled(q, k, v, score_mod=score_mod, block_mask=block_mask)
                return torch.autograd.grad(o, (q, k, v), s["do"])
            s = sets[0]
            s["dq"].fill_(float("nan"))
            run_region(s)
            ref = run_flex(s)[0].float()
            torch.cuda.synchronize()
            diff = ((s["dq"].float() - ref).norm() / ref.norm()).item()
            launches = [run_region, run_base, run_flex]
            if sdpa_causal is not None:
                def run_sdpa(s, c=sdpa_causal):
                    q, k, v = (s[t].detach().requires_grad_() for t in ("q", "k", "v"))
                    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                        o = F.scaled_dot_product_attention(q, k, v, is_causal=c)
                    torch.autograd.grad(o, (q, k, v), s["do"])
                launches.append(run_sdpa)
            times = time_interleaved(launches, sets)
            t_sdpa = f"{times[3]:.3f}" if len(times) > 3 else "-"
            print(f"| {label} | {n} | {times[0]:.3f} | {times[1]:.3f} | {times[2]:.3f} | {t_sdpa} "
                  f"| {times[0] / times[1]:.2f} | {times[2] / times[0]:.2f} | {diff:.1e} |")
            del keep


if __name__ == "__main__":
    main()
