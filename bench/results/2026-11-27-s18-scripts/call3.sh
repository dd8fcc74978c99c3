set -o pipefail
scratch/fa3/fa3_bench --check --d 256 | tail -3 || echo "fa3 D256 check FAILED"
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv,noheader -lms 1000 > $OUT/clocks.csv &
SMI=$!
FA3_BENCH=scratch/fa3/fa3_bench bash bench/verify-fp8.sh --steps 4
kill $SMI
awk -F', ' '{print $2}' $OUT/clocks.csv | sort | uniq -c | sort -rn | head -8
