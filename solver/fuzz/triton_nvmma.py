"""Fuzz target `triton-nvmma`: Triton's (Gluon's) parameters of one MMA operand in shared memory, the
case the Triton adapter compiles (solver/fuzz/adapters/triton_gluon.py, records of target
"triton-nvmma"):
    {"arch": "sm90" | "sm100", "dtype", "operand": "A" | "B", "shape": [rows, cols],
     "swizzle_byte_width": 0 | 32 | 64 | 128, "element_bitwidth", "transposed": bool}

Generation: Z3 anchors over solver/model/triton_nvmma.py's constraints
(solver/fuzz/triton_nvmma_sampling.py: each of a new dtype, operand, majorness and swizzle), then samples
that redraw one to three fields of an anchor (the dtype with its element bitwidth, the operand, the swizzle,
the transposition, an extent: powers of two and not, K in whole and broken instruction steps), each kept
only when the judge (solver/fuzz/compilers/triton.py `spec_verdict`, i.e. spec) labels it with exactly the
asked rules. Not only Triton's defaults: every swizzle width with every dtype and both majornesses.

Labels (spec through the judge): the broken rules; the outcome "refused" when one of them is a rule
ptxas enforces on the arch (sm90's wgmma form: the type's transposition, K, N; the rule's record,
spec.rule.Rule.refused_on), else "unknown" (tcgen05 carries these in the run-time instruction descriptor: no tool
sees them, and the manual does not say what happens); "ok" when none is broken. A valid case is one
whose operand breaks no rule; whether the descriptor then reads Triton's own tile (desc.tile.reads)
needs Triton's layout, which is the adapter's campaign's question, not this target's.

The judge stops at operand.instruction_k (a K that is no whole number of instruction Ks: it reports
that rule alone), so that rule is asked alone: asked with others, no case is generated; asked alone, a
sample is kept only when the Z3 model too finds no other rule broken (what the judge did not look at).
"""
from __future__ import annotations

import random
from typing import Iterator, Optional

from spec.rules import SpecError

from solver.model import triton_nvmma as model
from solver.fuzz import triton_nvmma_sampling as sampling
from solver.fuzz.compilers import triton as judge
from solver.fuzz.engine import Stats, anchored, exactly
from solver.fuzz.outcome import catalogue_order, Label, mma_instruction, refused_ids

RULE_IDS = model.RULE_IDS
ARCHES = model.ARCHES
ALONE = frozenset({"operand.instruction_k"})        # the judge reports it alone (see the docstring)
UNKNOWN_NOTE = ("tcgen05.mma carries the type, majorness and shape in its run-time instruction descriptor: "
                "ptxas does not see them, and the manual states the rule but not what happens when it is broken")


# --- Rendering the model's values as a case ---------------------------------------------------------------
def case_of(values: Optional[dict]) -> Optional[dict]:
    """The adapter's case of the model's field values; None outside the model's domain."""
    if values is None:
        return None
    v = values
    if not (0 <= v["arch"] < len(ARCHES) and 0 <= v["dtype"] < len(model.DTYPES) and v["operand"] in (0, 1)
            and v["transposed"] in (0, 1) and v["swizzle_byte_width"] in model.SWIZZLE_WIDTHS):
        return None
    arch, dtype, operand = ARCHES[v["arch"]], model.DTYPES[v["dtype"]], model.OPERANDS[v["operand"]]
    rows, cols = v["rows"], v["cols"]
    if not (1 <= rows <= model.MAX_EXTENT and 1 <= cols <= model.MAX_EXTENT):
        return None
    if v["element_bitwidth"] != model.BITS[dtype]:
        return None
    if operand == "B" and cols % 8:
        return None
    if operand == "A" and arch == "sm90" and rows != model.KERNEL_M["sm90"]:
        return None
    return {"arch": arch, "dtype": dtype, "operand": operand, "shape": [rows, cols],
            "swizzle_byte_width": v["swizzle_byte_width"], "element_bitwidth": v["element_bitwidth"],
            "transposed": bool(v["transposed"])}


def field_values(case: dict) -> dict:
    """The model's field values of a case (the inverse of case_of), read without spec."""
    return {"arch": ARCHES.index(case["arch"]), "dtype": model.DTYPES.index(case["dtype"]),
            "operand": model.OPERANDS.index(case["operand"]), "rows": case["shape"][0], "cols": case["shape"][1],
            "swizzle_byte_width": case["swizzle_byte_width"], "element_bitwidth": case["element_bitwidth"],
            "transposed": int(bool(case["transposed"]))}


# --- Labels ----------------------------------------------------------------------------------------------
def label(case: dict, arch: str, expect=None) -> Optional[Label]:
    """What spec says of a case, through the judge (SpecError when malformed or not judged). With `expect`
    (a set of rule ids), None as soon as the broken rules are known to differ from it."""
    if case.get("arch") != arch:
        raise SpecError("arch", case.get("arch"), f"the case is not on {arch}", "triton.case")
    verdict = judge.spec_verdict(case)
    ids = tuple(sorted(verdict["broken"], key=lambda i: catalogue_order().get(i, len(catalogue_order()))))
    if verdict["legal"] is None and ids:
        raise SpecError("case", case, verdict["why"], "triton.case")
    if verdict["legal"] is None and "element_bitwidth" in verdict["why"]:
        raise SpecError("element_bitwidth", case.get("element_bitwidth"), verdict["why"], "triton.case")
    if expect is not None and set(ids) != set(expect):
        return None
    unknown = [i for i in ids if i not in catalogue_order()]
    if unknown:                     # a judge verdict that is no catalogue rule (e.g. triton.kernel.m)
        raise SpecError("case", case, f"judged by {', '.join(unknown)}, no catalogue rule", "triton.case")
    if not ids:
        return Label(ids, "ok", None)
    refused = refused_ids(ids, arch, "ptxas")
    if refused:
        others = [i for i in ids if i not in refused]
        return Label(ids, "refused", {"by": "ptxas", "instruction": mma_instruction(arch), "rules": refused,
                                      "because": verdict["why"], **({"also": others} if others else {})})
    return Label(ids, "unknown", {"because": verdict["why"], "note": UNKNOWN_NOTE})


# --- Sampling ----------------------------------------------------------------------------------------------
EXTENTS = (1, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 96, 112, 128, 136, 160, 192, 200, 240, 256, 264, 272,
           320, 384, 512, 1024)


def _mutators(rng: random.Random):
    def dtype(v):
        v["dtype"] = rng.randrange(len(model.DTYPES))
        v["element_bitwidth"] = model.BITS[model.DTYPES[v["dtype"]]]

    def operand(v):
        """The other operand, with the same MN and K extents (A [M, K] <-> B [K, N])."""
        v["operand"] ^= 1
        v["rows"], v["cols"] = v["cols"], v["rows"]
        if v["operand"] == 0 and v["arch"] == 0:
            v["rows"] = model.KERNEL_M["sm90"]

    def swizzle(v):
        v["swizzle_byte_width"] = rng.choice(model.SWIZZLE_WIDTHS)

    def transposed(v):
        v["transposed"] ^= 1

    def mn(v):
        key = "rows" if v["operand"] == 0 else "cols"
        if v["operand"] == 0 and v["arch"] == 0:
            return
        v[key] = rng.choice(EXTENTS + (8 * rng.randint(1, 40), rng.randint(1, 300)))

    def k(v):
        key = "cols" if v["operand"] == 0 else "rows"
        kinst = 256 // model.BITS[model.DTYPES[v["dtype"]]]
        v[key] = rng.choice((kinst * rng.choice((1, 2, 3, 4, 5, 8)), kinst * rng.randint(1, 16),
                             rng.choice(EXTENTS), max(1, kinst * rng.randint(1, 8) + rng.choice((-8, -1, 1, 8)))))

    return dtype, operand, swizzle, transposed, mn, k


def generate(arch: str, violate: frozenset, count: int, seed: int, stats: Stats) -> Iterator[tuple]:
    if violate & ALONE and len(violate) > 1:
        return                      # the judge reports operand.instruction_k alone
    rng = random.Random(seed)
    problem = sampling.Problem(arch, violate)
    label_of = exactly(label, arch, violate)
    if violate & ALONE:
        spec_label = label_of

        def label_of(case):
            found = spec_label(case)
            return found if found is not None and set(model.violated(field_values(case))) == violate else None
    yield from anchored(lambda s: problem.next(s), case_of, label_of,
                        _mutators(rng), dict, count, rng, stats, violate)
