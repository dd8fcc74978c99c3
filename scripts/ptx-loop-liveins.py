#!/usr/bin/env python3
"""What a kernel's loops hold in registers from outside them, read off its
PTX: for the largest loops of entry ENTRY, the virtual registers used
inside but defined before, grouped by register class and by the
instruction that defined them, and, with --uses OP, which instructions
in the loop read the ones OP defined.

Why: LLVM's LICM hoists every loop-invariant value out of a loop: each
address of a tile that does not change in the loop (the backward's K and
V in its Q-block loop), each descriptor, each mask column. Every hoisted
64-bit address is two registers live across the loop, and ptxas spills
what does not fit. This found the wgmma descriptors and shared-store
addresses of the sm_90a backward (450-830 B of spills) and the ldmatrix
addresses of the sm_80 backward (112 of them; docs/performance.md). A
heuristic: PTX registers are virtual, so these are counts before ptxas's
allocation, not its peak.

usage: scripts/ptx-loop-liveins.py KERNEL.ptx ENTRY [--loops N] [--uses OP]
  e.g. scripts/ptx-loop-liveins.py kernels_generated/fa_bwd_sm80_bf16_d128_none.ptx \\
           fa_bwd_sm80_bf16_d128_none_main --uses add.s64
"""
import argparse
import collections
import re

REGISTER = re.compile(r'%(?:rd|r|fd|f|hh|h|rs|p)\d+')


def defs_and_uses(line):
    """(defined, used) registers of one PTX instruction; None, [] for the rest."""
    line = line.split('//')[0].strip()
    if not line or line.endswith(':') or line[0] in '.{}':
        return None, []
    registers = REGISTER.findall(line)
    if not registers:
        return None, []
    op = line.split()[0]
    if op.startswith(('mma', 'ldmatrix', 'wgmma')):  # outputs in the first {...}
        braces = re.match(r'[^{]*\{([^}]*)\}', line)
        if braces:
            return REGISTER.findall(braces.group(1)), REGISTER.findall(line[braces.end():])
    if op.startswith(('st.', 'red.', 'bra', '@', 'bar', 'cp.', 'mbarrier', 'fence')):
        return [], registers
    return [registers[0]], registers[1:]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('ptx')
    parser.add_argument('entry')
    parser.add_argument('--loops', type=int, default=2)
    parser.add_argument('--uses', help='a defining instruction, e.g. add.s64')
    a = parser.parse_args()
    text = open(a.ptx).read()
    start = text.index('.entry ' + a.entry)
    end = text.find('.entry ', start + 7)
    lines = text[start:end if end > 0 else None].split('\n')
    labels = {}
    for n, line in enumerate(lines):
        m = re.match(r'^\$(L__BB\d+_\d+):', line.strip())
        if m:
            labels[m.group(1)] = n
    loops = []
    for n, line in enumerate(lines):
        m = re.search(r'bra(?:\.uni)?\s+\$(L__BB\d+_\d+);', line)
        if m and m.group(1) in labels and labels[m.group(1)] < n:
            loops.append((n - labels[m.group(1)], labels[m.group(1)], n))
    for _, first, last in sorted(loops, reverse=True)[:a.loops]:
        defined, used = set(), set()
        for line in lines[first:last + 1]:
            d, u = defs_and_uses(line)
            if d is not None:
                defined.update(d)
                used.update(u)
        definer = {}
        for line in lines[:first]:
            d, _ = defs_and_uses(line)
            for r in d or []:
                definer[r] = line.split('//')[0].split()[0]
        live = used - defined
        print(f'loop at PTX lines {first}-{last} of {a.entry}: {len(live)} registers '
              f'from before it ({sum(1 for r in live if r.startswith("%rd"))} of them 64-bit)')
        kinds = collections.Counter((REGISTER.match(r).group(0).rstrip('0123456789'),
                                     definer.get(r, '(carried)')) for r in live)
        for (cls, op), count in kinds.most_common(12):
            print(f'  {count:4d} {cls:4s} defined by {op}')
        if a.uses:
            readers = collections.Counter()
            for r in (r for r in live if definer.get(r) == a.uses):
                for line in lines[first:last + 1]:
                    if re.search(re.escape(r) + r'\b', line):
                        readers[line.strip().split()[0]] += 1
                        break
            print(f'  first readers in the loop of those {a.uses} defined: {dict(readers)}')


if __name__ == '__main__':
    main()
