"""Run-length summary of a kernel's SASS: where the warpgroup waits sit
relative to the GEMMs, exponentials and conversions."""
import re, subprocess, sys
for cubin in sys.argv[1:]:
    sass = subprocess.run(['cuobjdump', '-sass', cubin], capture_output=True, text=True).stdout
    toks = []
    for l in sass.split('\n'):
        if 'GMMA' in l: t = 'G'
        elif 'DEPBAR.LE gsb0, 0x0' in l: t = 'W0'
        elif 'DEPBAR.LE gsb0, 0x1' in l: t = 'W1'
        elif 'MUFU.EX2' in l: t = 'm'
        elif 'F2FP' in l: t = 'f'
        elif 'BAR.SYNC' in l: t = 'B'
        elif 'FMNMX' in l: t = 'x'
        else: continue
        if toks and toks[-1][0] == t: toks[-1][1] += 1
        else: toks.append([t, 1])
    print(cubin, ' '.join(f'{t}{n if n > 1 else ""}' for t, n in toks))
