"""Role assignment by code region (method of s18 d256-ours-vs-fa3.md)."""
import re
from parse import load
R='/work/main/bench/results/'
KERN = {
 'new': dict(csv=R+'2026-11-27-s19-ncu/ours-d256-fp8-source.csv.gz', dur=2.01e-3, clk=1.62e9),
 'old': dict(csv=R+'2026-11-27-s18-ncu/ours-d256-fp8-source.csv.gz', dur=2.16e-3, clk=1.58e9),
 'fa3': dict(csv=R+'2026-11-27-s18-ncu/fa3-d256-fp8-source.csv.gz', dur=1.90e-3, clk=1.52e9),
}
def op(x):
    s=x['src']
    s=re.sub(r'^@!?U?P\w+\s+','',s)
    return s.split()[0] if s else ''
def target(x):
    m=re.search(r'BRA\S*\s+0x([0-9a-f]+)',x['src'])
    return int(m.group(1),16) if m else None
def setup(k):
    name, rows = load(KERN[k]['csv'])
    base=rows[0]['addr']
    d=next(x['idx'] for x in rows if 'DEALLOC' in x['src'])
    t=next(x['idx'] for x in rows if 'TRY_ALLOC' in x['src'])
    last_exit=max(x['idx'] for x in rows if op(x)=='EXIT')
    role={}
    if d<t:   # ours: producer first
        for x in rows[:d]: role[x['idx']]='pro'
        for x in rows[d:t-1]: role[x['idx']]='P'
        for x in rows[t-1:last_exit+1]: role[x['idx']]='C'
    else:     # FA3: consumers first
        for x in rows[:t]: role[x['idx']]='pro'
        for x in rows[t:d]: role[x['idx']]='C'
        for x in rows[d:last_exit+1]: role[x['idx']]='P'
    # out-of-line retry stubs after the last EXIT: role of the block they branch back to
    grp=[]
    for x in rows[last_exit+1:]:
        grp.append(x)
        if op(x)=='BRA' and not x['src'].startswith('@'):
            tg=target(x)-base
            ti=next(y['idx'] for y in rows if y['off']==tg)
            r=role.get(ti,'?')
            for y in grp: role[y['idx']]=r
            for y in grp: y['ret']=ti
            grp=[]
        elif op(x) in ('RET','NOP'):
            for y in grp: role[y['idx']]='sub'
            grp=[]
    for y in grp: role[y['idx']]='sub'
    for x in rows: x['role']=role[x['idx']]
    cyc=KERN[k]['dur']*KERN[k]['clk']
    return dict(rows=rows, d=d, t=t, cyc=cyc, cpi=cyc/1024, base=base)
if __name__=='__main__':
    for k in KERN:
        S=setup(k); rows=S['rows']
        tot=sum(x['smp'] for x in rows)
        by={}
        for x in rows: by[x['role']]=by.get(x['role'],0)+x['smp']
        ins=sum(x['ex'] for x in rows)
        print(k, f"cyc={S['cyc']/1e6:.3f}M cyc/iter={S['cpi']:.0f} samples={tot/1e3:.1f}K", {r:round(v/1e3,2) for r,v in by.items()},
              f"C share={by['C']/tot:.3f} warp-instr={ins/1e6:.1f}M smp/Mcyc={tot/S['cyc']*1e6:.0f}")
