"""Top-15 instructions by stall samples (whole kernel), and per-role opcode-class instruction counts per iteration."""
import re
from roles import setup, op
import cons
NITP=303104
for k in ('ours','fa3'):
    S=setup(k); rows=S['rows']; tot=sum(x['smp'] for x in rows)
    print(f"== {k}: top 15 rows by samples ({tot/1e3:.1f}K total)")
    for x in sorted(rows,key=lambda x:-x['smp'])[:15]:
        top=sorted(((v,s[6:]) for s,v in x['st'].items() if v>0),reverse=True)[:3]
        print(f"  {x['idx']:5d} {x['role']} ex={int(x['ex']):9d} smp={int(x['smp']):6d} ({x['smp']/tot*100:4.1f}%) {x['src'][:58]:58s} "+' '.join(f'{s}:{int(v)}' for v,s in top))
for k in ('ours','fa3'):
    S=setup(k); rows=S['rows']
    P=[x for x in rows if x['role']=='P']
    cl={}
    for x in P:
        b=op(x).split('.')[0]
        c=b if b in ('PRMT','LDSM','STSM','SYNCS','BAR','BRA','YIELD','LDL','STL','UTMALDG','R2UR','MEMBAR','FENCE','ELECT','NANOSLEEP') else ('uniform' if op(x).startswith('U') else 'int/other')
        if 'ret' in x: c='retry stub: '+c
        cl[c]=cl.get(c,0)+x['ex']
    print(f"== {k} producer instr per warp-iteration: "+', '.join(f"{c} {v/NITP:.1f}" for c,v in sorted(cl.items(),key=lambda kv:-kv[1]) if v/NITP>=0.5))
print()
for k in ('ours','fa3'):
    S=setup(k); rows=S['rows']; C=[x for x in rows if x['role']=='C']; tot=sum(x['smp'] for x in C)
    print(f"== {k}: consumer top 15 rows ({tot/1e3:.1f}K consumer samples)")
    for x in sorted(C,key=lambda x:-x['smp'])[:15]:
        top=sorted(((v,s[6:]) for s,v in x['st'].items() if v>0),reverse=True)[:3]
        print(f"  {x['idx']:5d} ex={int(x['ex']):9d} smp={int(x['smp']):6d} ({x['smp']/tot*100:4.1f}%) {x['src'][:58]:58s} "+' '.join(f'{s}:{int(v)}' for v,s in top))
