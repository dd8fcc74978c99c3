#!/usr/bin/env python3
# Stall samples of an ncu source-page CSV (ncu --page source --csv --print-source sass), by stall reason and by opcode.
# Usage: python3 stalls.py FILE.csv [...]   (the CSVs of 2026-11-26c-ncu/ are gzipped: zcat them first)
import csv, sys, re, collections
def load(p):
    rows=list(csv.reader(open(p)))
    hdr=rows[1]; data=rows[2:]
    idx={h:i for i,h in enumerate(hdr)}
    reasons=[h for h in hdr if h.startswith('stall_') and '(Not Issued)' not in h]
    return hdr,data,idx,reasons
for p in sys.argv[1:]:
    hdr,data,idx,reasons=load(p)
    tot=collections.Counter(); byop=collections.Counter(); inst=0; samples=0
    opstall=collections.defaultdict(collections.Counter)
    for r in data:
        if len(r)<len(hdr): continue
        src=r[idx['Source']].strip()
        op=re.sub(r'^@!?U?P\w+\s+','',src).split(' ')[0]
        opb=op.split('.')[0]
        s=int(r[idx['Warp Stall Sampling (All Samples)']] or 0); samples+=s
        inst+=int(r[idx['Instructions Executed']] or 0)
        byop[opb]+=s
        for re_ in reasons:
            v=int(r[idx[re_]] or 0); tot[re_]+=v; opstall[opb][re_]+=v
    print(f"== {p}: samples {samples}, warp instructions executed {inst}")
    print("  by reason:", ", ".join(f"{k[6:]} {100*v/samples:.1f}%" for k,v in tot.most_common(9)))
    print("  by opcode:", ", ".join(f"{k} {100*v/samples:.1f}%" for k,v in byop.most_common(12)))
    for op,_ in byop.most_common(5):
        print(f"   {op}:", ", ".join(f"{k[6:]} {100*v/samples:.1f}%" for k,v in opstall[op].most_common(4)))
