# Seventeenth session, call 8 (device): the K release after exponential N
# (24 / 48 / 72), predicated on it, so that ptxas cannot wait for P·V
# before it (k_after_exp.py), e4m3 and bf16 D128 none: SASS, verify, time.
#   run(carry=["scratch/s17e"], command="bash bench/results/2026-11-27-s17-scripts/call8.sh 2>&1 | tee $OUT/log")
set -o pipefail; export PYTHONUNBUFFERED=1; W=scratch/s17e
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; start=$SECONDS; mkdir -p $OUT/sass
for k in f8E4M3FN_d128_none bf16_d128_none; do for v in base e24 e48 e72; do p=$W/$v/fa_fwd_sm90a_$k.ptx; ptxas -arch=sm_90a $p -o ${p%.ptx}.cubin
  cuobjdump -sass ${p%.ptx}.cubin > $OUT/sass/$v-$k.sass
  python3 $W/tok.py $OUT/sass/$v-$k.sass | grep -o 'A W1.*' | cut -c1-240 | sed "s|^|$v $k: |"; done; done
for v in e24 e48 e72; do for k in f8E4M3FN_d128_none bf16_d128_none; do for size in 113x203 1023x1024 4096x4096; do
  echo "--kernel $W/$v/fa_fwd_sm90a_$k.json --b 2 --hq 8 --hkv 2 --m ${size%x*} --n ${size#*x} --layout bshd"; done; done; done > /tmp/jobs
FA_PARALLEL=12 FA_JOB_TIMEOUT=200 timeout 240 bash bench/verify-parallel.sh $F "k-after-exp verify" < /tmp/jobs
for round in 1 2 3; do for k in f8E4M3FN_d128_none bf16_d128_none; do for v in base e24 e48 e72; do
  echo "$round $k $v $($F --device cuda --kernel $W/$v/fa_fwd_sm90a_$k.json --b 2 --hq 16 --hkv 16 --m 8192 --n 8192 --bench --iters 20 2>&1 | grep -o '[0-9.]* TFLOP/s')"
done; done; done; echo "   ($((SECONDS - start)) s)"
