"""The tensormap fuzz target's sampling policy: what it asks Z3 for, and how it steers the answers.

solver/model/tensormap.py holds the rules (one Z3 constraint per rule id), the record and the
evaluator; here are the seed-dependent hints that make a document realistic (typical values, and for the
size rules a box drawn past the load limit), and `Problem`: solver/fuzz/problem.py's Problem over the
model's constraints, asked for the documents of one encode kind on one arch that keep some rules and break
others, each of a new shape (data type, swizzle, interleave, rank, which optional keys it has). The
fuzz target (solver/fuzz/tensormap.py) draws its anchors from it.
"""
from __future__ import annotations

import math
import random
from typing import Optional

from solver.fuzz import problem
from solver.fuzz.problem import Undecided
from solver.model.tensormap import (ARCHES, ATOM_SUBMODES, DATA_TYPES, ENCODER_SWIZZLES, ENCODES, INTERLEAVES,
                                    L2_PROMOTIONS, MAX_LOAD_BITS, MAX_RANK, PACKED, RULE_IDS, STORAGE_BITS,
                                    SWIZZLES, WIDE_MODES, Record, _bits_of, _multiple, _swizzle_is, code,
                                    constraints, document, domain, symbolic_record)
from solver.model.vocab import TMA_SPAN_BYTES

__all__ = ("Problem", "Undecided", "solve", "SIZE_RULES", "MAX_BOX", "MAX_STRIDE")


# --- Hints: documents that keep some rules and break others, steered towards realistic values ----------
def _hints(r: Record, encode: str, rng: random.Random, arch: str = "sm90", break_=frozenset()) -> list:
    """Typical values to steer the solver towards realistic, seed-dependent documents; any hint that
    conflicts with the asked rules is dropped. They also keep clear of limits outside the model that
    the H100's driver showed (spec/tma/tensormap.py): one box load within shared memory (small outer box
    dimensions) and an im2col pixel row a multiple of 16 bytes. A request to break
    tma.map.box_bytes or tma.map.box_bytes_loaded in a tiled map takes its shape and box from
    _box_past_the_load_limit instead."""
    hints = _typical_hints(r, encode, rng)
    size_rules = SIZE_RULES & set(break_)
    if encode == "tiled" and size_rules:
        hints.update(_box_past_the_load_limit(r, arch, rng, rounding="tma.map.box_bytes_loaded" in size_rules))
    hints = list(hints.values())
    rng.shuffle(hints)
    return hints


def _typical_hints(r: Record, encode: str, rng: random.Random) -> dict:
    """The seed's typical values: term id -> the hint fixing that term (_fix), drawn in this order."""
    hints: dict = {}
    _fix(hints, r.data_type, rng.randrange(len(DATA_TYPES)))
    _fix(hints, r.rank, rng.randint(3 if encode != "tiled" else 1, MAX_RANK))
    _fix(hints, r.global_address, 0x7F00_0000_0000 + 0x100 * rng.randrange(1 << 20))
    _fix(hints, r.interleave, 0 if rng.random() < 0.8 else rng.randrange(len(INTERLEAVES)))
    _fix(hints, r.swizzle, rng.randrange(len(SWIZZLES)))
    _fix(hints, r.l2_promotion, rng.randrange(len(L2_PROMOTIONS)))
    _fix(hints, r.oob_fill, 0 if rng.random() < 0.7 else 1)
    _fix(hints, r.mode, rng.randrange(len(WIDE_MODES)))
    _fix(hints, r.channels_per_pixel, rng.choice((16, 32, 64, 128)))
    hints["channelsPerPixel: 16-byte rows"] = _multiple(_bits_of(r, r.channels_per_pixel), 128)
    _fix(hints, r.pixels_per_column, rng.choice((32, 64, 128, 256)))
    _fix(hints, r.smem_address, rng.choice((0, 1024, 2048, 0x8000)) + rng.choice((0, 128, 256, 384)))
    _fix(hints, r.coordinate0, rng.choice((0, 64, 128, 256, -128)))
    for term in r.global_dim:
        _fix(hints, term, rng.choice((1, 3, 64, 128, 1000, 4096, 1 << 16)))
    for term in r.global_strides:
        _fix(hints, term, rng.choice((256, 4096, 1 << 16, 1 << 20)))
    for term in r.box_dim[:2]:
        _fix(hints, term, rng.choice((8, 16, 32, 64)))
    for term in r.box_dim[2:]:
        _fix(hints, term, rng.choice((1, 2)))
    for term in r.element_strides:
        _fix(hints, term, 1 if rng.random() < 0.8 else rng.randint(1, 8))
    for term in r.lower_corner + [r.lower_corner_w]:
        _fix(hints, term, rng.randint(-3, 0))
    for term in r.upper_corner + [r.upper_corner_w]:
        _fix(hints, term, rng.randint(-3, 0))
    return hints


def _fix(hints: dict, term, value: int) -> None:
    """The hint term == value, under the term's id: a later hint on the same term replaces it."""
    hints[term.get_id()] = term == value


SIZE_RULES = frozenset({"tma.map.box_bytes", "tma.map.box_bytes_loaded"})
MAX_BOX = 256           # boxDim[i] <= 256 (tma.map.box_range)
MAX_STRIDE = 8          # elementStrides[i] <= 8 (tma.map.element_strides_range)


def _box_past_the_load_limit(r: Record, arch: str, rng: random.Random, rounding: bool) -> dict:
    """Hints (as _typical_hints) for a tiled map that breaks a size rule: with `rounding`
    (tma.map.box_bytes_loaded) a box whose rows counted rounded down (the driver's count) stay within
    MAX_LOAD_BITS while the rows it loads, rounded up (PTX 5.5.3.2), pass it; without, a box whose
    rows counted rounded down pass it (tma.map.box_bytes). The typical hints (small boxes, stride 1)
    keep both rules by far: Z3 would drop them one by one, each drop a check on the non-linear
    counts, and often give up (rlimit). Drawn: a whole-byte data type, a swizzle and an interleave of
    the arch, a row of whole 16-byte chunks within the swizzle's span (elementStrides[0] 1, so both
    counts take the row whole), and the outer dimensions by _outer_box. Z3 checks them against every
    rule as it checks any hint."""
    types = [t for t in DATA_TYPES if t not in PACKED]
    swizzles = [s for s in ENCODER_SWIZZLES if arch != "sm90" or s not in ATOM_SUBMODES]
    data_type, swizzle = rng.choice(types), rng.choice(swizzles)
    interleave = "NONE" if rng.random() < 0.8 else rng.choice(INTERLEAVES[1:])
    if interleave == "32B":
        swizzle = "32B"                         # tma.map.interleave_swizzle
    element_bytes = STORAGE_BITS[data_type] // 8
    widest = MAX_BOX * element_bytes
    if interleave == "NONE" and swizzle != "NONE":
        widest = TMA_SPAN_BYTES[swizzle]        # tma.map.box_swizzle_span
    row_bytes = rng.choice([16 << k for k in range(8) if 16 << k <= widest])
    most = (MAX_LOAD_BITS // 8) // row_bytes   # the most rows within the limit
    # one outer dimension counts up to MAX_BOX rows, and rounds up past at most MAX_BOX // 2 (stride
    # 2); interleaved layouts take rank >= 3 (tma.map.interleave_rank)
    one_dimension = most < (MAX_BOX // 2 if rounding else MAX_BOX) and interleave == "NONE"
    rank = rng.randint(2 if one_dimension else 3, MAX_RANK)
    box, strides = _outer_box(most, rank - 1, rng, rounding)
    box, strides = [row_bytes // element_bytes] + box, [1] + strides
    hints: dict = {}
    _fix(hints, r.data_type, code(DATA_TYPES, data_type))
    _fix(hints, r.rank, rank)
    _fix(hints, r.swizzle, code(SWIZZLES, swizzle))
    _fix(hints, r.interleave, code(INTERLEAVES, interleave))
    for terms, values in ((r.box_dim, box), (r.element_strides, strides)):
        for term, value in zip(terms, values):  # the entries below the rank
            _fix(hints, term, value)
    return hints


def _outer_box(most: int, dims: int, rng: random.Random, rounding: bool) -> tuple:
    """(boxDim, elementStrides) of `dims` outer dimensions. With `rounding`, the product of floor(box /
    stride) is at most `most` and the product of ceil(box / stride) is more; without, the product of
    floor(box / stride) is more than `most`.

    Without rounding, each dimension draws its floor so that the product can still pass `most` with
    MAX_BOX in each dimension left. With rounding, one dimension, drawn, rounds: floor most // F (F the
    others' floor product) with a stride of 2 or more and a remainder; the others are drawn so that
    F <= most and most // F fits a stride of 2 (at most 127: (most // F) * 2 + 1 <= MAX_BOX); then
    floors <= F * (most // F) <= most and ceils >= F * (most // F + 1) > most. `dims` must make that
    possible: MAX_BOX ** dims > most without rounding, MAX_BOX ** (dims - 1) * 128 > most with."""
    last = rng.randrange(dims) if rounding else None
    least = most // 128 + 1 if rounding else most + 1         # the least floor product of the others
    floors, boxes, strides = 1, [0] * dims, [0] * dims
    others = [i for i in range(dims) if i != last]
    for done, i in enumerate(others):
        left = len(others) - done - 1          # dimensions drawn after this one, up to MAX_BOX each
        stride = 1 if rng.random() < 0.6 else rng.randint(2, MAX_STRIDE)
        low = max(1, -(-least // (floors * MAX_BOX ** left)))
        if low > MAX_BOX // stride:
            stride = 1
        high = min(MAX_BOX // stride, most // floors) if rounding else MAX_BOX // stride
        floor = round(math.exp(rng.uniform(math.log(low), math.log(max(low, high)))))
        floor = min(max(floor, low), max(low, high))
        remainder = rng.randint(0, min(stride - 1, MAX_BOX - floor * stride))
        boxes[i], strides[i] = floor * stride + remainder, stride
        floors *= floor
    if rounding:
        floor = most // floors
        stride = rng.randint(2, min(MAX_STRIDE, (MAX_BOX - 1) // floor))
        boxes[last] = floor * stride + rng.randint(1, min(stride - 1, MAX_BOX - floor * stride))
        strides[last] = stride
    return boxes, strides


_SHARED = {}


def _shared_terms() -> tuple:
    """The symbolic record and its constraints, built once per process: every Problem copies them into
    a Z3 context of its own (IsolatedSolver), so sharing them changes no answer, and a campaign does
    not rebuild them (a third of a short campaign's time)."""
    if not _SHARED:
        r = symbolic_record()
        _SHARED["terms"] = (r, constraints(r))
    return _SHARED["terms"]


def _shape(r: Record) -> tuple:
    """What makes two documents differ in kind: each document found is blocked by these values."""
    return (r.data_type, r.swizzle, r.interleave, r.rank, r.has_smem_address, r.direction, r.has_coordinates)


def Problem(encode: str, arch: str, keep=None, break_=(), swizzles=ENCODER_SWIZZLES,
            budget: Optional[int] = None) -> problem.Problem:
    """The documents for `encode` on `arch` that obey every rule in `keep` (default: every rule not in
    `break_`) and break every rule in `break_`. `swizzles` are the names a document may use: by default
    those cuda.h can pass to an encoder (96B, PTX tensormap.replace only, is left out; spec/tma/tensormap.py
    reads it as malformed there).

    `next(seed)` returns one more document, or None when none is left. Each document found is blocked
    by its *shape* (data type, swizzle, interleave, rank and which optional keys it has), so successive
    documents differ in kind, not only in a number; when every shape is used up, `next` returns None.

    `budget` bounds each Z3 check (its rlimit, counted in Z3's deterministic resource units, so the same
    seed gets the same answer); `next` raises Undecided where a check runs past it. None: no bound, and
    Z3 'unknown' is a RuntimeError."""
    break_ = set(break_)
    keep = set(RULE_IDS) - break_ if keep is None else set(keep)
    unknown = (keep | break_) - set(RULE_IDS)
    if unknown:
        raise ValueError(f"unknown rule ids: {', '.join(sorted(unknown))}")
    if keep & break_:
        raise ValueError(f"rules both kept and broken: {', '.join(sorted(keep & break_))}")
    if encode not in ENCODES or arch not in ARCHES:
        raise ValueError(f"encode {encode!r} / arch {arch!r}")
    r, rules = _shared_terms()
    fixed = [r.encode == ENCODES.index(encode), r.arch == ARCHES.index(arch), _swizzle_is(r, *swizzles)]
    # the optional keys appear only where a rule to break needs them
    if not {"tma.map.smem_alignment", "tma.box.destination_alignment"} & break_:
        fixed.append(r.has_smem_address == 0)
    if "tma.map.copy_direction" not in break_:
        fixed.append(r.direction == 0)
    if not {"tma.load.coord0_16B", "tma.load.packed_coord0"} & break_:
        fixed.append(r.has_coordinates == 0)
    asked = {rule_id: rules[rule_id] for rule_id in sorted(keep) + sorted(break_)}    # asserted in this order
    broken = frozenset(break_)

    def hints(record: Record, rng: random.Random) -> list:
        return _hints(record, encode, rng, arch, broken)
    return problem.Problem(r, asked, domain(r), fixed, broken, hints, _shape, read=document, budget=budget)


def solve(encode: str, arch: str, keep=None, break_=(), seed: int = 0,
          swizzles=ENCODER_SWIZZLES) -> Optional[dict]:
    """One document of Problem(encode, arch, keep, break_, swizzles); None when none exists."""
    return Problem(encode, arch, keep, break_, swizzles).next(seed)
