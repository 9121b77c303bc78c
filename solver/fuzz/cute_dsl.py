"""Fuzz target `cute-dsl`: CUTLASS CuTe DSL parameters of one MMA operand in shared memory, exactly the
case the CuTe DSL adapter builds (solver/fuzz/adapters/cute_dsl.py, records of target "cute_dsl"):
    {"arch": "sm90" | "sm100", "operand": "A" | "B", "dtype", "major": "K" | "MN", "atom": null (the
     helper's own choice) | a SmemLayoutAtomKind name, "mma_tiler": [M, N, K], "cta_group": 1 | 2,
     "smem_base": the tile's shared-memory byte address, "stages": n}

Generation: Z3 anchors over solver/model/cute_dsl.py's constraints (solver/fuzz/cute_dsl_sampling.py: each
of a new dtype, operand, major, atom and .cta_group), then samples that redraw one to three fields of an
anchor (dtype, operand, major, atom, M, N, K, .cta_group, the address, the stages), each kept only when spec
labels it with exactly the asked rules.

Labels (spec, the way the adapter's judge solver/fuzz/compilers/cute_dsl.py reads a case: its atom
table, its helper heuristic, its operand and MMA-shape construction; `spec_verdict`): every k-block's
operand as its descriptor starts at smem_base + 32 kb (the DSL's k-blocks: checked against the recorded
campaign), checked with spec's operand rules, and on sm100 the MMA shape with spec's shape rules. The
judge's own `legality` is asked too and must agree (it reads the address as 0 and stops at the first
rule family). Outcome "refused" when a broken rule is one ptxas enforces on the arch (sm90's wgmma form;
the rule's record: spec.rule.Rule.refused_on), else "unknown" (tcgen05 carries these in run-time descriptors
that no tool checks, and the manual does not say what happens), "ok" when none is broken.

Configurations the judge calls illegal without a rule id (an atom of the other major, a tile that is no
whole number of atoms or instruction Ks, a wgmma tile that is no m64nN) are outside the target's
domain: spec_verdict raises SpecError for them and they are never generated.
"""
from __future__ import annotations

import random
from typing import Iterator, Optional

from spec.mma import descriptor as spec_descriptor
from spec.mma import dtypes, readmap
from spec.mma import shape as mma_shape
from spec.rule import check_all
from spec.rules import SpecError

from solver.fuzz.adapters import cute_dsl as adapter
from solver.fuzz.compilers import cute_dsl as judge
from solver.fuzz.engine import Stats, anchored, exactly
from solver.fuzz.outcome import catalogue_order, Label, mma_instruction, refused_ids
from solver.model import cute_dsl as model
from solver.fuzz import cute_dsl_sampling as sampling

RULE_IDS = model.RULE_IDS
ARCHES = model.ARCHES
CASE_FIELDS = ("arch", "operand", "dtype", "major", "atom", "mma_tiler", "cta_group", "smem_base", "stages")
ADDRESS_RULE = "operand.k_slice.inside_line"      # the judge's legality reads the address as 0
UNKNOWN_NOTE = {
    "sm90": ("wgmma.mma_async reads the operand through a run-time descriptor: ptxas does not see its start "
             "address, and the manual states the rule but not what happens when it is broken"),
    "sm100": ("tcgen05.mma reads the operand through run-time descriptors (and its shape from the instruction "
              "descriptor): ptxas does not see them, and the manual states the rule but not what happens when "
              "it is broken")}


# --- Rendering the model's values as a case ---------------------------------------------------------------
def case_of(values: Optional[dict]) -> Optional[dict]:
    """The adapter's case of the model's field values; None outside the model's domain."""
    if values is None or not model.in_domain(values):
        return None
    v = values
    return {"arch": ARCHES[v["arch"]], "operand": model.OPERANDS[v["operand"]], "dtype": model.DTYPES[v["dtype"]],
            "major": model.MAJORS[v["major"]], "atom": model.ATOMS[v["atom"]], "mma_tiler": [v["m"], v["n"], v["k"]],
            "cta_group": v["cta_group"], "smem_base": v["smem_base"], "stages": v["stages"]}


def field_values(case: dict) -> dict:
    """The model's field values of a case (the inverse of case_of), read without spec."""
    m, n, k = case["mma_tiler"]
    return {"arch": ARCHES.index(case["arch"]), "operand": model.OPERANDS.index(case["operand"]),
            "dtype": model.DTYPES.index(case["dtype"]), "major": model.MAJORS.index(case["major"]),
            "atom": model.ATOMS.index(case["atom"]), "m": m, "n": n, "k": k, "cta_group": case["cta_group"],
            "smem_base": case["smem_base"], "stages": case["stages"]}


# --- Spec's verdict ---------------------------------------------------------------------------------------
def _outside(case: dict, atom: str) -> Optional[str]:
    """Why the judge calls the configuration illegal without a rule id; None when it does not."""
    d = dtypes.dtype(case["dtype"])
    atom_major, swizzle, width = judge.ATOM_KINDS[atom]
    if atom_major != case["major"]:
        return f"atom {atom} is {atom_major}-major, the operand {case['major']}-major"
    if case["arch"] == "sm90" and swizzle == "128B_atom32B":
        return "sm90 has no 128B_atom32B swizzle"
    m, n, extent = judge._mma_mn(case)
    k = case["mma_tiler"][2]
    if (m if case["operand"] == "A" else n) % case["cta_group"]:
        return f".cta_group::{case['cta_group']} does not divide the operand's tile"
    instr_k = dtypes.instruction_k_values(d, dtypes.default_kind(d), case["arch"])[0]
    atom_elems = width * 8 // d.bits
    mn_atom, k_atom = (atom_elems, 8) if case["major"] == "MN" else (8, atom_elems)
    if extent % mn_atom or k % k_atom or k % instr_k or extent % 8:
        return f"tile {extent}x{k} is no whole number of {mn_atom}x{k_atom} atoms / instruction K {instr_k}"
    if case["arch"] == "sm90" and (m % 64 or n % 8):
        return f"the wgmma tile {m}x{n} is no m64nN"
    return None


def spec_verdict(case: dict) -> dict:
    """{"broken": rule ids, "why": spec's messages, "atom": the atom used}; SpecError when the case is
    malformed or outside the target's domain (see the module docstring)."""
    if not isinstance(case, dict) or set(case) != set(CASE_FIELDS):
        raise SpecError("case", case, "expected exactly the fields " + ", ".join(CASE_FIELDS), "cute_dsl.case")
    try:
        c = adapter.check_case(case)
    except adapter.BadCase as error:
        raise SpecError("case", case, str(error), "cute_dsl.case") from None
    if c["stages"] < 1 or c["smem_base"] % 16 or c["cta_group"] not in (1, 2):
        raise SpecError("case", case, "stages >= 1, a 16-byte aligned smem_base, .cta_group 1 or 2", "cute_dsl.case")
    atom = c["atom"] or judge.heuristic_atom(c)
    outside = _outside(c, atom)
    if outside:
        raise SpecError("case", case, outside, "cute_dsl.case")
    arch, d, major = c["arch"], dtypes.dtype(c["dtype"]), c["major"]
    kind = dtypes.default_kind(d)
    instr_k = dtypes.instruction_k_values(d, kind, arch)[0]
    m, n, extent = judge._mma_mn(c)
    swizzle = judge.ATOM_KINDS[atom][1]
    rule_mn = n if arch == "sm90" else extent         # as the judge reads it (operand.sm90.n_extent: wgmma's N)
    k_blocks = c["mma_tiler"][2] // instr_k
    found: dict = {}
    # k-block kb's descriptor starts 32 kb bytes on (K-major); offsets repeat after W / 32 <= 4 k-blocks
    for kb in range(min(k_blocks, 4) if major == "K" else 1):
        desc = spec_descriptor.encode(arch, c["smem_base"] + 32 * kb, 16, 16, swizzle)
        for v in check_all("operand", readmap.make_operand(desc, d.name, major, rule_mn, instr_k)):
            found.setdefault(v.rule.id, f"{v.rule.id}: {v.message}" + (f" (k-block {kb})" if kb else ""))
    if arch != "sm90":
        shp = mma_shape.make_shape(arch, kind, c["cta_group"], m, n, instr_k, d.name,
                                   major if c["operand"] == "B" else "K")
        for v in check_all(mma_shape.SUBJECT, shp):
            found.setdefault(v.rule.id, f"{v.rule.id}: {v.message}")
    order = catalogue_order()
    ids = sorted(found, key=lambda i: order.get(i, len(order)))
    _agrees_with_legality(c, atom, ids)
    return {"broken": ids, "why": [found[i] for i in ids], "atom": atom}


def _agrees_with_legality(case: dict, atom: str, ids: list) -> None:
    """The judge's legality (address 0, first rule family only) must not contradict the verdict."""
    why = judge.legality(case, atom)
    if why is None:
        agrees = set(ids) <= {ADDRESS_RULE}
    elif why.startswith("spec rules: "):
        agrees = set(why[len("spec rules: "):].split()) <= set(ids)
    else:
        agrees = False
    if not agrees:
        raise SpecError("case", case, f"the judge's legality says {why!r}, the verdict {ids}", "cute_dsl.case")


# --- Labels ----------------------------------------------------------------------------------------------
def label(case: dict, arch: str, expect=None) -> Optional[Label]:
    """What spec says of a case (SpecError when malformed or outside the domain). With `expect` (a set of
    rule ids), None as soon as the broken rules are known to differ from it."""
    if case.get("arch") != arch:
        raise SpecError("arch", case.get("arch"), f"the case is not on {arch}", "cute_dsl.case")
    verdict = spec_verdict(case)
    ids = tuple(verdict["broken"])
    if expect is not None and set(ids) != set(expect):
        return None
    if not ids:
        return Label(ids, "ok", None)
    refused = refused_ids(ids, arch, "ptxas")
    because = "; ".join(verdict["why"])
    if refused:
        others = [i for i in ids if i not in refused]
        return Label(ids, "refused", {"by": "ptxas", "instruction": mma_instruction(arch), "rules": refused,
                                      "because": because, **({"also": others} if others else {})})
    return Label(ids, "unknown", {"because": because, "note": UNKNOWN_NOTE[arch]})


# --- Sampling ----------------------------------------------------------------------------------------------
EXTENTS = (8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 96, 112, 128, 136, 160, 192, 200, 240, 256, 264, 272, 320,
           384, 512)


def _mutators(rng: random.Random):
    def dtype(v):
        v["dtype"] = rng.randrange(len(model.DTYPES))

    def operand(v):
        v["operand"] ^= 1

    def major(v):
        v["major"] ^= 1
        v["atom"] = 0 if rng.random() < 0.3 else _atom_of(v["major"])

    def _atom_of(major_index):
        names = [i for i, a in enumerate(model.ATOMS) if a and a.startswith(model.MAJORS[major_index] + "_")]
        return rng.choice(names)

    def atom(v):
        v["atom"] = 0 if rng.random() < 0.25 else _atom_of(v["major"])

    def m(v):
        v["m"] = rng.choice((64, 128, 256, 64, 128, 192, 32, 96, 512, 8 * rng.randint(1, 64)))

    def n(v):
        v["n"] = rng.choice(EXTENTS + (8 * rng.randint(1, 64), 16 * rng.randint(1, 32)))

    def k(v):
        kinst = 256 // model.BITS[model.DTYPES[v["dtype"]]]
        v["k"] = rng.choice((kinst * rng.choice((1, 2, 3, 4, 8)), kinst * rng.randint(1, 16), rng.choice(EXTENTS)))

    def cta_group(v):
        v["cta_group"] = rng.choice((1, 2))

    def smem_base(v):
        v["smem_base"] = rng.choice((0, 1024 * rng.randrange(200), 128 * rng.randrange(1600),
                                     16 * rng.randrange(14000), 32 * rng.randrange(7000) + 16))

    def stages(v):
        v["stages"] = rng.randint(1, model.MAX_STAGES)

    return dtype, operand, major, atom, m, n, k, cta_group, smem_base, stages


def generate(arch: str, violate: frozenset, count: int, seed: int, stats: Stats) -> Iterator[tuple]:
    rng = random.Random(seed)
    problem = sampling.Problem(arch, violate)
    yield from anchored(lambda s: problem.next(s), case_of, exactly(label, arch, violate),
                        _mutators(rng), dict, count, rng, stats, violate)
