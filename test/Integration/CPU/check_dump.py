#!/usr/bin/env python3
"""check_dump.py DIR SCALE MASK: recompute attention from fa-run's --dump in
plain float64 Python (no numpy, no fa-mlir code) and compare.

Reads q, k, v, o, lse (and do, dq, dk, dv, and the ALiBi slopes, when
present) as .npy, computes the
forward and, if dumped, the backward by the textbook formulas, and prints the
max abs error of each output. Exits 1 if any error exceeds the bound a bf16 /
f16 kernel must meet on these small inputs (3e-2 absolute) or if any value
is NaN; prints the errors either way so a reader can see them."""
import math
import struct
import sys


def read_npy(path):
    with open(path, "rb") as f:
        data = f.read()
    assert data[:6] == b"\x93NUMPY", path
    header_len = struct.unpack("<H", data[8:10])[0]
    header = eval(data[10:10 + header_len].decode("latin1"))  # a dict literal
    assert header["descr"] == "<f4" and not header["fortran_order"], header
    shape = header["shape"]
    count = 1
    for d in shape:
        count *= d
    values = struct.unpack("<%df" % count, data[10 + header_len:10 + header_len + 4 * count])
    return shape, list(values)


def visible(mask, i, j, m, n):
    diag = i + n - m
    if mask == "none":
        return True
    if mask == "causal":
        return j <= diag
    if mask == "causal_top_left":
        return j <= i
    left, right = (int(x) for x in mask[len("window("):-1].split(","))
    return (left < 0 or j >= diag - left) and (right < 0 or j <= diag + right)


def main():
    folder, scale, mask = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    (B, HQ, M, D), q = read_npy(folder + "/q.npy")
    (_, HKV, N, _), k = read_npy(folder + "/k.npy")
    (_, _, _, DV), v = read_npy(folder + "/v.npy")
    _, o = read_npy(folder + "/o.npy")
    _, lse = read_npy(folder + "/lse.npy")
    try:
        _, do = read_npy(folder + "/do.npy")
        _, dq = read_npy(folder + "/dq.npy")
        _, dk = read_npy(folder + "/dk.npy")
        _, dv = read_npy(folder + "/dv.npy")
        backward = True
    except FileNotFoundError:
        backward = False

    try:  # ALiBi slopes, [Hq] or [B, Hq]: s_ij -= slope * |i + N - M - j|
        slopes_shape, slopes = read_npy(folder + "/slopes.npy")
    except FileNotFoundError:
        slopes_shape, slopes = None, None

    def bias(b, h, i, j):
        if slopes is None:
            return 0.0
        slope = slopes[h] if len(slopes_shape) == 1 else slopes[b * HQ + h]
        return -slope * abs(i + N - M - j)

    group = HQ // HKV
    ref_o, ref_lse = [0.0] * len(o), [0.0] * len(lse)
    ref_dq, ref_dk, ref_dv = [0.0] * (B * HQ * M * D), [0.0] * len(k), [0.0] * len(v)
    for b in range(B):
        for h in range(HQ):
            hk = h // group
            for i in range(M):
                row = (b * HQ + h) * M + i
                s = {}
                for j in range(N):
                    if visible(mask, i, j, M, N):
                        kr = ((b * HKV + hk) * N + j) * D
                        s[j] = scale * sum(q[row * D + d] * k[kr + d] for d in range(D)) + bias(b, h, i, j)
                if not s:
                    ref_lse[row] = -math.inf
                    continue
                mx = max(s.values())
                total = sum(math.exp(x - mx) for x in s.values())
                ref_lse[row] = mx + math.log(total)
                p = {j: math.exp(x - mx) / total for j, x in s.items()}
                for e in range(DV):
                    ref_o[row * DV + e] = sum(p[j] * v[((b * HKV + hk) * N + j) * DV + e] for j in p)
                if not backward:
                    continue
                dp = {j: sum(do[row * DV + e] * v[((b * HKV + hk) * N + j) * DV + e] for e in range(DV)) for j in p}
                dsum = sum(p[j] * dp[j] for j in p)
                for j in p:
                    ds = p[j] * (dp[j] - dsum) * scale
                    kr = ((b * HKV + hk) * N + j)
                    for d in range(D):
                        ref_dq[row * D + d] += ds * k[kr * D + d]
                        ref_dk[kr * D + d] += ds * q[row * D + d]
                    for e in range(DV):
                        ref_dv[kr * DV + e] += p[j] * do[row * DV + e]

    failed = False
    pairs = [("o", o, ref_o), ("lse", lse, ref_lse)]
    if backward:
        pairs += [("dq", dq, ref_dq), ("dk", dk, ref_dk), ("dv", dv, ref_dv)]
    for name, got, want in pairs:
        err = 0.0
        for a, w in zip(got, want):
            if math.isnan(a):
                err = math.inf
            elif math.isinf(w) or math.isinf(a):
                err = max(err, 0.0 if a == w else math.inf)
            else:
                err = max(err, abs(a - w))
        bad = err > 3e-2
        failed |= bad
        print("%-3s max_abs_err_vs_python_float64=%.3e %s" % (name, err, "FAIL" if bad else "ok"))
    print("FAIL" if failed else "MATCH")
    sys.exit(1 if failed else 0)


main()
