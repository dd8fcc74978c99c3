# Twenty-third session, call 2: call 1's synccheck (8 errors) and racecheck
# (16 hazards) on the e4m3 D256 causal kernel at HEAD: which revision
# brought them (c929eaf: O from registers; 24b19ec: O over V's staging;
# HEAD 466594f+: with the warpgroup sync), and do the other kernels show
# them. Full sanitizer reports, first lines.
set -o pipefail; F=build-gpu/bin/fa-run; S=scratch/s23/san
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
A="--b 2 --hq 4 --hkv 2 --m 300 --n 500"
for k in $S/c929eaf_d256_causal $S/24b19ec_d256_causal kernels_generated/fa_fwd_sm90a_f8E4M3FN_d256_causal $S/24b19ec_d256_none kernels_generated/fa_fwd_sm90a_f8E4M3FN_d256_none kernels_generated/fa_fwd_sm90a_f8E4M3FN_d128_causal kernels_generated/fa_fwd_sm90a_bf16_d256_causal; do
  for tool in synccheck racecheck; do
    timeout 150 compute-sanitizer --tool $tool $F --device cuda --kernel $k.json $A --verify > /tmp/san.log 2>&1
    echo "== $tool $(basename $k): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|verdict' /tmp/san.log | tr '\n' ' ')"
    grep -vE "^\s*$|verdict|max_abs|rows checked|Saved host|=========\s+Host Frame|=========\s+in /" /tmp/san.log | grep "=====" | head -24 | cut -c1-220
  done; done
echo "== single-group sizes (m 1, m 64)"
for m in 1 64 129; do echo "synccheck HEAD d256 causal m=$m: $(timeout 100 compute-sanitizer --tool synccheck $F --device cuda --kernel kernels_generated/fa_fwd_sm90a_f8E4M3FN_d256_causal.json --b 1 --hq 1 --hkv 1 --m $m --n 500 --verify 2>&1 | grep -E 'ERROR SUMMARY|verdict' | tr '\n' ' ')"; done
