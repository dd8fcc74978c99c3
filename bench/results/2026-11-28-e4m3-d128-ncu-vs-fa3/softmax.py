"""Softmax region (W1 -> back edge, minus W0) by phase class, per hot iteration, both kernels side by side,
plus an in-program-order timeline of the loop (cumulative cycles per hot iteration at landmarks)."""
import re
from roles import op
import cons
PH={'FMNMX':'row max (FMNMX)','SHFL':'row max (SHFL)','FSEL':'row max finalise (FSEL/FSETP/FMUL max*scale)','FSETP':'row max finalise (FSEL/FSETP/FMUL max*scale)',
    'FFMA':'exp2 argument (FFMA)','MUFU':'exp2 (MUFU.EX2)','FADD':'row sum + correction (FADD)','F2FP':'P conversion (F2FP)','PRMT':'P byte permute (PRMT)',
    'FMUL':'O / l rescale (FMUL)'}
def phase(x):
    o=op(x); b=o.split('.')[0]
    if b=='FMUL' and 'UR' in x['src'] and not re.search(r'FMUL\S* R1[3-9]\d, R1[3-9]\d',x['src']): return PH['FSEL']
    return PH.get(b,'other (int, uniform, MOV, SYNCS arrive, BRA)')
res={}
for k in ('ours','fa3'):
    R=cons.analyse(k, verbose=False); rows=R['S']['rows']; cps=R['cps']; NIT=R['nit']
    sc=37/cons.CFG[k]['nhot']
    agg={}
    for x in rows[R['w1']+1:R['hi']+1]:
        if x['idx']==R['w0']: continue
        p=phase(x); a=agg.setdefault(p,[0,0,{}]); a[0]+=x['ex']/NIT; a[1]+=x['smp']*cps*sc
        for sk,sv in x['st'].items(): a[2][sk]=a[2].get(sk,0)+sv*cps*sc
    res[k]=agg
keys=sorted(set(res['ours'])|set(res['fa3']), key=lambda p:-res['ours'].get(p,[0,0])[1])
print(f"{'phase (W1 -> back edge, minus W0), per hot iteration':48s} {'ours n':>6s} {'ours cyc':>8s} {'FA3 n':>6s} {'FA3 cyc':>8s} {'delta':>6s}  ours top stalls | FA3 top stalls")
T=[0,0,0,0]
for p in keys:
    a=res['ours'].get(p,[0,0,{}]); b=res['fa3'].get(p,[0,0,{}])
    ta=' '.join(f"{s[6:]}:{v:.0f}" for s,v in sorted(a[2].items(),key=lambda kv:-kv[1])[:3])
    tb=' '.join(f"{s[6:]}:{v:.0f}" for s,v in sorted(b[2].items(),key=lambda kv:-kv[1])[:3])
    print(f"{p:48s} {a[0]:6.1f} {a[1]:8.0f} {b[0]:6.1f} {b[1]:8.0f} {a[1]-b[1]:+6.0f}  {ta} | {tb}")
    T[0]+=a[0];T[1]+=a[1];T[2]+=b[0];T[3]+=b[1]
print(f"{'total':48s} {T[0]:6.1f} {T[1]:8.0f} {T[2]:6.1f} {T[3]:8.0f} {T[1]-T[3]:+6.0f}")
# stall reasons over the softmax region
print()
for k in ('ours','fa3'):
    st={}
    for p,(n,c,s) in res[k].items():
        for sk,sv in s.items(): st[sk]=st.get(sk,0)+sv
    print(k,'softmax stall reasons (cyc per hot iter):',', '.join(f"{sk[6:]} {v:.0f}" for sk,v in sorted(st.items(),key=lambda kv:-kv[1]) if v>5))
