# fifteenth session: causal e4m3 D128 on 128 x 224 / 128 x 192 (two stages) against 128 x 128 (four).
set -o pipefail; export PYTHONUNBUFFERED=1; W=scratch/c224; start=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run
{ for v in n224 n192; do k=$W/$v/fa_fwd_sm90a_f8E4M3FN_d128_causal.json; spec=$(grep -o '"spec": "[^"]*"' $k | cut -d'"' -f4)
  for size in 1x1 113x203 128x217 1023x1024 4096x4096; do m=${size%x*}; n=${size#*x}
    echo "--kernel $k --spec \"$spec,descale=tensor\" --b 2 --hq 4 --hkv 4 --m $m --n $n --layout bhsd"
    echo "--kernel $k --spec \"$spec,descale=head\" --b 2 --hq 8 --hkv 2 --m $m --n $n --layout bshd"; done; done; } > /tmp/jobs
FA_PARALLEL=16 FA_JOB_TIMEOUT=200 timeout 240 bash bench/verify-parallel.sh $F "c224 verify" < /tmp/jobs
echo "   ($((SECONDS - start)) s)"
for r in 1 2; do for v in base n224 n192; do
  echo "$r N8k B2 $v $($F --device cuda --kernel $W/$v/fa_fwd_sm90a_f8E4M3FN_d128_causal.json --b 2 --hq 16 --hkv 16 --m 8192 --n 8192 --bench --iters 20 2>&1 | grep -o '[0-9.]* TFLOP/s')"
done; done; echo "   ($((SECONDS - start)) s)"
for v in base n224 n192; do
  echo "1 N4k B4 $v $($F --device cuda --kernel $W/$v/fa_fwd_sm90a_f8E4M3FN_d128_causal.json --b 4 --hq 16 --hkv 16 --m 4096 --n 4096 --bench --iters 20 2>&1 | grep -o '[0-9.]* TFLOP/s')"
done; echo "   ($((SECONDS - start)) s)"
