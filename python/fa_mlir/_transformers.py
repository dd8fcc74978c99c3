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
    for unsupported in ("cu_seq_lens_q", "s_aux"):
        if kwargs.get(unsupported) is not None:
            raise FaMlirError(f"fa_mlir: {unsupported} (packed sequences or attention "
                              "sinks) is not supported")
    if dropout and module.training:
        raise FaMlirError("fa_mlir: attention dropout is not supported")
    causal = kwargs.get("is_causal")
    if causal is None:
        causal = getattr(module, "is_causal", True)
    # transformers' sliding window counts the query's own position; causal
    # caps the right side at the diagonal.
    window = (sliding_window - 1, sliding_window - 1) if sliding_window else (-1, -1)
    q, k, v = (t.transpose(1, 2) for t in (query, key, value))
    out = flash_attn_func(q, k, v, softmax_scale=scaling, causal=causal,
                          window_size=window, softcap=softcap or 0.0)
    return out, None


def _mask(*args, **kwargs):
    """transformers' flash-attention mask (None when nothing is padded),
    refusing what it would drop without a word: masks that are more than
    padding plus causality (packed sequences, extra mask functions, static
    caches' unfilled slots)."""
    from transformers.masking_utils import flash_attention_mask

    if kwargs.get("allow_is_causal_skip") is False:
        raise FaMlirError("fa_mlir: this model's mask is more than causal + padding "
                          "(packed sequences, a mask function or a static cache); not supported")
    return flash_attention_mask(*args, **kwargs)


def register(name="fa_mlir"):
    """Registers `name` with transformers (>= 4.53: its AttentionInterface
    and AttentionMaskInterface); returns the name."""
    try:
        from transformers import AttentionInterface, AttentionMaskInterface
        from transformers.masking_utils import flash_attention_mask  # noqa: F401
    except ImportError as error:
        raise FaMlirError("fa_mlir: register_transformers needs transformers >= 4.53 "
                          f"(AttentionMaskInterface): {error}") from error
    AttentionInterface.register(name, fa_mlir_attention)
    AttentionMaskInterface.register(name, _mask)
    return name
