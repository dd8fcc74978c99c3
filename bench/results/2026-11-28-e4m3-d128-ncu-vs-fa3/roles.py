"""Role assignment by code region. D128 e4m3, 128 x 224, B2 H16 N8k."""
import os, re, sys
# parse.py reads ncu's source-page CSV (listing.py prints it: ours.txt / fa3.txt).
from parse import load
R=os.path.dirname(os.path.abspath(__file__))+'/'
# ncu summary (bench/results/2026-11-28-forward-e4m3-fa3-h100.log): clocks locked 1.53 GHz
KERN = {
 'ours': dict(csv=R+'ours-d128-fp8-source.csv.gz', dur=1.35e-3, clk=1.53e9),
 'fa3':  dict(csv=R+'fa3-d128-fp8-source.csv.gz',  dur=1.31e-3, clk=1.53e9),
}
NITER=16*37   # longest CTA: 16 tiles (2048 tiles on 132 persistent CTAs) x 37 KV blocks of 224 (8192 = 36*224 + 128)
def op(x):
    s=x['src']
    s=re.sub(r'^@!?U?P\w+\s+','',s)
    return s.split()[0] if s else ''
def target(x):
    m=re.search(r'BRA\S*\s+0x([0-9a-f]+)',x['src'])
    return int(m.group(1),16) if m else None
_cache={}
def setup(k):
    if k in _cache: return _cache[k]
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
    S=dict(rows=rows, d=d, t=t, cyc=cyc, cpi=cyc/NITER, base=base, name=name)
    _cache[k]=S
    return S
if __name__=='__main__':
    for k in KERN:
        S=setup(k); rows=S['rows']
        tot=sum(x['smp'] for x in rows)
        by={}
        for x in rows: by[x['role']]=by.get(x['role'],0)+x['smp']
        ins=sum(x['ex'] for x in rows)
        byi={}
        for x in rows: byi[x['role']]=byi.get(x['role'],0)+x['ex']
        print(k, S['name'][0], f"cyc={S['cyc']/1e6:.3f}M cyc/iter={S['cpi']:.0f} samples={tot/1e3:.1f}K",
              {r:round(v/1e3,2) for r,v in by.items()},
              f"C share={by['C']/tot:.3f} warp-instr={ins/1e6:.1f}M (C {byi['C']/1e6:.1f}M, P {byi['P']/1e6:.1f}M) smp/Mcyc={tot/S['cyc']*1e6:.0f}",
              f"IPC/SM={ins/132/S['cyc']:.2f}")
