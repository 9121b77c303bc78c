"""Scale vectors of the block-scaled tcgen05.mma kinds (PTX ISA 9.0 9.7.16.10.7 Block Scaling; Table 54,
"valid combinations of scale_vectorsize and shapes"; Table 55, the element and scale types; 9.7.16.10.9.1,
the .scale_vectorsize qualifier).

    tcgen05.mma.cta_group.kind.block_scale{.scale_vectorsize} [d-tmem], a, b-desc, idesc,
                                                              [scale-A-tmem], [scale-B-tmem], enable-input-d;
    .kind             ::mxf8f6f4  ::mxf4  ::mxf4nvf4
    .scale_vectorsize .scale_vec::1X  .scale_vec::2X  .scale_vec::4X  .block16  .block32

".scale_vec::NX: N specifies the number of columns in scale_A matrix and number of rows in scale_B": one
MMA's row of A (column of B) takes N scales, each over K / N of its elements (the block). One MMA's K is
32 (mxf8f6f4) or 64 (mxf4, mxf4nvf4) dense (spec.mma.shape), so a scale covers 32 elements for 1X and 2X
and 16 for 4X. The aliases: .block32 is 1X for mxf8f6f4 and 2X for mxf4 / mxf4nvf4; .block16 is 4X
(mxf4nvf4). With no qualifier mxf8f6f4 and mxf4 take .block32; mxf4nvf4 must name one. (K = 96 of
sm_103a, 3X / 6X, is not modelled here.)

The scale-factor ids of the instruction descriptor (Tables 43 and 44: bits [29,31) for A, [4,6) for B)
pick the sub-column of each tensor-memory word the scales are read from (9.7.16.10.7.2, .3): for 1X the
byte (0-3), for 2X the half word (0 or 2, in bytes), for 4X nothing (0). Its bit 23 is the scale type,
UE8M0 (1) or UE4M3 (0); UE4M3 only with mxf4nvf4 and 4X.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from spec.rule import SpecError, rule

KINDS = ("mxf8f6f4", "mxf4", "mxf4nvf4")
VECTORS = ("1X", "2X", "4X")
QUALIFIERS = (".scale_vec::1X", ".scale_vec::2X", ".scale_vec::4X", ".block16", ".block32")
MMA_K = {"mxf8f6f4": 32, "mxf4": 64, "mxf4nvf4": 64}          # dense K of one MMA (Table 39)
SCALES_PER_ROW = {"1X": 1, "2X": 2, "4X": 4}
VALID = {"mxf8f6f4": ("1X",), "mxf4": ("2X",), "mxf4nvf4": ("2X", "4X")}
SCALE_TYPES = {("mxf8f6f4", "1X"): ("ue8m0",), ("mxf4", "2X"): ("ue8m0",), ("mxf4nvf4", "2X"): ("ue8m0",),
               ("mxf4nvf4", "4X"): ("ue8m0", "ue4m3")}
SF_IDS = {"1X": (0, 1, 2, 3), "2X": (0, 2), "4X": (0,)}
SCALE_TYPE_BIT = {"ue8m0": 1, "ue4m3": 0}                     # instruction descriptor bit 23

VECTOR = rule(
    "scales.vector.kind", "PTX ISA 9.0 9.7.16.10.7.1 (Table 54), 9.7.16.10.9.1 (.scale_vectorsize)",
    "A block-scaled tcgen05.mma's scale vector fits its kind: .kind::mxf8f6f4 takes .scale_vec::1X "
    "(.block32, or no qualifier); .kind::mxf4 takes 2X (.block32, or no qualifier); .kind::mxf4nvf4 takes 2X "
    "(.block32) or 4X (.block16) and must name one.",
    subject="scale_config", evidence="ptxas", enforced_by="ptxas",
    note="tests/hardware/scales_ptxas_forms.json: ptxas 13.0 on sm_100a and sm_103a, .cta_group::1 and ::2, "
         "refuses every other pairing ('cannot be combined') and mxf4nvf4 without a qualifier.")
SCALE_TYPE = rule(
    "scales.vector.scale_type", "PTX ISA 9.0 9.7.16.10.7 (Table 55), 9.7.16.4.2 (Tables 43, 44: bit 23)",
    "The scales are UE8M0, except that .kind::mxf4nvf4 with 4X (.block16) may take UE4M3 (NVFP4); the "
    "instruction descriptor's bit 23 says which (1: UE8M0, 0: UE4M3).",
    subject="scale_config", enforced_by="nobody",
    note="The descriptor is a run-time value: ptxas cannot see it. What the tensor core does with UE4M3 on "
         "another kind only a Blackwell GPU could show.")
SF_ID = rule(
    "scales.vector.sf_id", "PTX ISA 9.0 9.7.16.10.7.2, 9.7.16.10.7.3 (scale factor A / B ID); 9.7.16.4.2 "
    "(Tables 43, 44: bits [29,31) and [4,6))",
    "A scale-factor id picks the sub-column the MMA reads its scales from: with 1X a byte of the word "
    "(0-3), with 2X a half word (0 or 2, counted in bytes), with 4X the whole word (0).",
    subject="scale_config", enforced_by="nobody",
    note="A run-time value of the instruction descriptor: nothing refuses another id. What an odd id reads "
         "only a Blackwell GPU could show.")


@dataclass(frozen=True)
class ScaleConfig:
    """The scale side of one block-scaled MMA: its kind, scale vector, scale type and scale-factor ids."""
    kind: str
    vector: str                     # "1X" | "2X" | "4X"
    scale_type: str = "ue8m0"       # "ue8m0" | "ue4m3"
    sf_id_a: int = 0
    sf_id_b: int = 0


def vector_of(kind: str, qualifier: Optional[str]) -> str:
    """The scale vector a kind and its written qualifier name (None or "": none written). SpecError when
    the kind has none by that name (scales.vector.kind)."""
    if kind not in KINDS:
        raise SpecError("kind", kind, "a block-scaled kind is one of " + ", ".join(KINDS), VECTOR.id)
    written = (qualifier or "").strip()
    if written and not written.startswith("."):
        written = "." + written
    if written == "":
        if kind == "mxf4nvf4":
            raise SpecError("scale_vec", "none", ".kind::mxf4nvf4 must name .block16 / .block32 or a .scale_vec",
                            VECTOR.id)
        return VALID[kind][0]
    if written in (".1X", ".2X", ".4X"):
        written = ".scale_vec::" + written[1:]
    if written == ".block32":
        return "1X" if kind == "mxf8f6f4" else "2X"
    if written == ".block16":
        vector = "4X"
    elif written in QUALIFIERS:
        vector = written.split("::")[1]
    else:
        raise SpecError("scale_vec", qualifier, "one of " + ", ".join(QUALIFIERS), VECTOR.id)
    if vector not in VALID[kind]:
        raise SpecError("scale_vec", qualifier, f".kind::{kind} takes " + ", ".join(VALID[kind]), VECTOR.id)
    return vector


def block_size(kind: str, vector: str) -> int:
    """Elements of K one scale covers: one MMA's K over its scales per row (32, or 16 for 4X)."""
    return MMA_K[kind] // SCALES_PER_ROW[vector]


@VECTOR.checker
def _vector_fits(config: ScaleConfig) -> Optional[str]:
    if config.kind not in KINDS:
        return f"{config.kind!r} is not a block-scaled kind ({', '.join(KINDS)})"
    if config.vector not in VALID[config.kind]:
        return f".kind::{config.kind} takes scale vectors {', '.join(VALID[config.kind])}, not {config.vector}"
    return None


@SCALE_TYPE.checker
def _scale_type_fits(config: ScaleConfig) -> Optional[str]:
    # a pairing Table 54 does not list (rule scales.vector.kind) still takes UE8M0 alone: the statement
    # allows UE4M3 for mxf4nvf4 with 4X only (a disagreement the fuzz model found, tests/solver_tests/fuzz/test_fuzz_scales.py)
    allowed = SCALE_TYPES.get((config.kind, config.vector), ("ue8m0",))
    if config.scale_type not in allowed:
        return f".kind::{config.kind} with {config.vector} takes {' or '.join(allowed)} scales, not {config.scale_type}"
    return None


@SF_ID.checker
def _sf_ids_fit(config: ScaleConfig) -> Optional[str]:
    allowed = SF_IDS.get(config.vector)
    if allowed is None:
        return None
    for name, value in (("A", config.sf_id_a), ("B", config.sf_id_b)):
        if value not in allowed:
            return f"scale-factor id of {name} {value}: {config.vector} takes {', '.join(map(str, allowed))}"
    return None
