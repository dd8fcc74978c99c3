"""fa_mlir from PyTorch on a GPU: flash_attn_func's forward and backward
against a float64 reference over a table of shapes, SDPA's entry,
torch.compile, a training step against SDPA's, and a transformers model
with attn_implementation="fa_mlir" against "sdpa".

Tolerance (docs/design.md's policy): fa-mlir's error against the float64
reference at most 2x that of the same attention computed naively in the
input dtype (plus a floor of 1e-5). Inputs are fresh random tensors and the
outputs fresh allocations; fully masked rows and odd lengths are in the
table. Skipped (with the reason) without PyTorch or a CUDA device.
Kernels: the shipped standard set and fa-compile where it is installed;
elsewhere FA_MLIR_KERNEL_PATH must hold the kernels the table needs
(bench/make-python-kernels.sh generates them).
"""

import math
import os
import unittest

try:
    import torch
except ImportError:
    raise unittest.SkipTest("PyTorch is not installed")
if not torch.cuda.is_available():
    raise unittest.SkipTest("no CUDA device")

import fa_mlir
from fa_mlir import FaMlirError, flash_attn_func

from cases import CASES

DEVICE = "cuda"


def reference(q, k, v, scale, causal=False, window=(-1, -1), softcap=0.0, alibi=None,
              dtype=torch.float64, top_left=False):
    """Attention of [B, S, H, D] tensors computed in `dtype` (float64: the
    reference; the input dtype: the naive yardstick). Returns O [B, M, Hq, Dv]
    and LSE [B, Hq, M] (float64 only)."""
    B, M, Hq, _ = q.shape
    N, Hkv = k.shape[1], k.shape[2]
    group = Hq // Hkv
    qd = q.to(dtype).transpose(1, 2)
    kd = k.to(dtype).transpose(1, 2).repeat_interleave(group, dim=1)
    vd = v.to(dtype).transpose(1, 2).repeat_interleave(group, dim=1)
    s = (qd @ kd.transpose(-1, -2)) * scale
    if softcap:
        s = softcap * torch.tanh(s / softcap)
    i = torch.arange(M, device=q.device)[:, None]
    j = torch.arange(N, device=q.device)[None, :]
    diagonal = i if top_left else i + N - M
    if alibi is not None:
        slopes = alibi.to(dtype).reshape(1 if alibi.dim() == 1 else B, Hq, 1, 1)
        s = s - slopes * (diagonal - j).abs().to(dtype)
    visible = torch.ones(M, N, dtype=torch.bool, device=q.device)
    left, right = window
    if causal:
        right = 0
    if left >= 0:
        visible &= j >= diagonal - left
    if right >= 0:
        visible &= j <= diagonal + right
    s = s.masked_fill(~visible, float("-inf"))
    lse = torch.logsumexp(s.double(), dim=-1)
    p = torch.softmax(s.float() if dtype != torch.float64 else s, dim=-1).to(dtype)
    p = torch.nan_to_num(p, nan=0.0)  # rows with no visible key: O = 0
    out = (p @ vd).transpose(1, 2)
    return out, lse


def assert_close(test, name, got, ref, naive):
    err = (got.double() - ref).abs().max().item()
    bound = 2.0 * (naive.double() - ref).abs().max().item() + 1e-5
    test.assertFalse(torch.isnan(got).any().item(), f"{name}: NaN")
    test.assertLessEqual(err, bound, f"{name}: max error {err:.3e} > bound {bound:.3e}")


def random_qkv(B, M, N, Hq, Hkv, D, Dv, dtype, requires_grad=False):
    make = lambda *shape: torch.randn(*shape, device=DEVICE, dtype=dtype, requires_grad=requires_grad)
    return make(B, M, Hq, D), make(B, N, Hkv, D), make(B, N, Hkv, Dv)


def alibi_for(kind, B, Hq):
    if kind is None:
        return None
    slopes = torch.tensor([2.0 ** (-8.0 * (h + 1) / Hq) for h in range(Hq)], device=DEVICE)
    return slopes if kind == "head" else slopes.expand(B, Hq).contiguous()


class FlashAttnFuncTest(unittest.TestCase):
    def test_forward_and_backward(self):
        for B, M, N, Hq, Hkv, D, causal, window, softcap, alibi_kind in CASES:
            for dtype in (torch.bfloat16, torch.float16):
                with self.subTest(B=B, M=M, N=N, Hq=Hq, Hkv=Hkv, D=D, causal=causal,
                                  window=window, softcap=softcap, alibi=alibi_kind, dtype=dtype):
                    self._check(B, M, N, Hq, Hkv, D, causal, window, softcap, alibi_kind, dtype)

    def _check(self, B, M, N, Hq, Hkv, D, causal, window, softcap, alibi_kind, dtype):
        torch.manual_seed(M * 31 + N)
        q, k, v = random_qkv(B, M, N, Hq, Hkv, D, D, dtype, requires_grad=True)
        alibi = alibi_for(alibi_kind, B, Hq)
        scale = D ** -0.5
        options = dict(causal=causal, window=window, softcap=softcap, alibi=alibi)
        out, lse, _ = flash_attn_func(q, k, v, causal=causal, window_size=window, softcap=softcap,
                                      alibi_slopes=alibi, return_attn_probs=True)
        # The reference's own float64 leaves: its gradients are not rounded
        # back to the input dtype.
        q64, k64, v64 = (t.detach().double().requires_grad_() for t in (q, k, v))
        ref, ref_lse = reference(q64, k64, v64, scale, **options)
        naive, _ = reference(q, k, v, scale, dtype=dtype, **options)
        assert_close(self, "O", out, ref, naive)
        finite = torch.isfinite(ref_lse)
        self.assertTrue(torch.equal(torch.isfinite(lse), finite), "LSE: -inf rows differ")
        self.assertLess((lse[finite].double() - ref_lse[finite]).abs().max().item(), 1e-2)
        # Backward: the same yardstick, gradients of a fresh random dO.
        d_out = torch.randn_like(out)
        grads = torch.autograd.grad(out, (q, k, v), d_out)
        ref_grads = torch.autograd.grad(ref, (q64, k64, v64), d_out.double())
        naive_grads = torch.autograd.grad(naive, (q, k, v), d_out)
        for name, g, r, n in zip(("dQ", "dK", "dV"), grads, ref_grads, naive_grads):
            assert_close(self, name, g, r, n)

    def test_the_check_catches_a_wrong_kernel(self):
        # The negative control: a non-causal kernel's output against the
        # causal reference must fail the same check.
        q, k, v = random_qkv(1, 100, 150, 2, 2, 64, 64, torch.bfloat16)
        out = flash_attn_func(q, k, v, causal=False)
        ref, _ = reference(q, k, v, 64 ** -0.5, causal=True)
        naive, _ = reference(q, k, v, 64 ** -0.5, causal=True, dtype=torch.bfloat16)
        with self.assertRaises(AssertionError):
            assert_close(self, "O", out, ref, naive)

    def test_deterministic_backward_is_bit_identical(self):
        q, k, v = random_qkv(2, 500, 700, 8, 2, 128, 128, torch.bfloat16, requires_grad=True)
        d_out = torch.randn(2, 500, 8, 128, device=DEVICE, dtype=torch.bfloat16)
        first = None
        for _ in range(5):
            out = flash_attn_func(q, k, v, causal=True, deterministic=True)
            grads = torch.autograd.grad(out, (q, k, v), d_out)
            if first is None:
                first = grads
            for g, f in zip(grads, first):
                self.assertTrue(torch.equal(g, f))

    def test_refusals(self):
        q, k, v = random_qkv(1, 16, 16, 2, 2, 64, 64, torch.bfloat16)
        with self.assertRaisesRegex(FaMlirError, "dropout_p > 0"):
            flash_attn_func(q, k, v, dropout_p=0.1)
        with self.assertRaisesRegex(FaMlirError, "bfloat16 or float16"):
            flash_attn_func(q.float(), k.float(), v.float())
        with self.assertRaisesRegex(FaMlirError, "multiple of key/value heads"):
            flash_attn_func(torch.randn(1, 16, 3, 64, device=DEVICE, dtype=torch.bfloat16), k, v)


class NativeLaunchTest(unittest.TestCase):
    """The C++ launch (fa_mlir_native.forward, csrc/native_forward.cpp)
    against the ctypes one: the same kernel, so bit-identical outputs, and
    the same one-line refusals on its fast path (flash_attn_func without
    Python's checks). FA_MLIR_REQUIRE_NATIVE=1 (bench/python-tests.sh)
    makes a missing C++ op a failure instead of a skip."""

    def setUp(self):
        from fa_mlir import _native
        self.native = _native
        if _native.forward_op() is None:
            if os.environ.get("FA_MLIR_REQUIRE_NATIVE") == "1":
                self.fail(f"the C++ launch is required: {_native.reason()}")
            self.skipTest(f"no C++ launch: {_native.reason()}")

    def _ctypes_forward(self, *args, **kwargs):
        op, self.native._op = self.native._op, None
        reason, self.native._reason = self.native._reason, "off for the test"
        try:
            return flash_attn_func(*args, **kwargs)
        finally:
            self.native._op, self.native._reason = op, reason

    def test_bit_identical_to_ctypes(self):
        for B, M, N, Hq, Hkv, D, causal, window, softcap, alibi_kind in CASES:
            with self.subTest(B=B, M=M, N=N, Hq=Hq, Hkv=Hkv, D=D, causal=causal, window=window):
                torch.manual_seed(M + 7 * N)
                q, k, v = random_qkv(B, M, N, Hq, Hkv, D, D, torch.bfloat16)
                alibi = alibi_for(alibi_kind, B, Hq)
                options = dict(causal=causal, window_size=window, softcap=softcap,
                               alibi_slopes=alibi, return_attn_probs=True)
                want, want_lse, _ = self._ctypes_forward(q, k, v, **options)
                for _ in range(2):  # the first call fills the fast path, the second takes it
                    out, lse, _ = flash_attn_func(q, k, v, **options)
                    self.assertTrue(torch.equal(out, want), "O differs from the ctypes launch")
                    self.assertTrue(torch.equal(lse, want_lse), "LSE differs from the ctypes launch")
                # An SDPA-shaped view (strides, not a copy) takes the same path.
                qt = q.transpose(1, 2).contiguous().transpose(1, 2)
                self.assertTrue(torch.equal(flash_attn_func(qt, k, v, **options)[0], want))

    def test_tensor_maps_follow_the_tensors(self):
        # libfa_runtime reuses a kernel's last tensor maps and re-points
        # them when only the base address moved (KernelCommon.h,
        # TensorMapCache): B's output after A's (re-pointed maps) must be
        # B's output after a call of another shape (maps encoded afresh).
        def qkv(seed, M=200, N=300):
            torch.manual_seed(seed)
            return random_qkv(2, M, N, 4, 2, 128, 128, torch.bfloat16)
        a, b, other = qkv(1), qkv(2), qkv(3, M=150, N=170)
        flash_attn_func(*other, causal=True)
        fresh = flash_attn_func(*b, causal=True)
        out_a = flash_attn_func(*a, causal=True)
        repointed = flash_attn_func(*b, causal=True)
        self.assertTrue(torch.equal(fresh, repointed))
        self.assertFalse(torch.equal(out_a, repointed))
        ref, _ = reference(*b, 128 ** -0.5, causal=True)
        naive, _ = reference(*b, 128 ** -0.5, causal=True, dtype=torch.bfloat16)
        assert_close(self, "O", repointed, ref, naive)

    def test_fast_path_refusals_are_one_line(self):
        q, k, v = random_qkv(1, 16, 16, 2, 2, 64, 64, torch.bfloat16)
        flash_attn_func(q, k, v)
        flash_attn_func(q, k, v)  # the options are on the fast path now
        cases = [
            ((torch.randn(1, 16, 3, 64, device=DEVICE, dtype=torch.bfloat16), k, v),
             r"query heads \(3\) must be a multiple of key/value heads \(2\)"),
            ((q, k.half(), v), "must all be bfloat16 or float16"),
            ((q, k[:, :8], v), "shapes do not agree"),
            ((q.cpu(), k, v), "is on cpu"),
            ((q[0], k, v), r"must be \[batch, seqlen, heads, head_dim\]"),
        ]
        for args, message in cases:
            with self.subTest(message=message):
                with self.assertRaisesRegex(FaMlirError, message) as caught:
                    flash_attn_func(*args)
                self.assertNotIn("\n", str(caught.exception))


class SdpaTest(unittest.TestCase):
    def test_matches_torch_sdpa(self):
        for is_causal in (False, True):
            with self.subTest(is_causal=is_causal):
                q = torch.randn(2, 4, 100, 64, device=DEVICE, dtype=torch.bfloat16)
                k = torch.randn(2, 4, 150, 64, device=DEVICE, dtype=torch.bfloat16)
                v = torch.randn(2, 4, 150, 64, device=DEVICE, dtype=torch.bfloat16)
                got = fa_mlir.sdpa(q, k, v, is_causal=is_causal)
                ref, _ = reference(*(t.transpose(1, 2) for t in (q, k, v)), 64 ** -0.5,
                                   causal=is_causal, top_left=True)
                naive = torch.nn.functional.scaled_dot_product_attention(
                    q, k, v, is_causal=is_causal).transpose(1, 2)
                assert_close(self, "O", got.transpose(1, 2), ref, naive)


class CompileTest(unittest.TestCase):
    def test_torch_compile_fullgraph(self):
        q, k, v = random_qkv(2, 256, 256, 4, 4, 64, 64, torch.bfloat16, requires_grad=True)

        def step(q, k, v):
            return flash_attn_func(q, k, v, causal=True).float().square().mean()

        compiled = torch.compile(step, fullgraph=True)
        loss = compiled(q, k, v)
        loss.backward()
        eager_q = q.detach().clone().requires_grad_()
        eager = step(eager_q, k.detach(), v.detach())
        eager.backward()
        self.assertAlmostEqual(loss.item(), eager.item(), places=4)
        self.assertTrue(torch.allclose(q.grad.float(), eager_q.grad.float(), atol=1e-3))


class TrainingTest(unittest.TestCase):
    def test_a_step_matches_sdpa(self):
        torch.manual_seed(0)
        dim, heads, seq = 256, 4, 128

        class Block(torch.nn.Module):
            def __init__(self, use_fa):
                super().__init__()
                self.qkv = torch.nn.Linear(dim, 3 * dim)
                self.proj = torch.nn.Linear(dim, dim)
                self.use_fa = use_fa

            def forward(self, x):
                B, S, _ = x.shape
                q, k, v = self.qkv(x).view(B, S, 3, heads, dim // heads).unbind(2)
                if self.use_fa:
                    a = flash_attn_func(q, k, v, causal=True)
                else:
                    a = torch.nn.functional.scaled_dot_product_attention(
                        q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                        is_causal=True).transpose(1, 2)
                return self.proj(a.reshape(B, S, dim))

        ours = Block(True).to(DEVICE, torch.bfloat16)
        theirs = Block(False).to(DEVICE, torch.bfloat16)
        theirs.load_state_dict(ours.state_dict())
        x = torch.randn(4, seq, dim, device=DEVICE, dtype=torch.bfloat16)
        losses = []
        for model in (ours, theirs):
            loss = model(x).float().square().mean()
            loss.backward()
            losses.append(loss.item())
        self.assertAlmostEqual(losses[0], losses[1], delta=1e-2 * abs(losses[1]))
        for (name, a), (_, b) in zip(ours.named_parameters(), theirs.named_parameters()):
            rel = (a.grad.float() - b.grad.float()).norm() / b.grad.float().norm()
            self.assertLess(rel.item(), 2e-2, name)


class TransformersTest(unittest.TestCase):
    def test_llama_logits_match_sdpa(self):
        try:
            from transformers import LlamaConfig, LlamaForCausalLM
        except ImportError:
            self.skipTest("transformers is not installed")
        name = fa_mlir.register_transformers()

        def build(implementation):
            config = LlamaConfig(vocab_size=1000, hidden_size=256, intermediate_size=512,
                                 num_hidden_layers=2, num_attention_heads=8,
                                 num_key_value_heads=2, max_position_embeddings=512)
            config._attn_implementation = implementation
            return LlamaForCausalLM(config).to(DEVICE, torch.bfloat16).eval()

        torch.manual_seed(0)
        reference_model = build("sdpa")
        model = build(name)
        model.load_state_dict(reference_model.state_dict())
        ids = torch.randint(0, 1000, (2, 200), device=DEVICE)
        with torch.no_grad():
            ref = reference_model(ids).logits.float()
            got = model(ids).logits.float()
        rel = (got - ref).norm() / ref.norm()
        self.assertLess(rel.item(), 2e-2)


if __name__ == "__main__":
    unittest.main()
