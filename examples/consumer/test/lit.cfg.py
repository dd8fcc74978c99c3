# The consumer's lit suite: consumer-opt and FileCheck from the build.
import os

import lit.formats

config.name = "fa-mlir-consumer"
config.test_format = lit.formats.ShTest(True)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.consumer_binary_dir, "test")
config.substitutions.append(("consumer-opt", config.consumer_opt))
config.substitutions.append(("FileCheck", config.filecheck))
