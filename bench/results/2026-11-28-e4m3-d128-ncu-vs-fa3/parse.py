import csv, gzip, sys
STALLS=None
def load(path):
    with gzip.open(path,'rt') as f:
        r=csv.reader(f)
        name=next(r)
        hdr=next(r)
        rows=[]
        for i,row in enumerate(r):
            d=dict(zip(hdr,row))
            def num(k):
                v=d.get(k,'0')
                try: return float(v)
                except: return 0.0
            st={k:num(k) for k in hdr if k.startswith('stall_') and '(Not Issued)' not in k}
            rows.append(dict(idx=i, addr=int(d['Address'],16), src=d['Source'].strip(),
                smp=num('Warp Stall Sampling (All Samples)'), ex=num('Instructions Executed'),
                thr=num('Thread Instructions Executed'),
                wf=num('L1 Wavefronts Shared'), wfi=num('L1 Wavefronts Shared Ideal'), wfx=num('L1 Wavefronts Shared Excessive'),
                local=num('L2 Theoretical Sectors Local'), st=st))
        base=rows[0]['addr']
        for x in rows: x['off']=x['addr']-base
        return name, rows
