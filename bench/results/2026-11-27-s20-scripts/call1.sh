# Twentieth session, call 1: the sm_80 D256 backward on 64 x 64 with LSE/D
# predicated and a step ahead (and dQ before dK), beside HEAD's 32 x 64 and
# FA2/cuDNN; the predicated row loads on every other backward cell (sm_80
# D64/D128, sm_90a D128/D256); e4m3 D128 causal with the unmasked split.
set -o pipefail; export PYTHONUNBUFFERED=1; W=scratch/s20; F=build-gpu/bin/fa-run
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
L=build-gpu/runtime/libfa_runtime.so; start=$SECONDS
echo "== verify"
jobs=()
for v in new32 new64 dq64; do for k in $W/$v/fa_bwd_*.json; do
  n=$(basename $k .json); fwd=$W/base/${n/fa_bwd_/fa_fwd_}.json
  sizes="113x203 1023x1024"; [[ $n == *d256* ]] && sizes="1x1 113x203 128x217 1023x1024 4096x4096"
  for size in $sizes; do for heads in "mha bhsd --hq 4 --hkv 4" "gqa bshd --hq 8 --hkv 2"; do
    set -- ${size/x/ } $heads; m=$1; nn=$2; kind=$3; lay=$4; shift 4; b=2
    [ $m = 4096 ] && { b=1; set -- --hq 2 --hkv 1; }
    jobs+=("$F --device cuda --kernel $fwd --bwd-kernel $k --bwd --b $b $* --m $m --n $nn --layout $lay --seed $RANDOM --verify # $v/$n $size $kind")
  done; done
done; done
printf '%s\n' "${jobs[@]}" > /tmp/jobs.txt
xargs -d '\n' -P 4 -I{} bash $W/runjob.sh {} < /tmp/jobs.txt > /tmp/vres.txt
grep -v '^OK' /tmp/vres.txt
echo "verified $(grep -c '^OK' /tmp/vres.txt) / $(wc -l < /tmp/jobs.txt) ($((SECONDS - start)) s)"
echo "== sanitizers (new64, dq64 D256 causal 113x203)"
for v in new64 dq64; do k=$W/$v/fa_bwd_sm80_bf16_d256_causal.json
  for tool in memcheck racecheck; do
    echo "$v $tool: $(compute-sanitizer --tool $tool $F --device cuda --kernel $W/base/fa_fwd_sm80_bf16_d256_causal.json --bwd-kernel $k --bwd --b 1 --hq 2 --hkv 1 --m 113 --n 203 --verify 2>&1 | grep -E 'ERROR SUMMARY|verdict' | tr '\n' ' ')"
  done; done
echo "== e4m3 D128 causal: split vs HEAD"
for sz in "113 203" "1023 1024" "4096 4096"; do set -- $sz
  echo "split $1x$2: $(timeout 60 $F --device cuda --kernel $W/fp8split/fa_fwd_sm90a_f8E4M3FN_d128_causal.json --b 2 --hq 8 --hkv 2 --m $1 --n $2 --layout bshd --verify 2>&1 | grep verdict)"; done
for round in 1 2; do for d in $W/fp8base $W/fp8split; do
  r=$(timeout 100 ncu --metrics sm__cycles_elapsed.max -k regex:fa_fwd --launch-skip 2 --launch-count 1 $F --device cuda --kernel $d/fa_fwd_sm90a_f8E4M3FN_d128_causal.json --b 2 --hq 16 --hkv 16 --m 8192 --n 8192 --bench --iters 3 2>&1 | grep -E '^\s+sm__' | awk '{print $NF}')
  echo "ncu $round $d $r"; done; done
for round in 1 2 3; do for d in $W/fp8base $W/fp8split; do
  echo "bench $round $d $($F --device cuda --kernel $d/fa_fwd_sm90a_f8E4M3FN_d128_causal.json --b 2 --hq 16 --hkv 16 --m 8192 --n 8192 --bench --iters 30 2>&1 | grep -o '[0-9.]* TFLOP/s')"; done; done
echo "done ($((SECONDS - start)) s)"
