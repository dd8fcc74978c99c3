"""Consumer accounting: one KV iteration of one consumer warp (s18 section 2 layout). ours only (old/new)."""
import re, sys
from roles import setup, op
NIT=1032192   # hot-loop executions: 2048 tiles x 2 WGs x 4 warps x 63
def analyse(k, verbose=True):
    S=setup(k); rows=S['rows']
    C=[x for x in rows if x['role']=='C']
    Ctot=sum(x['smp'] for x in C); cps=S['cpi']/Ctot
    hot=[x['idx'] for x in C if x['ex']==NIT]
    lo,hi=min(hot),max(hot)
    L=rows[lo:hi+1]
    def find(pat, start=lo):
        return next(x['idx'] for x in rows[start:hi+1] if re.search(pat,x['src']))
    kw=find(r'TRYWAIT.*0x38008\]'); vw=find(r'TRYWAIT.*0x38050\]')
    bs=find(r'BAR\.SYNC'); ba=find(r'BAR\.ARV')
    w1=find(r'DEPBAR\.LE gsb0, 0x1'); w0=find(r'DEPBAR\.LE gsb0, 0x0')
    def nbra(i): return next(x['idx'] for x in rows[i+1:i+4] if re.match(r'@!P\d\s+BRA',x['src']))
    seg={}
    for x in L: x['seg']=None
    for i in (kw,nbra(kw)): rows[i]['seg']='K wait'
    for i in (bs,ba): rows[i]['seg']='ping-pong BAR'
    for i in (vw,nbra(vw)): rows[i]['seg']='V^T wait'
    rows[w1]['seg']='W1'; rows[w0]['seg']='W0'
    for x in L:
        if x['seg']: continue
        if x['idx']<=ba: x['seg']='issue rest'
        elif x['idx']<w0: x['seg']='W1->W0'
        else: x['seg']='W0->back edge'
    # stubs returning into the loop
    for x in C:
        if 'ret' in x and lo<=x['ret']<=hi:
            tw=next(y for y in rows if y.get('ret')==x['ret'] and 'TRYWAIT' in y['src'])
            x['seg']='K wait' if '0x38008' in tw['src'] else 'V^T wait'
    agg={}
    for x in C:
        s=x.get('seg') or 'per tile (prologue+epilogue)'
        a=agg.setdefault(s,[0,0]); a[1]+=x['smp']
        if lo<=x['idx']<=hi: a[0]+=x['ex']
    if verbose:
        print(f"== {k}: cyc/iter {S['cpi']:.0f}; consumer samples {Ctot/1e3:.1f}K; 1K smp = {cps*1e3:.2f} cyc; loop rows {lo}-{hi}, {sum(1 for x in L if x['ex']==NIT)} instr")
        for s in ['ping-pong BAR','K wait','V^T wait','issue rest','W1','W1->W0','W0','W0->back edge','per tile (prologue+epilogue)']:
            e,sm=agg.get(s,[0,0])
            print(f"  {s:30s} instr/iter {e/NIT:6.1f}  K smp {sm/1e3:6.2f}  cyc {sm*cps:6.0f}")
    # opcode classes in the loop
    cls={}
    for x in L:
        o=op(x); b=o.split('.')[0]
        c={'FMNMX':'row max FMNMX','SHFL':'SHFL','FFMA':'FFMA','MUFU':'MUFU','FADD':'FADD','F2FP':'F2FP','FMUL':'FMUL',
           'QGMMA':'QGMMA','R2UR':'R2UR'}.get(b)
        if c is None:
            c='uniform int' if o.startswith('U') else ('mov' if b in('MOV',) or o=='IMAD.MOV.U32' else 'other')
        x['cls']=c
        a=cls.setdefault(c,[0,0,{}]); a[0]+=x['ex']; a[1]+=x['smp']
        for sk,sv in x['st'].items(): a[2][sk]=a[2].get(sk,0)+sv
    if verbose:
        print('  classes in loop:')
        for c,(e,sm,st) in sorted(cls.items(), key=lambda kv:-kv[1][1]):
            top=sorted(((v,k2[6:]) for k2,v in st.items()),reverse=True)[:3]
            print(f"    {c:16s} instr/iter {e/NIT:6.1f}  K smp {sm/1e3:6.2f} cyc {sm*cps:5.0f}  "+' '.join(f'{k2}:{v/1e3:.1f}K' for v,k2 in top))
        print(f"  rows: K wait {kw}, V^T wait {vw}, W1 {w1}, W0 {w0}; instr W1->W0 executed: {sum(1 for x in rows[w1+1:w0] if x['ex']==NIT)}")
    return S,agg,cps
if __name__=='__main__':
    for k in sys.argv[1:] or ['old','new']:
        analyse(k)
