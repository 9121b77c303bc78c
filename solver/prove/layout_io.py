"""`prove --layout L read-by DESC` and `prove --layout L written-by --tma PARAMS`: does a shared-memory
descriptor read, or a TMA tiled box write, exactly the user's layout (solver.prove.user_layout's
address(i) = swizzle(start + bytes * (offset + L(i)))).

read-by DESC (arch, major, k_steps)
  L is rank 2, (mn, k); MN = size of mode 0 (the operand's M or N extent), K_instr = the instruction K
  of the dtype on the arch (spec.mma.dtypes, the first one), k_steps = size of mode 1 / K_instr unless
  given. The descriptor of k-step s is DESC with its start-address field advanced by the layout's own
  *linear* (unswizzled) byte offset of k = s * K_instr,

      start_s = start(DESC) + bytes * (L(0, s*K_instr) - L(0, 0)),    every other field (LBO, SBO,
                                                                       base offset, swizzle) unchanged,

  as kernels advance a descriptor along K (CUTLASS's descriptor iterator adds the unswizzled offset of
  the k-block). Proved when, for every step s and every (mn, k) in [0, MN) x [0, K_instr), the address
  spec.mma.readmap reads element (mn, k) of step s from equals the layout's address of
  (mn, s*K_instr + k).

written-by --tma PARAMS --coords c0,c1,...
  PARAMS is a `tma check` tiled document with smemAddress; the coordinates go into it as
  "coordinates", and a document tma check refuses (legal: false) is not a load (exit 2). The box's
  element (i0, i1, ...) (dimension 0 fastest, counts ceil(boxDim_i / elementStrides_i) past dimension 0)
  lands where spec.tma.place says; proved when that is the layout's address of (i0, i1, ...) for every
  element (L has the box's rank and its mode sizes are the box's counts).

Engines: "gf2" when both sides are affine over GF(2) -- the layout by solver.gf2.layout.linearize; the
read side from spec.mma.readmap's per-dimension parts evaluated at each power of two (for whole-byte
dtypes, relative LBO mode, power-of-two MN and a base offset that leaves the phase at the 128-byte line,
each part is a sum of bit-fields of mn or k times a field, so its bit weights add; they must not share
bits, as in linearize) and the descriptor swizzle (address bits [M, M+B) ^= bits [7, 7+B)); the TMA side
is itself a layout (dimension 0 stride bytes, the rest the row pitch) under the TMA swizzle's XOR for
NONE/32B/64B/128B. Equality of two affine maps is offsets and columns equal; a differing column names
the element. Otherwise "enumeration": spec evaluates both sides for every element (at most
ELEMENT_LIMIT elements; larger is refused before any work). A GF(2) verdict on at most CROSS_CHECK_LIMIT
elements is also enumerated; engines that disagree give "unknown". Every counterexample is replayed by
spec before the answer is "refuted".
"""
from __future__ import annotations

import itertools
import json
from typing import Optional

from spec.cute.layout import ComposedLayout
from spec.cute.swizzle import DESCRIPTOR_SWIZZLES, pattern_rows
from spec.mma import descriptor as spec_descriptor
from spec.mma import readmap
from spec.rule import SpecError

from solver.gf2.layout import Affine, linearize, power_of_two_log, swizzle_bits
from solver.model.address_map import AddressMap

ELEMENT_LIMIT = 1 << 18          # elements of the tile (all k-steps) or the box: refused beyond
CROSS_CHECK_LIMIT = 1 << 16      # a GF(2) verdict on at most this many elements is also enumerated
READ_RULES = ["desc.tile.reads", "readmap.swizzle_phase", "layout.notation"]
WRITE_RULES = ["tma.place.tiled", "tma.place.row_pitch", "layout.notation"]
READ_SOURCE = "PTX ISA 9.7.15.5.1.2.2 / 9.7.16.4.1 (descriptor), 9.7.16.3 (what it reads: spec.mma.readmap)"
WRITE_SOURCE = "PTX ISA 5.5.3 (Tiled mode), 5.5.7 (Swizzling Modes): spec.tma.place"
_TMA_LINEAR = {"NONE": (0, 4, 3), "32B": (1, 4, 3), "64B": (2, 4, 3), "128B": (3, 4, 3)}


def _mode_offsets(s, mode: int, count: int) -> list:
    """L(0,..,i,..,0) for i in [0, count): a CuTe layout is the sum of its top-level modes."""
    rank = s.inner.rank
    return [s.inner(tuple(i if m == mode else 0 for m in range(rank))) for i in range(count)]


def _layout_addresses(s, counts) -> list:
    """spec's address of every coordinate of `counts` (mode 0 fastest), mode offsets summed."""
    per_mode = [_mode_offsets(s, m, c) for m, c in enumerate(counts)]
    composed = isinstance(s.layout, ComposedLayout)
    base = s.start + s.element_bytes * (s.layout.offset if composed else 0)
    out = []
    for combination in itertools.product(*reversed(per_mode)):
        linear = base + s.element_bytes * sum(combination)
        out.append(s.layout.swizzle(linear) if composed else linear)
    return out


def _restrict(a: Affine, mode_bits: tuple, first: tuple, counts: tuple) -> Affine:
    """The layout's affine map on the block [first_m, first_m + counts_m) of each mode (counts powers of
    two, first multiples of them): the offset at `first`, the columns of each mode's low bits."""
    index, j, columns = 0, 0, []
    bit = 0
    for m, nbits in enumerate(mode_bits):
        low = power_of_two_log(counts[m])
        columns += a.columns[j:j + low]
        index |= first[m] << bit
        bit += nbits
        j += nbits
    return Affine(tuple(columns), a(index), tuple(power_of_two_log(c) for c in counts))


def _compare_affine(layout_side: Affine, other: Affine):
    """None when equal, else the unit index (0 or 1 << j) where they differ."""
    if layout_side.offset != other.offset:
        return 0
    for j, (x, y) in enumerate(zip(layout_side.columns, other.columns)):
        if x != y:
            return 1 << j
    return None


# --- read-by ---------------------------------------------------------------------------------------------

class ReadQuestion:
    def __init__(self, s, word: int, arch: str, major: str, k_steps: Optional[int], dtype: str):
        if s.inner.rank != 2:
            raise SpecError("layout", s.text, "read-by needs a rank-2 layout (mn, k)", "desc.tile.reads")
        self.desc = spec_descriptor.decode(spec_descriptor.check_arch(arch), word)
        self.mn, self.k_total = s.amap.mode_size(0), s.amap.mode_size(1)
        probe = readmap.make_operand(self.desc, dtype, major, self.mn)
        if probe.elements_per_chunk * s.element_bytes != 16:
            raise SpecError("dtype", dtype, "read-by compares whole-byte, unpadded elements", "readmap.element_byte")
        self.k_instr, self.major, self.dtype, self.kind = probe.k, major, dtype, probe.kind
        if k_steps is None:
            if self.k_total % self.k_instr:
                raise SpecError("layout", s.text, f"its k extent {self.k_total} is not a multiple of the "
                                f"instruction K {self.k_instr}: give --k-steps", "desc.tile.reads")
            k_steps = self.k_total // self.k_instr
        if k_steps < 1 or k_steps * self.k_instr > self.k_total:
            raise SpecError("k_steps", k_steps, f"needs 1 <= steps and steps * {self.k_instr} <= the layout's "
                            f"k extent {self.k_total}", "desc.tile.reads")
        self.k_steps = k_steps
        if self.mn * self.k_instr * k_steps > ELEMENT_LIMIT:
            raise SpecError("layout", s.text, f"{self.mn * self.k_instr * k_steps} elements read: at most "
                            f"{ELEMENT_LIMIT}", "desc.tile.reads")
        k_offsets = _mode_offsets(s, 1, self.k_total)
        self.steps = []
        for step in range(k_steps):
            delta = s.element_bytes * (k_offsets[step * self.k_instr] - k_offsets[0])
            start = self.desc.start_address + delta
            try:
                d = spec_descriptor.with_fields(self.desc, start_address=start)
            except SpecError as error:
                raise SpecError("k_steps", step, f"the start address of k-step {step} ({start:#x}) cannot be "
                                f"encoded: {error}", "desc.field.encoding") from None
            self.steps.append(readmap.make_operand(d, dtype, major, self.mn, self.k_instr, self.kind))

    def statement(self, text: str) -> str:
        return (f"descriptor {self.desc.hex} ({self.desc.arch}, {self.major}-major {self.dtype}), advanced by "
                f"{text}'s own k offset for each of {self.k_steps} k-steps of K={self.k_instr}, reads {text}")


def _read_affine(op) -> "Affine | str":
    d = op.desc
    if d.lbo_mode == "absolute":
        return "absolute LBO mode"
    if d.swizzle not in DESCRIPTOR_SWIZZLES:
        return f"swizzle {d.swizzle}"
    if d.base_offset % pattern_rows(d.swizzle):
        return f"base offset {d.base_offset} shifts the swizzle phase (a subtraction)"
    sw = DESCRIPTOR_SWIZZLES[d.swizzle]
    if power_of_two_log(op.mn) is None or power_of_two_log(op.k) is None:
        return f"extents {op.mn} x {op.k} are not powers of two"
    weights, used = [], 0
    for w in [readmap.mn_part(op, 1 << t) for t in range(power_of_two_log(op.mn))] + \
             [readmap.k_part(op, 1 << t)[1] for t in range(power_of_two_log(op.k))]:
        if w & used or w < 0:
            return f"read offsets {w:#x} and {used:#x} share bits: the sum carries"
        used |= w
        weights.append(w)
    if d.start_address & used:
        return f"start {d.start_address:#x} shares bits with the read offsets {used:#x}"
    params = (sw.bits, sw.base, sw.shift) if sw.bits else None
    return Affine(tuple(swizzle_bits(w, params) for w in weights), swizzle_bits(d.start_address, params),
                  (power_of_two_log(op.mn), power_of_two_log(op.k)))


def _read_gf2(s, q: ReadQuestion):
    if isinstance(s.linear, str):
        return None, f"the layout: {s.linear}"
    for step, op in enumerate(q.steps):
        r = _read_affine(op)
        if isinstance(r, str):
            return None, f"k-step {step}'s read map: {r}"
        mine = _restrict(s.linear, s.linear.mode_bits, (0, step * q.k_instr), (q.mn, q.k_instr))
        at = _compare_affine(mine, r)
        if at is not None:
            nb = r.mode_bits[0]
            mn, k = (at, 0) if at < (1 << nb) else (0, at >> nb)
            return ("refuted", (step, mn, k)), ""
    return ("proved", None), ""


def _read_enumeration(s, q: ReadQuestion):
    held = _layout_addresses(s, (q.mn, q.k_total))
    for step, op in enumerate(q.steps):
        reads = readmap.read_addresses(op)
        for mn in range(q.mn):
            row = reads[mn]
            for k in range(q.k_instr):
                if row[k] != held[mn + q.mn * (step * q.k_instr + k)]:
                    return "refuted", (step, mn, k)
    return "proved", None


def _read_replay(s, q: ReadQuestion, witness):
    step, mn, k = witness
    op = q.steps[step]
    read = readmap.element_address(op, mn, k)
    held = s.address((mn, step * q.k_instr + k))
    document = {"k_step": step, "descriptor": op.desc.hex, "element": {"mn": mn, "k": k},
                "coordinate": [mn, step * q.k_instr + k], "read_from": read, "held_at": held,
                "addresses": [read, held]}
    broken = _tile_rules(s, op)
    if broken:
        document["rules_broken"] = broken
    return document, read != held


def _tile_rules(s, op) -> list:
    """The desc.tile.* rules the step's descriptor breaks against the layout's first K_instr columns
    (spec.cases.desc_case), as a diagnosis; step 0 only (the case reads k from 0)."""
    from spec.cases import desc_case
    from spec.rule import check_all
    try:
        case = desc_case.parse_case({"descriptor": op.desc.hex, "dtype": op.dtype.name, "major": op.major,
                                     "mn": op.mn, "k": op.k, "kind": op.kind, "layout": s.layout,
                                     "start_address": s.start}, op.arch)
        return [f"{v.rule.id}: {v.message}" for v in check_all(desc_case.SUBJECT, case)]
    except SpecError:
        return []


# --- written-by ------------------------------------------------------------------------------------------

class WriteQuestion:
    def __init__(self, s, document: dict, coords, arch: str):
        from spec.tma import place as tma_place
        from spec.tma import tensormap
        if not isinstance(document, dict) or document.get("encode") != "tiled":
            raise SpecError("tma", document.get("encode") if isinstance(document, dict) else document,
                            "written-by takes a tiled `tma check` document", "tma.place.tiled")
        if "smemAddress" not in document:
            raise SpecError("smemAddress", None, "written-by needs the copy's destination (smemAddress)",
                            "tma.box.destination_alignment")
        document = dict(document)
        if coords is not None:
            document["coordinates"] = list(coords)
        params = tensormap.parse_params(document)
        report = tensormap.check(params, arch)
        if not report["legal"]:
            raise SpecError("tma", "", "tma check refuses this load: " + "; ".join(
                f"{v['rule']}: {v['message']}" for v in report["violations"]), report["violations"][0]["rule"])
        self.arch, self.warnings = arch, [w["rule"] for w in report["warnings"]]
        eb = params.dtype.bits // 8
        if params.dtype.bits % 8 or eb != s.element_bytes:
            raise SpecError("dtype", params.data_type, f"the layout's elements are {s.element_bytes} bytes, the "
                            f"load's {params.dtype.bits / 8:g}: give --dtype of the load's size", "tma.place.tiled")
        coord0 = params.coordinates[0] if params.coordinates else 0
        self.box = tma_place.make_box(params.swizzle, eb, params.box_dim, params.smem_address,
                                      params.element_strides, coord0)
        self.counts = self.box.counts
        self.size = 1
        for c in self.counts:
            self.size *= c
        if self.size > ELEMENT_LIMIT:
            raise SpecError("tma", self.size, f"the box has {self.size} elements: at most {ELEMENT_LIMIT}",
                            "tma.place.tiled")
        if s.inner.rank != len(self.counts) or any(s.amap.mode_size(m) != c for m, c in enumerate(self.counts)):
            sizes = [s.amap.mode_size(m) for m in range(s.inner.rank)]
            raise SpecError("layout", s.text, f"mode sizes {sizes} are not the box's element counts "
                            f"{list(self.counts)}", "tma.place.tiled")
        self.coordinates = list(params.coordinates) if params.coordinates else None

    def statement(self, text: str) -> str:
        b = self.box
        return (f"the TMA tiled box {'x'.join(map(str, b.dims))} ({b.swizzle}, {b.element_bytes} B elements, "
                f"destination {b.smem_address:#x}) writes element (i0, i1, ...) at {text}'s address of it")

    def index(self, n: int) -> list:
        out = []
        for c in self.counts:
            out.append(n % c)
            n //= c
        return out


def _write_affine(q: WriteQuestion):
    from spec.tma import place as tma_place
    b = q.box
    if b.swizzle not in _TMA_LINEAR:
        return f"TMA swizzle {b.swizzle}"
    pitch = tma_place.row_pitch(b.swizzle, q.counts[0] * b.element_bytes)
    stride, modes = pitch // b.element_bytes, [((q.counts[0], 1),)]
    for c in q.counts[1:]:
        modes.append(((c, stride),))
        stride *= c
    sw = _TMA_LINEAR[b.swizzle]
    return linearize(AddressMap(tuple(modes), b.element_bytes, b.smem_address, sw if sw[0] else None))


def _write_gf2(s, q: WriteQuestion):
    if isinstance(s.linear, str):
        return None, f"the layout: {s.linear}"
    w = _write_affine(q)
    if isinstance(w, str):
        return None, f"the box's placement: {w}"
    at = _compare_affine(s.linear, w)
    return (("proved", None) if at is None else ("refuted", at)), ""


def _write_enumeration(s, q: WriteQuestion):
    from spec.tma import place as tma_place
    written = tma_place.place(q.box)
    held = _layout_addresses(s, q.counts)
    for n, (a, b) in enumerate(zip(written, held)):
        if a != b:
            return "refuted", n
    return "proved", None


def _write_replay(s, q: WriteQuestion, n: int):
    from spec.tma import place as tma_place
    written = tma_place.place(q.box)[n]
    element = q.index(n)
    held = s.address(tuple(element))
    return {"element": element, "index": n, "written_at": written, "held_at": held,
            "addresses": [written, held]}, written != held


# --- the driver ------------------------------------------------------------------------------------------

def decide(s, prop: str, q, engine: str):
    """(status, engine, cross_checked_by, witness or reason)."""
    gf2, enum = (_read_gf2, _read_enumeration) if prop == "read-by" else (_write_gf2, _write_enumeration)
    size = q.mn * q.k_instr * q.k_steps if prop == "read-by" else q.size
    if engine in ("auto", "gf2"):
        verdict, why = gf2(s, q)
        if verdict is not None:
            checked = []
            if engine == "auto" and size <= CROSS_CHECK_LIMIT:
                cross = enum(s, q)
                if cross[0] != verdict[0]:
                    return "unknown", "gf2", [], (f"engines disagree: gf2 says {verdict[0]}, spec enumeration "
                                                  f"says {cross[0]}")
                checked.append("enumeration")
            return verdict[0], "gf2", checked, verdict[1]
        if engine == "gf2":
            return "unknown", "gf2", [], f"not linear over GF(2): {why}"
    if engine == "z3":
        return "unknown", "z3", [], f"{prop} has no Z3 model: use auto, gf2 or enumeration"
    verdict = enum(s, q)
    return verdict[0], "enumeration", [], verdict[1]


def read_params_file(path: str) -> dict:
    try:
        with open(path) as handle:
            return json.load(handle)
    except OSError as error:
        raise SpecError("tma", path, f"cannot read: {error.strerror}", "tma.map.params") from None
    except json.JSONDecodeError as error:
        raise SpecError("tma", path, f"not JSON: {error}", "tma.map.params") from None
