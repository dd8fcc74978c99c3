"""PTX experiment (seventeenth session): in each consumer loop, move the
mbarrier.arrive that follows `wgmma.wait_group 0` (V's stage released once
P·V is done) to the end of the loop body, just before the latch's branch.
ptxas schedules our P·V wait right after the row max, FA3's after ~50 of
the exponentials; our PTX already waits after the exponentials, like
FA3's, and differs in the arrive that follows the wait (unpredicated,
shared::cta; FA3's is one predicated cluster arrive). Usage:
sink_arrive.py IN.ptx OUT.ptx [--k] (--k: the K release after
`wait_group 1` too)."""
import re, sys
src, dst = sys.argv[1], sys.argv[2]
move_k = '--k' in sys.argv
lines = open(src).read().split('\n')
out, pending, moved = [], [], 0
i = 0
def arrive_block(j):
    # '// begin inline asm', 'mbarrier.arrive...', '// end inline asm'
    return (j + 2 < len(lines) and 'begin inline asm' in lines[j]
            and 'mbarrier.arrive.shared::cta.b64' in lines[j + 1]
            and 'end inline asm' in lines[j + 2])
last_wait = None
while i < len(lines):
    l = lines[i]
    if 'wgmma.wait_group.sync.aligned' in l:
        last_wait = l.strip()
    if arrive_block(i) and last_wait and (
            last_wait.endswith(' 0;') or (move_k and last_wait.endswith(' 1;'))):
        if not pending: floor = len(out)
        pending.append(lines[i:i + 3]); i += 3; last_wait = None; moved += 1
        continue
    if pending and (re.match(r'\s*\$L__', l) or re.match(r'\s*(bra|ret)', l)):
        # a block ends without a conditional latch: keep them in it
        out.extend(x for blk in pending for x in blk); pending = []
    if pending and re.match(r'\s*@%p\d+ bra', l):
        # the latch: its setp precedes it; put the arrives before the setp
        # (never above where the first one was: the wait precedes it)
        k = len(out) - 1
        while k >= floor and not re.match(r'\s*setp\.', out[k]): k -= 1
        if k < floor: k = len(out)
        ins = [x for blk in pending for x in blk]
        out[k:k] = ins
        pending = []
    out.append(l); i += 1
assert not pending, 'an arrive found no latch'
open(dst, 'w').write('\n'.join(out))
print(f'{dst}: moved {moved} arrives')
