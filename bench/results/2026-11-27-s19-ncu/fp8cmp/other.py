"""Split the producer's non-transpose, non-wait work into code blocks (row ranges read off old.txt / new.txt)."""
import prod
B={'old':[('loop head + issuer test (64-bit cmp, 3 LDL)',257,267),('TMA issue (one warp) incl. its bookkeeping',268,346),
          ('join + skip-first test',347,350),('V-landed / V^T-slot phase bookkeeping',351,364),('counters + back edge',508,513)],
   'new':[('loop head + issuer test (1 LDL)',262,270),('TMA issue (one warp) incl. its bookkeeping',271,349),
          ('join + skip-first test',350,352),('V-landed / V^T-slot phase bookkeeping (+STL)',353,367),('counters + back edge',491,494)]}
for k in ('old','new'):
    import io,contextlib
    with contextlib.redirect_stdout(io.StringIO()): S,agg,cps=prod.analyse(k)
    rows=S['rows']; done=set()
    print('==',k)
    for name,a,b in B[k]:
        r=[x for x in rows[a:b+1] if x['cat']=='other']
        done|={x['idx'] for x in r}
        print(f"  {name:48s} instr/iter {sum(x['ex'] for x in r)/prod.NIT:5.1f}  K smp {sum(x['smp'] for x in r)/1e3:5.2f}  cyc {sum(x['smp'] for x in r)*cps:4.0f}")
    r=[x for x in rows if x['role']=='P' and x['cat']=='other' and x['idx'] not in done]
    print(f"  {'per tile / outside loop':48s} instr/iter {sum(x['ex'] for x in r)/prod.NIT:5.1f}  K smp {sum(x['smp'] for x in r)/1e3:5.2f}  cyc {sum(x['smp'] for x in r)*cps:4.0f}")
    loc=[x for x in rows if x['role']=='P' and x['src'].split()[0].split('.')[0] in('LDL','STL') or (x['role']=='P' and x['src'].startswith(('LDL','STL')))]
    inloop=[x for x in loc if x['ex']>=500000]
    print(f"  local ops in loop per iteration: LDL {sum(x['ex'] for x in inloop if x['src'].startswith('LDL'))/prod.NIT:.2f} STL {sum(x['ex'] for x in inloop if x['src'].startswith('STL'))/prod.NIT:.2f}; local-op samples {sum(x['smp'] for x in inloop)/1e3:.2f}K")
