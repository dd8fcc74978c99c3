"""Producer accounting per KV iteration of one producer warp (s18 section 3 layout)."""
import re, sys
from roles import setup, op
NIT=524288   # transposes: 2048 tiles x 64 KV blocks x 4 producer warps
WAITS={'0x38018':'V landed','0x38020':'V^T slot','0x38010':'K+staging','0x38060':'K+staging'}
def wait_kind(src):
    for k,v in WAITS.items():
        if '+'+k+']' in src: return v
    return 'per tile'
def analyse(k):
    S=setup(k); rows=S['rows']
    P=[x for x in rows if x['role']=='P']
    Ptot=sum(x['smp'] for x in P); cps=S['cpi']/Ptot
    cat={}
    # waits: TRYWAIT + its retry branch (+ out-of-line stub)
    for i,x in enumerate(rows):
        if x['role']!='P': continue
        if 'TRYWAIT' in x['src'] and 'ret' not in x:
            kind=wait_kind(x['src']); x['cat']='wait:'+kind
            for y in rows[i+1:i+4]:
                if re.match(r'@!P\d\s+BRA',y['src']): y['cat']='wait:'+kind; break
    for x in P:
        if 'ret' in x:   # stub: kind from its TRYWAIT
            tw=next(y for y in rows if y.get('ret')==x['ret'] and 'TRYWAIT' in y['src'])
            x['cat']='wait:'+wait_kind(tw['src'])
    # transpose: after the V^T-slot wait -> the arrive that follows the V^T-full arrive
    vts=max(x['idx'] for x in P if x.get('cat')=='wait:V^T slot' and 'ret' not in x)
    full=next(x['idx'] for x in P if 'ARRIVE' in x['src'] and '0x38050' in x['src'])
    t0,t1=vts+1,full+1
    for x in rows[t0:t1+1]:
        o=op(x); s=x['src']; b=o.split('.')[0]
        if o=='PRMT': c='PRMT'
        elif b in('LDSM','STSM'): c=b
        elif b in('MEMBAR','FENCE') or x['idx']==full: c='drain'
        elif b in('LDL','STL'): c='LDL/STL'
        elif o=='MOV' or (o=='IMAD.MOV.U32' and re.search(r'RZ, RZ, R\d+$',s)): c='MOV'
        elif o in('LEA','IMAD','VIADD','LOP3.LUT','IADD3','UIADD3','IMAD.SHL.U32','IMAD.IADD','SHF.L.U32','IMAD.MOV.U32'): c='addr'
        else: c='tr-other'
        x['cat']='T:'+c
    for x in P:
        x.setdefault('cat','other')
    agg={}
    for x in P:
        a=agg.setdefault(x['cat'],[0,0])
        a[0]+=x['ex']; a[1]+=x['smp']
    waits=sum(v[1] for c,v in agg.items() if c.startswith('wait'))
    print(f"== {k}: cyc/iter {S['cpi']:.0f}, producer samples {Ptot/1e3:.1f}K, 1K smp = {cps*1e3:.1f} cyc; transpose rows {t0}-{t1}")
    def line(name,ex,sm,busy=True):
        print(f"  {name:22s} instr/iter {ex/NIT:6.1f}  K smp {sm/1e3:6.2f}  cyc {sm*cps:6.0f}")
    T=[0,0]
    for c in sorted(agg):
        if c.startswith('T:'): T[0]+=agg[c][0]; T[1]+=agg[c][1]
    line('transpose total',*T)
    for c in sorted(agg):
        if c.startswith('T:'): line('  '+c[2:],*agg[c])
    # non-wait instructions counted per iteration exclude stub/retry executions
    line('other',*agg['other'])
    for c in sorted(agg):
        if c.startswith('wait'): line(c,agg[c][0] if 0 else 0,agg[c][1])
    mainwait=sum(x['ex'] for x in P if x['cat'].startswith('wait') and 'ret' not in x)
    busyex=sum(v[0] for c,v in agg.items() if not c.startswith('wait'))+mainwait
    print(f"  busy: instr/iter {busyex/NIT:.1f}, K smp {(Ptot-waits)/1e3:.2f}, cyc {(Ptot-waits)*cps:.0f}; waits {waits*cps:.0f} cyc ({waits/Ptot*100:.1f}%)")
    return S,agg,cps
if __name__=='__main__':
    for k in sys.argv[1:] or ['old','new']:
        analyse(k)
