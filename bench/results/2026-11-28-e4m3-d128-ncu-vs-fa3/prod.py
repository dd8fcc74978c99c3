"""Producer accounting, D128 e4m3: one KV iteration of one producer warp.
1K producer samples = cpi / producer samples. Per-iteration instruction counts divide by 303,104 transposes
(2048 tiles x 37 KV tiles x 4 producer warps), both kernels."""
import re, sys
from roles import setup, op
NIT=303104
WAITS={'ours':{'0x38010':'K slot empty (issuer)','0x38020':'V slot empty = P.V_{j-2} done (issuer, before V copy)',
               '0x38018':'V landed (all warps)'},
       'fa3': {'0x2e840':'K slot empty (issuer)','0x2e880':'V staging empty (issuer, before V copy)',
               '0x2e870':'V staging landed (all warps)','0x2e860':'V^T slot empty = P.V_{j-2} done (all warps)'}}
# transpose = after the last wait before it -> the V^T-full arrive (rows, read off ours.txt / fa3.txt)
TR={'ours':[(378,488)], 'fa3':[(2562,2662),(2676,2783)]}
def wait_kind(k,src):
    for a,v in WAITS[k].items():
        if '+'+a+']' in src: return v
    return 'other mbarrier (per tile)'
def analyse(k, verbose=True):
    S=setup(k); rows=S['rows']
    P=[x for x in rows if x['role']=='P']
    Ptot=sum(x['smp'] for x in P); cps=S['cpi']/Ptot
    for x in P: x['cat']=None
    for i,x in enumerate(rows):
        if x['role']!='P' or 'ret' in x: continue
        if 'TRYWAIT' in x['src']:
            kind='wait: '+wait_kind(k,x['src']); x['cat']=kind
            for y in rows[i+1:i+4]:
                if re.search(r'BRA',y['src']): y['cat']=kind; break
    for x in P:
        if 'ret' in x:
            tw=next(y for y in rows if y.get('ret')==x['ret'] and 'TRYWAIT' in y['src'])
            x['cat']='wait: '+wait_kind(k,tw['src'])
    trows=set()
    for a,b in TR[k]:
        for x in rows[a:b+1]:
            if x['cat']: continue
            trows.add(x['idx'])
            o=op(x); s=x['src']; b0=o.split('.')[0]
            if o=='PRMT': c='PRMT'
            elif b0 in('LDSM','STSM'): c=b0
            elif b0 in('MEMBAR','FENCE') or ('ARRIVE' in s and ('0x38050' in s or '0x2e850' in s)): c='drain (MEMBAR, FENCE, V^T-full arrive)'
            elif b0 in('LDL','STL'): c='LDL/STL'
            elif o=='MOV' or (o=='IMAD.MOV.U32' and re.search(r'RZ, RZ, R\d+$',s)): c='MOV'
            elif o in ('WARPSYNC.ALL','BRA','S2R','ISETP.GT.U32.AND','ISETP.LT.AND','UIADD3','UMOV'): c='control (WARPSYNC, BRA, tid test)'
            else: c='address int ops'
            x['cat']='T: '+c
    # FA3's producer warps meet at BAR.SYNC 0x2 after each transpose: its stall lands on the next instruction
    agg={}
    for x in P:
        c=x['cat'] or 'other (loop head, TMA issue, bookkeeping, per tile)'
        sm=x['smp']
        b=x['st'].get('stall_barrier',0)
        if b and not c.startswith('wait'):
            a=agg.setdefault('wait: named barrier among the 4 producer warps (BAR.SYNC 0x2)',[0,0]); a[1]+=b; sm-=b
        a=agg.setdefault(c,[0,0]); a[0]+=x['ex'] if not ('ret' in x) else 0; a[1]+=sm
        if 'ret' in x: a.append(0); agg[c][0]+=0
    waits=sum(v[1] for c,v in agg.items() if c.startswith('wait'))
    spins=sum(x['ex'] for x in P if 'ret' in x and 'TRYWAIT' in x['src'])
    if verbose:
        print(f"== {k}: cyc/iter {S['cpi']:.0f}, producer samples {Ptot/1e3:.1f}K, 1K smp = {cps*1e3:.1f} cyc; producer warp-instr {sum(x['ex'] for x in P)/1e6:.1f}M "
              f"({sum(x['ex'] for x in P)/NIT:.0f}/iter), of which out-of-line retry stubs {sum(x['ex'] for x in P if 'ret' in x)/1e6:.1f}M ({spins/1e6:.2f}M TRYWAIT retries)")
        T=[0,0]
        for c in agg:
            if c.startswith('T:'): T[0]+=agg[c][0]; T[1]+=agg[c][1]
        print(f"  {'transpose (after its waits -> V^T-full arrive)':58s} instr/iter {T[0]/NIT:6.1f}  K smp {T[1]/1e3:6.2f}  cyc {T[1]*cps:6.0f}")
        for c in sorted(agg):
            if c.startswith('T:'): print(f"    {c[3:]:56s} instr/iter {agg[c][0]/NIT:6.1f}  K smp {agg[c][1]/1e3:6.2f}  cyc {agg[c][1]*cps:6.0f}")
        for c in sorted(agg):
            if not c.startswith('T:') and not c.startswith('wait'):
                print(f"  {c:58s} instr/iter {agg[c][0]/NIT:6.1f}  K smp {agg[c][1]/1e3:6.2f}  cyc {agg[c][1]*cps:6.0f}")
        busy=Ptot-waits
        print(f"  {'busy (not waiting)':58s} {'':17s} K smp {busy/1e3:6.2f}  cyc {busy*cps:6.0f}")
        for c in sorted(agg):
            if c.startswith('wait'):
                print(f"  {c:58s} {'':17s} K smp {agg[c][1]/1e3:6.2f}  cyc {agg[c][1]*cps:6.0f}")
        print(f"  waits total {waits*cps:.0f} cyc ({waits/Ptot*100:.1f}%)")
    return S,agg,cps
if __name__=='__main__':
    for k in sys.argv[1:] or ['ours','fa3']:
        analyse(k)
