"""Fuzz target `recipe`: a TMA box, a shared-memory tile and the per-k descriptors together.

A case (spec/cases/recipe_case.py): {"dtype", "major", "mn", "k_tile", "smem_address", "tma": {"swizzle",
"boxDim", "box_count", "box_stride_bytes"}, "descriptors": [{"k_offset", "descriptor"}, ...]}.

Generation: Z3 anchors over solver/model/recipe.py's constraints (solver/fuzz/recipe_sampling.py: each of a
new shape, by blocking clauses), then samples that redraw one to three fields of an anchor (moving the
fields tied to the one changed when they were consistent, so that sampling does not break recipe rules by
accident), each kept only when spec/cases/recipe_case.py labels it with exactly the asked rules.

Labels (spec/cases/recipe_case.py): the rules broken; the outcome "refused" when the driver refuses the box
(cuTensorMapEncodeTiled) or ptxas the instruction form, "trap" when a box load traps at run time
(tma.load.coord0_16B), else "wrong-data" when some element is read from elsewhere than the boxes left
it (the witness), else "unknown" when a rule is broken without a misread we can show, else "ok".
"""
from __future__ import annotations

import random
from typing import Iterator, Optional

from spec.cases import recipe_case as spec_recipe

from solver.model import descriptor
from solver.model import recipe as model
from solver.model.vocab import swizzle_codes
from solver.fuzz import recipe_sampling as sampling
from solver.fuzz.engine import Stats, anchored, exactly
from solver.fuzz.outcome import blamed, first_found, outcome_ids, ptxas_refusal, refused_ids

RULE_IDS = model.RULE_IDS


# --- Rendering the model's values as a case ---------------------------------------------------------------
def descriptor_word(arch: str, start: int, lbo: int, sbo: int, base_offset: int, swizzle: str) -> int:
    """The 64-bit descriptor (relative LBO mode; sm100/sm103 fixed bits [46,49) = 0b001)."""
    return descriptor.pack(arch, {"start": start, "lbo": lbo, "sbo": sbo, "base_offset": base_offset,
                                  "swizzle": swizzle_codes(arch)[swizzle]})


def _starts(v: dict) -> list:
    W, E = model.ROW[model.SWIZZLES[v["tma_swizzle"]]], model.BYTES[model.DTYPES[v["dtype"]]]
    out = []
    for j in range(v["steps"]):
        if model.MAJORS[v["major"]] == "K":
            want = v["smem"] + (32 * j // W) * v["box_stride"] + (32 * j) % W
        else:
            want = v["smem"] + j * (32 // E) * W
        out.append(want + v["start_err"] + j * v["step_err"])
    return out


def case_of(v: dict) -> Optional[dict]:
    """The case of the field values; None when a field does not fit the case's encoding."""
    arch, dtype = model.ARCHES[v["arch"]], model.DTYPES[v["dtype"]]
    E = model.BYTES[dtype]
    starts = _starts(v)
    fits = lambda x: 0 <= x < model.FIELD_LIMIT and x % 16 == 0          # noqa: E731
    if not all(fits(x) for x in starts + [v["smem"], v["sbo"], v["lbo"], v["box_stride"]]) or v["inner_bytes"] % E \
            or not (v["mn"] > 0 and v["mn"] % 8 == 0):
        return None
    swizzle = model.SWIZZLES[v["desc_swizzle"]]
    kinst = 32 // E
    return {"dtype": dtype, "major": model.MAJORS[v["major"]], "mn": v["mn"], "k_tile": v["steps"] * kinst,
            "smem_address": v["smem"],
            "tma": {"swizzle": model.TMA_NAMES[v["tma_swizzle"]], "boxDim": [v["inner_bytes"] // E, v["rows"]],
                    "box_count": v["box_count"], "box_stride_bytes": v["box_stride"]},
            "descriptors": [{"k_offset": j * kinst,
                             "descriptor": f"0x{descriptor_word(arch, s, v['lbo'], v['sbo'], v['base_offset'], swizzle):016x}"}
                            for j, s in enumerate(starts)]}


# --- Labels ----------------------------------------------------------------------------------------------
def label(case: dict, arch: str, expect=None):
    """What spec says of a recipe case on `arch` (SpecError when malformed). With `expect` (a set of rule
    ids), None as soon as the broken rules are known to differ from it (the outcome is not computed)."""
    c = spec_recipe.parse_case(case, arch)
    broken = spec_recipe.violations(c)
    ids = [v.rule.id for v in broken]
    return first_found(broken, expect,
                       [("refused", lambda: blamed(broken, refused_ids(ids, arch, "driver"), by="driver",
                                                   call="cuTensorMapEncodeTiled")),
                        ("refused", lambda: ptxas_refusal(broken, arch)),
                        ("trap", lambda: blamed(broken, outcome_ids(ids, arch, "trap"), by="cp.async.bulk.tensor")),
                        ("wrong-data", lambda: spec_recipe.first_misread(c))],
                       "every element is read from where the boxes left it under spec's placement and read "
                       "map; the broken rules are not shown to misread")


# --- Sampling ----------------------------------------------------------------------------------------------
def _row(v):
    return model.ROW[model.SWIZZLES[v["tma_swizzle"]]]


def _set_tile(v: dict, mn: int, steps: int) -> None:
    """New mn / steps; rows, box_count and box_stride follow where they matched the old tile."""
    E = model.BYTES[model.DTYPES[v["dtype"]]]
    k_major = model.MAJORS[v["major"]] == "K"
    old_across = v["mn"] if k_major else v["steps"] * 32 // E
    old_along = v["steps"] * 32 if k_major else v["mn"] * E           # bytes
    new_across = mn if k_major else steps * 32 // E
    new_along = steps * 32 if k_major else mn * E
    back_to_back = v["box_stride"] == v["rows"] * _row(v)
    if v["rows"] == old_across:
        v["rows"] = new_across
    if v["box_count"] * v["inner_bytes"] == old_along and new_along % v["inner_bytes"] == 0:
        v["box_count"] = new_along // v["inner_bytes"]
    if back_to_back:
        if model.MAJORS[v["major"]] == "K" and v["tma_swizzle"] == 0 and v["lbo"] == v["box_stride"]:
            v["lbo"] = v["rows"] * _row(v)
        elif model.MAJORS[v["major"]] == "MN" and v["tma_swizzle"] == 0 and v["sbo"] == v["box_stride"]:
            v["sbo"] = v["rows"] * _row(v)
        elif model.MAJORS[v["major"]] == "MN" and v["lbo"] == v["box_stride"]:
            v["lbo"] = v["rows"] * _row(v)
        v["box_stride"] = v["rows"] * _row(v)
    v["mn"], v["steps"] = mn, steps


def _mutators(rng: random.Random):
    def mn(v):
        _set_tile(v, 8 * rng.randint(1, 32), v["steps"])

    def steps(v):
        _set_tile(v, v["mn"], rng.randint(1, model.MAX_STEPS))

    def address(v):
        v["smem"] = 1024 * rng.randrange(64) + v["smem"] % 1024

    def dtype(v):
        same = [i for i, d in enumerate(model.DTYPES) if model.BYTES[d] == model.BYTES[model.DTYPES[v["dtype"]]]]
        v["dtype"] = rng.choice(same)

    def base_offset(v):
        v["base_offset"] = rng.randrange(8)

    def shift(v):
        key = rng.choice(("start_err", "step_err", "sbo", "lbo", "box_stride"))
        v[key] += 16 * rng.choice((-8, -1, 1, 8, 64))

    return (mn, steps, address, dtype, base_offset, shift)


def generate(arch: str, violate: frozenset, count: int, seed: int, stats: Stats) -> Iterator[tuple]:
    rng = random.Random(seed)
    problem = sampling.Problem(arch, violate)
    yield from anchored(problem.next, case_of, exactly(label, arch, violate), _mutators(rng), dict,
                        count, rng, stats, violate, adapt=True)
