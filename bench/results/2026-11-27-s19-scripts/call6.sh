set -o pipefail
bash bench/verify-fp8.sh --steps 2 2>&1 | grep -E "passed|caught|negative|hash|FAIL" | grep -v "^\s*O \|LSE" | tail -8
FA3_BENCH=scratch/fa3/fa3_bench bash bench/verify-fp8.sh --steps 4 2>&1 | tail -30
