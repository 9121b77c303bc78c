"""Many kernels at once: `layoutproof audit DIR` or `audit A.ptx B.ptx ...`, as a compiler's test suite
calls it. Each file is one job, run here, in --jobs processes or on a Dask cluster (--scheduler), through
the campaign runner's mappers (solver.fuzz.campaign): the results come back in the files' order, so the
output is the same for every executor.

What a file is audited with: the command line's options, over those of its sidecar FILE.audit.json when it
has one (the same keys as an entry of tests/fixtures/ptx/corpus/audit.json):
    {"kernel": NAME, "tensormaps": {PARAM: DOC}, "params": {NAME: N}, "grid": [X, Y, Z],
     "block": [X, Y, Z], "cta": [X, Y, Z], "cluster": [X, Y, Z], "tensordesc_meta": [...]}
tensordesc_meta: a Triton kernel's `metadata.tensordesc_meta`; its maps are then built from it and the
descriptors' shape and stride params (solver.kernel.audit.triton), under those given as tensormaps.
"""
from __future__ import annotations

import json
import os
from typing import Callable, Iterable, Iterator, Optional

from spec.rule import SpecError, one_line, shown

RULE = "audit.tma.maps"
SIDECAR = ".audit.json"
SIDECAR_KEYS = ("kernel", "tensormaps", "params", "grid", "block", "cta", "cluster", "tensordesc_meta")
MAX_FILES = 10_000
MAX_SIDECAR_BYTES = 1 << 20


def files_of(paths: list) -> list:
    """The PTX files: each path a .ptx file, or a folder whose *.ptx files are taken (sorted)."""
    found = []
    for path in paths:
        if os.path.isdir(path):
            inside = sorted(os.path.join(path, name) for name in os.listdir(path) if name.endswith(".ptx"))
            if not inside:
                raise SpecError("file", path, "a folder with no .ptx file", RULE)
            found.extend(inside)
        elif os.path.isfile(path) or path == "-":
            found.append(path)
        else:
            raise SpecError("file", path, "no such file or folder", RULE)
        if len(found) > MAX_FILES:
            raise SpecError("file", shown(", ".join(paths)), f"more than {MAX_FILES} files", RULE)
    return found


def sidecar(path: str) -> dict:
    """FILE.audit.json beside FILE.ptx, checked (SpecError naming the key), or {}."""
    side = (path[:-len(".ptx")] if path.endswith(".ptx") else path) + SIDECAR
    if path == "-" or not os.path.isfile(side):
        return {}
    if os.path.getsize(side) > MAX_SIDECAR_BYTES:
        raise SpecError("sidecar", side, f"larger than {MAX_SIDECAR_BYTES} bytes", RULE)
    try:
        with open(side, encoding="utf-8") as handle:
            document = json.load(handle)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise SpecError("sidecar", side, f"not a JSON document ({one_line(str(error), 80)})", RULE) from None
    if not isinstance(document, dict):
        raise SpecError("sidecar", side, "expected a JSON object", RULE)
    unknown = sorted(set(document) - set(SIDECAR_KEYS) - {"file", "how"})
    if unknown:
        raise SpecError("sidecar", f"{side}: {unknown[0]}", f"keys are {', '.join(SIDECAR_KEYS)}", RULE)
    for key in ("tensormaps", "params"):
        if not isinstance(document.get(key, {}), dict):
            raise SpecError("sidecar", f"{side}: {key}", "expected an object", RULE)
    if not isinstance(document.get("tensordesc_meta", []), list):
        raise SpecError("sidecar", f"{side}: tensordesc_meta", "expected a list (Triton's metadata)", RULE)
    for key in ("grid", "block", "cta", "cluster"):
        value = document.get(key)
        if value is not None and (not isinstance(value, list) or not 1 <= len(value) <= 3
                                  or not all(isinstance(v, int) and v >= 0 for v in value)):
            raise SpecError("sidecar", f"{side}: {key}", "expected [X, Y, Z] of non-negative integers", RULE)
    return document


def job(path: str, options: dict) -> dict:
    """One file's job (plain values, for a process pool or Dask): the sidecar's settings under the command
    line's (`options`: kernel, tensormaps, params, grid, block, cta, cluster, smem_base, max_steps)."""
    merged = dict(sidecar(path))
    merged["tensormaps"] = {**merged.get("tensormaps", {}), **options.get("tensormaps", {})}
    merged["params"] = {**merged.get("params", {}), **options.get("params", {})}
    for key in ("kernel", "grid", "block", "cta", "cluster", "smem_base", "max_steps", "tensordesc_meta"):
        if options.get(key) is not None:
            merged[key] = options[key]
    merged["path"] = path
    return {key: merged.get(key) for key in ("path", *SIDECAR_KEYS, "smem_base", "max_steps")}


def audit_report(job: dict):
    """The audit of one job (solver.kernel.audit.Report); SpecError for input that cannot be read."""
    from solver.kernel.audit import audit
    from solver.kernel.concrete import executor
    from solver.kernel.frontend import source
    from solver.kernel.symbolic import evaluate
    pad = lambda shape, fill: None if shape is None else tuple(shape) + (fill,) * (3 - len(shape))
    text = source.read_text(job["path"])
    launch = executor.Launch(params=dict(job["params"] or {}), block=pad(job["block"], 1),
                             cta=pad(job["cta"], 0) or (0, 0, 0), grid=pad(job["grid"], 1),
                             cluster=pad(job["cluster"], 1))
    tensormaps = dict(job["tensormaps"] or {})
    if job.get("tensordesc_meta"):
        from solver.kernel.audit import triton
        tensormaps = {**triton.tensormaps(text, job["tensordesc_meta"], launch.params, job["kernel"]), **tensormaps}
    return audit(text, tensormaps, launch.params, launch, job["kernel"],
                 job["smem_base"] if job["smem_base"] is not None else evaluate.DEFAULT_SMEM_BASE,
                 job["max_steps"] or executor.MAX_STEPS_PER_WARP)


def audit_job(job: dict) -> dict:
    """{file, ok, kernels, error}: the audit of one job, or the one-line reason it could not be read."""
    try:
        document = audit_report(job).document()
    except SpecError as error:
        return {"file": job["path"], "ok": False, "kernels": [], "error": one_line(str(error), 300)}
    if not document["kernels"]:             # nothing silent: a file with no kernel read is no pass
        return {"file": job["path"], "ok": False, "kernels": [], "error": "no .entry read in the file"}
    return {"file": job["path"], "ok": document["ok"], "kernels": document["kernels"], "error": None}


def run(jobs: list, mapper: Optional[Callable[[Callable, Iterable], Iterator]] = None) -> Iterator[dict]:
    """Each job's result, in the jobs' order (mapper: solver.fuzz.campaign.process_mapper or dask_mapper)."""
    if mapper is None:
        for one in jobs:
            yield audit_job(one)
    else:
        yield from mapper(audit_job, jobs)


def summary(results: list) -> dict:
    kernels = [k for r in results for k in r["kernels"]]
    return {"files": len(results), "kernels": len(kernels), "ok": sum(k["ok"] for k in kernels),
            "not_ok": sum(not k["ok"] for k in kernels), "errors": sum(r["error"] is not None for r in results)}
