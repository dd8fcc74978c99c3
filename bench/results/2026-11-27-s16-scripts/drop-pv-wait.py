"""SASS probe (not a kernel): delete the PTX's wait for P·V
(`wgmma.wait_group.sync.aligned 0;`) inside the consumers' pipelined loops
(backward-branch ranges that also hold a `wait_group 1`). If the SASS of the
result still has a WARPGROUP.DEPBAR.LE gsb0, 0x0 at the softmax's top, ptxas
inserted it itself (a register hazard on the in-flight wgmma's operands),
rather than scheduling ours early. Results are wrong: SASS only."""
import re, sys
src, dst = sys.argv[1:3]
lines = open(src).read().split('\n')
labels = {m.group(1): i for i, l in enumerate(lines) if (m := re.match(r'(\$L__\w+):', l))}
loops = []
for j, l in enumerate(lines):
    m = re.search(r'bra(?:\.uni)?\s+(\$L__\w+);', l)
    if m and m.group(1) in labels and labels[m.group(1)] < j:
        i = labels[m.group(1)]
        if any('wgmma.wait_group.sync.aligned 1;' in x for x in lines[i:j]):
            loops.append((i, j))
# the pipelined bodies: the innermost such ranges (outer loops contain them)
loops = [(i, j) for i, j in loops
         if not any((a, b) != (i, j) and i <= a and b <= j for a, b in loops)]
drop = [k for k, l in enumerate(lines) if 'wgmma.wait_group.sync.aligned 0;' in l
        and any(i <= k <= j for i, j in loops)]
print(src, 'loops', loops, 'dropped waits at lines', [k + 1 for k in drop], file=sys.stderr)
for k in drop:
    lines[k] = '\t// (PV wait dropped: SASS probe)'
open(dst, 'w').write('\n'.join(lines))
