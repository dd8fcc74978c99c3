#!/usr/bin/env bash
# Where are a kernel's local-memory accesses? Prints each LDL/STL with its
# SASS line, and the lines of the backward branches (loop back-edges), so
# one can see whether spills sit inside the KV loop. GPU machine (cuobjdump).
# Usage: bash bench/sass-spills.sh kernels_generated/NAME.ptx
set -eu
ptx=$1; cubin=/tmp/$(basename "$ptx" .ptx).cubin
# sm_80 PTX runs on the H100 as sm_90 SASS; sm_90a PTX needs sm_90a.
arch=sm_90; [[ "$ptx" == *sm90a* ]] && arch=sm_90a
ptxas -arch=$arch "$ptx" -o "$cubin"
cuobjdump --dump-sass "$cubin" | grep -nE "^\s+/\*[0-9a-f]+\*/" > /tmp/sass.txt
echo "instructions: $(wc -l < /tmp/sass.txt)"
echo "local memory:"; grep -E "LDL|STL" /tmp/sass.txt | sed 's/ \+/ /g' | cut -c1-100
echo "branches (BRA) with their targets:"; grep -E " BRA " /tmp/sass.txt | sed 's/ \+/ /g' | cut -c1-100
