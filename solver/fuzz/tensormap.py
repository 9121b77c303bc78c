"""Fuzz target `tensormap`: the arguments of cuTensorMapEncodeTiled / Im2col / Im2colWide.

A case is exactly a `layoutproof tma check` parameter document (docs/CLI.md), optionally with the copy's
destination (smemAddress), direction and tensor coordinates, which the copy rules need
(tma.box.destination_alignment, tma.map.smem_alignment, tma.map.copy_direction, tma.load.coord0_16B,
tma.load.packed_coord0).

Generation (solver/fuzz/engine.py): for each encode kind the asked rules apply to, a Z3 Problem over
solver/model/tensormap.py's constraints (solver/fuzz/tensormap_sampling.py) gives *anchors*, each of a new
shape (data type, swizzle, interleave, rank, optional keys: blocking clauses), steered by seed-dependent
hints. Between anchors, cases are *sampled*: an anchor with one to three arguments redrawn, kept only
when spec/tma/tensormap.py says it breaks exactly the asked rules. Exact duplicates are dropped.

Labels come from spec/tma/tensormap.py (`label`): the rules broken, enforced or not on the arch, and the
outcome: "refused" when the driver's encoder refuses (an enforced rule); otherwise the rule's recorded
consequence (spec.rule.Rule.outcome_on), with the witness of a wrong-data outcome.
"""
from __future__ import annotations

import functools
import math
import random
from typing import Iterator, Optional

from spec.tma import tensormap as spec_tensormap
from spec.tma import place as tma_place
from spec.tma import swizzle as tma_swizzle
from spec.rules import SpecError

from solver.model import tensormap as model
from solver.fuzz import tensormap_sampling as sampling
from solver.fuzz.engine import Stats, anchored, exactly
from solver.fuzz.outcome import Label, blamed, broken_ids, rule_outcome, worst

RULE_IDS = model.RULE_IDS
ENCODES = model.ENCODES

# --- Labels ---------------------------------------------------------------------------------------------
def _element_bytes(document: dict):
    bits = spec_tensormap.DATA_TYPES[document["dataType"]].bits
    return bits // 8 if bits % 8 == 0 else None


def misplaced_element(document: dict, memo: Optional[dict] = None):
    """Rule tma.map.smem_alignment's witness: with a destination off the swizzle's repeat, TMA takes the
    swizzle phase from the absolute address (PTX 5.5.7; tma.place.tiled, H100), so an element lands
    elsewhere than a consumer that starts the pattern at the destination expects. The first such
    element, or None (no swizzle, or a packed type whose rows spec does not place).

    spec places a box row after row (flat row index, dimension 0 fastest) at destination + row * pitch,
    the pitch set by the row alone: the first R rows of a box are placed as the box (dims[0], R) places
    them. The first misplaced element is nearly always in row 0 (the swizzle's phase shows there), so
    row 0 is placed first, then rows 0-7 (PREFIX_ROWS), then the rows of one repeat (repeat_rows: no
    row below them is misplaced unless one of them is), and the whole box only when the swizzle has no
    repeat to go by (misplaced_element_whole, the plain reading, is what tests compare it with).

    memo: a dict that keeps what spec answered for each box (Placements) across the documents of one
    generation run; None: nothing kept."""
    box = _boxes(document, memo)
    if box is None:
        return None
    written_box, anchored_box = box
    rows = 1
    for c in written_box.counts[1:]:
        rows *= c
    repeat = repeat_rows(written_box)
    for prefix_rows in PREFIX_ROWS + ((repeat,) if repeat else ()):
        if rows <= prefix_rows:
            break
        dims, strides = (written_box.dims[0], prefix_rows), (written_box.element_strides[0], 1)
        try:
            prefix = [tma_place.make_box(b.swizzle, b.element_bytes, dims, b.smem_address, strides)
                      for b in box]
            found = _first_misplaced(*prefix, memo=memo)
        except SpecError:
            found = None
        if found is not None:
            return found
        if repeat and prefix_rows >= repeat:
            return None
    return _first_misplaced(written_box, anchored_box, memo=memo)


PREFIX_ROWS = (1, 8)


def repeat_rows(box) -> Optional[int]:
    """Rows q after which the misplacement repeats, or None: element (row + q, column) is misplaced
    exactly when (row, column) is. The swizzle moves only the address bits below its period P (a power
    of two; spec.tma.swizzle.period_deltas), so sw(x + j*P) = sw(x) + j*P; q rows of pitch p add
    q*p = j*P for q = P / gcd(p, P), to the written address D + x and the expected one alike, so
    sw(D + x + j*P) - (D + sw(x + j*P)) = sw(D + x) - (D + sw(x)). None when no period table stands
    for the swizzle (a replaced swizzle_byte_address, say)."""
    table = tma_swizzle.period_deltas(box.swizzle)
    if table is None:
        return None
    period = table[0] + 1
    _, _, pitch = tma_place.row_layout(box)
    return period // math.gcd(pitch, period)


def misplaced_element_whole(document: dict):
    """misplaced_element, placing the whole box element by element (the reference for tests)."""
    box = _boxes(document)
    return None if box is None else _first_misplaced(*box, place=tma_place.place)


def _boxes(document: dict, memo: Optional[dict] = None):
    """(the box written at smemAddress, the same box at 0), both placeable by spec; None when the
    witness does not apply or spec does not place the box."""
    element_bytes = _element_bytes(document)
    swizzle, destination = document["swizzle"], document.get("smemAddress")
    if destination is None or swizzle == "NONE" or element_bytes is None or destination % 16:
        return None
    if document["encode"] == "tiled":
        dims, strides = document["boxDim"], document["elementStrides"]
    else:          # one im2col load: pixelsPerColumn rows of channelsPerPixel elements
        dims, strides = [document["channelsPerPixel"], document["pixelsPerColumn"]], None
    try:
        boxes = (tma_place.make_box(swizzle, element_bytes, dims, destination, strides),
                 tma_place.make_box(swizzle, element_bytes, dims, 0, strides))
    except SpecError:
        return None
    if not all(Placements.placeable(b, memo) for b in boxes):
        return None             # spec's place refuses it (SpecError)
    return boxes


def _first_misplaced(written_box, anchored_box, place=tma_place.place_rows, memo: Optional[dict] = None):
    """The first element `place` (spec.tma.place.place, or place_rows: the same list by rows) puts
    elsewhere than destination + its place in the box at 0."""
    written, anchored = (Placements.placed(b, place, memo) for b in (written_box, anchored_box))
    if written is None or anchored is None:
        return None
    destination, per_row = written_box.smem_address, written_box.counts[0]
    for i, (at, offset) in enumerate(zip(written, anchored)):
        if at != destination + offset:
            return {"element": {"row": i // per_row, "column": i % per_row},
                    "written_at": at, "expected_at": destination + offset,
                    "reader": "a consumer that starts the swizzle pattern at smemAddress (phase 0 there); "
                              "a descriptor with base offset 0 reads it right (rule readmap.swizzle_phase)"}
    return None


class Placements:
    """spec's answers about boxes (spec.tma.place: whether it places one, where), kept in a dict for one
    generation run: the samples around an anchor redraw other arguments far more often than the box,
    so a run of 1000 smem_alignment cases places a few dozen distinct boxes about 2000 times. A box
    (spec.tma.place.Box, a frozen dataclass) is its own key. The dict lives as long as one generate()
    call, within which spec does not change (a test's spec mutant is applied before a run, never
    during one). Memory stays bounded: boxes of more than MOST_ELEMENTS elements are placed again each
    time, and the dict is emptied when it holds MOST_KEPT answers."""
    MOST_ELEMENTS = 1 << 11
    MOST_KEPT = 1 << 10

    @staticmethod
    def placeable(box, memo: Optional[dict]) -> bool:
        """spec.tma.place.placeable(violations(box))."""
        def answer():
            return tma_place.placeable(tma_place.violations(box))
        return answer() if memo is None else Placements._kept(memo, ("placeable", box), answer)

    @staticmethod
    def placed(box, place, memo: Optional[dict]):
        """place(box) (spec.tma.place.place or place_rows), None where spec refuses the box (SpecError)."""
        def answer():
            try:
                return place(box)
            except SpecError:
                return None
        if memo is None or math.prod(box.counts) > Placements.MOST_ELEMENTS:
            return answer()
        return Placements._kept(memo, (place, box), answer)

    @staticmethod
    def _kept(memo: dict, key, answer):
        if key not in memo:
            if len(memo) >= Placements.MOST_KEPT:
                memo.clear()
            memo[key] = answer()
        return memo[key]


def _runtime_outcome(rule_id: str, arch: str, document: dict, memo: Optional[dict] = None):
    """(outcome, witness) of breaking a rule the encoder accepts: the rule's recorded consequence
    (spec.rule.Rule.outcome_on), with the witness a wrong-data outcome needs."""
    outcome, why = rule_outcome(rule_id, arch)
    if rule_id == "tma.box.destination_alignment":
        return outcome, {"note": f"destination {document['smemAddress']:#x} is off 128 bytes: {why}"}
    if outcome == "wrong-data":                  # tma.map.smem_alignment: the element that lands elsewhere
        if document["smemAddress"] % 128:        # the copy traps first (tma.box.destination_alignment)
            return "unknown", {"note": "the copy traps before anyone reads it"}
        witness = misplaced_element(document, memo)
        return ("wrong-data", witness) if witness else ("ok", None)
    if outcome == "unknown" and why.startswith("nothing recorded"):
        why = "the encoder accepts it; no observation of a copy"
    return outcome, {"note": why}


def label(document: dict, arch: str, expect=None, memo: Optional[dict] = None) -> Label:
    """What spec/tma/tensormap.py says of a document on `arch` (SpecError when it is malformed). With
    `expect` (a set of rule ids), None as soon as the broken rules are known to differ from it. memo:
    a dict kept across one generation run's documents (Placements), or None."""
    params = spec_tensormap.parse_params(document)
    broken = spec_tensormap.violations(params, arch)
    ids = broken_ids(broken, expect)
    if ids is None:
        return None
    enforced = {rule_id for rule_id in ids if spec_tensormap.enforced(rule_id, arch)}
    refusal = blamed(broken, enforced, encoder=spec_tensormap.ENCODER_NAMES[document["encode"]],
                     driver_result="CUDA_ERROR_INVALID_VALUE")
    if refusal:
        return Label(ids, "refused", refusal)
    outcomes = [_runtime_outcome(rule_id, arch, document, memo) for rule_id in ids]
    outcome = worst(o for o, _ in outcomes)
    witness = next((w for o, w in outcomes if o == outcome), None)
    return Label(ids, outcome, witness)


# --- Sampling around an anchor ---------------------------------------------------------------------------
GLOBAL_DIMS = (1, 2, 3, 7, 16, 64, 100, 128, 1000, 4096, 1 << 16, 1 << 31, 1 << 32)


def _redraw_list(doc: dict, key: str, rng: random.Random, draw) -> None:
    if doc.get(key):
        values = list(doc[key])
        i = rng.randrange(len(values))
        values[i] = draw(i, values[i])
        doc[key] = values


def _mutators(rng: random.Random):
    """Functions that redraw one argument of a document in place."""
    def address(doc):
        doc["globalAddress"] = 0x7F00_0000_0000 + 16 * rng.randrange(1 << 24) * rng.choice((1, 2, 16))

    def global_dim(doc):
        _redraw_list(doc, "globalDim", rng, lambda i, v: rng.choice(GLOBAL_DIMS))

    def global_stride(doc):
        _redraw_list(doc, "globalStrides", rng, lambda i, v: 16 * rng.choice((1, 2, 3, 8, 64, 1000, 1 << 16)))

    def element_stride(doc):
        _redraw_list(doc, "elementStrides", rng, lambda i, v: rng.randint(1, 8) if i else v)

    def box(doc):
        _redraw_list(doc, "boxDim", rng, lambda i, v: rng.choice((8, 16, 32, 64, 128)) if i == 0 else rng.randint(1, 256))

    def enums(doc):
        key, names = rng.choice((("l2Promotion", model.L2_PROMOTIONS), ("oobFill", model.OOB_FILLS)))
        doc[key] = rng.choice(names)

    def corners(doc):
        for key in ("pixelBoxLowerCorner", "pixelBoxUpperCorner"):
            _redraw_list(doc, key, rng, lambda i, v: rng.randint(-16, 15))
        for key in ("pixelBoxLowerCornerWidth", "pixelBoxUpperCornerWidth"):
            if key in doc:
                doc[key] = rng.randint(-16, 15)

    def pixels(doc):
        if "pixelsPerColumn" in doc:
            doc["pixelsPerColumn"] = rng.choice((1, 8, 32, 64, 100, 256, 512, 1024))
        if "channelsPerPixel" in doc:
            doc["channelsPerPixel"] = rng.choice((8, 16, 32, 48, 64, 128, 256))

    def destination(doc):
        if "smemAddress" in doc:
            doc["smemAddress"] = rng.choice((0, 1024, 0x4000)) + 128 * rng.randrange(8) + rng.choice((0, 0, 16))

    def data_type(doc):
        """Another type of the same size (the kind varies between anchors; the sizes still fit)."""
        bits = model.STORAGE_BITS[doc["dataType"]]
        doc["dataType"] = rng.choice([t for t in model.DATA_TYPES if model.STORAGE_BITS[t] == bits])

    def swizzle(doc):
        doc["swizzle"] = rng.choice(model.ENCODER_SWIZZLES)

    def interleave(doc):
        doc["interleave"] = rng.choice(model.INTERLEAVES)

    return (address, global_dim, global_stride, element_stride, box, enums, corners, pixels, destination,
            data_type, swizzle, interleave)


# --- Generation ----------------------------------------------------------------------------------------
def encodes_for(violate: frozenset, arch: str) -> tuple:
    """The encode kinds every asked rule applies to (im2col_wide only where a valid map can exist)."""
    kinds = [e for e in ENCODES if violate <= set(model.rules_for(e))]
    return tuple(kinds)


# Z3's budget for one check of an anchor (rlimit: deterministic resource units, not seconds). Some rules
# are non-linear (tma.map.box_bytes*: products of floor / ceiling divisions): a check may take seconds or
# end 'unknown'. Past the budget the anchor is given up for another seed; a kind whose anchors give up
# UNDECIDED_LIMIT times in a row drops out, and the cases come from sampling around the anchors found
# (each still labelled by spec). A kind with no anchor yet gets a budget 4 times larger at each try.
ANCHOR_BUDGET = 300_000
UNDECIDED_LIMIT = 3
FIRST_ANCHOR_TRIES = 6
# A fresh anchor for every this many cases: an anchor costs tens of milliseconds, a sample a fraction of
# one; the shape mutators (data type, swizzle, interleave) keep the kinds varied between anchors.
ANCHOR_EVERY = 500


def generate(arch: str, violate: frozenset, count: int, seed: int, stats: Stats) -> Iterator[tuple]:
    rng = random.Random(seed)
    problems = [sampling.Problem(e, arch, break_=violate, budget=ANCHOR_BUDGET) for e in encodes_for(violate, arch)]
    solved = []
    gave_up = {id(p): 0 for p in problems}

    def next_anchor(anchor_seed):
        """One document from the encode kinds in turn; a kind with no new shape left, or whose anchors
        ran past the budget UNDECIDED_LIMIT times in a row, drops out."""
        while problems:
            problem = problems[len(solved) % len(problems)]
            first = problem.found == 0
            if first:
                problem.set_budget(ANCHOR_BUDGET << (2 * gave_up[id(problem)]))
            try:
                doc = problem.next(anchor_seed)
            except sampling.Undecided:
                gave_up[id(problem)] += 1
                if gave_up[id(problem)] >= (FIRST_ANCHOR_TRIES if first else UNDECIDED_LIMIT):
                    problems.remove(problem)
                anchor_seed = rng.randrange(1 << 30)
                continue
            if first:
                problem.set_budget(ANCHOR_BUDGET)
            if doc is not None:
                gave_up[id(problem)] = 0
                solved.append(doc)
                return doc
            problems.remove(problem)
            anchor_seed = rng.randrange(1 << 30)
        return None

    def copy(doc):          # values are ints, names and flat lists of ints
        return {key: list(value) if isinstance(value, list) else value for key, value in doc.items()}

    labelled = functools.partial(label, memo={})         # spec's box placements, kept for this run
    yield from anchored(next_anchor, lambda doc: doc, exactly(labelled, arch, violate), _mutators(rng), copy,
                        count, rng, stats, violate, anchor_every=ANCHOR_EVERY, adapt=True)
