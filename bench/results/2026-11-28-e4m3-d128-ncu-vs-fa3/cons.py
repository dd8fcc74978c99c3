"""Consumer accounting, D128 e4m3: one KV iteration of one consumer warp (a per-segment layout).
cycles/iter = share of the consumer role's samples x cycles per KV iteration (longest CTA, 592 iterations).
'per hot iter' rescales a hot-loop segment by 37/n_hot (ours peels 2 of 37 iterations per tile, FA3 1)."""
import re, sys
from roles import setup, op
CFG={'ours':dict(nit=573440, nhot=35, K=r'TRYWAIT.*\+0x38008\]', V=r'TRYWAIT.*\+0x38050\]'),
     'fa3': dict(nit=589824, nhot=36, K=r'TRYWAIT.*\+0x2e830\]', V=r'TRYWAIT.*\+0x2e850\]')}
ORDER=['ping-pong BAR (barrier stall)','K wait','V^T wait','S QGMMA issue (+NOPs)','PV QGMMA issue','issue rest',
       'W1','W1->W0','W0','W0->back edge']
def cls_of(x):
    o=op(x); b=o.split('.')[0]
    if b=='FMNMX': return 'FMNMX'
    if b in('SHFL','FFMA','MUFU','FADD','FMUL','F2FP','PRMT','R2UR','QGMMA','BAR','SYNCS','BRA','FSEL','FSETP','NOP','DEPBAR','WARPGROUP'): return b
    if o.startswith('U'): return 'uniform int'
    if o in('MOV','IMAD.MOV.U32','IMAD.U32') : return 'MOV'
    return 'other int/misc'
def analyse(k, verbose=True):
    S=setup(k); rows=S['rows']; c=CFG[k]; NIT=c['nit']
    C=[x for x in rows if x['role']=='C']
    Ctot=sum(x['smp'] for x in C); cps=S['cpi']/Ctot
    hot=[x['idx'] for x in C if x['ex']==NIT]
    lo,hi=min(hot),max(hot)
    L=rows[lo:hi+1]
    def find(pat):
        return next(x['idx'] for x in L if re.search(pat,x['src']))
    kw=find(c['K']); vw=find(c['V'])
    ba=find(r'BAR\.ARV')
    w1=find(r'DEPBAR\.LE gsb0, 0x1'); w0=find(r'DEPBAR\.LE gsb0, 0x0')
    # each TRYWAIT's retry branch (and FA3's second TRYWAIT + branch)
    def waitrows(i):
        r=[i]
        for y in rows[i+1:i+4]:
            if re.search(r'BRA',y['src']) or 'TRYWAIT' in y['src']: r.append(y['idx'])
        return r
    for x in L: x['seg']=None
    for i in waitrows(kw): rows[i]['seg']='K wait'
    for i in waitrows(vw): rows[i]['seg']='V^T wait'
    rows[w1]['seg']='W1'; rows[w0]['seg']='W0'
    for x in L:
        if x['seg']: continue
        if x['idx']<=ba:
            if op(x).startswith('QGMMA') or op(x)=='NOP':
                x['seg']='S QGMMA issue (+NOPs)' if '64x224' in x['src'] or op(x)=='NOP' else 'PV QGMMA issue'
            else: x['seg']='issue rest'
        elif x['idx']<w0: x['seg']='W1->W0'
        else: x['seg']='W0->back edge'
    for x in C:   # out-of-line stubs returning into the loop
        if 'ret' in x and lo<=x['ret']<=hi:
            tw=next(y for y in rows if y.get('ret')==x['ret'] and 'TRYWAIT' in y['src'])
            x['seg']='K wait' if re.search(c['K'],tw['src']) else 'V^T wait'
    agg={}
    def add(s,e,sm):
        a=agg.setdefault(s,[0,0]); a[0]+=e; a[1]+=sm
    for x in C:
        s=x.get('seg') or 'per tile (prologue, peeled iterations, epilogue)'
        e=x['ex'] if lo<=x['idx']<=hi else 0
        sm=x['smp']
        if s not in ('W1','W0') and lo<=x['idx']<=hi and x['idx']<=ba:
            b=x['st'].get('stall_barrier',0)   # ping-pong bar.sync stall lands on the instruction(s) after it
            if b: add('ping-pong BAR (barrier stall)',0,b); sm-=b
        add(s,e,sm)
    hotsm=sum(v[1] for s,v in agg.items() if s in ORDER)
    res=dict(S=S,agg=agg,cps=cps,lo=lo,hi=hi,kw=kw,vw=vw,w1=w1,w0=w0,ba=ba,nit=NIT,Ctot=Ctot)
    if verbose:
        sc=37/c['nhot']
        print(f"== {k}: cyc/iter {S['cpi']:.0f}; consumer samples {Ctot/1e3:.1f}K; 1K smp = {cps*1e3:.2f} cyc; loop rows {lo}-{hi}, "
              f"{sum(1 for x in L if x['ex']==NIT)} instr at {NIT} + {sum(1 for x in L if 0<x['ex']<NIT)} partial; hot loop {hotsm/Ctot*100:.1f}% of consumer samples")
        print(f"  {'segment':34s} {'instr/it':>8s} {'K smp':>7s} {'cyc/iter':>8s} {'per hot iter':>12s}")
        for s in ORDER+['per tile (prologue, peeled iterations, epilogue)']:
            e,sm=agg.get(s,[0,0])
            ph=f"{sm*cps*sc:12.0f}" if s in ORDER else ''
            print(f"  {s:34s} {e/NIT:8.1f} {sm/1e3:7.2f} {sm*cps:8.0f} {ph}")
        soft=sum(agg[s][1] for s in ('W1->W0','W0->back edge'))
        print(f"  softmax work (W1->back edge minus W0): instr {sum(agg[s][0] for s in ('W1->W0','W0->back edge'))/NIT:.0f}, cyc {soft*cps:.0f} (per hot iter {soft*cps*sc:.0f})")
        print(f"  W1+W0: {(agg['W1'][1]+agg['W0'][1])*cps:.0f} cyc; rows: K wait {kw}, V^T wait {vw}, BAR.ARV {ba}, W1 {w1}, W0 {w0}; "
              f"instr W1->W0: {sum(1 for x in rows[w1+1:w0] if x['ex']>0)}")
    return res
def classes(k, verbose=True):
    R=analyse(k, verbose=False); S=R['S']; rows=S['rows']; NIT=R['nit']; cps=R['cps']
    L=rows[R['lo']:R['hi']+1]
    cl={}
    for x in L:
        c=cls_of(x); a=cl.setdefault(c,[0,0,{}]); a[0]+=x['ex']; a[1]+=x['smp']
        for sk,sv in x['st'].items(): a[2][sk]=a[2].get(sk,0)+sv
    if verbose:
        print(f"== {k}: hot-loop opcode classes (instr per warp-iteration, K samples, cyc/iter, top stalls)")
        tot=[0,0]
        for c,(e,sm,st) in sorted(cl.items(), key=lambda kv:-kv[1][0]):
            top=sorted(((v,k2[6:]) for k2,v in st.items()),reverse=True)[:4]
            tot[0]+=e; tot[1]+=sm
            print(f"  {c:16s} {e/NIT:6.1f} {sm/1e3:7.2f} {sm*cps:6.0f}  "+' '.join(f'{k2}:{v/1e3:.2f}K' for v,k2 in top))
        print(f"  {'total':16s} {tot[0]/NIT:6.1f} {tot[1]/1e3:7.2f} {tot[1]*cps:6.0f}")
    return cl
def stalls(k):
    R=analyse(k, verbose=False); S=R['S']; rows=S['rows']; cps=R['cps']
    for name,sel in (('hot loop',rows[R['lo']:R['hi']+1]),('all consumer',[x for x in rows if x['role']=='C'])):
        st={}
        for x in sel:
            for sk,sv in x['st'].items(): st[sk]=st.get(sk,0)+sv
        tot=sum(st.values())
        print(f"== {k} {name} stall reasons (K samples, cyc/iter): "+', '.join(f"{sk[6:]} {v/1e3:.2f} ({v*cps:.0f})" for sk,v in sorted(st.items(),key=lambda kv:-kv[1]) if v>tot*0.005))
if __name__=='__main__':
    for k in sys.argv[1:] or ['ours','fa3']:
        analyse(k); classes(k); stalls(k)
