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
# test/Serve/serve-soak.test: a longer run, or a failure's seed again.
for var in ("ACCEL_SOAK_SECONDS", "ACCEL_SOAK_SEED"):
    if os.environ.get(var):
        config.environment[var] = os.environ[var]

llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
tool_dirs = [config.accel_tools_dir, config.llvm_tools_dir]
tools = ["accel-opt", "accelc", "accel-run", "accel-bench"]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# lib/Codegen: PTX needs the CUDA toolkit's libdevice (feature `libdevice`);
# assembling it needs ptxas (feature `ptxas`, substitution %ptxas).
cuda_path = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
if os.path.exists(os.path.join(cuda_path, "nvvm", "libdevice", "libdevice.10.bc")):
    config.available_features.add("libdevice")
    config.substitutions.append(("%cuda_path", cuda_path))
ptxas = os.path.join(cuda_path, "bin", "ptxas")
if not os.access(ptxas, os.X_OK):
    import shutil
    ptxas = shutil.which("ptxas")
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))

# test/fixtures/checkpoints/<name>: feature `checkpoint-<name>` for each checkpoint fixture made
# (test/fixtures/export_checkpoints.py), so that a test of fixtures not made yet (the
# mixture-of-experts ones, test/Plan/score-checkpoint-mixtral.test) is UNSUPPORTED, not failing.
_ckpts = os.path.join(config.accel_src_root, "test", "fixtures", "checkpoints")
if os.path.isdir(_ckpts):
    for _name in os.listdir(_ckpts):
        if os.path.exists(os.path.join(_ckpts, _name, "config.json")) and \
                os.path.exists(os.path.join(_ckpts, _name, "logits.npy")):
            config.available_features.add("checkpoint-" + _name)
