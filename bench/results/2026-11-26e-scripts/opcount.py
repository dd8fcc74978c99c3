#!/usr/bin/env python3
# Executed count and stall samples of the memory/MMA opcodes (LDSM, HMMA, STS, LDS, BAR, REDG, LDG) in ncu source-page CSVs.
# Usage: python3 opcount.py FILE.csv [...]
import csv, sys, re, collections
for p in sys.argv[1:]:
    rows=list(csv.reader(open(p))); hdr=rows[1]; idx={h:i for i,h in enumerate(hdr)}
    c=collections.Counter(); s=collections.Counter()
    for r in rows[2:]:
        if len(r)<len(hdr): continue
        src=r[idx['Source']].strip(); op=re.sub(r'^@!?U?P\w+\s+','',src).split(' ')[0]
        key=op if op.startswith(('LDSM','HMMA','STS','LDS','BAR','REDG','LDG')) else None
        if key: c[key]+=int(r[idx['Instructions Executed']] or 0); s[key]+=int(r[idx['Warp Stall Sampling (All Samples)']] or 0)
    print(p); [print(f"   {k}: {v/1e6:.1f} M, samples {s[k]}") for k,v in sorted(c.items())]
