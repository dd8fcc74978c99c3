# fp8 D128 (fifteenth session): stages 2 / 3 / 4, V's staging slot released
# by the consumers (coupled) or by the transpose (dec), 128 x 224.
set -o pipefail; export PYTHONUNBUFFERED=1; W=scratch/fp8z
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; start=$SECONDS
VS="base s3 s3dec s2 s2dec n224 n224dec"
{ for v in s3 s3dec s2 s2dec n224; do k=$W/$v/fa_fwd_sm90a_f8E4M3FN_d128_none.json
  spec=$(grep -o '"spec": "[^"]*"' $k | cut -d'"' -f4)
  for size in 113x203 1023x1024 4096x4096; do m=${size%x*}; n=${size#*x}
    echo "--kernel $k --spec \"$spec,descale=head\" --b 2 --hq 8 --hkv 2 --m $m --n $n --layout bshd"; done; done; } > /tmp/jobs
FA_PARALLEL=15 FA_JOB_TIMEOUT=200 timeout 240 bash bench/verify-parallel.sh $F "fp8z verify" < /tmp/jobs
echo "   ($((SECONDS - start)) s)"
for r in 1 2; do for v in $VS; do
  echo "$r d128_none $v $($F --device cuda --kernel $W/$v/fa_fwd_sm90a_f8E4M3FN_d128_none.json --b 2 --hq 16 --hkv 16 --m 8192 --n 8192 --bench --iters 20 2>&1 | grep -o '[0-9.]* TFLOP/s')"
done; echo "   ($((SECONDS - start)) s)"; done
