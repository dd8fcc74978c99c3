import re, sys
for path in sys.argv[1:]:
    toks = []
    for l in open(path):
        if 'GMMA' in l: t = 'G'
        elif 'DEPBAR.LE gsb0, 0x0' in l: t = 'W0'
        elif 'DEPBAR.LE gsb0, 0x1' in l: t = 'W1'
        elif 'MUFU.EX2' in l: t = 'm'
        elif 'F2FP' in l: t = 'f'
        elif 'BAR.SYNC' in l or 'BAR.ARV' in l: t = 'B' if 'SYNC' in l else 'A'
        elif 'FMNMX' in l: t = 'x'
        elif re.search(r'\bBRA\b', l): t = 'J'
        elif 'FMUL' in l: t = 'u'
        else: continue
        if toks and toks[-1][0] == t: toks[-1][1] += 1
        else: toks.append([t, 1])
    print(path, ' '.join(f'{t}{n if n > 1 else ""}' for t, n in toks))
