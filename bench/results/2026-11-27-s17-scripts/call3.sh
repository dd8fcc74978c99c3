# Seventeenth session, call 3 (device): (a) the SASS of FlashAttention-3's
# fp8 / bf16 D128 forward (compiled here from its sources with nvcc 13.0,
# scratch/fa3; where does ptxas put its P·V wait?) beside ours; (b) the
# sm_90a D256 backward with its unmasked Q blocks in a loop of their own
# (splitsUnmaskedQueryBlocks): verify, negative control, sanitizers,
# deterministic bit-identity.
#   run(carry=["scratch/s17"], command="bash bench/results/2026-11-27-s17-scripts/call3.sh 2>&1 | tee $OUT/log")
set -o pipefail; export PYTHONUNBUFFERED=1; W=scratch/s17
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; start=$SECONDS
for p in $W/ours/*.ptx; do ptxas -arch=sm_90a $p -o ${p%.ptx}.cubin; done
mkdir -p $OUT/sass
for c in $W/fa3/*.cubin $W/ours/*.cubin; do cuobjdump -sass $c > $OUT/sass/$(basename ${c%.cubin}).sass
  python3 $W/sass_order.py $c | grep -o 'B G[0-9].*' | cut -c1-400 | sed "s|^|$(basename $c): |"; done
echo "== bwd D256 verify ($((SECONDS - start)) s)"
{ for fwd in $W/bwd/new/fa_fwd_*.json; do
  for size in 1x1 113x203 128x217 1023x1024 4096x4096; do m=${size%x*}; n=${size#*x}
    if [ $m = 4096 ]; then echo "--kernel $fwd --bwd --b 1 --hq 2 --hkv 1 --m $m --n $n --layout bshd"
    else echo "--kernel $fwd --bwd --b 2 --hq 4 --hkv 4 --m $m --n $n --layout bhsd"
      echo "--kernel $fwd --bwd --b 2 --hq 8 --hkv 2 --m $m --n $n --layout bshd"; fi
  done; done; } > /tmp/jobs
FA_PARALLEL=12 FA_JOB_TIMEOUT=240 timeout 300 bash bench/verify-parallel.sh $F "bwd D256 split verify" < /tmp/jobs
for size in 1023x1024 4096x4096; do
  $F --device cuda --kernel $W/bwd/neg/fa_fwd_sm90a_bf16_d256_causal.json --bwd --b 1 --hq 2 --hkv 1 --m ${size%x*} --n ${size#*x} --verify > /tmp/neg.log 2>&1
  echo "negative control (one diagonal Q block unmasked) $size: rc=$? $(grep -o 'verdict: [A-Z]*' /tmp/neg.log)"; done
for k in d256_causal d256_win256_0; do for tool in memcheck racecheck synccheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $F --device cuda --kernel $W/bwd/new/fa_fwd_sm90a_bf16_$k.json --bwd --b 1 --hq 2 --hkv 1 --m 77 --n 331 --verify > /tmp/san.log 2>&1
  echo "  $tool $k: rc=$? $(grep -h 'ERROR SUMMARY' /tmp/san.log | head -1)"; done; done
$F --device cuda --kernel $W/bwd/new/fa_fwd_sm90a_bf16_d256_causal.json --bwd-kernel $W/bwd/new/fa_bwd_sm90a_bf16_d256_causal_det.json --bwd --deterministic --verify --b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --layout bshd 2>&1 | grep -E '^deterministic|verdict' | tr '\n' ' '; echo
echo "   ($((SECONDS - start)) s)"
