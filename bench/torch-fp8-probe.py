# Does this PyTorch expose an fp8 (e4m3) attention? Tries SDPA with e4m3
# inputs under each backend; prints what each says (bench/verify-fp8.sh).
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

print("torch", torch.__version__, torch.cuda.get_device_name())
q = torch.randn(1, 8, 1024, 128, device="cuda").to(torch.float8_e4m3fn)
for backend in (SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION,
                SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH):
    try:
        with sdpa_kernel([backend]):
            out = F.scaled_dot_product_attention(q, q, q)
        print(f"{backend.name}: runs, output {out.dtype}")
    except Exception as e:  # noqa: BLE001 - the message is the finding
        print(f"{backend.name}: {type(e).__name__}: {str(e).splitlines()[0][:160]}")
