"""Fuzz target `desc`: a shared-memory descriptor together with the operand tile it is meant to read.

A case is the arguments of `layoutproof check` (docs/CLI.md `fuzz`): {"descriptor", "dtype", "major",
"mn", "k", "layout", "start_address", "kind"}, and on sm100/sm103 the tcgen05.mma that reads the operand
as B: "cta_group" (1 or 2) and "m" (its M; sm90 cases have neither: wgmma's M is 64); the tile is a
canonical layout (PTX 9.7.16.3.3) in CuTe notation with its swizzle.

Generation: Z3 anchors over solver/model/desc_case.py's constraints (solver/fuzz/desc_sampling.py: each
of a new shape, by blocking clauses), then samples that redraw one to three fields of an anchor (moving a
descriptor field with the tile's when the two were equal, so that sampling does not break tile rules by
accident), each kept only when spec/cases/desc_case.py labels it with exactly the asked rules.

Labels (spec/cases/desc_case.py): the rules broken, every one (the descriptor's, the operand's, the MMA
shape's, on sm100/sm103 its instruction descriptor's, as `--format ptx` writes it, and the tile's:
tests/solver_tests/fuzz/test_fuzz_desc_labels_exact.py re-checks them with `check` and the PTX reader); the outcome "refused"
when ptxas refuses the instruction form (sm90: the operand's type, transposition and K are static parts of
the wgmma instruction; tests/hardware/ptxas_forms.json), else "wrong-data" when some element is read from
elsewhere than the tile holds it (the witness), else "unknown" when a rule is broken without a misread we
can show, else "ok".
"""
from __future__ import annotations

import random
from typing import Iterator

from spec.cases import desc_case as spec_desc_case

from solver.model import desc_case as model
from solver.model import descriptor
from solver.model.swizzle import DESCRIPTOR_BITS, LINE_SHIFT
from solver.model.vocab import DESCRIPTOR_ROW_BYTES
from solver.fuzz import desc_sampling as sampling
from solver.fuzz.engine import Stats, anchored, exactly
from solver.fuzz.outcome import first_found, ptxas_refusal

RULE_IDS = model.RULE_IDS
# CuTe's functor of each descriptor swizzle: Swizzle<B,M,7-M> (CUTLASS cute/swizzle.hpp, mma_traits_sm100.hpp)
SWIZZLE_FUNCTORS = {name: f"Sw<{b},{m},{LINE_SHIFT - m}>" for name, (b, m) in DESCRIPTOR_BITS.items() if b}


# --- Rendering the model's values as a case ---------------------------------------------------------------
def descriptor_word(v: dict) -> int:
    """The 64-bit descriptor of the field values (bit positions: PTX 9.7.15.5.1.2.2 for sm90,
    9.7.16.4.1 Table 40 for sm100/sm103), with the model's bits outside the fields: sm90's unused bits
    [46,49) hold `fixed` too, and `stray` sets one bit of an unused or reserved region."""
    arch = model.ARCHES[v["arch"]]
    sm90 = arch == "sm90"
    word = descriptor.pack(arch, {"start": v["start"], "lbo": v["lbo"], "sbo": v["sbo"], "fixed": v["fixed"],
                                  "base_offset": v["base_offset"], "lbo_mode": v["lbo_mode"],
                                  "swizzle": v["swizzle_code"]})
    if sm90:
        word |= v["fixed"] << model.FIXED_BITS[0]
    if v["stray"]:
        low, _ = model.STRAY_REGIONS[v["stray"]][0 if sm90 else 1]
        word |= 1 << low
    return word


def tile_layout(v: dict) -> str:
    """The tile's canonical layout, (mn, k) -> element offset, in CuTe notation with its swizzle."""
    bits = model.BITS[model.DTYPES[v["dtype"]]]
    swizzle = model.SWIZZLES[v["tile_swizzle"]]
    T = 128 // bits
    row = T * DESCRIPTOR_ROW_BYTES[swizzle] // 16                  # elements in one W-byte row
    sbo, lbo = v["tile_sbo"] // 16 * T, v["tile_lbo"] // 16 * T
    mn, k = v["mn"], v["k"]
    ceil = lambda a, b: -(-a // b)                             # noqa: E731
    if model.MAJORS[v["major"]] == "K":
        text = f"((8,{mn // 8}),({row},{ceil(k, row)})):(({row},{sbo}),(1,{lbo}))"
    elif swizzle == "none":
        text = f"(({T},{ceil(mn, T)}),(8,{ceil(k, 8)})):((1,{sbo}),({T},{lbo}))"
    else:
        rows = 4 if swizzle == "128B_atom32B" else 8
        text = f"(({row},{ceil(mn, row)}),({rows},{ceil(k, rows)})):((1,{lbo}),({row},{sbo}))"
    return text if swizzle == "none" else f"{SWIZZLE_FUNCTORS[swizzle]} o {text}"


def case_of(v: dict) -> dict:
    arch = model.ARCHES[v["arch"]]
    case = {"descriptor": f"0x{descriptor_word(v):016x}", "dtype": model.DTYPES[v["dtype"]],
            "major": model.MAJORS[v["major"]], "mn": v["mn"], "k": v["k"], "layout": tile_layout(v),
            "start_address": v["tile_start"], "kind": None if arch == "sm90" else model.ALL_KINDS[v["kind"]]}
    if arch != "sm90":                 # wgmma has no .cta_group and M = 64: the keys are tcgen05's
        case.update(cta_group=v["cta_group"], m=v["m"])
    return case


# --- Labels ----------------------------------------------------------------------------------------------
def label(case: dict, arch: str, expect=None):
    """What spec says of a desc case on `arch` (SpecError when malformed). With `expect` (a set of rule
    ids), None as soon as the broken rules are known to differ from it (the outcome is not computed)."""
    c = spec_desc_case.parse_case(case, arch)
    broken = spec_desc_case.violations(c)
    readable = not c.desc.swizzle.startswith("invalid")
    return first_found(broken, expect,
                       [("refused", lambda: ptxas_refusal(broken, arch)),
                        ("wrong-data", lambda: spec_desc_case.first_misread(c) if readable else None)],
                       "no element is read from the wrong address under spec's read map; what the hardware "
                       "does with these bits is not observed")


# --- Sampling ----------------------------------------------------------------------------------------------
def _move(v: dict, tile_field: str, desc_field: str, value: int) -> None:
    """Set the tile's field; the descriptor's follows when it equalled the tile's."""
    if v[desc_field] == v[tile_field]:
        v[desc_field] = value
    v[tile_field] = value


def _mutators(rng: random.Random):
    def mn(v):
        v["mn"] = 8 * rng.randint(1, 32)

    def start(v):
        _move(v, "tile_start", "start", 16 * rng.randrange(1 << 12))

    def sbo(v):
        _move(v, "tile_sbo", "sbo", 16 * rng.choice((8, 16, 32, 64, 128, 3, 24)))

    def lbo(v):
        _move(v, "tile_lbo", "lbo", 16 * rng.choice((1, 2, 8, 16, 64, 128, 256)))

    def base_offset(v):
        v["base_offset"] = rng.randrange(8)

    def dtype(v):
        same = [i for i, d in enumerate(model.DTYPES) if model.BITS[d] == model.BITS[model.DTYPES[v["dtype"]]]]
        v["dtype"] = rng.choice(same)

    def shift_desc(v):
        key = rng.choice(("start", "sbo", "lbo"))
        v[key] = max(0, min(model.FIELD_LIMIT - 16, v[key] + 16 * rng.choice((-8, -1, 1, 8, 64))))

    def instruction(v):
        if model.ARCHES[v["arch"]] != "sm90":         # wgmma: no .cta_group, M = 64
            v["cta_group"], v["m"] = rng.choice((1, 2)), rng.choice(model.M_VALUES)

    def dense_k96(v):
        """sm103's dense E2M1 at K = 64 or 96, the latter in its one shape (256xNx96, .cta_group::2)."""
        if model.ARCHES[v["arch"]] == "sm103" and model.DTYPES[v["dtype"]] == "e2m1":
            v["k"] = rng.choice((64, 96))
            if v["k"] == 96:
                v["cta_group"], v["m"] = 2, 256

    return (mn, start, sbo, lbo, base_offset, dtype, shift_desc, instruction, dense_k96)


def generate(arch: str, violate: frozenset, count: int, seed: int, stats: Stats) -> Iterator[tuple]:
    rng = random.Random(seed)
    problem = sampling.Problem(arch, violate)
    yield from anchored(problem.next, case_of, exactly(label, arch, violate), _mutators(rng), dict,
                        count, rng, stats, violate, adapt=True)
