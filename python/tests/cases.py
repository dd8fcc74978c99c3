"""The shape table of test_torch.py, importable without PyTorch
(make_kernels.py generates its kernels)."""

# (B, M, N, Hq, Hkv, D, causal, window, softcap, alibi kind)
CASES = [
    (2, 113, 203, 4, 4, 64, False, (-1, -1), 0.0, None),
    (2, 128, 217, 8, 2, 128, True, (-1, -1), 0.0, None),
    (1, 1, 1, 2, 1, 64, False, (-1, -1), 0.0, None),
    (1, 1023, 1024, 4, 1, 128, True, (-1, -1), 0.0, None),
    (2, 200, 100, 4, 2, 64, True, (-1, -1), 0.0, None),  # M > N: rows with no key
    (1, 300, 300, 2, 2, 128, False, (64, 0), 0.0, None),
    (1, 160, 257, 4, 4, 64, True, (-1, -1), 30.0, None),
    (2, 96, 130, 4, 2, 64, True, (-1, -1), 0.0, "head"),
    (1, 77, 131, 2, 2, 96, False, (-1, -1), 0.0, None),
    (1, 256, 256, 2, 2, 256, True, (-1, -1), 0.0, None),
]
