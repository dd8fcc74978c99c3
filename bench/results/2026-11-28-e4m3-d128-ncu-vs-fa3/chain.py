"""Row-max chain cost per link (before / after W0) and MUFU cost (dense tail vs interleaved), per hot iteration."""
import cons
for k,ranges in (('ours',[(1703,1737),(1740,1760)]),('fa3',[(1233,1289)])):
    R=cons.analyse(k,verbose=False); rows=R['S']['rows']; cps=R['cps']*37/cons.CFG[k]['nhot']
    for a,b in ranges:
        f=[x for x in rows[a:b+1] if x['src'].startswith('FMNMX')]
        sm=sum(x['smp'] for x in rows[a:b+1])
        print(f"{k} rows {a}-{b}: {len(f)} chained FMNMX, {sm*cps:.0f} cyc/hot iter, {sm*cps/len(f):.1f} cyc per link (all instrs in range)")
    mu=[x for x in rows[R['w1']:R['hi']+1] if x['src'].startswith('MUFU')]
    dense=[x for x in mu if x['smp']>180]
    print(f"{k}: {len(mu)} MUFU, {sum(x['smp'] for x in mu)*cps:.0f} cyc; {len(dense)} MUFU with >180 samples: {sum(x['smp'] for x in dense)*cps:.0f} cyc ({sum(x['smp'] for x in dense)*cps/len(dense):.1f}/MUFU); rest {(sum(x['smp'] for x in mu)-sum(x['smp'] for x in dense))*cps/(len(mu)-len(dense)):.1f}/MUFU")
