# -*- Python -*-
# lit configuration for accel: every .mlir file under test/ is a test.
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "accel"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["unit", "fixtures", "CMakeLists.txt", "lit.cfg.py",
                   "lit.site.cfg.py", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.accel_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%fixtures", os.path.join(config.accel_src_root, "test", "fixtures")))
llvm_config.use_default_substitutions()

llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
tool_dirs = [config.accel_tools_dir, config.llvm_tools_dir]
tools = ["accel-opt", "accelc", "accel-run"]
llvm_config.add_tool_substitutions(tools, tool_dirs)
