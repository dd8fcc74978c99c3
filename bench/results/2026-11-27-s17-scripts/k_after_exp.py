"""PTX experiment (seventeenth session): order the consumers' P·V wait
after the N-th exponential, as ptxas happens to in FA3's kernel. FA3's
SASS waits for P·V right after its K-release arrive, which ptxas issues
late (a predicated cluster arrive); ours arrives with a uniform address
right after the S wait, and then waits for P·V right after the row max.
Here the K release moves to after exponential N, predicated on its result
(`@!p` with p = (e == 12345.0): always executes, but cannot issue before
e exists), in each loop body where no label or branch lies between the S
wait and that exponential. Usage: k_after_exp.py IN.ptx OUT.ptx N"""
import re, sys
src, dst, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
lines = open(src).read().split('\n')
out, i, moved = [], 0, 0
while i < len(lines):
    l = lines[i]
    out.append(l); i += 1
    if 'wgmma.wait_group.sync.aligned 1;' not in l:
        continue
    # the K release: '// end inline asm', address, '// begin inline asm', arrive, end
    j = i
    while j < len(lines) and 'mbarrier.arrive.shared::cta.b64' not in lines[j] and j < i + 6: j += 1
    if 'mbarrier.arrive.shared::cta.b64' not in lines[j]:
        continue
    addr = re.search(r'\[(%r\d+)\]', lines[j]).group(1)
    # find exponential n before any label or branch
    k, seen = j + 2, 0
    while k < len(lines):
        if re.match(r'\s*(\$L__|@%p\d+ bra|bra)', lines[k]): break
        m = re.match(r'\s*ex2\.approx\.ftz\.f32\s+(%r\d+),', lines[k])
        if m:
            seen += 1
            if seen == n: break
        k += 1
    if seen != n:
        continue
    e = re.match(r'\s*ex2\.approx\.ftz\.f32\s+(%r\d+),', lines[k]).group(1)
    # copy up to the arrive, drop its asm block, copy up to exp n, insert
    out.extend(lines[i:j - 1]); # lines before '// begin inline asm' of the arrive
    out.extend(lines[j + 2:k + 1])
    out.append('\t{ .reg .pred fa_kp; setp.eq.f32 fa_kp, %s, 0f4640E400; @!fa_kp mbarrier.arrive.shared::cta.b64 _, [%s]; }' % (e, addr))
    i = k + 1; moved += 1
open(dst, 'w').write('\n'.join(out))
print(f'{dst}: moved {moved} K releases after exponential {n}')
