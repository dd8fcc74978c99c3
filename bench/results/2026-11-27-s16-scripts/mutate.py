"""Replace the pipelined loop's mask branch (the first predicated branch
after `wgmma.wait_group 1`) by an unconditional one: a SASS / timing probe of
whether the branch between the wgmma issue and its wait is what makes ptxas
wait for P·V at the top of the softmax. Wrong for partial tiles; timing only."""
import re, sys
src, dst = sys.argv[1:3]
lines = open(src).read().split('\n')
i = next(k for k, l in enumerate(lines) if 'wgmma.wait_group.sync.aligned 1;' in l)
j = next(k for k in range(i, len(lines)) if re.match(r'\s*@%p\d+ bra\s', lines[k]))
tgt = lines[j].split()[-1]
print(src, 'line', j + 1, lines[j].strip(), '->', 'bra.uni', tgt, file=sys.stderr)
lines[j] = '\tbra.uni \t' + tgt
open(dst, 'w').write('\n'.join(lines))
