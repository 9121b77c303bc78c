"""Fuzz target `scales`: the scale configuration of one block-scaled tcgen05.mma tile (issue 28).

A case:
    {"kind": "mxf8f6f4" | "mxf4" | "mxf4nvf4", "scale_vec": "1X" | "2X" | "4X", "scale_type": "ue8m0" |
     "ue4m3", "sf_layout": "interleaved" | "linear-k" | "linear-mn", "m", "n", "k", "cta_group": 1 | 2,
     "ptx": the tile's MMA alone in a kernel for sm_100a (hardware/run_scales_ptxas_forms.py's template)}

Generation: Z3 anchors over solver/model/scale_config.py's constraints (solver/fuzz/scales_sampling.py: each
of a new kind, vector, scale type and layout), then samples that redraw one to three fields, each kept only
when spec labels it with exactly the asked rules.

Labels (spec: spec.scales.vectors, spec.mma.shape, spec.scales.path), worst outcome first:
  * scales.vector.kind: "refused" by ptxas (the form is recorded in tests/hardware/scales_ptxas_forms.json);
  * scales.path.interleaved_writer: "wrong-data", the witness the first element of A that the reader
    CUTLASS and Triton emit gives another scale (spec.scales.path.first_misread), and the scale it gets;
  * scales.vector.scale_type, mma.shape.m, mma.shape.n: "unknown" (run-time fields of the instruction
    descriptor: nobody refuses them, and what the tensor core then does only a Blackwell GPU could show);
  * scales.path.k_steps: "unknown" (the last MMA reads elements and scales past the tile's K: wrong unless
    those bytes hold zeros, as TMA's out-of-bounds fill leaves them).
The scale-factor ids (rule scales.vector.sf_id) are not a field here: the reader derives them per k-step.
"""
from __future__ import annotations

import random
from typing import Iterator, Optional

from spec.rule import SpecError, catalogue_position, check_all
from spec.mma import shape as mma_shape
from spec.scales import path, vectors

from solver.fuzz.engine import Stats, anchored, exactly
from solver.fuzz.outcome import first_found
from solver.fuzz import scales_sampling as sampling
from solver.model import scale_config as model

RULE_IDS = model.RULE_IDS
ARCHES = ("sm100",)
TARGET = "sm_100a"
EVIDENCE = "tests/hardware/scales_ptxas_forms.json"
PTX_VERSION = "8.8"
# One block-scaled MMA alone in a kernel, its operands registers set to 0 (the form ptxas judges; also the
# template of hardware/run_scales_ptxas_forms.py, whose recorded forms the cases are checked against).
MMA_KERNEL = """.version {version}
.target {target}
.address_size 64
.visible .entry k()
{{
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  .reg .pred %p<2>;
  mov.b32 %r1, 0;
  mov.b64 %rd1, 0;
  setp.eq.u32 %p1, %r1, 0;
  tcgen05.mma.cta_group::{cta_group}.kind::{kind}.block_scale{qualifier} [%r1], %rd1, %rd1, %r1, [%r1], [%r1], %p1;
  ret;
}}
"""
RUN_TIME = ("a run-time field of the instruction descriptor: nobody refuses it, and what the tensor core "
            "does then only a Blackwell GPU could show")
UNKNOWN_NOTES = {"scales.vector.scale_type": "the scale type is " + RUN_TIME,
                 "mma.shape.m": "M is " + RUN_TIME, "mma.shape.n": "N is " + RUN_TIME,
                 "scales.path.k_steps": "the last MMA reads elements and scales past the tile's K: wrong unless "
                                        "those bytes are zeros (TMA's out-of-bounds fill)"}
MAX_WITNESS_ROWS = 256               # the rows of A followed for a witness (one CTA's M at most)


def kernel(case: dict) -> str:
    """The case's MMA alone in a kernel for sm_100a (MMA_KERNEL)."""
    return MMA_KERNEL.format(version=PTX_VERSION, target=TARGET, cta_group=case["cta_group"], kind=case["kind"],
                             qualifier=f".scale_vec::{case['scale_vec']}")


def instruction(case: dict) -> str:
    return next(line.strip() for line in kernel(case).splitlines() if line.strip().startswith("tcgen05.mma"))


def case_of(values: Optional[dict]) -> Optional[dict]:
    """The case of the model's field values; None outside the model's domain."""
    if values is None or not model.in_domain(values):
        return None
    v = values
    case = {"kind": model.KINDS[v["kind"]], "scale_vec": model.VECTORS[v["vector"]],
            "scale_type": model.SCALE_TYPES[v["scale_type"]], "sf_layout": model.LAYOUTS[v["sf_layout"]],
            "m": v["m"], "n": v["n"], "k": v["k"], "cta_group": v["cta_group"]}
    case["ptx"] = kernel(case)
    return case


def field_values(case: dict) -> dict:
    """The model's field values of a case (the inverse of case_of), read without spec."""
    return {"kind": model.KINDS.index(case["kind"]), "vector": model.VECTORS.index(case["scale_vec"]),
            "scale_type": model.SCALE_TYPES.index(case["scale_type"]),
            "sf_layout": model.LAYOUTS.index(case["sf_layout"]), "m": case["m"], "n": case["n"], "k": case["k"],
            "cta_group": case["cta_group"]}


def broken(case: dict) -> list:
    """spec's violations of a case, in catalogue order (SpecError when malformed)."""
    if case.get("kind") not in vectors.KINDS or case.get("scale_vec") not in vectors.VECTORS:
        raise SpecError("case", case, "kind and scale_vec name a block-scaled kind and a vector", vectors.VECTOR.id)
    if case.get("ptx") != kernel(case):
        raise SpecError("ptx", case.get("ptx"), "the case's PTX is its own MMA in the target's template",
                        vectors.VECTOR.id)
    config = vectors.ScaleConfig(case["kind"], case["scale_vec"], case["scale_type"])
    shape = mma_shape.make_shape("sm100", case["kind"], case["cta_group"], case["m"], case["n"],
                                 vectors.MMA_K[case["kind"]], "e2m1", "K")
    found = (check_all("scale_config", config) + check_all("mma_shape", shape)
             + check_all("scale_path", path.ScalePath(case["kind"], case["scale_vec"], case["sf_layout"], case["k"])))
    return sorted(found, key=lambda v: catalogue_position(v.rule))


def _misread(case: dict, ids) -> Optional[dict]:
    if "scales.path.interleaved_writer" not in ids:
        return None
    block = vectors.block_size(case["kind"], case["scale_vec"])
    rows = min(max(1, case["m"] // case["cta_group"]), MAX_WITNESS_ROWS)      # one CTA's rows of A
    k = max(block, case["k"] - case["k"] % vectors.MMA_K[case["kind"]])
    found = path.first_misread(case["sf_layout"], rows, k, case["kind"], case["scale_vec"])
    return {"operand": "A", **found} if found else None


def label(case: dict, arch: str, expect=None):
    """What spec says of a case (SpecError when malformed). With `expect`, None when the broken rules
    differ from it."""
    if arch not in ARCHES:
        raise SpecError("arch", arch, "the scales target is sm100's (tcgen05.mma block scaling)", vectors.VECTOR.id)
    violations = broken(case)
    ids = {v.rule.id for v in violations}
    ptxas = (lambda: {"by": "ptxas", "instruction": instruction(case), "evidence": EVIDENCE,
                      "because": [str(v) for v in violations if v.rule.id == vectors.VECTOR.id]}
             if vectors.VECTOR.id in ids else None)
    note = "; ".join(UNKNOWN_NOTES[i] for i in sorted(ids) if i in UNKNOWN_NOTES)
    return first_found(violations, expect, [("refused", ptxas), ("wrong-data", lambda: _misread(case, ids))], note)


# --- Sampling ----------------------------------------------------------------------------------------------
def _mutators(rng: random.Random):
    def kind(v):
        v["kind"] = rng.randrange(len(model.KINDS))

    def vector(v):
        v["vector"] = rng.randrange(len(model.VECTORS))

    def scale_type(v):
        v["scale_type"] ^= 1

    def layout(v):
        v["sf_layout"] = rng.randrange(len(model.LAYOUTS))

    def m(v):
        v["m"] = rng.choice((128, 256, 64, rng.randint(1, model.MAX_MN)))

    def n(v):
        v["n"] = rng.choice((8 * rng.randint(1, 32), 16 * rng.randint(1, 16), rng.randint(1, model.MAX_MN)))

    def k(v):
        v["k"] = rng.choice((32 * rng.randint(1, 64), 64 * rng.randint(1, 32), rng.randint(1, model.MAX_K)))

    def cta_group(v):
        v["cta_group"] = 3 - v["cta_group"]

    return kind, vector, scale_type, layout, m, n, k, cta_group


def generate(arch: str, violate: frozenset, count: int, seed: int, stats: Stats) -> Iterator[tuple]:
    if arch not in ARCHES:
        return
    rng = random.Random(seed)
    problem = sampling.Problem(violate)
    yield from anchored(lambda s: problem.next(s), case_of, exactly(label, arch, violate),
                        _mutators(rng), dict, count, rng, stats, violate)
