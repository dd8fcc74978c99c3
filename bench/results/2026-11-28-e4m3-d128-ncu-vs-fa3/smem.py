"""Shared-memory wavefronts by role and opcode (L1 Wavefronts Shared / Ideal / Excessive)."""
from roles import setup, op
for k in ('ours','fa3'):
    S=setup(k); agg={}
    for x in S['rows']:
        if x['wf']==0 and x['wfx']==0: continue
        b=op(x).split('.')[0]
        a=agg.setdefault((x['role'],b),[0,0,0,0]); a[0]+=1 if x['ex'] else 0; a[1]+=x['wf']; a[2]+=x['wfi']; a[3]+=x['wfx']
    print('==',k,'total excess',sum(v[3] for v in agg.values()))
    for (r,b),(n,w,i,e) in sorted(agg.items()):
        print(f"  {r} {b:10s} rows {n:3d} wavefronts {w/1e6:8.2f}M ideal {i/1e6:8.2f}M excess {e/1e6:6.2f}M")
