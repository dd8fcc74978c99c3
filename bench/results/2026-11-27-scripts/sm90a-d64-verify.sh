set -o pipefail
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; K=kernels_generated
sizes() { echo "--b 1 --hq 1 --hkv 1 --m 1 --n 1"; echo "--b 2 --hq 4 --hkv 4 --m 113 --n 203"; echo "--b 2 --hq 4 --hkv 2 --m 100 --n 203"
  echo "--b 2 --hq 8 --hkv 2 --m 128 --n 217 --layout bshd"; echo "--b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --layout bshd"
  echo "--b 1 --hq 4 --hkv 2 --m 640 --n 200"; echo "--b 1 --hq 2 --hkv 1 --m 4096 --n 4096 --layout bshd"; echo "--b 1 --hq 2 --hkv 2 --m 4096 --n 4096"; }
{ for t in bf16 f16; do sizes | sed "s|^|--kernel $K/fa_fwd_sm90a_${t}_d64_none.json --bwd-kernel $K/fa_bwd_sm90a_${t}_d64_none.json --bwd |"; done
  for k in scratch/v64/fa_bwd_*.json; do f=${k/fa_bwd_/fa_fwd_}; echo "--kernel $f --bwd-kernel $k --bwd --b 2 --hq 4 --hkv 2 --m 300 --n 500"; echo "--kernel $f --bwd-kernel $k --bwd --b 2 --hq 4 --hkv 2 --m 113 --n 203"; done; } > /tmp/jobs
FA_PARALLEL=16 FA_JOB_TIMEOUT=240 timeout 300 bash bench/verify-parallel.sh $F "sm90a d64 verify" < /tmp/jobs
for tool in memcheck racecheck synccheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $F --device cuda --kernel $K/fa_fwd_sm90a_bf16_d64_none.json --bwd-kernel $K/fa_bwd_sm90a_bf16_d64_none.json --bwd --b 1 --hq 2 --hkv 1 --m 77 --n 131 --verify > /tmp/san.log 2>&1
  echo "  $tool: rc=$? $(grep -h 'ERROR SUMMARY' /tmp/san.log | head -1)"; done
