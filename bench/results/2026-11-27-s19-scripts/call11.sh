mkdir -p $OUT
bash bench/verify-fp8.sh --steps 23 > $OUT/verify.log 2>&1; grep -E "passed|caught|hash" $OUT/verify.log | head; echo "sanitizer lines: $(grep -c clean $OUT/verify.log) clean, $(grep -ci 'error' $OUT/verify.log) error-lines"
FA3_BENCH=scratch/fa3/fa3_bench bash bench/verify-fp8.sh --steps 4 > $OUT/step4.log 2>&1; grep TFLOP $OUT/step4.log | wc -l
