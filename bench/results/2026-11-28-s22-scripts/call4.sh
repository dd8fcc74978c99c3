# Twenty-second session, calls 4 and 5: e4m3 D$D with O staged in shared
# memory and stored by TMA ($W/new; call 4: D128, O in its own region,
# scratch/o22; call 5: D=256 W=scratch/o23, O over V's staging ring)
# against HEAD's 4-byte stores ($W/base): verify, sanitizers, ncu cycles,
# --bench.
set -o pipefail; export PYTHONUNBUFFERED=1; W=${W:-scratch/o22}; D=${D:-128}; F=build-gpu/bin/fa-run
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
start=$SECONDS
for m in none causal; do k=$W/new/fa_fwd_sm90a_f8E4M3FN_d${D}_$m.json
  spec=$(grep -o '"spec": "[^"]*"' $k | cut -d'"' -f4)
  for size in 1x1 113x203 128x217 300x500 1023x1024 4096x4096; do mm=${size%x*}; nn=${size#*x}
    echo "--kernel $k --spec \"$spec,descale=tensor\" --b 2 --hq 4 --hkv 4 --m $mm --n $nn --layout bhsd"
    echo "--kernel $k --spec \"$spec,descale=head\" --b 2 --hq 8 --hkv 2 --m $mm --n $nn --layout bshd"
  done; done | FA_PARALLEL=16 FA_JOB_TIMEOUT=200 timeout 260 bash bench/verify-parallel.sh $F "verify"
echo "   ($((SECONDS - start)) s)"
k=$W/new/fa_fwd_sm90a_f8E4M3FN_d${D}_none.json
for tool in memcheck racecheck synccheck; do
  echo "$tool: $(timeout 90 compute-sanitizer --tool $tool $F --device cuda --kernel $k --b 1 --hq 2 --hkv 2 --m 300 --n 500 --verify 2>&1 | grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|verdict' | tr '\n' ' ')"; done
echo "memcheck causal 1023: $(timeout 90 compute-sanitizer --tool memcheck $F --device cuda --kernel $W/new/fa_fwd_sm90a_f8E4M3FN_d${D}_causal.json --b 1 --hq 2 --hkv 2 --m 1023 --n 1024 --layout bshd --verify 2>&1 | grep -E 'ERROR SUMMARY|verdict' | tr '\n' ' ')"
echo "   ($((SECONDS - start)) s)"
for round in 1 2; do for m in none causal; do for v in base new; do
  r=$(timeout 60 ncu --metrics sm__cycles_elapsed.max -k regex:fa_fwd --launch-skip 2 --launch-count 1 $F --device cuda --kernel $W/$v/fa_fwd_sm90a_f8E4M3FN_d${D}_$m.json --b 2 --hq 16 --hkv 16 --m 8192 --n 8192 --bench --iters 3 2>&1 | grep -E '^\s+sm__' | awk '{print $NF}')
  echo "ncu $round $m $v $r"; done; done; done
echo "   ($((SECONDS - start)) s)"
for round in 1 2; do for m in none causal; do for v in base new; do
  echo "bench $round $m $v $(timeout 40 $F --device cuda --kernel $W/$v/fa_fwd_sm90a_f8E4M3FN_d${D}_$m.json --b 2 --hq 16 --hkv 16 --m 8192 --n 8192 --bench --iters 30 2>&1 | grep -o '[0-9.]* TFLOP/s')"; done; done; done
echo "done ($((SECONDS - start)) s)"
