#!/usr/bin/env python3
"""The whole GPU check: every kernel through the C API, the Python binding and
`flyc run`, then the benchmark table.

    python3 tests/gpu/run.py --artifacts build/gpu [--log DIR] [--no-bench]

ARTIFACTS is what the build gathers in build/gpu (tests/gpu/CMakeLists.txt):
the bundles (and in ops/ those of the golden operation tests, whose `// GPU:`
checks run_ops.py runs), libflyrt.so, flyc and flyrt_check. Nothing is compiled here, so
the GPU machine needs neither MLIR nor a compiler. Each part prints lines
"ok ..." / "FAIL ..." and figures as "bench NAME VALUE UNIT"; this script
runs them in turn, keeps their output (under --log, one file each), and ends
with one table. Exit status: 0 all passed, 1 a failure, 77 no GPU (each part
then says so and nothing runs).
"""
import argparse
import ctypes
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SKIPPED = 77


def have_gpu():
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    count = ctypes.c_int(0)
    return cuda.cuInit(0) == 0 and cuda.cuDeviceGetCount(ctypes.byref(count)) == 0 and count.value > 0


def run_part(name, argv, env, log_dir):
    """Runs one part; returns (status, its bench figures)."""
    print(f"==== {name}: {' '.join(argv)}", flush=True)
    start = time.time()
    p = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = p.stdout
    sys.stdout.write(out)
    print(f"==== {name}: exit {p.returncode} after {time.time() - start:.1f} s", flush=True)
    if log_dir:
        with open(os.path.join(log_dir, f"{name}.log"), "w") as f:
            f.write(out)
    figures = {}
    for m in re.finditer(r"^bench (\S+) (\S+) ?(.*)$", out, re.M):
        figures[m.group(1)] = (float(m.group(2)), m.group(3))
    return p.returncode, figures


def table(fig):
    """The figures the issue asks for, with ratios where both sides ran."""
    def get(key):
        return fig[key][0] if key in fig else None

    rows = []

    def row(what, value, unit, goal=""):
        if value is not None:
            rows.append((what, f"{value:.3f}" if value < 100 else f"{value:.1f}", unit, goal))

    row("empty kernel launch, C API", get("c_launch_us"), "us", "<= 4")
    row("empty kernel launch, cuLaunchKernel itself", get("driver_launch_us"), "us")
    row("empty kernel launch, C API, batches of 200", get("c_launch_short_us"), "us")
    row("cuLaunchKernel itself, batches of 200", get("driver_launch_short_us"), "us")
    row("empty kernel launch, Python", get("python_launch_us"), "us", "<= 8")
    row("vector add launch (3 tensors), Python", get("python_vadd_launch_us"), "us")
    row("torch.add launch, 1 element", get("torch_add_launch_us"), "us")
    row("vector add 2^28 f32, C API", get("c_vadd_gbs"), "GB/s")
    row("device-to-device copy, same bytes", get("c_copy_gbs"), "GB/s")
    row("vector add / copy", get("c_vadd_over_copy"), "ratio", ">= 0.95")
    py, torch_add = get("python_vadd_gbs"), get("torch_add_gbs")
    row("vector add 2^28 f32, Python", py, "GB/s")
    row("torch.add 2^28 f32", torch_add, "GB/s")
    if py and torch_add:
        row("vector add (Python) / torch.add", py / torch_add, "ratio")
    if get("c_vadd_gbs") and torch_add:
        row("vector add (C) / torch.add", get("c_vadd_gbs") / torch_add, "ratio")
    known = {"c_launch_us", "driver_launch_us", "c_launch_short_us", "driver_launch_short_us",
             "python_launch_us", "python_vadd_launch_us", "torch_add_launch_us", "c_vadd_gbs",
             "c_copy_gbs", "c_vadd_over_copy", "python_vadd_gbs", "torch_add_gbs",
             "python_vadd_over_torch"}
    for key in sorted(set(fig) - known):
        row(key, fig[key][0], fig[key][1])
    width = max((len(r[0]) for r in rows), default=10)
    print(f"\n{'measure':<{width}}  {'value':>10}  {'unit':<6}  goal")
    for what, value, unit, goal in rows:
        print(f"{what:<{width}}  {value:>10}  {unit:<6}  {goal}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--artifacts", required=True)
    ap.add_argument("--log", help="a folder for each part's full output")
    ap.add_argument("--no-bench", action="store_true")
    args = ap.parse_args()
    art = os.path.abspath(args.artifacts)
    if not have_gpu():
        print("no GPU (no CUDA driver, or no device): skipped")
        return SKIPPED
    if args.log:
        os.makedirs(args.log, exist_ok=True)
    env = dict(os.environ)
    env["FLYRT_LIBRARY"] = os.path.join(art, "libflyrt.so")
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(REPO, "runtime", "python"), env.get("PYTHONPATH", "")])
    env["FLYC"] = os.path.join(art, "flyc")
    env["FLYC_CACHE"] = "0"
    bench = [] if args.no_bench else ["--bench"]
    parts = [
        ("c_api", [os.path.join(art, "flyrt_check"), art] + bench),
        ("python", [sys.executable, os.path.join(HERE, "python_checks.py"), "--artifacts", art]
         + (["--no-bench"] if args.no_bench else [])),
        ("flyc_run", ["bash", os.path.join(HERE, "flyc_run_checks.sh"), art]),
        ("ops", [sys.executable, os.path.join(HERE, "run_ops.py"), "--artifacts", art]),
        ("shapes", [sys.executable, os.path.join(HERE, "shape_checks.py"), "--artifacts", art]),
    ]
    # The kernel library (fly.kernels), one part per family, from the bundles
    # gathered in ARTIFACTS/kernels.
    env["FLY_KERNELS_DIR"] = os.path.join(art, "kernels")
    if os.path.isdir(env["FLY_KERNELS_DIR"]):
        example = os.path.join(art, "rms_norm_c")
        gemm = os.path.join(art, "gemm_c")
        decode = os.path.join(art, "paged_decode_c")
        parts.append(("library_c", ["bash", "-c", f"{example} {env['FLY_KERNELS_DIR']} && "
                                    f"{example} {env['FLY_KERNELS_DIR']} 7 4097 && "
                                    f"{example} {env['FLY_KERNELS_DIR']} 3 65539 && "
                                    f"{gemm} {env['FLY_KERNELS_DIR']} && "
                                    f"{gemm} {env['FLY_KERNELS_DIR']} 37 258 136 && "
                                    f"{gemm} {env['FLY_KERNELS_DIR']} 300 1032 1000 && "
                                    f"{decode} {env['FLY_KERNELS_DIR']} && "
                                    f"{decode} {env['FLY_KERNELS_DIR']} 5 40 2 4097"]))
    library = os.path.join(HERE, "library")
    for check in sorted(f for f in os.listdir(library) if f.startswith("check_")):
        parts.append((f"library_{check[6:-3]}", [sys.executable, os.path.join(library, check)]))
    figures, failed = {}, []
    for name, argv in parts:
        status, fig = run_part(name, argv, env, args.log)
        figures.update(fig)
        if status not in (0, SKIPPED):
            failed.append(f"{name} (exit {status})")
    table(figures)
    if failed:
        print("\nFAILED: " + ", ".join(failed))
        return 1
    print("\nall GPU checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
