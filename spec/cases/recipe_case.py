"""A whole TMA + MMA recipe for one operand tile: the TMA boxes that fill shared memory and the
descriptor of each MMA instruction along K (the `recipe` target of `layoutproof fuzz`).

A case: {"dtype", "major": "K"|"MN", "mn", "k_tile", "smem_address",
         "tma": {"swizzle", "boxDim": [inner elements, rows], "box_count", "box_stride_bytes"},
         "descriptors": [{"k_offset", "descriptor"}, ...]}   one per instruction K along k_tile.

Where the data lands (spec.tma.place): box b is written at smem_address + b * box_stride_bytes, in
order b = 0, 1, ...; K-major, box b holds K elements [b*inner, (b+1)*inner) of rows 0 .. rows-1 (the
MN rows); MN-major, MN elements [b*inner, (b+1)*inner) of K rows 0 .. rows-1. Where it is read from:
spec.mma.readmap, each k-step descriptor reading (mn, k_offset + k) for k < the instruction K.

The recipe rules say what the boxes and the descriptors must be for the two to agree, from the layout
a TMA box writes (the one `layoutproof synth recipe` builds): W = the TMA swizzle's row (its span; 16
bytes, one chunk, with no swizzle: an unswizzled box row is dense, and core-matrix rows are 16 bytes
apart), E = element bytes,
T = 16 / E, Kinst = 32 / E (the instruction K), S = box_stride_bytes, A = smem_address:

  | major | box        | k-step j starts at                  | SBO (where used)      | LBO (where used)  |
  | K     | W/E x mn   | A + (32j div W)*S + (32j mod W)      | 8W (mn > 8)           | S (no swizzle)    |
  | MN    | W/E x k    | A + j*Kinst*W                        | none: S (mn > T);     | none: 128 (Kinst > 8); |
  |       |            |                                      | else R*W (Kinst > R)  | else S (mn > W/E) |

(R = 8 K rows; 4 for 128B_ATOM_32B.) The boxes lie back to back (S = rows * W). Element types: whole
bytes with no padding (8-, 16-, 32-bit); the kind is the type's default kind.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from spec import fast
from spec.mma import descriptor as spec_descriptor
from spec.mma import dtypes
from spec.mma import readmap
from spec.tma import place as tma_place
from spec.tma import tensormap
from spec.rule import SpecError, check_all, rule
from spec.cases import desc_case
from spec.cute.layout import ComposedLayout, Layout
from spec.cute.swizzle import DESCRIPTOR_SWIZZLES, pattern_rows, repeat_bytes

SUBJECT = "recipe_case"
SOURCE = "PTX ISA 5.5.3 (Tiled mode), 5.5.7 (Swizzling Modes), 9.7.16.3.1-2 (matrix descriptor strides)"
# TMA swizzle -> the descriptor swizzle that reads the same pattern (absolute-address XOR, PTX 5.5.7 and
# 9.7.16.10.6); the TMA modes a recipe case may use
SMEM_BYTES = 228 * 1024      # shared memory of one SM (sm90, sm100; CUDA C++ Programming Guide, compute
                             # capabilities): no tile is larger
TMA_TO_DESC = {"NONE": "none", "32B": "32B", "64B": "64B", "128B": "128B", "128B_ATOM_32B": "128B_atom32B"}

READS = rule(
    "recipe.case.reads", "PTX ISA 5.5.7 (where the boxes write: rule tma.place.tiled); PTX ISA 9.7.16.3 "
    "(where the descriptors read: the readmap rules)",
    "Definition: a recipe reads right when every element (mn, k) each k-step descriptor reads is read "
    "from the address where the TMA boxes last wrote that element.")


@dataclass(frozen=True)
class RecipeCase:
    arch: str
    dtype: dtypes.DType
    major: str
    mn: int
    k_tile: int
    smem_address: int
    tma_swizzle: str
    inner: int
    rows: int
    box_count: int
    box_stride: int
    steps: tuple          # (k_offset, readmap.Operand) per instruction

    @property
    def element_bytes(self) -> int:
        return self.dtype.bits // 8

    @property
    def k_inst(self) -> int:
        return 32 // self.element_bytes

    @property
    def row(self) -> int:
        return readmap.ROW_BYTES[TMA_TO_DESC[self.tma_swizzle]]    # a box row is the descriptor's row W


def _int(value, name, lo=0, hi=None, multiple=1, rule_id=READS.id):
    if isinstance(value, bool) or not isinstance(value, int) or value < lo or (hi is not None and value >= hi) \
            or value % multiple:
        bound = f" below {hi}" if hi is not None else ""
        raise SpecError(name, value, f"expected an integer >= {lo}{bound}"
                        + (f", a multiple of {multiple}" if multiple > 1 else ""), rule_id)
    return value


def parse_case(case: dict, arch: str) -> RecipeCase:
    """The case document on `arch`; SpecError (naming the field) when malformed."""
    spec_descriptor.check_arch(arch)
    if not isinstance(case, dict):
        raise SpecError("case", case, "expected a JSON object", READS.id)
    for key in ("dtype", "major", "mn", "k_tile", "smem_address", "tma", "descriptors"):
        if key not in case:
            raise SpecError(key, None, "missing from the recipe case", READS.id)
    d = dtypes.dtype(case["dtype"])
    if d.bits < 8:
        raise SpecError("dtype", d.name, "a recipe case takes whole-byte element types", dtypes.PACKING.id)
    if case["major"] not in readmap.MAJORS:
        raise SpecError("major", case["major"], "expected K or MN", readmap.OPERAND_MAJOR.id)
    mn = _int(case["mn"], "mn", 8, 1 << 12, 8, readmap.MN_EXTENT.id)
    k_inst = 256 // d.bits
    k_tile = _int(case["k_tile"], "k_tile", k_inst, 1 << 15, k_inst, readmap.MN_EXTENT.id)
    if mn * k_tile * d.bits // 8 > SMEM_BYTES:
        raise SpecError("k_tile", k_tile, f"the {mn} x {k_tile} tile takes {mn * k_tile * d.bits // 8} bytes, more "
                        f"than the {SMEM_BYTES} bytes (228 KiB) of one SM's shared memory", readmap.MN_EXTENT.id)
    smem = _int(case["smem_address"], "smem_address", 0, 1 << 18, 16, spec_descriptor.FIELD_ENCODING.id)
    tma = case["tma"]
    if not isinstance(tma, dict):
        raise SpecError("tma", tma, "expected an object", READS.id)
    for key in ("swizzle", "boxDim", "box_count", "box_stride_bytes"):
        if key not in tma:
            raise SpecError(f"tma.{key}", None, "missing from the recipe case", READS.id)
    swizzle = tma["swizzle"]
    allowed = [m for m in TMA_TO_DESC if arch != "sm90" or m != "128B_ATOM_32B"]
    if swizzle not in allowed:
        raise SpecError("tma.swizzle", swizzle, f"expected one of {' '.join(allowed)} on {arch}",
                        SWIZZLE_MATCHES.id)
    box = tma["boxDim"]
    if not isinstance(box, list) or len(box) != 2:
        raise SpecError("tma.boxDim", box, "expected [inner elements, rows]", tensormap.BOX_RANGE.id)
    inner = _int(box[0], "tma.boxDim[0]", 1, rule_id=tensormap.BOX_RANGE.id)
    rows = _int(box[1], "tma.boxDim[1]", 1, rule_id=tensormap.BOX_RANGE.id)
    count = _int(tma["box_count"], "tma.box_count", 1, 1 << 12)
    stride = _int(tma["box_stride_bytes"], "tma.box_stride_bytes", 0, 1 << 18, 16)
    descs = case["descriptors"]
    if not isinstance(descs, list) or len(descs) != k_tile // k_inst:
        raise SpecError("descriptors", None, f"expected a list of {k_tile // k_inst} k-steps (k_tile / "
                        f"instruction K {k_inst})", READS.id)
    steps = []
    for j, step in enumerate(descs):
        if not isinstance(step, dict) or step.get("k_offset") != j * k_inst or "descriptor" not in step:
            raise SpecError(f"descriptors[{j}]", step, f"expected {{'k_offset': {j * k_inst}, "
                            f"'descriptor': '0x...'}}", READS.id)
        desc = spec_descriptor.decode(arch, spec_descriptor.parse_word(step["descriptor"]))
        steps.append((j * k_inst, readmap.make_operand(desc, d.name, case["major"], mn, k_inst)))
    return RecipeCase(arch, d, case["major"], mn, k_tile, smem, swizzle, inner, rows, count, stride, tuple(steps))


# --- Where the boxes put the tile -----------------------------------------------------------------------
def box_at(c: RecipeCase, b: int) -> tma_place.Box:
    """Box b of the case: the box_count boxes differ only in where they land and their coordinate."""
    return tma_place.make_box(c.tma_swizzle, c.element_bytes, (c.inner, c.rows), c.smem_address + b * c.box_stride,
                              coord0=b * c.inner)


def boxes(c: RecipeCase) -> list:
    """The TMA boxes, in issue order."""
    return [box_at(c, b) for b in range(c.box_count)]


def written(c: RecipeCase) -> tuple:
    """(written_at, holds): written_at[(mn, k)] = the address where a box wrote element (mn, k) of the
    tile (its last write); holds[address] = the element the last write there left."""
    written_at, holds = {}, {}
    for b, box in enumerate(boxes(c)):
        addresses = tma_place.place_rows(box)       # = place(box), row by row (tests/spec_tests/fast/test_fast_paths.py)
        for row in range(c.rows):
            for i in range(c.inner):
                element = (row, b * c.inner + i) if c.major == "K" else (b * c.inner + i, row)
                address = addresses[row * c.inner + i]
                previous = holds.get(address)
                if previous is not None and written_at.get(previous) == address:
                    del written_at[previous]
                holds[address] = element
                written_at[element] = address
    return written_at, holds


def needs(c: RecipeCase) -> dict:
    """What the recipe's layout needs of the descriptors (the table in the module docstring): "starts"
    (one per k-step), "sbo", "lbo" (None where the instruction does not use the field): the desc rules'
    tile fields (desc_case.tile_fields) of each k-step's step_case."""
    fields = [desc_case.tile_fields(step_case(c, k0, op)) for k0, op in c.steps]
    return {"starts": [f["start_address"] for f in fields], "sbo": fields[0]["sbo"] if fields else None,
            "lbo": fields[0]["lbo"] if fields else None}


# --- Checks ------------------------------------------------------------------------------------------------
SWIZZLE_MATCHES = rule(
    "recipe.box.swizzle_matches", "PTX ISA 5.5.7 (TMA swizzle modes), 9.7.16.10.6 (descriptor swizzles)",
    "Every k-step descriptor's swizzle is the TMA box's: NONE-none, 32B, 64B, 128B, "
    "128B_ATOM_32B-128B_atom32B.", subject=SUBJECT)


@SWIZZLE_MATCHES.checker
def _swizzle_matches(c: RecipeCase):
    want = TMA_TO_DESC[c.tma_swizzle]
    for k0, op in c.steps:
        if op.desc.swizzle != want:
            return f"k-step {k0}: descriptor swizzle {op.desc.swizzle}; the TMA box is {c.tma_swizzle}"
    return None


INNER_IS_ROW = rule(
    "recipe.box.inner_is_swizzle_row", SOURCE,
    "A box row is one swizzle row: boxDim[0] * element size = W, the TMA swizzle's span (16 bytes, one "
    "core-matrix row, with no swizzle: unswizzled TMA rows are dense).", subject=SUBJECT)


@INNER_IS_ROW.checker
def _inner_is_row(c: RecipeCase):
    inner = c.inner * c.element_bytes
    return None if inner == c.row else f"boxDim[0] = {inner} bytes; the {c.tma_swizzle} row is {c.row}"


COVERS_TILE = rule(
    "recipe.box.covers_tile", SOURCE,
    "The boxes cover the tile exactly: K-major, rows = mn and box_count * boxDim[0] = k_tile; MN-major, "
    "rows = k_tile and box_count * boxDim[0] = mn.", subject=SUBJECT)


@COVERS_TILE.checker
def _covers(c: RecipeCase):
    along, across = (c.k_tile, c.mn) if c.major == "K" else (c.mn, c.k_tile)
    if c.rows != across:
        return f"boxes of {c.rows} rows; the tile has {across}"
    if c.box_count * c.inner != along:
        return f"{c.box_count} boxes x {c.inner} cover {c.box_count * c.inner}; the tile has {along}"
    return None


BOX_STRIDE = rule(
    "recipe.box.stride", SOURCE,
    "With more than one box, consecutive boxes land back to back: box_stride_bytes = rows * W.",
    subject=SUBJECT)


@BOX_STRIDE.checker
def _stride(c: RecipeCase):
    want = c.rows * c.row
    if c.box_count > 1 and c.box_stride != want:
        return f"boxes {c.box_stride} bytes apart; back to back is {want}"
    return None


SWIZZLE_ALIGNMENT = rule(
    "recipe.swizzle_alignment", "PTX ISA 5.5.7 (Swizzling Modes: the patterns repeat from the repeat "
    "boundary); PTX ISA 9.7.16.4.1, Table 41 (base offset)",
    "A swizzled tile starts on its swizzle's repeat boundary (1024 B for 128B, 512 B for 64B and "
    "128B_ATOM_32B / 128B_atom32B, 256 B for 32B): the smem_address of a recipe case, and of a tile "
    "recipe unless it is built with --allow-unaligned.", subjects=(SUBJECT, "recipe"),
    note="On the H100 a descriptor with base offset 0 reads absolute-address swizzles from any start "
         "(rule readmap.swizzle_phase), and TMA's phase follows the absolute address too (PTX ISA 5.5.7), "
         "so an unaligned tile can be read right; `synth recipe` still refuses it unless asked "
         "(--allow-unaligned), because code that swizzles offsets relative to the tile (ldmatrix paths, "
         "hand-written loops) then reads wrong data silently.")


@SWIZZLE_ALIGNMENT.checker(subject=SUBJECT)
def _alignment(c: RecipeCase):
    if c.tma_swizzle == "NONE":
        return None
    boundary = repeat_bytes(TMA_TO_DESC[c.tma_swizzle])
    return None if c.smem_address % boundary == 0 else \
        f"smem address {c.smem_address:#x} is not on the {c.tma_swizzle} repeat boundary ({boundary} B)"


@SWIZZLE_ALIGNMENT.checker(subject="recipe")
def _recipe_alignment(recipe):
    """recipe: solver.synth.recipe.Recipe (descriptor swizzle names: none, 32B, 64B, 128B, 128B_atom32B)."""
    if recipe.swizzle == "none" or recipe.allow_unaligned:
        return None
    boundary = repeat_bytes(recipe.swizzle)
    if recipe.smem_address % boundary == 0:
        return None
    return (f"smem address {recipe.smem_address:#x} is not on the {recipe.swizzle} repeat boundary "
            f"({boundary} B): the pattern would start in line {(recipe.smem_address // 128) % (boundary // 128)}")


# --- Each k-step's descriptor against the tile the boxes lay down (the desc rules, per k-step) ----------
def step_case(c: RecipeCase, k0: int, op: readmap.Operand) -> desc_case.DescCase:
    """k-step k0's descriptor as a desc case (spec/cases/desc_case.py) over the tile the recipe's layout
    puts there: box rows W bytes apart (a box row is the swizzle's row, rule recipe.box.inner_is_row), boxes
    S bytes apart, element (0, k0) first. In elements (16 bytes = T of them): K-major, k runs along a box
    row and on into the next box; MN-major, mn does, and k steps a box row."""
    S, E = c.box_stride, c.element_bytes
    per_row = c.row // E                               # elements along a W-byte box row
    if c.major == "K" and per_row >= op.k:             # the k-step inside one box row
        shape, stride = (op.mn, op.k), (per_row, 1)
    elif c.major == "K":                               # no swizzle: 16-byte boxes, the k-step across two
        shape, stride = (op.mn, (per_row, op.k // per_row)), (per_row, (1, S // E))
    else:
        shape, stride = ((min(op.mn, per_row), -(-op.mn // per_row)), op.k), ((1, S // E), per_row)
    offset = (k0 // per_row) * (S // E) + k0 % per_row if c.major == "K" else k0 * per_row
    layout = ComposedLayout(DESCRIPTOR_SWIZZLES[TMA_TO_DESC[c.tma_swizzle]], offset, Layout(shape, stride))
    return desc_case.DescCase(op.desc, op, layout, c.smem_address)


def _per_step(c: RecipeCase, desc_rule) -> Optional[str]:
    """The first k-step whose descriptor breaks `desc_rule` (a desc.tile rule) against its step_case."""
    for k0, op in c.steps:
        for v in check_all(desc_case.SUBJECT, step_case(c, k0, op), only=[desc_rule.id]):
            return f"k-step {k0}: {v.message} (rule {desc_rule.id})"
    return None


K_STEP_START = rule(
    "recipe.k_step.start", SOURCE + "; PTX 9.7.16.3.1 (matrix start address)",
    "Each k-step's descriptor obeys desc.tile.start_address on the tile the boxes lay down (step_case): "
    "its start address is where the boxes put element (0, k_offset) before the swizzle (K-major "
    "A + (32j div W)*S + (32j mod W), MN-major A + j*Kinst*W).", subject=SUBJECT)


@K_STEP_START.checker
def _start(c: RecipeCase):
    return _per_step(c, desc_case.START)


K_STEP_SBO = rule(
    "recipe.k_step.sbo", SOURCE + "; PTX 9.7.16.3.2 (SBO)",
    "Each k-step's descriptor obeys desc.tile.stride_byte_offset on the tile the boxes lay down "
    "(step_case): where the instruction uses it, SBO is K-major 8W (mn > 8); MN-major no swizzle S "
    "(mn > T), swizzled R*W (Kinst > R; R = 8, 4 for 128B_ATOM_32B).", subject=SUBJECT)


@K_STEP_SBO.checker
def _sbo(c: RecipeCase):
    return _per_step(c, desc_case.SBO)


K_STEP_LBO = rule(
    "recipe.k_step.lbo", SOURCE + "; PTX 9.7.16.3.2 (LBO)",
    "Each k-step's descriptor obeys desc.tile.leading_byte_offset on the tile the boxes lay down "
    "(step_case): where the instruction uses it, LBO is K-major no swizzle S (the next box holds the next "
    "K chunk); MN-major no swizzle 128 (Kinst > 8), swizzled S (mn > W/E).", subject=SUBJECT)


@K_STEP_LBO.checker
def _lbo(c: RecipeCase):
    return _per_step(c, desc_case.LBO)


K_STEP_BASE_OFFSET = rule(
    "recipe.k_step.base_offset", "tests/hardware/wgmma_sm90_reads.json.gz (rule readmap.swizzle_phase); "
    "PTX ISA 5.5.7",
    "With a swizzle, each descriptor's base offset is 0 modulo the pattern's rows (2 for 32B, 4 for 64B "
    "and 128B_atom32B, 8 for 128B): TMA swizzles absolute addresses, and base offset 0 reads them so "
    "(as rule desc.tile.base_offset).", subject=SUBJECT, evidence="hardware")


@K_STEP_BASE_OFFSET.checker
def _base_offset(c: RecipeCase):
    for k0, op in c.steps:
        if op.desc.swizzle != "none" and op.desc.base_offset % pattern_rows(op.desc.swizzle):
            return f"k-step {k0}: base offset {op.desc.base_offset} re-phases TMA's absolute swizzle"
    return None


def _once(found: list, seen: set, items) -> None:
    for v in items:
        if v.rule.id not in seen:
            seen.add(v.rule.id)
            found.append(v)


def violations(c: RecipeCase) -> list:
    """Every rule the case breaks, each once: the boxes' (tma_box), each k-step's descriptor and operand
    rules (spec.mma.readmap), and the recipe's."""
    found, seen = [], set()
    for b, placed in enumerate(boxes(c)):
        # the boxes differ only in where they land and their coordinate, which the load's size rules
        # (tma.map.box_bytes, box_bytes_loaded) do not read: the first box's are every box's
        _once(found, seen, tma_place.violations(placed) if b == 0 else tma_place.box_violations(placed))
    for _, op in c.steps:
        _once(found, seen, readmap.violations(op))
    _once(found, seen, check_all(SUBJECT, c))
    return found


def first_misread_by_element(c: RecipeCase) -> Optional[dict]:
    """The first element (k-step order, then mn, then k) some k-step descriptor reads from elsewhere than
    the boxes left it: {"k_step", "element": {"mn", "k"}, "read_from", "written_at"} (written_at None:
    no box wrote it; "holds": the element left at read_from, when another), or None. The definition
    (rule recipe.case.reads), element by element; first_misread computes the same by classes of rows."""
    written_at, holds = written(c)
    for k0, op in c.steps:
        reads = readmap.read_addresses(op)
        for mn in range(c.mn):
            row = reads[mn]
            for k in range(op.k):
                element = (mn, k0 + k)
                if holds.get(row[k]) != element:
                    witness = {"k_step": k0, "element": {"mn": mn, "k": k0 + k}, "read_from": row[k],
                               "written_at": written_at.get(element)}
                    if row[k] in holds:
                        witness["holds"] = {"mn": holds[row[k]][0], "k": holds[row[k]][1]}
                    return witness
    return None


def first_misread(c: RecipeCase) -> Optional[dict]:
    """first_misread_by_element; while fast paths are on (spec.fast), by classes of rows
    (spec.fast.cases_recipe_case)."""
    return fast.fastest(first_misread_by_element)(c)
