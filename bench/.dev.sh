FA_VERIFY_FILTER=sm90a bash bench/run.sh --steps 24 --chip sm90a --quick --baseline bench/baseline/sm90a-v2 > $OUT/run.log 2>&1
grep -E "FAIL|verify:" $OUT/run.log | head -20; grep -A3 "FAIL" $OUT/run.log | head -12
R=build-gpu/bin/fa-run
for k in kernels_generated/fa_fwd_sm90a_bf16_d64_causal kernels_generated/fa_fwd_sm90a_bf16_d128_none bench/feature-kernels/fa_fwd_sm90a_bf16_d112_dv160_none bench/feature-kernels/fa_fwd_sm90a_bf16_d96_win64_16_cap_alibi; do for tool in memcheck racecheck synccheck; do for args in "--b 1 --m 64 --n 64" "--b 2 --m 113 --n 203 --hq 4 --hkv 2 --layout bshd" "--b 1 --m 300 --n 700 --hq 2 --hkv 1"; do timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $R --device cuda --kernel $k.json $args --verify > $OUT/san.log 2>&1; echo "$(basename $k) $tool [$args] rc=$? $(grep -o 'ERROR SUMMARY: [0-9]* errors\|RACECHECK SUMMARY: [0-9]* hazards displayed ([0-9]* errors' $OUT/san.log | head -1)"; done; done; done > $OUT/san-summary.txt 2>&1
echo "sanitizers clean: $(grep -c 'rc=0' $OUT/san-summary.txt) of $(wc -l < $OUT/san-summary.txt)"; grep -v "rc=0" $OUT/san-summary.txt | head -5
sed -n '/== 4/,$p' $OUT/run.log | grep "^d="
