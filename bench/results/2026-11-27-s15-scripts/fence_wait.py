"""Experiment: put each softmax's `wgmma.wait_group 0` behind a never-taken
branch on the last exponent, so ptxas cannot hoist the wait above the
exponentials (and write P into the in-flight A registers early)."""
import re, sys
src, dst = sys.argv[1], sys.argv[2]
lines = open(src).read().split('\n')
out, last_ex2, n = [], None, 0
for i, l in enumerate(lines):
    m = re.match(r'\s*ex2\.approx\.ftz\.f32\s+(%r\d+),', l)
    if m:
        last_ex2 = m.group(1)
    if 'wgmma.wait_group.sync.aligned 0;' in l and last_ex2:
        # drop the "// begin inline asm" just emitted, re-add after
        out.insert(len(out) - 1, f'\tsetp.lt.f32 \t%pfa{n}, {last_ex2}, 0fBF800000;\n\t@%pfa{n} bra \t$L__fa_never{n};\n$L__fa_join{n}:')
        n += 1
        last_ex2 = None
    out.append(l)
text = '\n'.join(out)
decl = '\t.reg .pred \t%p<'
k = text.index(decl)
text = text[:k] + ''.join(f'\t.reg .pred \t%pfa{j};\n' for j in range(n)) + text[k:]
never = ''.join(f'$L__fa_never{j}:\n\tmembar.cta;\n\tbra.uni \t$L__fa_join{j};\n' for j in range(n))
k = text.rindex('\tret;')
text = text[:k] + '\tret;\n' + never + text[k:]
open(dst, 'w').write(text)
print(f'{dst}: {n} waits fenced')
