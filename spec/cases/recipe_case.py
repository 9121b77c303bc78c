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

from array import array
from dataclasses import dataclass
from typing import Optional

from spec import fast
from spec.mma import descriptor as spec_descriptor
from spec.mma import dtypes
from spec.mma import readmap
from spec.tma import place as tma_place
from spec.tma import swizzle as tma_swizzle
from spec.tma import tensormap
from spec.rule import SpecError, check_all, rule
from spec.cute.swizzle import DESCRIPTOR_SWIZZLES, pattern_rows, repeat_bytes

SUBJECT = "recipe_case"
SOURCE = "PTX ISA 5.5.3 (Tiled mode), 5.5.7 (Swizzling Modes), 9.7.16.3.1-2 (matrix descriptor strides)"
# TMA swizzle -> the descriptor swizzle that reads the same pattern (absolute-address XOR, PTX 5.5.7 and
# 9.7.16.10.6); the TMA modes a recipe case may use
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
    k_tile = _int(case["k_tile"], "k_tile", k_inst, 1 << 12, k_inst, readmap.MN_EXTENT.id)
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
        addresses = tma_place.place_rows(box)       # = place(box), row by row (tests/test_fast_paths.py)
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
    (one per k-step), "sbo", "lbo" (None where the instruction does not use the field)."""
    W, S, A, E, kinst = c.row, c.box_stride, c.smem_address, c.element_bytes, c.k_inst
    count = len(c.steps)
    if c.major == "K":
        starts = [A + (32 * j // W) * S + (32 * j) % W for j in range(count)]
        sbo = 8 * W if c.mn > 8 else None
        lbo = S if c.tma_swizzle == "NONE" else None
    else:
        starts = [A + j * kinst * W for j in range(count)]
        if c.tma_swizzle == "NONE":
            sbo = S if c.mn > 16 // E else None
            lbo = 128 if kinst > 8 else None
        else:
            R = 4 if c.tma_swizzle == "128B_ATOM_32B" else 8
            sbo = R * W if kinst > R else None
            lbo = S if c.mn > W // E else None
    return {"starts": starts, "sbo": sbo, "lbo": lbo}


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


K_STEP_START = rule(
    "recipe.k_step.start", SOURCE + "; PTX 9.7.16.3.1 (matrix start address)",
    "Each k-step descriptor's start address is where the TMA boxes put its first element (0, k_offset) "
    "before the swizzle: K-major A + (32j div W)*S + (32j mod W), MN-major A + j*Kinst*W.",
    subject=SUBJECT)


@K_STEP_START.checker
def _start(c: RecipeCase):
    for (k0, op), want in zip(c.steps, needs(c)["starts"]):
        if op.desc.start_address != want:
            return f"k-step {k0}: start {op.desc.start_address:#x}; element (0, {k0}) lands at {want:#x}"
    return None


K_STEP_SBO = rule(
    "recipe.k_step.sbo", SOURCE + "; PTX 9.7.16.3.2 (SBO)",
    "Where the instruction uses it, each descriptor's SBO is the placement's: K-major 8W (mn > 8); "
    "MN-major no swizzle S (mn > T), swizzled R*W (Kinst > R; R = 8, 4 for 128B_ATOM_32B).",
    subject=SUBJECT)


def _first_step_off(c: RecipeCase, need: str, field_name: str, label: str):
    """The first k-step whose descriptor field differs from what the placement needs (None where the
    instruction does not use the field), as a message."""
    want = needs(c)[need]
    for k0, op in c.steps:
        have = getattr(op.desc, field_name)
        if want is not None and have != want:
            return f"k-step {k0}: {label} {have}; the placement needs {want}"
    return None


@K_STEP_SBO.checker
def _sbo(c: RecipeCase):
    return _first_step_off(c, "sbo", "stride_byte_offset", "SBO")


K_STEP_LBO = rule(
    "recipe.k_step.lbo", SOURCE + "; PTX 9.7.16.3.2 (LBO)",
    "Where the instruction uses it, each descriptor's LBO is the placement's: K-major no swizzle S (the "
    "next box holds the next K chunk); MN-major no swizzle 128 (Kinst > 8), swizzled S (mn > W/E).",
    subject=SUBJECT)


@K_STEP_LBO.checker
def _lbo(c: RecipeCase):
    return _first_step_off(c, "lbo", "leading_byte_offset", "LBO")


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


# first_misread inlines the hardware read swizzle of read_addresses and the rows of place_rows: registered
# as the fast version of first_misread_by_element, it runs only while spec.fast is enabled (a test that
# changes a definition turns fast paths off, and the definition is followed element by element).
@fast.fast_version_of(first_misread_by_element)
def first_misread(c: RecipeCase) -> Optional[dict]:
    """first_misread_by_element, by classes of rows (tests/test_recipe_fast.py checks the two equal).

    Box b writes its row r, element i at sw_tma(A + b*S + r*pitch + i*E): K-major element (r, b*inner + i),
    MN-major (b*inner + i, r). So both sides are an MN part plus a K part under a swizzle:
      written(mn, k) = sw_tma(FW[mn] + GW[k])   K-major  FW = mn*pitch, GW = A + (k div inner)*S + (k mod inner)*E
                                                MN-major FW = (mn div inner)*S + (mn mod inner)*E, GW = A + k*pitch
      read(mn, k)    = sw_desc(FR[mn] + GR[k])  (spec.mma.readmap: mn_part, k_part of the k-step's operand)
    for the elements the boxes write (a rectangle from (0, 0)). Each swizzle moves only the bits below its
    period, a power of two, so sw(x + j*P) = sw(x) + j*P for P a multiple of both periods, and whether row
    mn of a k-step reads right at k depends on mn only through its key (FW[mn] mod P, FR[mn] mod P,
    FW[mn] - FR[mn]; None for a row no box wrote): each key is compared once per k-step, K elements. A
    written element is misread also when a later box wrote the same first byte over it (boxes closer
    than their extent): the TMA swizzle permutes each period, so those are found on linear addresses."""
    rows, inner, pitch = tma_place.row_layout(box_at(c, 0))     # refuses the boxes that place_rows refuses
    table = tma_swizzle.period_deltas(c.tma_swizzle)
    if table is None or not table[2] or not fast.enabled():
        return first_misread_by_element(c)
    tma_mask, delta, _ = table
    E, S, A, count = c.element_bytes, c.box_stride, c.smem_address, c.box_count
    k_major = c.major == "K"
    mn_written, k_written = (rows, count * inner) if k_major else (count * inner, rows)
    if k_major:
        FW = [mn * pitch for mn in range(c.mn)]
        GW = [A + (k // inner) * S + (k % inner) * E for k in range(min(c.k_tile, k_written))]
    else:
        FW = [(mn // inner) * S + (mn % inner) * E for mn in range(c.mn)]
        GW = [A + k * pitch for k in range(min(c.k_tile, k_written))]
    last_box = _last_box(c, rows, inner, pitch)

    def write_of(mn: int, k: int) -> tuple:
        """(box, offset from A before the swizzle) of the write of element (mn, k)."""
        b, row, i = (k // inner, mn, k % inner) if k_major else (mn // inner, k, mn % inner)
        return b, b * S + row * pitch + i * E

    def first_lost(k0: int, k_end: int, last_row: int) -> Optional[tuple]:
        """The first element (mn, k - k0) of rows up to last_row, k0 <= k < k_end, that a later box wrote
        over: each row's writes are a few evenly spaced runs (K-major one per box the k-step reads)."""
        for mn in range(min(last_row + 1, mn_written)):
            k = k0
            while k < k_end:
                stop = min(k_end, k - k % inner + inner) if k_major else k_end
                (b, first), (_, last) = write_of(mn, k), write_of(mn, stop - 1)
                tags = last_box[first:last + 1:E if k_major else pitch]
                if tags.count(b + 1) < len(tags):
                    return mn, k - k0 + next(j for j, tag in enumerate(tags) if tag != b + 1)
                k = stop
        return None

    def classes(W, R, period) -> dict:
        """{(W[i] mod P, R[i] mod P, W[i] - R[i]): its first i}: lines that compare alike."""
        found = {}
        for i, (w, r) in enumerate(zip(W, R)):
            found.setdefault((w % period, r % period, w - r), i)
        return found

    m = min(c.mn, mn_written)              # the tile's rows the boxes wrote
    row_classes = {}                       # the operand's mn-part fields -> (FR, classes of rows)
    for k0, op in c.steps:
        d = op.desc
        # sw_desc(v) = v ^ ((((v >> 7) - base offset) mod R) << shift) (rule readmap.swizzle_phase)
        pattern = pattern_rows(d.swizzle)
        shift, low, base_offset = DESCRIPTOR_SWIZZLES[d.swizzle].base, pattern - 1, d.base_offset
        period = max(tma_mask + 1, 1 << (max(readmap.LINE.bit_length() - 1, shift) + pattern.bit_length() - 1))
        fields = (d.stride_byte_offset, d.leading_byte_offset, d.swizzle, period)
        if fields not in row_classes:
            FR = [readmap.mn_part(op, mn) for mn in range(c.mn)]
            row_classes[fields] = FR, classes(FW[:m], FR[:m], period)
        FR, by_row = row_classes[fields]
        GR = [origin + offset for origin, offset in (readmap.k_part(op, k) for k in range(op.k))]
        written_k = GW[k0:k0 + op.k]             # the columns of the k-step the boxes wrote
        cut = len(written_k)

        def first_apart(key, cross_w, cross_r) -> Optional[int]:
            """The first j where the lines of `key` read elsewhere than written, across (cross_w, cross_r):
            the columns of a row, or the rows of a column."""
            w0, r0, difference = key
            want = w0 - r0 - difference     # sw_tma(w0 + cross_w) - sw_desc(r0 + cross_r) where they agree
            apart = [(w := w0 + g) + delta[w & tma_mask] - ((v := r0 + h) ^ ((((v >> 7) - base_offset) & low) << shift))
                     for g, h in zip(cross_w, cross_r)]
            return None if apart.count(want) == len(apart) else next(j for j, x in enumerate(apart) if x != want)

        found = [(m, 0)] if m < c.mn else []           # a row no box wrote
        if cut < op.k:
            found.append((0, cut))                     # a column no box wrote
        if m and cut:
            by_column = classes(written_k, GR, period)
            if len(by_row) * cut <= len(by_column) * m:
                for key, mn in by_row.items():
                    if not found or mn <= min(found)[0]:
                        k = first_apart(key, written_k, GR)
                        found += [] if k is None else [(mn, k)]
            else:       # each column's first misread row; the first in row order is the least (mn, k)
                for key, k in by_column.items():
                    mn = first_apart(key, FW[:m], FR[:m])
                    found += [] if mn is None else [(mn, k)]
            if last_box is not None:
                found += filter(None, [first_lost(k0, k0 + cut, min(found)[0] if found else m - 1)])
        if found:
            mn, k = min(found)
            v = FR[mn] + GR[k]
            read_from = v ^ ((((v >> 7) - base_offset) & low) << shift)
            written_at = None
            b, offset = write_of(mn, k0 + k)
            if mn < mn_written and k0 + k < k_written and (last_box is None or last_box[offset] == b + 1):
                w = FW[mn] + GW[k0 + k]
                written_at = w + delta[w & tma_mask]
            witness = {"k_step": k0, "element": {"mn": mn, "k": k0 + k}, "read_from": read_from,
                       "written_at": written_at}
            holder = _last_written(c, rows, inner, pitch, table, read_from)
            if holder is not None:
                witness["holds"] = {"mn": holder[0], "k": holder[1]}
            return witness
    return None


def _last_box(c: RecipeCase, rows: int, inner: int, pitch: int) -> Optional[array]:
    """For each first byte from smem_address before the swizzle (it permutes each of its periods), 1 +
    the last box that wrote there, 0 where none did; None when no box can write over another (one box,
    or boxes at least a box's extent apart)."""
    E, S = c.element_bytes, c.box_stride
    extent = (rows - 1) * pitch + (inner - 1) * E + 1
    if c.box_count == 1 or S >= extent:
        return None
    last = array("H", [0]) * ((c.box_count - 1) * S + extent)       # box_count < 2^12
    for b in range(c.box_count):
        tag = array("H", [b + 1]) * inner
        for row in range(rows):
            start = b * S + row * pitch
            last[start:start + inner * E:E] = tag
    return last


def _last_written(c: RecipeCase, rows: int, inner: int, pitch: int, table: tuple, address: int) -> Optional[tuple]:
    """The element the boxes' last write at `address` (a first byte) left, or None: the one linear address
    the TMA swizzle sends there, written last by the latest box that covers it."""
    mask, delta, _ = table
    low = next(r for r in range(mask + 1) if r + delta[r] == address & mask)
    linear = address - (address & mask) + low
    for b in reversed(range(c.box_count)):
        offset = linear - c.smem_address - b * c.box_stride
        if offset >= 0:
            row, rest = divmod(offset, pitch)
            if row < rows and rest % c.element_bytes == 0 and rest // c.element_bytes < inner:
                i = b * c.inner + rest // c.element_bytes
                return (row, i) if c.major == "K" else (i, row)
    return None
