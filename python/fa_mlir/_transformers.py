"""attn_implementation="fa_mlir" for Hugging Face transformers.

register() adds fa_mlir to transformers' AttentionInterface (and, where the
version has one, to its AttentionMaskInterface with the flash-attention
mask: None when nothing is padded). Attention layers then call
fa_mlir_attention with [B, H, S, D] query/key/value, as they call the sdpa
and flash implementations, and get [B, S, H, D] back.
"""

from ._ops import flash_attn_func
from ._runtime import FaMlirError


def fa_mlir_attention(module, query, key, value, attention_mask, dropout=0.0,
                      scaling=None, sliding_window=None, softcap=None, **kwargs):
    if attention_mask is not None and not bool(attention_mask.all()):
        raise FaMlirError("fa_mlir: padded batches (an attention mask with masked "
                          "positions) are not supported; use unpadded batches")
    if dropout and module.training:
        raise FaMlirError("fa_mlir: attention dropout is not supported")
    causal = getattr(module, "is_causal", True)
    # transformers' sliding window counts the query's own position.
    window = (sliding_window - 1, -1) if sliding_window else (-1, -1)
    q, k, v = (t.transpose(1, 2) for t in (query, key, value))
    out = flash_attn_func(q, k, v, softmax_scale=scaling, causal=causal,
                          window_size=window, softcap=softcap or 0.0)
    return out, None


def register(name="fa_mlir"):
    """Registers `name` with transformers; returns the name."""
    from transformers import AttentionInterface

    AttentionInterface.register(name, fa_mlir_attention)
    try:
        from transformers import AttentionMaskInterface
        from transformers.masking_utils import flash_attention_mask

        AttentionMaskInterface.register(name, flash_attention_mask)
    except ImportError:
        pass  # older transformers: the model passes its own mask (checked above)
    return name
