"""The kernel library's registry (kernels/registry.json): reading it and
naming specialisations. Pure Python with no imports of the package, so
that the build runs this file as a script, with no GPU and no PyTorch
(python3 runtime/python/fly/kernels/_registry.py --cmake REGISTRY)."""
from __future__ import annotations

import itertools
import json
import os
import sys
from typing import Any, Iterator


def load(path: str) -> dict[str, Any]:
    """The registry's kernels, by name, each "aot" written out as plain
    groups (a group naming a plan becomes that plan's groups, each extended
    by the group's own lists)."""
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    plans = data.get("plans", {})
    kernels = data["kernels"]
    for name, e in kernels.items():
        for key in ("file", "kernel", "consts", "aot", "targets"):
            if key not in e:
                raise ValueError(f"{path}: kernel {name!r} has no {key!r}")
        groups = []
        for g in e["aot"]:
            if "plan" not in g:
                groups.append(g)
                continue
            if g["plan"] not in plans:
                raise ValueError(f"{path}: kernel {name!r} names no plan of the registry: "
                                 f"{g['plan']!r}")
            extra = {k: v for k, v in g.items() if k != "plan"}
            groups.extend({**pg, **extra} for pg in plans[g["plan"]]["groups"])
        for g in groups:
            unknown = set(g) - set(e["consts"])
            if unknown:
                raise ValueError(f"{path}: kernel {name!r} has no const {sorted(unknown)}")
        e["aot"] = groups
    return kernels


def const_text(v: object) -> str:
    """A const's value as -D and the bundle's spec write it."""
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def spec_name(entry: dict[str, Any], consts: dict[str, Any]) -> str:
    """The specialisation's name, "T=bf16_VEC=8_CAP=512_HAS_W=true": the
    consts in the registry's order; also its bundle's file name."""
    missing = [c for c in entry["consts"] if c not in consts]
    if missing:
        raise ValueError(f"{entry['kernel']}: no value for {', '.join(missing)}")
    return "_".join(f"{c}={const_text(consts[c])}" for c in entry["consts"])


def aot_specs(entry: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every specialisation the build makes ahead of time."""
    for group in entry["aot"]:
        names = list(group)
        for values in itertools.product(*(group[n] for n in names)):
            yield dict(zip(names, values))


def aot_values(entry: dict[str, Any], const: str, **fixed: Any) -> list[Any]:
    """The values of one const among the ahead-of-time specialisations whose
    other consts include fixed (CAP's ladder for T=bf16, VEC=8), sorted."""
    values = set()
    for g in entry["aot"]:
        if const not in g:
            continue
        if all(k not in g or v in g[k] for k, v in fixed.items()):
            values.update(g[const])
    return sorted(values)


def _cmake(path: str) -> None:
    """One fly_kernel_bundle(NAME FILE SPEC TARGETS DEFINES...) line per
    specialisation, for kernels/CMakeLists.txt."""
    for name, e in load(path).items():
        for consts in aot_specs(e):
            defines = " ".join(f"-D{c}={const_text(consts[c])}" for c in e["consts"])
            print(f"fly_kernel_bundle({name} {e['file']} {e['kernel']} {spec_name(e, consts)} "
                  f"{','.join(e['targets'])} {defines})")


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "--cmake":
        sys.exit("usage: python3 _registry.py --cmake REGISTRY.json")
    _cmake(os.path.abspath(sys.argv[2]))
