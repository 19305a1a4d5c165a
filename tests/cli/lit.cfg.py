# lit configuration for Fly's command-line tests (tests/cli/*.test).
#
# RUN lines call the tools by name (flyc, fly-layout, FileCheck, not): the build's
# bin/ directory and LLVM's tool directory go first on PATH, so a test always
# runs the tools of the tree it was configured in.
import os

import lit.formats

config.name = "fly-cli"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".test"]

# Set by lit.site.cfg.py in the build tree; lit must be pointed there, not here.
if not hasattr(config, "fly_bin_dir"):
    lit_config.fatal("run lit on the build tree (build/tests/cli), not the source tree")

config.test_source_root = config.fly_source_dir
config.test_exec_root = config.fly_exec_dir

path = [config.fly_bin_dir, config.llvm_tools_dir, config.environment.get("PATH", "")]
config.environment["PATH"] = os.pathsep.join(path)

config.substitutions.append(("%fly_version", config.fly_version))
import sys
config.substitutions.append(("%python", sys.executable))

# flyc compile keeps a disk cache; tests run without it, so that each really
# compiles, unless they turn it on in a directory of their own (cache.test).
# Never the user's cache.
config.environment["FLYC_CACHE"] = "0"
config.environment["FLYC_CACHE_DIR"] = os.path.join(config.fly_exec_dir, "Output", "flyc-cache")
config.environment.pop("FLYC_TARGET", None)

# Tests for tools that are not built yet are skipped, not failed.
if os.path.exists(os.path.join(config.fly_bin_dir, "fly-layout")):
    config.available_features.add("fly-layout")

# flyc compile: the Fly dialect's IRDL file, for `mlir-opt --irdl-file`, and
# the example kernels.
config.substitutions.append(
    ("%fly_dialect", os.path.join(config.fly_source_dir, "..", "..", "lower", "fly.irdl.mlir")))
config.substitutions.append(
    ("%examples", os.path.join(config.fly_source_dir, "..", "..", "examples")))
# The back end flyc opens (cache.test copies it to stand for another build).
config.substitutions.append(
    ("%flyc_lower", os.path.join(config.fly_bin_dir, "..", "lib", "libflyc_lower.so")))

# ptxas (CUDA) checks the PTX flyc writes, where it is installed.
import shutil
ptxas = shutil.which("ptxas") or (
    "/usr/local/cuda/bin/ptxas" if os.path.exists("/usr/local/cuda/bin/ptxas") else None)
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))

# A GPU the CUDA driver can reach: `flyc run` launches kernels there, so the
# tests that expect it to stop with "no GPU" are UNSUPPORTED.
import ctypes
try:
    ctypes.CDLL("libcuda.so.1")
    config.available_features.add("gpu")
except OSError:
    pass
