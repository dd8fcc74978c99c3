import sys
from parse import load
name, rows = load(sys.argv[1])
for x in rows:
    top=sorted(((v,k[6:]) for k,v in x['st'].items() if v>0), reverse=True)[:3]
    ts=' '.join(f'{k}:{int(v)}' for v,k in top)
    wf=f" wf={int(x['wf'])}/{int(x['wfi'])}" if x['wf'] else ''
    print(f"{x['idx']:5d} {x['off']:6x} {int(x['ex']):9d} {int(x['smp']):6d}  {x['src'][:70]:70s} {ts}{wf}")
