# -*- Python -*-
# lit configuration for fa-mlir's FileCheck tests.

import os
import shutil

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "FA"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.fa_obj_root, "test")
config.excludes = ["Inputs", "CMakeLists.txt", "README.txt", "lit.cfg.py",
                   "lit.site.cfg.py", "expect_exit.py", "check_dump.py"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%fa_src_root", config.fa_src_root))
config.substitutions.append(("%fa_obj_root", config.fa_obj_root))
config.substitutions.append(("%fa_tools_dir", config.fa_tools_dir))
config.substitutions.append(
    ("%expect-exit", "python3 " + os.path.join(config.fa_src_root, "test",
                                               "Integration", "expect_exit.py")))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

# Undefined FileCheck variables from an earlier CHECK-LABEL block must not leak.
config.environment["FILECHECK_OPTS"] = "--enable-var-scope"

llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
tool_dirs = [config.fa_tools_dir, config.llvm_tools_dir]
tools = ["fa-opt", "fa-run", "fa-compile", "fa-capi-test", "mlir-runner"]
llvm_config.add_tool_substitutions(tools, tool_dirs)
# mlir-runner's support library (printing), beside LLVM's tools.
config.substitutions.append(
    ("%mlir_c_runner_utils",
     os.path.join(os.path.dirname(config.llvm_tools_dir), "lib",
                  "libmlir_c_runner_utils.so")))

# GPU tests run only where a CUDA device answers (the device machine).
if shutil.which("nvidia-smi") and os.system("nvidia-smi -L >/dev/null 2>&1") == 0:
    config.available_features.add("cuda-device")
# ptxas checks run wherever the CUDA toolkit is installed.
ptxas = os.path.join(config.cuda_root or "/usr/local/cuda", "bin", "ptxas")
config.substitutions.append(("%cuda_root", config.cuda_root or "/usr/local/cuda"))
if os.path.exists(ptxas):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
