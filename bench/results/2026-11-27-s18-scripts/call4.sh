set -o pipefail; F=build-gpu/bin/fa-run; FA3=scratch/fa3/fa3_bench; K=kernels_generated/fa_fwd_sm90a_f8E4M3FN_d256_none
LC_ALL=C; echo "ptx sha $(sha256sum $K.ptx | cut -c1-12)"
[ -x $F ] || { cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null; }
mkdir -p $OUT/sass
cuobjdump -sass $FA3 > /tmp/fa3.sass; python3 - <<'PY'
import re,os
out=os.environ['OUT']; cur=None; buf={}
for l in open('/tmp/fa3.sass'):
    m=re.search(r'Function : (\S+)',l)
    if m: cur=m.group(1); buf[cur]=[]
    if cur: buf[cur].append(l)
for k,v in buf.items():
    if 'float_e4m3' in k or 'e4m3' in k:
        tag='fp8_d256' if 'ILi256E' in k or 'Li256EE' in k or '256' in k else 'fp8_d128'
        print(k[:200], len(v))
    open(f"{out}/sass/fa3_{abs(hash(k))%100000}.sass",'w').writelines(v)
PY
ptxas -arch=sm_90a $K.ptx -o /tmp/ours.cubin && cuobjdump -sass /tmp/ours.cubin > $OUT/sass/ours_fp8_d256_none.sass
for round in 1 2 3; do for b in 2 4; do
  echo "$round B$b N8k ours $($F --device cuda --kernel $K.json --b $b --hq 16 --hkv 16 --m 8192 --n 8192 --bench --iters 30 2>&1 | grep -o '[0-9.]* TFLOP/s')"
  echo "$round B$b N8k $($FA3 --dtype e4m3 --d 256 --b $b --h 16 --n 8192 | grep '^fa3')"
done; done
M="--metrics gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__inst_executed_op_local_ld.sum"
timeout 150 ncu $M -k regex:fa_fwd --launch-count 1 $F --device cuda --kernel $K.json --b 2 --hq 16 --hkv 16 --m 8192 --n 8192 2>&1 | grep -E '^\s+(gpu__|sm__|smsp__|l1tex)' | sed 's/^/ours: /'
timeout 150 ncu $M -k regex:FlashAttn --launch-count 1 $FA3 --dtype e4m3 --d 256 --b 2 --h 16 --n 8192 --iters 1 2>&1 | grep -E '^\s+(gpu__|sm__|smsp__|l1tex)' | sed 's/^/fa3: /'
