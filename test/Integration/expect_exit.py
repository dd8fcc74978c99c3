#!/usr/bin/env python3
"""expect_exit.py CODE CMD...: run CMD, pass its output through, and succeed
only if it exits with exactly CODE (lit's `not` accepts any non-zero code)."""
import subprocess
import sys

want = int(sys.argv[1])
proc = subprocess.run(sys.argv[2:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
sys.stdout.write(proc.stdout.decode(errors="replace"))
if proc.returncode != want:
    sys.stdout.write(f"expect_exit: exit code {proc.returncode}, expected {want}\n")
    sys.exit(1)
