"""Properties of the TMA swizzle modes (PTX 5.5.7 "Swizzling Modes"), over the Z3 model of
solver/model/tma_swizzle.py.

For every mode:
  swizzle.tma.table_equals_formula.<MODE>  PTX 5.5.7's table equals the claimed XOR formula, every address
  swizzle.tma.bijective.<MODE>             the mode permutes the bytes of each aligned repeat block
  swizzle.tma.manual_table.<MODE>          the model's table moves every byte where PTX 5.5.7's printed
                                           table, kept apart from the model (solver/prove/manual_tables.py),
                                           puts it (a table and its formula changed together fail it)
plus one deliberately false claim, expected "refuted":
  swizzle.tma.table_equals_formula.128B_ATOM_32B_FLIP_8B_without_flip
                                           the flip sub-mode against the plain Sw<2,5,2> chunk formula

Placement of a tiled box (spec.tma.place: the box's rows land from the destination, each row padded to
the swizzle span when narrower (rule tma.place.row_pitch, H100), then every byte moves by the mode's
table on its absolute address). The written bytes are always a subset of the consecutive bytes from
the destination, so the properties below range over those consecutive bytes ("dense"): injectivity
there is injectivity of every padded placement too.
  tma.place.bijective.<MODE>               from any destination on the mode's repeat boundary, distinct
                                           box bytes land on distinct addresses, byte i in the repeat
                                           window i div repeat, in the same pattern as from address 0
  tma.place.element_injective.<MODE>       from any 128-byte-aligned destination, no two bytes of the
                                           box's elements (1 to 16 bytes each) share an address
  tma.place.bijective.128B.line_aligned    the "same pattern" claim from a destination only 128-byte
                                           aligned (expected refuted)

TMA writes what the MMA reads (the tile layout of solver/synth/recipe.py):
  tma_mma.agree.<dtype>.<K|MN>.<swizzle>   a tile loaded by TMA boxes of the matching swizzle, on its
                                           repeat boundary, is read element for element by the canonical
                                           descriptors (base offset 0)
  tma_mma.misaligned                       the tile 128 B past a 1024-B boundary, 128B swizzle, read by
                                           descriptors whose pattern starts at the tile (Table 41's base
                                           offset): expected refuted
  tma_mma.misaligned.base_offset_0         the same tile read with base offset 0: proved (rule
                                           readmap.swizzle_phase, H100)

Every counterexample is replayed through spec/ (spec.tma.swizzle, spec.tma.place, spec.mma.readmap) before it
counts.
"""
from __future__ import annotations

import z3

from dataclasses import dataclass

from spec.mma import descriptor as spec_descriptor
from spec.mma import readmap as spec_readmap
from spec.tma import place as spec_place
from spec.tma import swizzle as spec_tma
from spec.cute.swizzle import Swizzle
from spec.rules import SpecError

from solver.model import tma_swizzle as model
from solver.model.bitvec import Arith, bv, in_range, multiple_of, narrow, var
from solver.model.readmap import Fields, Shape, read_address
from solver.prove.property import Query, prop
from solver.model.vocab import TMA_MODE, TMA_ROW_BYTES
from solver.prove import manual_tables
from solver.model import vocab

FAMILY = "swizzle.tma"
SOURCE = "PTX 5.5.7 (Swizzling Modes)"
ADDRESS_DOMAIN = ("every 32-bit shared-memory byte address (0 <= address < 2^32); the table row is "
                  "chosen by the absolute address, (address >> 7) mod rows")
PAIR_DOMAIN = ("every pair of 32-bit shared-memory byte addresses a, b (0 <= a, b < 2^32); the table "
               "row is chosen by the absolute address")


def _spec_formula(triples):
    """The triples as spec/ Swizzle functors, composed left to right."""
    functors = [Swizzle(B, M, S) for B, M, S in triples]

    def apply(address: int) -> int:
        for functor in functors:
            address = functor(address)
        return address
    return apply


# --- table == formula -------------------------------------------------------------------------------
def _table_equals_formula(mode: str, triples, expected: str, id_suffix: str = "",
                          what: str = "the claimed XOR formula"):
    notation = model.formula_notation(triples)
    spec_formula = _spec_formula(triples)

    def build() -> Query:
        address = var("address")
        return Query({"address": address}, [],
                     model.table_swizzle(mode, address) == model._formula_swizzle(triples, address))

    def replay(cx: dict) -> bool:
        address = cx["address"]
        return spec_tma.swizzle_byte_address(mode, address) != spec_formula(address)

    flip = " (with the 8-byte flip on odd 128-byte lines)" if mode in model.FLIP_8B_MODES else ""
    prop(f"swizzle.tma.table_equals_formula.{mode}{id_suffix}",
         f"TMA swizzle {mode}: the PTX 5.5.7 chunk table{flip} equals {what} {notation} on absolute "
         f"byte addresses",
         ADDRESS_DOMAIN, SOURCE, expected, replay=replay, family=FAMILY,
         rules=("tma.swizzle.xor_formula", f"tma.swizzle.table.{mode}", "tma.swizzle.table_reading")
         + (("tma.swizzle.flip_rows",) if mode in model.FLIP_8B_MODES else ()))(build)


# --- bijective within the repeat block ----------------------------------------------------------------
def _bijective(mode: str):
    size = model.REPEAT_BYTES[mode]

    def build() -> Query:
        a, b = var("a"), var("b")
        fa, fb = model.table_swizzle(mode, a), model.table_swizzle(mode, b)
        claim = z3.And(z3.Implies(a != b, fa != fb),
                       model.repeat_block(mode, fa) == model.repeat_block(mode, a))
        return Query({"a": a, "b": b}, [], claim)

    def replay(cx: dict) -> bool:
        a, b = cx["a"], cx["b"]
        fa, fb = spec_tma.swizzle_byte_address(mode, a), spec_tma.swizzle_byte_address(mode, b)
        collision = a != b and fa == fb
        escape = fa // size != a // size
        return collision or escape

    prop(f"swizzle.tma.bijective.{mode}",
         f"TMA swizzle {mode} (PTX 5.5.7 table) permutes the bytes of each aligned {size}-byte repeat block: "
         f"distinct addresses land at distinct addresses, each in its own block",
         PAIR_DOMAIN, SOURCE, "proved", replay=replay, family=FAMILY,
         rules=(f"tma.swizzle.table.{mode}", "tma.swizzle.table_reading", "tma.swizzle.repeat_boundary"))(build)


for _mode in model.MODES:
    _table_equals_formula(_mode, model.XOR_FORMULAS[_mode], "proved")
    _bijective(_mode)

# --- the model's table against the manual's (solver/prove/manual_tables.py) ---------------------------------
# table_equals_formula compares two transcriptions of the model with each other: the table and the formula
# of a mode changed together survive it. This compares the model's table reading with PTX 5.5.7's table as
# kept apart from the model: chunk c of line row r lands at the cell j where the printed row shows c.
def _manual_destination(mode: str, address):
    """PTX 5.5.7: where the byte at `address` lands (an int for an int address, else a term)."""
    rows = manual_tables.TMA_SWIZZLE_TABLES[mode]
    landing = [{c: row.index(c) for c in row} for row in rows]           # chunk -> the cell that shows it
    flip = mode in manual_tables.TMA_FLIP_8B_MODES
    if not z3.is_expr(address):
        row, chunk = (address >> 7) % len(rows), (address >> 4) & 7
        within = (address & 15) ^ (8 if flip and (address >> 7) & 1 else 0)
        return (address & ~127) + 16 * landing[row][chunk] + within
    row, chunk = z3.URem(z3.LShR(address, 7), bv(len(rows))), z3.LShR(address, 4) & bv(7)
    cell = bv(0)
    for r, table in enumerate(landing):
        for c, j in table.items():
            cell = z3.If(z3.And(row == r, chunk == c), bv(j), cell)
    within = address & bv(15)
    if flip:
        within = z3.If(z3.LShR(address, 7) & bv(1) == bv(1), within ^ bv(8), within)
    return (address & ~bv(127)) + cell * bv(16) + within


def _manual_table(mode: str):
    def build() -> Query:
        address = var("address")
        claim = model.table_swizzle(mode, address) == _manual_destination(mode, address)
        return Query({"address": address}, [], claim)

    def replay(cx: dict) -> bool:
        return spec_tma.swizzle_byte_address(mode, cx["address"]) != _manual_destination(mode, cx["address"])

    prop(f"swizzle.tma.manual_table.{mode}",
         f"TMA swizzle {mode}: the model's table moves every byte where PTX 5.5.7's printed table (kept "
         "apart from the model) puts it"
         + (", with the 8-byte flip on odd lines" if mode in manual_tables.TMA_FLIP_8B_MODES else ""),
         ADDRESS_DOMAIN, SOURCE, "proved", replay=replay, family=FAMILY,
         rules=(f"tma.swizzle.table.{mode}", "tma.swizzle.table_reading")
         + (("tma.swizzle.flip_rows",) if mode in manual_tables.TMA_FLIP_8B_MODES else ()))(build)


for _mode in model.MODES:
    _manual_table(_mode)

# The deliberately false claim: forget the 8-byte flip (only the chunk pattern Sw<2,5,2>).
_table_equals_formula("128B_ATOM_32B_FLIP_8B", model.XOR_FORMULAS["128B_ATOM_32B"], "refuted",
                      id_suffix="_without_flip",
                      what="(deliberately false: the flip is left out) the plain chunk formula")


# === Placement of a tiled box ==========================================================================
PLACE_SOURCE = "PTX 5.5.3 (Tiled mode), 5.5.7 (Swizzling Modes); rule tma.place.tiled"
PLACE_RULES = ("tma.place.tiled", "tma.place.row_pitch", "tma.swizzle.repeat_boundary")
SMEM_LIMIT = 1 << 18       # the shared-memory byte addresses ranged over (a descriptor's 18-bit field)
LINE = 128                 # the TMA destination alignment the CUDA programming guide asks for


def _spec_placed_byte(mode: str, destination: int, offset: int) -> int:
    """spec/'s placement of byte `offset` of a dense box of one-byte elements written at `destination`: a
    box of rows one swizzle span wide (128 bytes with no swizzle), so that the rows lie back to back (rule
    tma.place.row_pitch) and no box dimension passes 256 (tma.map.box_range)."""
    width = spec_tma.mode_info(mode).span or LINE
    box = spec_place.make_box(mode, 1, (width, offset // width + 1), destination)
    return spec_place.place(box)[offset]


def _placement_bijective(mode: str, alignment: int, index_bits: int, expected: str, id_suffix: str = ""):
    repeat = model.REPEAT_BYTES[mode]

    def build() -> Query:
        destination, i, j = var("destination"), narrow("i", index_bits), narrow("j", index_bits)
        placed_i, placed_j = model.place_byte(mode, destination, i), model.place_byte(mode, destination, j)
        claim = z3.And(z3.Implies(i != j, placed_i != placed_j),
                       placed_i - destination == model.place_byte(mode, bv(0), i),
                       z3.UDiv(placed_i - destination, bv(repeat)) == z3.UDiv(i, bv(repeat)))
        assumptions = [in_range(destination, 0, SMEM_LIMIT), multiple_of(destination, alignment)]
        return Query({"destination": destination, "i": i, "j": j}, assumptions, claim)

    def replay(cx: dict) -> bool:
        destination, i, j = cx["destination"], cx["i"], cx["j"]
        try:
            placed_i, placed_j = (_spec_placed_byte(mode, destination, x) for x in (i, j))
            from_zero = _spec_placed_byte(mode, 0, i)
        except SpecError:           # past the largest box spec/ places: not confirmed
            return False
        collision = i != j and placed_i == placed_j
        other_pattern = placed_i - destination != from_zero
        other_window = (placed_i - destination) // repeat != i // repeat
        return collision or other_pattern or other_window

    falsehood = (" (false off the repeat boundary: the table row follows the absolute address, so the "
                 "pattern a box sees depends on where it starts)" if expected == "refuted" else "")
    prop(f"tma.place.bijective.{mode}{id_suffix}",
         f"TMA swizzle {mode}, tiled box of up to 2^{index_bits} bytes written at D: byte i goes to "
         f"swizzle(D + i); distinct bytes land on distinct addresses, byte i lands in the {repeat}-byte "
         f"window i div {repeat} after D, at D + swizzle(i) (the same pattern from every such D){falsehood}",
         f"D a multiple of {alignment} in [0, 2^18); box byte indices i, j in [0, 2^{index_bits})",
         PLACE_SOURCE, expected, replay=replay, family="tma.place", rules=PLACE_RULES)(build)


def _elements_injective(mode: str):
    def build() -> Query:
        destination = var("destination")
        log2_size = narrow("log2_element_bytes", 3)
        size = bv(1) << log2_size
        i, j = narrow("element_i", 18), narrow("element_j", 18)
        byte_i, byte_j = narrow("byte_i", 4), narrow("byte_j", 4)
        assumptions = [in_range(destination, 0, SMEM_LIMIT), multiple_of(destination, LINE),
                       z3.ULE(log2_size, 4), z3.ULT(byte_i, size), z3.ULT(byte_j, size),
                       z3.ULT(i << log2_size, SMEM_LIMIT), z3.ULT(j << log2_size, SMEM_LIMIT)]
        placed_i = model.place_byte(mode, destination, (i << log2_size) + byte_i)
        placed_j = model.place_byte(mode, destination, (j << log2_size) + byte_j)
        claim = z3.Implies(z3.Or(i != j, byte_i != byte_j), placed_i != placed_j)
        variables = {"destination": destination, "element_bytes": size, "element_i": i, "element_j": j,
                     "byte_i": byte_i, "byte_j": byte_j}
        return Query(variables, assumptions, claim)

    def replay(cx: dict) -> bool:
        size = cx["element_bytes"]
        first = (cx["element_i"], cx["byte_i"])
        second = (cx["element_j"], cx["byte_j"])
        try:
            placed = [_spec_placed_byte(mode, cx["destination"], e * size + b) for e, b in (first, second)]
        except SpecError:           # past the largest box spec/ places: not confirmed
            return False
        return first != second and placed[0] == placed[1]

    prop(f"tma.place.element_injective.{mode}",
         f"TMA swizzle {mode}: the elements of a tiled box (1, 2, 4, 8 or 16 bytes each, dense from the "
         "destination) occupy disjoint bytes of shared memory: no two bytes of the box, of one element or "
         "of two, land on one address, wherever the 128-byte-aligned destination lies",
         "destination a multiple of 128 in [0, 2^18); element size 2^e bytes, e in 0..4; element indices "
         "with index * size < 2^18; byte indices inside the element",
         PLACE_SOURCE, "proved", replay=replay, family="tma.place", rules=PLACE_RULES)(build)


for _mode in model.MODES:
    _placement_bijective(_mode, model.REPEAT_BYTES[_mode], 18, "proved")
    _elements_injective(_mode)
_placement_bijective("128B", LINE, 10, "refuted", id_suffix=".line_aligned")


# === TMA writes what the MMA reads ======================================================================
# The types wgmma/tcgen05 read from shared memory (PTX 9.7.16.4.2 Tables 42-44; 9.7.16.3.3) and their widths
# (solver.model.vocab, not spec.mma.dtypes; the tests compare the two).
MMA_DTYPE_BITS = {d: vocab.MMA_DTYPE_BITS[d] for d in ("f16", "bf16", "tf32", "e4m3", "e5m2", "s8", "u8")}
INSTRUCTION_K_BYTES = 32    # one MMA reads 32 bytes of K per row (PTX 9.7.15.5, 9.7.16.4 Table 39)
AGREE_SOURCE = ("PTX 5.5.7 (Swizzling Modes) TMA placement; PTX 9.7.16.3.1-3 canonical layouts and LBO/SBO; "
                "CUTLASS make_gmma_desc/make_umma_desc; rule readmap.swizzle_phase (H100)")
REPLAY_ARCH = "sm100"       # every descriptor swizzle exists there; sm90 shares the read map of the rest


def _div(a, n: int):
    return z3.UDiv(a, bv(n)) if z3.is_expr(a) else a // n


def _mod(a, n: int):
    return z3.URem(a, bv(n)) if z3.is_expr(a) else a % n


@dataclass(frozen=True)
class TileFamily:
    """An operand tile as TMA boxes write it (solver/synth/recipe.py's layout). W = the swizzle width in bytes
    (16 with no swizzle), taken from the TMA side (vocab.TMA_ROW_BYTES of the mode): the read map takes its
    own from solver.model.readmap, so a wrong row width on either side breaks the agreement. K-major: a box
    is W bytes of K by MN rows (rows W bytes apart), boxes stacked along K, MN * W bytes apart. MN-major: a
    box is W bytes of MN by K_tile rows, boxes stacked along MN, K_tile * W bytes apart. The functions below
    take ints or Z3 bit-vectors alike."""
    dtype: str
    major: str            # "K" | "MN"
    swizzle: str          # descriptor swizzle name: none 32B 64B 128B 128B_atom32B

    @property
    def element_bytes(self) -> int:
        return MMA_DTYPE_BITS[self.dtype] // 8

    @property
    def row_bytes(self) -> int:           # W: the TMA box row, the mode's span (16 B with no swizzle)
        return TMA_ROW_BYTES[self.tma_mode]

    @property
    def box_row(self) -> int:             # boxDim[0]: elements in W bytes
        return self.row_bytes // self.element_bytes

    @property
    def instruction_k(self) -> int:
        return INSTRUCTION_K_BYTES // self.element_bytes

    @property
    def tma_mode(self) -> str:
        return TMA_MODE[self.swizzle]

    @property
    def k_group_rows(self) -> int:        # R: K rows per SBO step, MN-major (4 for 128B_atom32B)
        return 4 if self.swizzle == "128B_atom32B" else 8

    def box_extent(self, mn_extent, k_tile):
        """boxDim[1]: the rows of one box (MN rows when K-major, K rows when MN-major)."""
        return mn_extent if self.major == "K" else k_tile

    def written_at(self, tile_start, mn_extent, k_tile, mn, k):
        """(destination of the box holding element (mn, k), the element's byte offset in that dense box)."""
        along, across = (k, mn) if self.major == "K" else (mn, k)
        box = _div(along, self.box_row)
        destination = tile_start + box * (self.box_extent(mn_extent, k_tile) * self.row_bytes)
        return destination, (across * self.box_row + _mod(along, self.box_row)) * self.element_bytes

    def canonical_descriptor(self, tile_start, mn_extent, k_tile, k_offset):
        """(start, LBO, SBO) in bytes of the descriptor for the instruction reading K from k_offset.
        K-major (PTX 9.7.16.3.2): start at k_offset's box and column; SBO = 8 rows = 8W; LBO = the next
        box along K (with a swizzle one instruction's 32 bytes stay in one atom, so it is not used).
        MN-major swizzled: start at K row k_offset (rows W apart); LBO = the next box along MN; SBO = R
        rows. MN-major no swizzle: SBO = the next 16-byte MN chunk (the next box); LBO = 8 K rows."""
        W = self.row_bytes
        if self.major == "K":
            start = (tile_start + _div(k_offset, self.box_row) * (mn_extent * W)
                     + _mod(k_offset, self.box_row) * self.element_bytes)
            return start, mn_extent * W, 8 * W
        start = tile_start + k_offset * W
        if self.swizzle == "none":
            return start, 8 * W, k_tile * W
        return start, k_tile * W, self.k_group_rows * W


def _table41_base_offset(start):
    """PTX Table 41: (start >> 7) & 7 for a pattern that starts at `start`."""
    return z3.LShR(start, 7) & bv(7) if z3.is_expr(start) else (start >> 7) & 7


def _tile_shape(tile: TileFamily):
    """(MN extent, K_tile, variables, assumptions) over the stated range: K-major MN = 8 * (1..32) rows,
    K_tile = 1..8 boxes (a multiple of the instruction K); MN-major MN = 1..8 boxes, K_tile = 1..8
    instruction Ks."""
    boxes = narrow("boxes", 4)
    assumptions = [in_range(boxes, 1, 9)]
    if tile.major == "K":
        row_groups = narrow("row_groups", 6)
        mn_extent, k_tile = row_groups * bv(8), boxes * bv(tile.box_row)
        assumptions += [in_range(row_groups, 1, 33), multiple_of(k_tile, tile.instruction_k)]
    else:
        k_steps = narrow("k_steps", 4)
        mn_extent, k_tile = boxes * bv(tile.box_row), k_steps * bv(tile.instruction_k)
        assumptions.append(in_range(k_steps, 1, 9))
    return mn_extent, k_tile, assumptions


SHAPE_DOMAIN = ("K-major: MN = 8..256 (multiples of 8), K_tile = 1..8 boxes of W bytes, a multiple of "
                "the instruction K; MN-major: MN = 1..8 boxes of W bytes, K_tile = 1..8 instruction Ks; "
                "every instruction along K_tile and every element (mn, k) it reads; the tile inside "
                "[0, 2^18)")


def _agreement_query(tile: TileFamily, line_offset: int, base_offset: str) -> Query:
    repeat = model.REPEAT_BYTES[tile.tma_mode]
    tile_start = var("tile_start")
    mn_extent, k_tile, assumptions = _tile_shape(tile)
    instruction = narrow("instruction", 4)
    mn, k_in = narrow("mn", 11), narrow("k_in_instruction", 6)
    k_offset = instruction * bv(tile.instruction_k)
    k = k_offset + k_in
    tile_bytes = mn_extent * k_tile * bv(tile.element_bytes)
    assumptions += [in_range(tile_start, 0, SMEM_LIMIT), z3.URem(tile_start, bv(repeat)) == line_offset,
                    z3.ULE(tile_start + tile_bytes, SMEM_LIMIT), z3.ULT(k_offset, k_tile),
                    z3.ULT(mn, mn_extent), z3.ULT(k_in, tile.instruction_k)]
    destination, offset = tile.written_at(tile_start, mn_extent, k_tile, mn, k)
    written = model.place_byte(tile.tma_mode, destination, offset)
    start, lbo, sbo = tile.canonical_descriptor(tile_start, mn_extent, k_tile, k_offset)
    phase_base = bv(0) if base_offset == "zero" else _table41_base_offset(start)
    shape = Shape(tile.major, tile.swizzle, MMA_DTYPE_BITS[tile.dtype], 128 // MMA_DTYPE_BITS[tile.dtype])
    read = read_address(shape, Fields(start, lbo, sbo, phase_base), mn, k_in, Arith())
    variables = {"tile_start": tile_start, "mn_extent": mn_extent, "k_tile": k_tile, "k_offset": k_offset,
                 "mn": mn, "k": k, "written": written, "read": read}
    return Query(variables, assumptions, written == read)


def _spec_written(tile: TileFamily, c: dict) -> int:
    """spec.tma.place: where the box load puts element (mn, k) of the tile."""
    destination, offset = tile.written_at(c["tile_start"], c["mn_extent"], c["k_tile"], c["mn"], c["k"])
    box = spec_place.make_box(tile.tma_mode, tile.element_bytes,
                              (tile.box_row, tile.box_extent(c["mn_extent"], c["k_tile"])), destination)
    return spec_place.place(box)[offset // tile.element_bytes]


def _spec_read(tile: TileFamily, c: dict, base_offset: str) -> int:
    """spec.mma.readmap: the byte the canonical descriptor of instruction k_offset reads for (mn, k)."""
    start, lbo, sbo = tile.canonical_descriptor(c["tile_start"], c["mn_extent"], c["k_tile"], c["k_offset"])
    phase_base = 0 if base_offset == "zero" else _table41_base_offset(start)
    desc = spec_descriptor.encode(REPLAY_ARCH, start, lbo, sbo, tile.swizzle, phase_base)
    operand = spec_readmap.make_operand(desc, tile.dtype, tile.major, c["mn_extent"], tile.instruction_k)
    return spec_readmap.element_address(operand, c["mn"], c["k"] - c["k_offset"])


def _replay_agreement(tile: TileFamily, base_offset: str):
    def replay(c: dict) -> bool:
        return _spec_written(tile, c) != _spec_read(tile, c, base_offset)
    return replay


def agreement_cases():
    """(dtype, major, descriptor swizzle): K-major every swizzle but 128B_atom32B; MN-major where Table 54
    and the MN-major type rules allow it on some arch (8/16-bit: none..128B; 32-bit: 128B_atom32B)."""
    for dtype, bits in MMA_DTYPE_BITS.items():
        for swizzle in ("none", "32B", "64B", "128B"):
            yield dtype, "K", swizzle
        for swizzle in (("128B_atom32B",) if bits == 32 else ("none", "32B", "64B", "128B")):
            yield dtype, "MN", swizzle


def _where_legal(dtype: str, major: str, swizzle: str) -> str:
    if major == "K" or dtype in ("f16", "bf16"):
        return "wgmma (sm90) and tcgen05 (sm100/sm103)" if swizzle != "128B_atom32B" else "tcgen05"
    return "tcgen05 (sm100/sm103)"


def _agreement_rules(major: str, swizzle: str) -> tuple:
    """TMA's placement against the canonical layout's read map (rules of both sides)."""
    layout = "canonical.mn_128b_atom32b" if swizzle == "128B_atom32B" else "canonical.table"
    read_map = f"readmap.{major.lower()}_major.{'none' if swizzle == 'none' else 'swizzled'}"
    return ("tma.place.tiled", "tma.place.row_pitch", layout, read_map, "readmap.swizzle_phase",
            "recipe.case.reads")


def _register_agreement():
    for dtype, major, swizzle in agreement_cases():
        tile = TileFamily(dtype, major, swizzle)
        repeat = model.REPEAT_BYTES[tile.tma_mode]
        prop(f"tma_mma.agree.{dtype}.{major}.{swizzle}",
             f"{dtype}, {major}-major, {swizzle}: a tile loaded by TMA boxes ({tile.tma_mode} swizzle, box "
             f"[{tile.box_row}, rows]) starting on a {repeat}-byte boundary is read element for element by "
             f"the canonical descriptors of {_where_legal(dtype, major, swizzle)} (base offset 0): the "
             "address TMA writes (mn, k) to is the address the read map reads it from",
             f"tile start a multiple of {repeat}; " + SHAPE_DOMAIN, AGREE_SOURCE, "proved",
             _replay_agreement(tile, "zero"), "tma_mma", rules=_agreement_rules(major, swizzle))(
                 lambda tile=tile: _agreement_query(tile, 0, "zero"))


_register_agreement()

_MISALIGNED = TileFamily("bf16", "K", "128B")
prop("tma_mma.misaligned",
     "bf16, K-major, 128B: a tile whose TMA destination is 128 B past a 1024-byte boundary, read by "
     "descriptors whose swizzle pattern starts at the tile (phase 0 at the start: PTX Table 41's base "
     "offset (start >> 7) & 7), gets every element TMA wrote (false: TMA's phase follows the absolute "
     "address, the descriptor's the offset from the start; the counterexample names the element)",
     "tile start = 1024 n + 128 in [0, 2^18); " + SHAPE_DOMAIN,
     AGREE_SOURCE + "; PTX 9.7.16.4.1 Table 41 (base offset)", "refuted",
     _replay_agreement(_MISALIGNED, "table41"), "tma_mma",
     rules=_agreement_rules("K", "128B") + ("recipe.swizzle_alignment", "tma.swizzle.base_offset"))(
         lambda: _agreement_query(_MISALIGNED, LINE, "table41"))
prop("tma_mma.misaligned.base_offset_0",
     "bf16, K-major, 128B: the same tile 128 B past a 1024-byte boundary, read by the canonical "
     "descriptors with base offset 0, gets every element TMA wrote: with base offset 0 the read map "
     "swizzles absolute addresses (rule readmap.swizzle_phase, H100), as TMA does",
     "tile start = 1024 n + 128 in [0, 2^18); " + SHAPE_DOMAIN,
     AGREE_SOURCE + "; PTX 9.7.16.4.1 Table 41 (base offset)", "proved",
     _replay_agreement(_MISALIGNED, "zero"), "tma_mma",
     rules=_agreement_rules("K", "128B"))(
         lambda: _agreement_query(_MISALIGNED, LINE, "zero"))
