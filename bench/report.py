#!/usr/bin/env python3
"""BENCHMARKS.md and its plots, generated from bench/results/current.csv.

    python3 bench/report.py             writes BENCHMARKS.md and bench/results/plots/*.png
    python3 bench/report.py --no-plots  writes BENCHMARKS.md only
    python3 bench/report.py --check     exits 1 if BENCHMARKS.md is not what the CSV and
                                        bench/benchmarks-template.md give (no matplotlib needed)
    python3 bench/report.py ingest LOG [--revision R] [--date YYYY-MM-DD] [--gpu NAME]
                                       [--command CMD] [--csv FILE]
        reads a GPU run's output and puts its numbers into the CSV, replacing
        the rows of the cells it measured (same suite, chip, direction,
        dtype, mask, D, N, B, H, implementation and variant). LOG is the
        output of one of:
          bench/run.sh --steps 4 [--chip sm90a] [--quick]   (bench/bench.py)
          bench/verify-fp8.sh --steps 4                     (step 4's lines)
          bench/fwd-bwd-table.sh                            (bench/bwd_variants.py per cell)
        Revision, date, GPU and command are read from the log's header
        lines where it has them; the options override them (a GPU machine's
        git HEAD can lag the copied tree: pass the revision whose kernels ran).

The plots need matplotlib (Debian: apt-get install python3-matplotlib, then
run with /usr/bin/python3). The CSV's columns are described in
bench/README.md.
"""
import argparse
import csv
import io
import math
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CSV_PATH = os.path.join(ROOT, "bench/results/current.csv")
TEMPLATE = os.path.join(ROOT, "bench/benchmarks-template.md")
OUTPUT = os.path.join(ROOT, "BENCHMARKS.md")
PLOT_DIR = "bench/results/plots"

COLUMNS = ["date", "gpu", "revision", "command", "suite", "chip", "direction", "dtype",
           "mask", "d", "n", "b", "h", "impl", "variant", "ms", "tflops", "log"]
IMPLS = ["fa-mlir", "fa-mlir-det", "fa2", "cudnn", "fa3", "flex"]
PEERS = ["fa2", "cudnn", "fa3", "flex"]
IMPL_NAMES = {"fa-mlir": "fa-mlir", "fa-mlir-det": "fa-mlir deterministic", "fa2": "FA2",
              "cudnn": "cuDNN", "fa3": "FA3", "flex": "Flex"}
DIRECTIONS = ["forward", "forward+backward"]
CHIPS = ["sm_90a", "sm_80"]
DTYPES = ["bf16", "f16", "e4m3"]
MASKS = ["none", "causal"]
CHIP_NOTES = {"sm_80": "the sm_80 PTX (cp.async, ldmatrix, mma.sync), JIT-compiled by the driver "
                       "for the Hopper GPU",
              "sm_90a": "the sm_90a PTX (TMA, wgmma, warp-specialised)"}


def order(seq, value):
    return (seq.index(value), "") if value in seq else (len(seq), value)


def cell_sort_key(r):
    return (order(DIRECTIONS, r["direction"]), order(CHIPS, r["chip"]), r["suite"],
            order(DTYPES, r["dtype"]), int(r["d"]), order(MASKS, r["mask"]), r["variant"],
            int(r["n"]), int(r["b"]), int(r["h"]), order(IMPLS, r["impl"]))


# ---------------------------------------------------------------- the CSV

def read_csv(path=CSV_PATH):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        missing = [c for c in COLUMNS if c not in r]
        if missing:
            sys.exit(f"{path}: missing columns {missing}")
    return rows


def write_csv(rows, path=CSV_PATH):
    rows = sorted(rows, key=cell_sort_key)
    out = io.StringIO()
    w = csv.DictWriter(out, COLUMNS, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({c: r.get(c, "") for c in COLUMNS})
    with open(path, "w") as f:
        f.write(out.getvalue())


def cell_key(r):
    return tuple(r[c] for c in ("suite", "chip", "direction", "dtype", "mask", "d", "n", "b",
                                "h", "impl", "variant"))


# ---------------------------------------------------------------- ingest

def header_fields(text):
    """Revision, date, GPU and command from the header lines run.sh,
    verify-fp8.sh, fwd-bwd-table.sh and bench.py print."""
    info = {}
    m = re.search(r"^== revision (\S+), (\d{4}-\d{2}-\d{2})", text, re.M)
    if m:
        info["revision"], info["date"] = m.group(1), m.group(2)
    m = re.search(r"^== command: (.+)$", text, re.M) or re.search(r"^command: (.+)$", text, re.M)
    if m:
        info["command"] = m.group(1).strip()
    m = (re.search(r"^device: (?:NVIDIA )?(.+?)  ", text, re.M)
         or re.search(r"^(?:== )?(?:NVIDIA )?([^,\n]*(?:H100|H200|A100|GH200|B200)[^,\n]*), \d", text, re.M))
    if m:
        info["gpu"] = m.group(1).strip()
    if "date" not in info:
        m = re.search(r"(\d{4}-\d{2}-\d{2})T\d{2}:\d{2}Z", text)
        if m:
            info["date"] = m.group(1)
    return info


def parse_bench_py(text):
    """bench.py's per-cell lines: fa-mlir's chip kernel, with --chip sm90a the
    sm80 kernel of the same spec, FA2 and cuDNN, one set of interleaved rounds
    per cell; B = 16384/N, H = 2048/D, bf16. The baseline column (an older
    kernel) is not recorded."""
    header = re.search(r"^\| D \| causal \| N \| fa-mlir (\w+) \|", text, re.M)
    chip = header.group(1) if header else None
    line = re.compile(r"^d=\s*(\d+) causal=(\d) n=\s*(\d+)\s+fa-mlir\s+(\S+)\s+(.*?)fa2\s+(\S+)\s+cudnn\s+(\S+)", re.M)
    rows = []
    for m in line.finditer(text):
        d, causal, n, ours, middle, fa2, cudnn = m.groups()
        second = re.match(r"(\w+)\s+(\S+)\s+new/", middle)
        this_chip = chip or ("sm90a" if second and second.group(1) == "sm80" else "sm80")
        chips = ["sm_90a" if this_chip == "sm90a" else "sm_" + this_chip[2:]]
        values = [(chips[0], "fa-mlir", ours)]
        if second and second.group(1) == "sm80" and this_chip != "sm80":
            chips.append("sm_80")
            values.append(("sm_80", "fa-mlir", second.group(2)))
        flex = re.match(r"\s*flex\s+(\S+)", text[m.end():])
        for c in chips:  # the peers ran in the same rounds as every fa-mlir kernel of the cell
            values += [(c, "fa2", fa2), (c, "cudnn", cudnn)]
            if flex:
                values.append((c, "flex", flex.group(1)))
        d, n = int(d), int(n)
        for c, impl, v in values:
            rows.append(dict(suite="bench.py", chip=c, direction="forward", dtype="bf16",
                             mask="causal" if causal == "1" else "none", d=d, n=n,
                             b=16384 // n, h=2048 // d, impl=impl, variant="", ms="", tflops=v))
    return rows


def parse_verify_fp8(text):
    """verify-fp8.sh step 4: fa-run --bench of the e4m3 and bf16 sm_90a kernels
    and, with FA3_BENCH, FlashAttention-3's; H = 16."""
    names = {"f8E4M3FN": ("fa-mlir", "e4m3"), "bf16": ("fa-mlir", "bf16"),
             "f16": ("fa-mlir", "f16"), "fa3-e4m3": ("fa3", "e4m3"), "fa3-bf16": ("fa3", "bf16")}
    line = re.compile(r"^\s*d(\d+)\s+(\w+)\s+N=(\d+)\s+B=(\d+)\s+(\S+)\s+(\S+) TFLOP/s", re.M)
    rows = []
    for m in line.finditer(text):
        d, mask, n, b, label, v = m.groups()
        if label not in names:
            continue
        impl, dtype = names[label]
        rows.append(dict(suite="verify-fp8.sh", chip="sm_90a", direction="forward", dtype=dtype,
                         mask=mask, d=int(d), n=int(n), b=int(b), h=16, impl=impl, variant="",
                         ms="", tflops=v))
    return rows


def parse_fwd_bwd(text):
    """fwd-bwd-table.sh: per cell "-- sm80_bf16_d64_none[ VARIANT]" and then
    bwd_variants.py's lines "| label | T ms | X TFLOP/s | ... |"."""
    impls = {"default": "fa-mlir", "det@det": "fa-mlir-det", "FA2": "fa2", "cuDNN": "cudnn"}
    shape = re.search(r"B=(\d+) H=(\d+) N=(\d+)", text)
    b, h, n = (int(x) for x in shape.groups()) if shape else (4, 16, 4096)
    rows, cell = [], None
    for raw in text.splitlines():
        m = re.match(r"^-- (sm\d+a?)_(\w+?)_d(\d+)_(\w+?)(?: (.+))?$", raw)
        if m:
            chip, dtype, d, mask, variant = m.groups()
            chip = "sm_90a" if chip == "sm90a" else "sm_" + chip[2:]
            variant = (variant.strip() + " smem") if variant and variant.strip().endswith("KB") else (variant or "")
            cell = dict(chip=chip, dtype=dtype, d=int(d), mask=mask, variant=variant)
            continue
        m = re.match(r"^\| (\S+) \| ([\d.]+) ms \| ([\d.]+) TFLOP/s \|", raw)
        if m and cell and m.group(1) in impls:
            rows.append(dict(suite="fwd-bwd-table.sh", direction="forward+backward", n=n, b=b, h=h,
                             impl=impls[m.group(1)], ms=m.group(2), tflops=m.group(3), **cell))
    return rows


def ingest(args):
    text = open(args.log).read()
    info = header_fields(text)
    for k in ("revision", "date", "gpu", "command"):
        if getattr(args, k):
            info[k] = getattr(args, k)
    missing = [k for k in ("revision", "date", "gpu", "command") if not info.get(k)]
    if missing:
        sys.exit(f"{args.log}: no {', '.join(missing)} in the log; pass --{' --'.join(missing)}")
    rows = parse_fwd_bwd(text) or parse_verify_fp8(text) or parse_bench_py(text)
    rows = [r for r in rows if r["tflops"] and not math.isnan(float(r["tflops"]))]
    if not rows:
        sys.exit(f"{args.log}: no bench.py, verify-fp8.sh or fwd-bwd-table.sh numbers found")
    log = os.path.relpath(os.path.abspath(args.log), ROOT)
    for r in rows:
        r.update(info, log=log if not log.startswith("..") else "")
        r.update({k: str(r[k]) for k in r})
    old = read_csv(args.csv) if os.path.exists(args.csv) else []
    new_keys = {cell_key(r) for r in rows}
    kept = [r for r in old if cell_key(r) not in new_keys]
    write_csv(kept + rows, args.csv)
    print(f"{args.csv}: {len(rows)} rows from {args.log} ({len(old) - len(kept)} replaced), "
          f"{len(kept) + len(rows)} in all")


# ---------------------------------------------------------------- tables

def tables_of(rows):
    """One table per (suite, chip, direction, dtype) of fa-mlir's rows; in a
    suite that times e4m3, the 16-bit rows are its reference columns."""
    keys = {(r["suite"], r["chip"], r["direction"], r["dtype"]) for r in rows if r["impl"] == "fa-mlir"}
    fp8 = {(s, c, d) for s, c, d, t in keys if t == "e4m3"}
    keys = [k for k in keys if k[3] == "e4m3" or k[:3] not in fp8]
    return sorted(keys, key=lambda k: (order(DIRECTIONS, k[2]), order(DTYPES, "e4m3" if k[3] == "e4m3" else "bf16"),
                                       order(CHIPS, k[1]), k[0], order(DTYPES, k[3])))


def fmt_ratio(a, b):
    return f"{a / b:.2f}" if a and b else "–"


def shape_text(cells):
    bn = {c[4] * c[3] for c in cells}
    hs = {c[5] for c in cells}
    hd = {c[5] * c[0] for c in cells}
    parts = []
    parts.append(f"B = {bn.pop()}/N" if len(bn) == 1 and len({c[4] for c in cells}) > 1
                 else "B = " + "/".join(str(b) for b in sorted({c[4] for c in cells})))
    parts.append(f"H = {hs.pop()}" if len(hs) == 1 else
                 (f"H = {hd.pop()}/D" if len(hd) == 1 else "H = " + "/".join(str(h) for h in sorted(hs))))
    return ", ".join(parts)


def render_table(rows, key):
    suite, chip, direction, dtype = key
    mine = [r for r in rows if r["suite"] == suite and r["chip"] == chip and r["direction"] == direction]
    refs = sorted({r["dtype"] for r in mine if r["dtype"] != dtype}, key=lambda t: order(DTYPES, t)) \
        if dtype == "e4m3" else []
    val = {}
    for r in mine:
        val[(int(r["d"]), r["mask"], r["variant"], int(r["n"]), int(r["b"]), int(r["h"]), r["impl"], r["dtype"])] = r
    cells = sorted({k[:6] for k, r in val.items() if k[6] == "fa-mlir" and k[7] == dtype},
                   key=lambda c: (c[0], order(MASKS, c[1]), c[2], c[3], c[4], c[5]))
    impls = [i for i in IMPLS if any((*c, i, dtype) in val for c in cells)]
    ref_impls = [(i, t) for t in refs for i in IMPLS if any((*c, i, t) in val for c in cells)]
    used = [val[(*c, i, dtype)] for c in cells for i in impls if (*c, i, dtype) in val]
    used += [val[(*c, i, t)] for c in cells for i, t in ref_impls if (*c, i, t) in val]
    runs = []
    for r in used:
        run = (r["date"], r["gpu"], r["revision"], r["command"], r["log"])
        if run not in runs:
            runs.append(run)
    runs.sort()

    def num(c, impl, t):
        r = val.get((*c, impl, t))
        return float(r["tflops"]) if r and r["tflops"] else None

    def ms(c, impl, t):
        r = val.get((*c, impl, t))
        return float(r["ms"]) if r and r["ms"] else None

    def speedup(c, impl_a, impl_b, t_a=dtype, t_b=dtype):
        """impl_a's speed over impl_b's: from times where both have them."""
        ta, tb = ms(c, impl_a, t_a), ms(c, impl_b, t_b)
        if ta and tb:
            return fmt_ratio(tb, ta)
        return fmt_ratio(num(c, impl_a, t_a), num(c, impl_b, t_b))

    dname = {"bf16": "bf16", "f16": "f16", "e4m3": "e4m3 (fp8)"}[dtype] if dtype in ("bf16", "f16", "e4m3") else dtype
    out = [f"### {chip} kernels · {direction.replace('+', ' + ')} · {dname}", ""]
    note = CHIP_NOTES.get(chip, "")
    out.append(f"fa-mlir runs {note}. TFLOP/s, {shape_text(cells)}"
               + (f" (FLOPs = 3.5 × 4·B·H·N²·D, halved when causal)." if direction == "forward+backward"
                  else " (FLOPs = 4·B·H·N²·D, halved when causal)."))
    out.append("")
    for i, (date, gpu, rev, cmd, log) in enumerate(runs):
        tag = f"({chr(97 + i)}) " if len(runs) > 1 else ""
        out.append(f"- {tag}{date}, {gpu}, revision {rev}: `{cmd}`" + (f"; log `{log}`" if log else ""))
    out.append("")
    head = ["D", "mask", "N"] + (["run"] if len(runs) > 1 else [])
    label = (lambda i: f"{IMPL_NAMES[i]} {dtype}") if ref_impls else (lambda i: IMPL_NAMES[i])
    head += [label(i) for i in impls] + [f"{IMPL_NAMES[i]} {t}" for i, t in ref_impls]
    ratios = [(f"/ {IMPL_NAMES[p]}", lambda c, p=p: speedup(c, "fa-mlir", p)) for p in PEERS if p in impls]
    if "fa-mlir-det" in impls:
        ratios.append(("det / default", lambda c: speedup(c, "fa-mlir", "fa-mlir-det")))
    for t in refs:
        if ("fa-mlir", t) in ref_impls:
            ratios.append((f"{dtype} / own {t}", lambda c, t=t: speedup(c, "fa-mlir", "fa-mlir", dtype, t)))
    head += [h for h, _ in ratios]
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "---|" * len(head))
    for c in cells:
        d, mask, variant, n = c[:4]
        line = [str(d), mask + (f" ({variant})" if variant else ""), str(n)]
        if len(runs) > 1:
            r = val[(*c, "fa-mlir", dtype)]
            line.append(chr(97 + runs.index((r["date"], r["gpu"], r["revision"], r["command"], r["log"]))))
        line += [val[(*c, i, dtype)]["tflops"] if (*c, i, dtype) in val else "–" for i in impls]
        line += [val[(*c, i, t)]["tflops"] if (*c, i, t) in val else "–" for i, t in ref_impls]
        line += [f(c) for _, f in ratios]
        out.append("| " + " | ".join(line) + " |")
    spans = []
    for h, f in ratios:
        vals = sorted(float(v) for v in (f(c) for c in cells) if v != "–")
        if vals:
            spans.append(f"{h} {vals[0]:.2f}–{vals[-1]:.2f}" if vals[0] != vals[-1] else f"{h} {vals[0]:.2f}")
    out += ["", "fa-mlir " + ", ".join(spans) + "." if spans else ""]
    if "fa-mlir-det" in impls:
        out[-1] += " det / default: the deterministic kernel's time over the default's."
    out.append("")
    return out


def plot_name(key):
    suite, chip, direction, dtype = key
    return f"{PLOT_DIR}/{direction.replace('+', '-')}-{dtype}.png"


def render(rows):
    template = open(TEMPLATE).read()
    keys = tables_of(rows)
    out = []
    for i, key in enumerate(keys):
        out += render_table(rows, key)
        last_of_plot = i + 1 == len(keys) or plot_name(keys[i + 1]) != plot_name(key)
        if last_of_plot:
            name = plot_name(key)
            out += [f"![{os.path.basename(name)[:-4]}]({name})", ""]
    text = template.replace("@TABLES@\n", "\n".join(out) + "\n")
    return text


# ---------------------------------------------------------------- plots

COLORS = {("fa-mlir", "sm_90a"): "#1f77b4", ("fa-mlir", "sm_80"): "#17becf",
          ("fa-mlir-det", None): "#9467bd", ("fa2", None): "#ff7f0e", ("cudnn", None): "#2ca02c",
          ("fa3", None): "#d62728", ("flex", None): "#8c564b"}


def color(impl, chip):
    return COLORS.get((impl, chip)) or COLORS.get((impl, None)) or COLORS[("fa-mlir", "sm_90a")]


def draw(rows):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.rcParams.update({"svg.hashsalt": "fa-mlir", "font.size": 9})
    keys = tables_of(rows)
    figures = {}
    for key in keys:
        figures.setdefault(plot_name(key), []).append(key)
    os.makedirs(os.path.join(ROOT, PLOT_DIR), exist_ok=True)
    written = []
    for name, group in figures.items():
        suite, _, direction, dtype = group[0]
        series = []  # (label, chip, impl, dtype, linestyle)
        for _, chip, _, _ in group:
            series.append((f"fa-mlir {chip}" if len(group) > 1 else "fa-mlir", chip, "fa-mlir", dtype, "-"))
            series.append(("fa-mlir deterministic", chip, "fa-mlir-det", dtype, "-"))
        peers_chip = group[0][1]
        series += [(IMPL_NAMES[p], peers_chip, p, dtype, "-") for p in PEERS]
        if dtype == "e4m3":
            series = [(f"{s[0]} e4m3", *s[1:]) for s in series]
            series += [(f"{IMPL_NAMES[i]} bf16", peers_chip, i, "bf16", "--") for i in ["fa-mlir"] + PEERS]
        pts = {}
        for r in rows:
            if r["suite"] != suite or r["direction"] != direction:
                continue
            pts.setdefault((r["chip"], r["impl"], r["dtype"], int(r["d"]), r["mask"], r["variant"]), []).append(
                (int(r["n"]), float(r["tflops"])))
        cells = sorted({(k[3], k[4], k[5]) for k in pts if k[1] == "fa-mlir" and k[2] == dtype},
                       key=lambda c: (c[0], order(MASKS, c[1]), c[2]))
        many_n = any(len(v) > 1 for v in pts.values())
        title = f"{direction.replace('+', ' + ')}, {dtype}, TFLOP/s ({group[0][0]}; {rows_gpu(rows, suite, direction)})"
        if many_n:
            ds = sorted({c[0] for c in cells})
            masks = sorted({c[1] for c in cells}, key=lambda m: order(MASKS, m))
            fig, axes = plt.subplots(len(masks), len(ds), figsize=(3.6 * len(ds), 2.8 * len(masks)),
                                     squeeze=False, sharey=True)
            for mi, mask in enumerate(masks):
                for di, d in enumerate(ds):
                    ax = axes[mi][di]
                    for label, chip, impl, t, style in series:
                        p = sorted(pts.get((chip, impl, t, d, mask, ""), []))
                        if p:
                            ax.plot([x for x, _ in p], [y for _, y in p], style, marker="o", markersize=3,
                                    color=color(impl, chip), label=label)
                    ax.set_xscale("log", base=2)
                    xs = sorted({x for k, v in pts.items() if k[3] == d for x, _ in v})
                    ax.set_xticks(xs, [f"{x // 1024}k" if x >= 1024 else str(x) for x in xs])
                    ax.minorticks_off()
                    ax.set_title(f"D = {d}, {mask}")
                    ax.grid(alpha=0.3)
                    if mi == len(masks) - 1:
                        ax.set_xlabel("sequence length N")
                    if di == 0:
                        ax.set_ylabel("TFLOP/s")
            top = max(y for k, v in pts.items() if k[1] in IMPLS for _, y in v)
            for ax in axes.flat:
                ax.set_ylim(0, top * 1.08)
            legend = {}
            for ax in axes.flat:
                for hnd, lab in zip(*ax.get_legend_handles_labels()):
                    legend.setdefault(lab, hnd)
            labels = [s[0] for s in series if s[0] in legend]
            handles = [legend[lab] for lab in labels]
            fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 4), frameon=False)
            fig.suptitle(title)
            fig.tight_layout(rect=(0, 0.08, 1, 1))
        else:
            fig, axes = plt.subplots(len(group), 1, figsize=(9, 2.9 * len(group)), squeeze=False, sharey=True)
            for gi, (_, chip, _, _) in enumerate(group):
                ax = axes[gi][0]
                chip_cells = [c for c in cells if (chip, "fa-mlir", dtype, *c) in pts]
                impls = [i for i in IMPLS if any((chip, i, dtype, *c) in pts for c in chip_cells)]
                width = 0.8 / max(len(impls), 1)
                for ii, impl in enumerate(impls):
                    ys = [pts.get((chip, impl, dtype, *c), [(0, 0)])[0][1] for c in chip_cells]
                    ax.bar([x + (ii - (len(impls) - 1) / 2) * width for x in range(len(chip_cells))], ys, width,
                           color=color(impl, chip), label=IMPL_NAMES[impl])
                ax.set_xticks(range(len(chip_cells)),
                              [f"D{d} {m}" + (f"\n{v}" if v else "") for d, m, v in chip_cells])
                ax.set_title(f"{chip} kernels")
                ax.set_ylabel("TFLOP/s")
                ax.grid(axis="y", alpha=0.3)
                ax.legend(fontsize=8, ncol=len(impls), loc="upper left", frameon=False)
                ax.set_ylim(0, ax.get_ylim()[1] * 1.15)
            fig.suptitle(title)
            fig.tight_layout()
        path = os.path.join(ROOT, name)
        fig.savefig(path, dpi=100, metadata={"Software": None})
        plt.close(fig)
        written.append(name)
    return written


def rows_gpu(rows, suite, direction):
    gpus = sorted({r["gpu"] for r in rows if r["suite"] == suite and r["direction"] == direction})
    return ", ".join(gpus)


# ---------------------------------------------------------------- main

def main():
    if len(sys.argv) > 1 and sys.argv[1] == "ingest":
        p = argparse.ArgumentParser(prog="report.py ingest")
        p.add_argument("log")
        p.add_argument("--revision")
        p.add_argument("--date")
        p.add_argument("--gpu")
        p.add_argument("--command")
        p.add_argument("--csv", default=CSV_PATH)
        ingest(p.parse_args(sys.argv[2:]))
        return 0
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--check", action="store_true", help="exit 1 if BENCHMARKS.md is stale")
    p.add_argument("--no-plots", action="store_true")
    a = p.parse_args()
    rows = read_csv()
    text = render(rows)
    if a.check:
        current = open(OUTPUT).read() if os.path.exists(OUTPUT) else ""
        missing = [m for m in re.findall(r"\]\((bench/results/plots/[^)]+)\)", text)
                   if not os.path.exists(os.path.join(ROOT, m))]
        if current != text or missing:
            print("BENCHMARKS.md is stale: run python3 bench/report.py" +
                  (f" (missing plots: {', '.join(missing)})" if missing else ""))
            return 1
        print("BENCHMARKS.md is up to date")
        return 0
    with open(OUTPUT, "w") as f:
        f.write(text)
    print(f"BENCHMARKS.md: {text.count(chr(10))} lines")
    if not a.no_plots:
        for name in draw(rows):
            print(f"{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
