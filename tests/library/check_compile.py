#!/usr/bin/env python3
"""Every kernel of the library compiles for sm_80, sm_90, gfx942 and gfx950,
and its code is what the kernel promises, read off the assembly:

* 16-byte global loads (ld.global.v4 / ld.global.nc.v4 on NVIDIA,
  global_load_dwordx4 or buffer_load_dwordx4 on AMD) wherever the
  specialisation's VEC elements are 16 bytes;
* no local memory on NVIDIA (no .local in the PTX; with ptxas present, `ptxas
  -v` reports no spill stores and no stack frame) and no scratch on AMD
  (.private_segment_fixed_size 0);
* the instructions a kernel's registry entry lists in "ptx_has" (the GEMM's
  wgmma, TMA, mbarrier and setmaxnreg; "{T}" in one stands for const T's
  type as PTX names it, so scaled_mm's "f32.{T}.{TB}" is its wgmma's
  operand types, f32.e5m2.e4m3 for T=f8e5m2, TB=f8e4m3), and no wgmma
  serialised by ptxas;
* on AMD, the instructions of "gcn_has" (the same, the type as the
  instruction names it: v_mfma_f32_16x16x16_{T}), and "gcn_count": how many
  times an instruction occurs, a Python expression of the consts and
  `target` (the MFMAs of a fully unrolled step equal to its tile's
  arithmetic, on each chip's atoms); and "gcn_waves",
  the waves a SIMD the kernel declares (waves_per_eu): its registers, read
  off the code object's metadata (.vgpr_count + .agpr_count, one file of
  512 a lane on CDNA), leave room for that many; "gcn_loop": counts in
  the hot loop, the largest natural loop of the control flow
  (tests/cli/compile/hot_loop.py), its expressions seeing BYTES (T's size).

    check_compile.py FLYC [--all] [--kernel NAME]

The specialisations checked are, for each kernel and each combination of its
consts other than CAP, the smallest, a middle and the largest CAP of its
ahead-of-time list (every one with --all); kernels without CAP, all of them.
A target a kernel does not list (fp8 where sm_80 has none) is skipped; a
kernel's "check_targets" replace the four (the GEMM: sm_90a). Exit
status 0 when all hold, 1 otherwise.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "runtime", "python"))
from fly.kernels import _registry  # noqa: E402

sys.path.insert(0, os.path.join(REPO, "tests", "cli", "compile"))
from hot_loop import hot_loop  # noqa: E402

TARGETS = ["sm_80", "sm_90", "gfx942", "gfx950"]
BYTES = {"bf16": 2, "f16": 2, "f32": 4, "f64": 8, "i8": 1, "f8e4m3": 1, "f8e5m2": 1,
         "f8e4m3fnuz": 1, "f8e5m2fnuz": 1}
# A type as PTX's instruction suffixes name it ("{T}" in ptx_has).
PTX_TYPES = {"f8e4m3": "e4m3", "f8e5m2": "e5m2"}
WIDE_NV = re.compile(r"^\s*ld\.global(\.nc)?(\.L\d::\w+)*\.v4\.(b32|u32|f32|s32)|"
                     r"^\s*ld\.global(\.nc)?(\.L\d::\w+)*\.v2\.(b64|u64|f64)", re.M)
WIDE_AMD = re.compile(r"^\s*(global_load_dwordx4|buffer_load_dwordx4|global_load_b128)", re.M)


def with_consts(text: str, consts: dict) -> str:
    """text with each {C} replaced by const C's value, a type as PTX names it."""
    def value(m: re.Match) -> str:
        v = _registry.const_text(consts[m.group(1)])
        return PTX_TYPES.get(v, v)
    return re.sub(r"\{(\w+)\}", value, text)


def chosen(entry: dict, everything: bool) -> list[dict]:
    specs = list(_registry.aot_specs(entry))
    if everything or "CAP" not in entry["consts"]:
        return specs
    groups: dict[tuple, list[dict]] = {}
    for s in specs:
        groups.setdefault(tuple((k, v) for k, v in s.items() if k != "CAP"), []).append(s)
    out = []
    for g in groups.values():
        g.sort(key=lambda s: s["CAP"])
        for i in sorted({0, len(g) // 2, len(g) - 1}):
            out.append(g[i])
    return out


def targets_of(entry: dict, consts: dict) -> list[str]:
    """The targets to check: those of the registry, or all four where it
    lists only NVIDIA ones (AMD is compile-checked, not shipped)."""
    listed = entry.get("check_targets") or TARGETS
    if any(t.startswith("sm_") for t in listed) and not entry.get("check_targets"):
        listed = [t for t in TARGETS if not t.startswith("sm_") or t in entry["targets"]]
    return listed


def check_one(flyc: str, ptxas: str | None, name: str, entry: dict, consts: dict,
              target: str) -> list[str]:
    """The failures of one specialisation on one target."""
    src = os.path.join(REPO, "kernels", entry["file"])
    defines = [f"-D{c}={_registry.const_text(consts[c])}" for c in entry["consts"]]
    what = f"{name} {_registry.spec_name(entry, consts)} @{target}"
    p = subprocess.run([flyc, "compile", src, "--emit=asm", f"--target={target}",
                        f"--kernel={entry['kernel']}", *defines, "-o", "-"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode:
        return [f"{what}: does not compile:\n{p.stderr}"]
    asm = p.stdout
    fails = []
    t, vec = consts.get("T"), consts.get("VEC")
    wide = entry.get("wide_loads", True) and t in BYTES and vec and BYTES[t] * vec == 16
    if target.startswith("sm_"):
        if wide and not WIDE_NV.search(asm):
            fails.append(f"{what}: no 16-byte global load (ld.global.v4) in the PTX")
        if re.search(r"\.local\b|__local_depot", asm):
            fails.append(f"{what}: the PTX uses local memory")
        for want in entry.get("ptx_has", []):
            want = with_consts(want, consts)
            if want not in asm:
                fails.append(f"{what}: no {want} in the PTX")
        if ptxas:
            with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
                f.write(asm)
            try:
                q = subprocess.run([ptxas, f"-arch={target}", "-v", f.name, "-o", os.devnull],
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            finally:
                os.unlink(f.name)
            if q.returncode:
                fails.append(f"{what}: ptxas refuses the PTX:\n{q.stdout}")
            m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores", q.stdout)
            if m and (int(m.group(1)) or int(m.group(2))):
                fails.append(f"{what}: ptxas -v: {m.group(0)}")
            # wgmma's accumulators touched while an MMA is in flight: ptxas
            # then serialises the MMAs (its note C7514).
            if "wgmma.mma_async instructions are serialized" in q.stdout:
                fails.append(f"{what}: ptxas serialises the wgmma MMAs:\n{q.stdout}")
    else:
        if wide and not WIDE_AMD.search(asm):
            fails.append(f"{what}: no 16-byte global load (global_load_dwordx4) in the GCN")
        m = re.search(r"\.private_segment_fixed_size:\s*(\d+)", asm)
        if not m or int(m.group(1)):
            fails.append(f"{what}: scratch memory ({m.group(0) if m else 'no segment size'})")
        for want in entry.get("gcn_has", []):
            want = with_consts(want, consts)
            if want not in asm:
                fails.append(f"{what}: no {want} in the GCN")
        waves = entry.get("gcn_waves")
        if waves:
            v = re.search(r"\.vgpr_count:\s*(\d+)", asm)
            a = re.search(r"\.agpr_count:\s*(\d+)", asm)
            regs = int(v.group(1)) + (int(a.group(1)) if a else 0) if v else None
            if regs is None or regs > 512 // waves:
                fails.append(f"{what}: {regs} VGPRs and AGPRs a lane, more than {waves} waves "
                             f"a SIMD leave ({512 // waves})")
        for insn, expr in entry.get("gcn_count", {}).items():
            n = eval(expr, {"__builtins__": {}}, {**consts, "target": target})
            got = len(re.findall(r"^\s*" + re.escape(insn), asm, re.M))
            if got != n:
                fails.append(f"{what}: {got} {insn} in the GCN, not {expr} = {n}")
        loop = hot_loop(asm.splitlines()) if entry.get("gcn_loop") else []
        for insn, expr in entry.get("gcn_loop", {}).items():
            n = eval(expr, {"__builtins__": {}},
                     {**consts, "target": target, "BYTES": BYTES.get(t, 0)})
            got = sum(1 for line in loop if re.match(r"^\s*" + re.escape(insn), line))
            if got != n:
                fails.append(f"{what}: {got} {insn} in the hot loop, not {expr} = {n}")
    return fails


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("flyc")
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--kernel", action="append", default=[])
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = ap.parse_args()
    ptxas = os.environ.get("FLYC_PTXAS") or shutil.which("ptxas")
    if ptxas is None and os.path.exists("/usr/local/cuda/bin/ptxas"):
        ptxas = "/usr/local/cuda/bin/ptxas"
    registry = _registry.load(os.path.join(REPO, "kernels", "registry.json"))
    jobs = []
    for name, entry in registry.items():
        if args.kernel and name not in args.kernel:
            continue
        for consts in chosen(entry, args.all):
            for target in targets_of(entry, consts):
                jobs.append((name, entry, consts, target))
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        results = list(pool.map(lambda j: check_one(args.flyc, ptxas, *j), jobs))
    fails = [f for r in results for f in r]
    for f in fails:
        print(f"FAIL {f}")
    print(f"{len(jobs) - sum(1 for r in results if r)} of {len(jobs)} compilations checked clean"
          f" ({'with' if ptxas else 'without'} ptxas)")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
