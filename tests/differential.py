"""The spec/Z3 differential on legal *and* illegal inputs (issue 17): random tensor-map documents and desc
cases, judged by the executable specification (spec/) and by the Z3 models (solver/model/), which must
list the same broken rules on every input, and call the same documents malformed.

The fuzzer labels its cases with spec/'s list and draws them from the Z3 model's constraints, so a
disagreement on any input, legal or not, is a wrong label or a lost case. Neither side is the oracle of
the other here: the expectation is that two separate writings of the manual's rules agree; where they
did not (issue 17), the manual or the recorded hardware evidence decided which one was wrong.

The inputs are drawn independently of both sides: a legal base document, written here from the CUDA Driver
API examples (cuTensorMapEncodeTiled / Im2col / Im2colWide) and PTX 5.5.5, with zero to four arguments
redrawn from pools of values on both sides of every documented limit (C type limits included), ranks 0 to
7 included; desc cases as the fuzz target renders them (solver/fuzz/desc.py case_of) from random field
values over the whole field domain. Documents with swizzle 96B are left out: it has no cuda.h enumerator,
so spec/ calls such an encoder document malformed, while the model, which also describes
tensormap.replace, reads it (legal on sm103).

`python -m tests.differential --count 100000` runs the issue's 100,000 cases (benchmarks/differential.py
too, over several processes); tests/solver_tests/model/test_illegal_differential.py runs a seeded sample in CI.
"""
from __future__ import annotations

import copy
import random
from typing import Optional

import spec.rules  # noqa: F401  (registers every rule)
from spec.rule import SpecError
from spec.tma import tensormap as spec_tm
from spec.cases import desc_case as spec_desc_case

from solver.model import tensormap as tm
from solver.fuzz import desc_sampling
from solver.model import desc_case as desc_model

ARCHES = ("sm90", "sm100", "sm103")

# --- Tensor-map documents ----------------------------------------------------------------------------------
# Legal on every arch (im2col_wide: sm100 and sm103), from the driver API's parameter descriptions.
TILED = {"encode": "tiled", "dataType": "BFLOAT16", "rank": 2, "globalAddress": 0x7F0000000000,
         "globalDim": [4096, 4096], "globalStrides": [8192], "boxDim": [64, 128], "elementStrides": [1, 1],
         "interleave": "NONE", "swizzle": "128B", "l2Promotion": "L2_128B", "oobFill": "NONE"}
TILED_5D = dict(TILED, dataType="FLOAT32", rank=5, globalDim=[32, 16, 8, 4, 2], globalStrides=[128, 2048, 16384, 65536],
                boxDim=[32, 8, 4, 2, 2], elementStrides=[1, 2, 1, 3, 1])
TILED_INTERLEAVED = dict(TILED, dataType="FLOAT16", rank=3, globalDim=[8, 64, 8], globalStrides=[256, 16384],
                         boxDim=[8, 64, 2], elementStrides=[2, 1, 1], interleave="32B", swizzle="32B")
PACKED = dict(TILED, dataType="16U4_ALIGN16B", globalDim=[1024, 64], globalStrides=[1024], boxDim=[128, 64])
IM2COL = {"encode": "im2col", "dataType": "FLOAT16", "rank": 4, "globalAddress": 0x7F0000000000,
          "globalDim": [64, 7, 7, 8], "globalStrides": [128, 896, 6272], "elementStrides": [1, 1, 1, 1],
          "interleave": "NONE", "swizzle": "128B", "l2Promotion": "NONE", "oobFill": "NONE",
          "pixelBoxLowerCorner": [-1, -1], "pixelBoxUpperCorner": [-1, -1], "channelsPerPixel": 64,
          "pixelsPerColumn": 128}
IM2COL_5D = dict(IM2COL, rank=5, globalDim=[32, 5, 5, 5, 2], globalStrides=[64, 320, 1600, 8000],
                 elementStrides=[1, 1, 2, 1, 1], pixelBoxLowerCorner=[-1, -1, 0], pixelBoxUpperCorner=[0, -1, -2],
                 channelsPerPixel=32, pixelsPerColumn=64, swizzle="64B")
WIDE = {"encode": "im2col_wide", "dataType": "FLOAT16", "rank": 4, "globalAddress": 0x7F0000000000,
        "globalDim": [128, 9, 7, 64], "globalStrides": [256, 2304, 16128], "elementStrides": [1, 1, 1, 1],
        "interleave": "NONE", "swizzle": "128B", "l2Promotion": "NONE", "oobFill": "NONE",
        "pixelBoxLowerCornerWidth": 0, "pixelBoxUpperCornerWidth": 0, "channelsPerPixel": 64,
        "pixelsPerColumn": 128, "mode": "W"}      # PTX 5.5.5's im2col::w example
BASES = (TILED, TILED_5D, TILED_INTERLEAVED, PACKED, IM2COL, IM2COL_5D, WIDE)

U32, U64 = (1 << 32) - 1, (1 << 64) - 1
# Values on both sides of each documented limit, and the C types' ends
POOLS = {
    "globalDim": (0, 1, 2, 3, 7, 64, 127, 128, 1000, 4096, (1 << 31) - 1, 1 << 31, (1 << 31) + 1, 1 << 32,
                  (1 << 32) + 1, U64),
    "globalStrides": (0, 8, 16, 24, 32, 48, 256, 4096, 1 << 20, (1 << 40) - 32, (1 << 40) - 16, 1 << 40, U64),
    "elementStrides": (0, 1, 1, 2, 3, 4, 7, 8, 9, 16, 255, U32),
    "boxDim": (0, 1, 2, 4, 8, 16, 24, 32, 48, 64, 72, 128, 200, 256, 257, U32),
    "channelsPerPixel": (0, 1, 4, 8, 9, 16, 24, 32, 48, 64, 72, 128, 228, 256, 264, U32),
    "pixelsPerColumn": (0, 1, 8, 32, 128, 256, 512, 1024, 1025, U32),
    "corner": (0, -1, 1, -3, -16, -17, 15, 16, -128, -129, 127, 128, -(1 << 15), -(1 << 15) - 1, (1 << 15) - 1,
               1 << 15, -(1 << 31), (1 << 31) - 1),
    "globalAddress": (0, 8, 16, 32, 48, 0x7F0000000000, 0x7F0000000010, 0x7F0000000020, 0x7F0000000008, U64),
    "smemAddress": (0, 16, 64, 128, 256, 384, 512, 1024, 1040, 0x8000, U32),
    "coordinate0": (0, 1, 2, 8, 16, 64, 128, -128, -1, 96),
}
VOCABULARY = {"dataType": tm.DATA_TYPES, "interleave": tm.INTERLEAVES, "swizzle": tm.ENCODER_SWIZZLES,
              "l2Promotion": tm.L2_PROMOTIONS, "oobFill": tm.OOB_FILLS, "mode": tm.WIDE_MODES}
# What a document can hold that neither side's C types can (malformed on both sides)
MALFORMED = (("rank", -1), ("globalDim", [1.5]), ("boxDim", "64"), ("swizzle", "BOGUS"), ("channelsPerPixel", True),
             ("globalAddress", "0xZZ"), ("globalAddress", 1 << 64), ("pixelsPerColumn", -1), ("oobFill", None))


def _list_length(key: str, rank: int) -> int:
    return {"globalStrides": max(rank - 1, 0), "pixelBoxLowerCorner": max(rank - 2, 0),
            "pixelBoxUpperCorner": max(rank - 2, 0)}.get(key, rank)


LIST_KEYS = ("globalDim", "globalStrides", "elementStrides", "boxDim", "pixelBoxLowerCorner", "pixelBoxUpperCorner",
             "coordinates")


def _pool(key: str):
    if key.startswith("pixelBox"):
        return POOLS["corner"]
    return POOLS["coordinate0" if key == "coordinates" else key]


def _resize(doc: dict, rank: int, rng: random.Random) -> None:
    """Give the document a new rank, its lists cut or extended to the lengths the rank asks."""
    doc["rank"] = rank
    for key in LIST_KEYS:
        if key in doc:
            length, values = _list_length(key, rank), list(doc[key])
            while len(values) < length:
                values.append(rng.choice(values) if values and rng.random() < 0.7 else rng.choice(_pool(key)))
            doc[key] = values[:length]


def _mutate(doc: dict, rng: random.Random) -> None:
    """Redraw one argument (or add an optional one) in place."""
    keys = [k for k in doc if k not in ("encode",)] + ["rank", "smemAddress", "direction", "coordinates"]
    key = rng.choice(keys)
    if key == "rank":
        _resize(doc, rng.choice((0, 1, 2, 3, 4, 5, 6, 6, 7)), rng)
    elif key in VOCABULARY:
        doc[key] = rng.choice(VOCABULARY[key])
    elif key == "direction":
        doc[key] = rng.choice(("global_to_shared", "shared_to_global"))
    elif key == "coordinates":
        doc[key] = [rng.choice(POOLS["coordinate0"])] + [0] * max(doc["rank"] - 1, 0)
    elif key in LIST_KEYS:
        values = list(doc[key])
        if values:
            values[rng.randrange(len(values))] = rng.choice(_pool(key))
            doc[key] = values
    elif key in ("globalAddress", "smemAddress"):
        value = rng.choice(POOLS[key])
        doc[key] = rng.choice((value, value, hex(value), str(value)))     # `tma check` takes strings too
    elif key in ("pixelBoxLowerCornerWidth", "pixelBoxUpperCornerWidth"):
        doc[key] = rng.choice(POOLS["corner"])
    else:
        doc[key] = rng.choice(POOLS[key])


def tensormap_case(rng: random.Random) -> tuple:
    """(document, arch): a legal base with 0-4 arguments redrawn; now and then a malformed value."""
    doc = copy.deepcopy(rng.choice(BASES))
    for _ in range(rng.choice((0, 1, 1, 2, 2, 3, 4))):
        _mutate(doc, rng)
    if rng.random() < 0.02:
        key, value = rng.choice(MALFORMED)
        doc[key] = value
    return doc, rng.choice(ARCHES)


def tensormap_verdicts(doc: dict, arch: str) -> tuple:
    """(spec's broken rule ids or "malformed", the model's)."""
    try:
        ours = frozenset(v.rule.id for v in spec_tm.violations(spec_tm.parse_params(doc), arch))
    except SpecError:
        ours = "malformed"
    try:
        theirs = frozenset(tm.violated(doc, arch))
    except tm.MalformedDocument:
        theirs = "malformed"
    return ours, theirs


def tensormap_disagreement(doc: dict, arch: str) -> Optional[dict]:
    spec_says, model_says = tensormap_verdicts(doc, arch)
    if spec_says == model_says:
        return None
    return {"target": "tensormap", "arch": arch, "case": doc, "spec": _shown(spec_says), "model": _shown(model_says)}


def _shown(verdict):
    return verdict if isinstance(verdict, str) else sorted(verdict)


# --- Desc cases ----------------------------------------------------------------------------------------------
def desc_values(rng: random.Random) -> dict:
    """Field values of the desc model's record, anywhere in its domain (solver/model/desc_case.domain), the
    descriptor's fields mostly equal to the tile's (else nearly every case breaks a tile rule)."""
    m = desc_model
    arch = rng.randrange(len(m.ARCHES))
    dtype = rng.randrange(len(m.DTYPES))
    name = m.DTYPES[dtype]
    kind = m.ALL_KINDS.index(rng.choice(m.KINDS[name]))
    field = lambda: 16 * rng.choice((0, 1, 2, 3, 4, 6, 8, 16, 24, 32, 64, 128, 256, rng.randrange(1 << 14)))  # noqa: E731
    code = rng.randrange(4) if arch == 0 else rng.choice((0, 1, 2, 4, 6))
    names = m.SM90_CODES if arch == 0 else m.SM100_CODES
    v = dict(arch=arch, dtype=dtype, kind=kind, major=rng.randrange(2), mn=8 * rng.randint(1, 32),
             k=rng.choice((256 // m.BITS[name],) * 3 + (96, 64, 32, 16, 8, rng.randint(1, 256))),
             start=field(), lbo=field(), sbo=field(), base_offset=rng.choice((0, 0, 0, rng.randrange(8))),
             swizzle_code=code, lbo_mode=0 if arch == 0 else rng.choice((0, 0, 1)),
             fixed=rng.choice((1, 1, 1, rng.randrange(8))) if arch else rng.choice((0, 0, 0, rng.randrange(8))),
             stray=rng.choice((0, 0, 0, rng.randrange(len(m.STRAY_REGIONS) + 1))),
             tile_swizzle=rng.randrange(len(m.SWIZZLES)), tile_start=field(),
             tile_lbo=16 * rng.choice((1, 2, 8, 64, 128, 256)), tile_sbo=16 * rng.choice((8, 16, 64, 128)),
             cta_group=1 if arch == 0 else rng.choice((1, 2)), m=64 if arch == 0 else rng.choice(m.M_VALUES))
    if rng.random() < 0.8:
        v["tile_swizzle"] = m.SWIZZLES.index(names[code])
    for tile, desc in (("tile_start", "start"), ("tile_lbo", "lbo"), ("tile_sbo", "sbo")):
        if rng.random() < 0.8 and (desc == "start" or v[desc] > 0):
            v[tile] = v[desc]
    if name == "e2m1" and arch == 2 and rng.random() < 0.5:      # sm103's 48-byte K, the absolute LBO mode
        v.update(k=96, cta_group=2, m=256, lbo_mode=rng.choice((0, 1, 1)))
    return v


_ANCHORS: dict = {}


def desc_anchors(arch: int) -> list:
    """Legal desc cases of one arch: the model's solutions of "break nothing", each of a new shape (inputs
    only: spec/ judges them like any other case)."""
    if arch not in _ANCHORS:
        problem = desc_sampling.Problem(desc_model.ARCHES[arch])
        _ANCHORS[arch] = [v for v in (problem.next(seed) for seed in range(24)) if v is not None]
    return _ANCHORS[arch]


def _redraw(v: dict, rng: random.Random) -> None:
    """Redraw one field of a desc case from the whole domain (with its boundary values)."""
    m = desc_model
    field = rng.choice(m.FIELDS[1:])
    other = desc_values(rng)
    if field in ("dtype", "kind"):       # a kind of the (new) type
        if field == "dtype":
            v["dtype"] = other["dtype"]
        v["kind"] = m.ALL_KINDS.index(rng.choice(m.KINDS[m.DTYPES[v["dtype"]]]))
    elif field in ("swizzle_code", "lbo_mode", "fixed", "cta_group", "m") and v["arch"] == 0:
        return                           # sm90: fixed by the domain (wgmma)
    elif field == "swizzle_code" and v["arch"] != 0:
        v[field] = rng.choice((0, 1, 2, 4, 6))
    elif field == "lbo_mode":
        v[field] = 1 - v[field]
    else:
        v[field] = other[field]


def desc_case(rng: random.Random) -> tuple:
    """(case, arch, field values): half from a legal anchor with 0-3 fields redrawn, half drawn whole."""
    from solver.fuzz import desc as fuzz_desc
    if rng.random() < 0.5:
        v = dict(rng.choice(desc_anchors(rng.randrange(len(desc_model.ARCHES)))))
        for _ in range(rng.choice((0, 1, 1, 2, 3))):
            _redraw(v, rng)
    else:
        v = desc_values(rng)
    return fuzz_desc.case_of(v), desc_model.ARCHES[v["arch"]], v


def desc_verdicts(case: dict, arch: str, values: dict) -> tuple:
    """(spec's broken rule ids or "malformed", the model's). The desc model has a rule for each rule the
    target labels with (tests/solver_tests/fuzz/test_fuzz.py); the model's domain holds only cases spec can read."""
    try:
        spec_says = frozenset(v.rule.id for v in spec_desc_case.violations(spec_desc_case.parse_case(case, arch)))
    except SpecError:
        spec_says = "malformed"
    return spec_says, frozenset(r for r, ok in desc_model.evaluate(values).items() if not ok)


def desc_disagreement(case: dict, arch: str, values: dict) -> Optional[dict]:
    spec_says, model_says = desc_verdicts(case, arch, values)
    if spec_says == model_says:
        return None
    return {"target": "desc", "arch": arch, "case": case, "spec": _shown(spec_says), "model": _shown(model_says)}


# --- Running --------------------------------------------------------------------------------------------------
def run(count: int, seed: int, desc_share: float = 0.25) -> dict:
    """`count` cases (a `desc_share` of them desc cases): the tallies and the disagreements found."""
    rng = random.Random(seed)
    tally = {target: {"legal": 0, "illegal": 0, "malformed": 0} for target in ("tensormap", "desc")}
    disagreements = []
    for _ in range(count):
        if rng.random() < desc_share:
            target = "desc"
            case, arch, values = desc_case(rng)
            spec_says, model_says = desc_verdicts(case, arch, values)
        else:
            target = "tensormap"
            case, arch = tensormap_case(rng)
            spec_says, model_says = tensormap_verdicts(case, arch)
        tally[target]["malformed" if spec_says == "malformed" else "illegal" if spec_says else "legal"] += 1
        if spec_says != model_says:
            disagreements.append({"target": target, "arch": arch, "case": case, "spec": _shown(spec_says),
                                  "model": _shown(model_says)})
    return {"count": count, "seed": seed, "tally": tally, "disagreements": disagreements}


def main(argv=None) -> int:
    import argparse
    import json
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=17)
    args = parser.parse_args(argv)
    result = run(args.count, args.seed)
    print(json.dumps({k: v for k, v in result.items() if k != "disagreements"}))
    print(f"disagreements: {len(result['disagreements'])}")
    for found in result["disagreements"][:20]:
        print(json.dumps(found))
    return 1 if result["disagreements"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
