"""Tile recipes: the whole set-up for one operand tile in shared memory.

For a tile of MN x K_tile elements in one swizzle mode the recipe gives the smem layout (CuTe notation,
swizzle on byte addresses), its size and the alignment it needs, the TMA boxes and swizzle that fill
it, one descriptor per MMA instruction along K (found by synth), and the check that every element
the TMA boxes write is the one each descriptor reads (exhaustive over the tile: a proof for these
parameters).

The layout is the one a TMA box writes: K-major, a box is (W/elem_bytes along K) x MN rows, rows W
bytes apart (8-row groups 8W apart: SBO = 8W), boxes along K one after another (MN*W bytes apart);
MN-major, a box is (W/elem_bytes along MN) x K_tile rows (K groups of 8 rows 8W apart: SBO = 8W),
boxes along MN K_tile*W bytes apart (LBO). W is the swizzle width (16 bytes with no swizzle).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from spec.mma import descriptor as spec_descriptor
from spec.mma import dtypes
from spec.mma import readmap
from spec.cases import recipe_case
from spec.tma import tensormap
from spec.cute.layout import ComposedLayout, Layout
from spec.rules import SpecError, check_all
from spec.cute.swizzle import DESCRIPTOR_SWIZZLES, repeat_bytes

from solver.model.vocab import DESCRIPTOR_ROW_BYTES as ROW_BYTES, TMA_MODE
from solver.synth import descriptor as synth


MAX_MN = 256                 # the largest M or N of any MMA (PTX ISA 9.7.15.5, 9.7.16.2.1)
SMEM_BYTES = recipe_case.SMEM_BYTES      # no tile is larger than one SM's shared memory

# The rules a recipe obeys (check_all("recipe", ...)) are spec's: tma.box.destination_alignment
# (spec/tma/place.py) and recipe.swizzle_alignment (spec/cases/recipe_case.py).


@dataclass
class Recipe:
    arch: str
    dtype: str
    kind: str
    major: str
    mn: int
    k_tile: int
    swizzle: str
    smem_address: int
    layout: ComposedLayout = None
    size_bytes: int = 0
    alignment: int = 0
    tma: dict = field(default_factory=dict)
    instructions: list = field(default_factory=list)
    proof: dict = field(default_factory=dict)
    violations: list = field(default_factory=list)
    allow_unaligned: bool = False


def _layout(major: str, swizzle: str, per_row: int, mn: int, k_tile: int) -> ComposedLayout:
    """(mn, k) -> element offset, as the TMA boxes place the tile."""
    if major == "K":
        boxes = k_tile // per_row
        shape = ((8, mn // 8), (per_row, boxes))
        stride = ((per_row, 8 * per_row), (1, mn * per_row))
    else:
        boxes = mn // per_row
        shape = ((per_row, boxes), (8, k_tile // 8))
        stride = ((1, k_tile * per_row), (per_row, 8 * per_row))
    return ComposedLayout(DESCRIPTOR_SWIZZLES[swizzle], 0, Layout(shape, stride))


def tile_layout(arch: str, dtype_name: str, major: str, mn: int, k_tile: int, swizzle: str, kind=None) -> tuple:
    """(dtype, kind, per_row, the tile's layout): the smem layout a recipe's TMA boxes give an MN x K_tile
    tile, after the recipe's checks of its shape (each a SpecError naming the field and the rule)."""
    spec_descriptor.check_arch(arch)
    d = dtypes.dtype(dtype_name)
    kind = dtypes.check_kind(d, kind) if kind else dtypes.default_kind(d)
    if swizzle not in spec_descriptor.swizzle_codes(arch):
        raise SpecError("swizzle", swizzle, f"not a {arch} descriptor swizzle; expected one of "
                        + " ".join(spec_descriptor.swizzle_codes(arch)), "desc.sm90.layout")
    if major not in readmap.MAJORS:
        raise SpecError("major", major, "expected K or MN", readmap.MN_EXTENT.id)
    per_chunk = dtypes.elements_per_chunk(d, kind)
    if d.bits * per_chunk != 128:
        raise SpecError("dtype", dtype_name, f"kind::{kind} pads its {d.bits}-bit elements; a TMA box "
                        "does not write that packing", dtypes.PACKING.id)
    W = ROW_BYTES[swizzle]
    per_row = W * 8 // d.bits
    k_inst = dtypes.default_instruction_k(d, kind)
    if mn <= 0 or mn % 8 or (major == "MN" and mn % per_row):
        raise SpecError("mn", mn, f"must be a positive multiple of 8{'' if major == 'K' else f' and of {per_row} (one {swizzle} row)'}",
                        readmap.MN_EXTENT.id)
    if mn > MAX_MN:
        raise SpecError("mn", mn, f"at most {MAX_MN}: each instruction reads the whole MN extent, and no MMA "
                        f"reads an M or N above {MAX_MN}", readmap.MN_EXTENT.id)
    unit = per_row if major == "K" else 8
    if k_tile <= 0 or k_tile % unit or k_tile % k_inst:
        raise SpecError("k_tile", k_tile, f"must be a positive multiple of {unit} (one box along K) and of "
                        f"the instruction K {k_inst}", readmap.MN_EXTENT.id)
    if major == "MN" and k_tile > tensormap.MAX_BOX_DIM:
        raise SpecError("k_tile", k_tile, f"an MN-major box holds the tile's whole K as its rows, and a TMA box "
                        f"has at most {tensormap.MAX_BOX_DIM} of them: use a K tile of at most {tensormap.MAX_BOX_DIM}",
                        tensormap.BOX_RANGE.id)
    if mn * k_tile * d.bits // 8 > SMEM_BYTES:
        raise SpecError("k_tile", k_tile, f"the {mn} x {k_tile} tile takes {mn * k_tile * d.bits // 8} bytes, "
                        f"more than the {SMEM_BYTES} bytes (228 KiB) of one SM's shared memory",
                        readmap.MN_EXTENT.id)
    return d, kind, per_row, _layout(major, swizzle, per_row, mn, k_tile)


def build(arch: str, dtype_name: str, major: str, mn: int, k_tile: int, swizzle: str, smem_address: int,
          kind=None, allow_unaligned: bool = False) -> Recipe:
    d, kind, per_row, layout = tile_layout(arch, dtype_name, major, mn, k_tile, swizzle, kind)
    k_inst = dtypes.default_instruction_k(d, kind)
    if smem_address < 0 or smem_address % 16 or smem_address >= 1 << 18:
        raise SpecError("smem_address", smem_address, "must be a multiple of 16 below 2^18",
                        spec_descriptor.FIELD_ENCODING.id)
    r = Recipe(arch, d.name, kind, major, mn, k_tile, swizzle, smem_address, allow_unaligned=allow_unaligned)
    r.layout = layout
    r.size_bytes = mn * k_tile * d.bits // 8
    r.alignment = max(128, repeat_bytes(swizzle))
    r.violations = check_all("recipe", r)
    if r.violations:
        return r
    r.tma = _tma(r, per_row, d)
    synth.make_tile(arch, d.name, major, mn, r.layout, smem_address, kind=kind)    # its checks of the tile
    tiles = [synth.Tile(arch, d.name, major, mn, k_inst, k0, r.layout, smem_address, kind)
             for k0 in range(0, k_tile, k_inst)]
    with synth.shared_work():       # the K steps share layout offsets, direct plans and Z3 read-map terms
        outcomes = _direct_outcomes(tiles) if synth.DIRECT else None
        for tile, outcome in zip(tiles, outcomes or [synth.synthesize(tile, direct=False) for tile in tiles]):
            r.instructions.append({"k_offset": tile.k_offset, "status": outcome.status,
                                   "descriptor": outcome.descriptor.hex if outcome.descriptor else None,
                                   "fields": outcome.descriptor.fields_json() if outcome.descriptor else None,
                                   "reason": outcome.reason or None})
    r.proof = _prove(r)
    return r


def _direct_outcomes(tiles: list):
    """synth's direct outcome for every K step, or None when one step has none. All or none: then every
    step goes to Z3's search, as with the direct path off, since Z3's answers (the order of an unsat core,
    say) can depend on the queries made before in the process."""
    outcomes = []
    for tile in tiles:
        outcome = synth.solve_directly(tile)
        if outcome is None:
            return None
        outcomes.append(outcome)
    return outcomes


def _tma(r: Recipe, per_row: int, d) -> dict:
    mode = TMA_MODE[r.swizzle]
    if r.major == "K":
        box, count, step = [per_row, r.mn], r.k_tile // per_row, r.mn * per_row * d.bits // 8
        along = "K"
    else:
        box, count, step = [per_row, r.k_tile], r.mn // per_row, r.k_tile * per_row * d.bits // 8
        along = "MN"
    loads = [{"box_origin": {along: i * per_row}, "smem_address": r.smem_address + i * step} for i in range(count)]
    return {"swizzle": mode, "box": box, "box_order": "d0 fastest: " + ("K, MN" if r.major == "K" else "MN, K"),
            "loads": loads, "box_bytes": box[0] * box[1] * d.bits // 8}


def _no_descriptor(instruction: dict) -> dict:
    return {"status": "refuted", "reason": f"no descriptor for K offset {instruction['k_offset']}"}


# A sub-byte element type reads and writes its tile a byte at a time: e2m1 with kind::mxf4 (the only such
# recipe: two elements a byte, K-major only, rule operand.mn_major.dtype) holds elements (mn, 2j) and
# (mn, 2j + 1) in byte j of row mn, TMA copies bytes, and a descriptor reads element (mn, k) from the
# byte of (mn, k div 2) (its chunk's byte (k mod 32) div 2: spec.mma.dtypes.byte_in_chunk). So the
# recipe is checked as the byte tile it is in memory: the same descriptors (their fields are bytes), an
# 8-bit type whose k-steps are also 32 bytes, K halved (tests/spec_tests/test_recipe_case_path.py compares the two
# element by element).
BYTE_TYPE = "e4m3"


def _elements_per_byte(r: Recipe) -> int:
    return max(1, 8 // dtypes.dtype(r.dtype).bits)


def case_document(r: Recipe) -> dict:
    """The built recipe as spec's recipe case (spec/cases/recipe_case.py: the boxes and each k-step's
    descriptor); a sub-byte type as its byte tile (above)."""
    per_byte = _elements_per_byte(r)
    if per_byte > 1 and r.major != "K":
        raise SpecError("major", r.major, f"a {r.dtype} recipe is K-major (two elements a byte along K)",
                        readmap.MN_EXTENT.id)
    if per_byte > 1 and instruction_k(r) * dtypes.dtype(r.dtype).bits != 8 * 32:
        # (the byte tile's k-steps are BYTE_TYPE's 32 bytes: a sub-byte K step of another size has no such case)
        raise SpecError("kind", r.kind, f"a {r.dtype} k-step of {instruction_k(r)} elements is not 32 bytes; the "
                        "recipe's check reads sub-byte tiles 32 bytes a k-step", readmap.MN_EXTENT.id)
    loads = r.tma["loads"]
    stride = loads[1]["smem_address"] - loads[0]["smem_address"] if len(loads) > 1 else r.tma["box_bytes"]
    return {"dtype": r.dtype if per_byte == 1 else BYTE_TYPE, "major": r.major, "mn": r.mn,
            "k_tile": r.k_tile // per_byte, "smem_address": r.smem_address,
            "tma": {"swizzle": r.tma["swizzle"], "boxDim": [r.tma["box"][0] // per_byte, r.tma["box"][1]],
                    "box_count": len(loads), "box_stride_bytes": stride},
            "descriptors": [{"k_offset": i["k_offset"] // per_byte, "descriptor": i["descriptor"]}
                            for i in r.instructions]}


def _case(r: Recipe) -> recipe_case.RecipeCase:
    return recipe_case.parse_case(case_document(r), r.arch)


def _prove(r: Recipe) -> dict:
    """Every element each instruction reads is where the TMA boxes put it: spec's recipe case (rule
    recipe.case.reads, recipe_case.first_misread), over every element of every k-step."""
    missing = next((i for i in r.instructions if i["status"] != "found"), None)
    if missing is not None:
        return _no_descriptor(missing)
    witness = recipe_case.first_misread(_case(r))
    if witness is not None:
        element = witness["element"]
        return {"status": "refuted", "element": [element["mn"], element["k"] * _elements_per_byte(r)],
                "written": witness["written_at"], "read": witness["read_from"]}
    return {"status": "proved", "method": "exhaustive", "elements": r.mn * r.k_tile,
            "statement": "every element each descriptor reads is the one the TMA boxes wrote there"}


def instruction_k(r: Recipe) -> int:
    """The K one instruction reads: the k-step of r.instructions."""
    return dtypes.default_instruction_k(dtypes.dtype(r.dtype), r.kind)


def written_addresses(r: Recipe) -> list:
    """written[mn][k]: the byte address the recipe's TMA loads put tile element (mn, k) at (spec's
    recipe_case.written: the boxes' placement, spec.tma.place)."""
    per_byte = _elements_per_byte(r)
    written_at, _ = recipe_case.written(_case(r))
    return [[written_at.get((mn, k // per_byte)) for k in range(r.k_tile)] for mn in range(r.mn)]


def as_json(r: Recipe) -> dict:
    return {"arch": r.arch, "dtype": r.dtype, "kind": r.kind, "major": r.major, "mn": r.mn,
            "k_tile": r.k_tile, "swizzle": r.swizzle, "smem_address": r.smem_address,
            "layout": r.layout.notation() if r.layout else None, "size_bytes": r.size_bytes,
            "alignment": r.alignment, "tma": r.tma or None, "instructions": r.instructions,
            "proof": r.proof or None, "violations": [v.as_json() for v in r.violations]}


def instruction_descriptor(r: Recipe, m: int, n: int, cta_group: int = 1) -> dict:
    """The tcgen05.mma instruction descriptor (PTX 9.7.16.4.2 Tables 42-44) for an M x N MMA whose A and B
    are tiles like this one (same type, same major-ness): type codes from the kind, D in f32 (s32 for
    kind::i8), transpose bits from the major-ness, M and N in their fields; with the rules it breaks
    (spec.mma.instr_desc) and those of the shape (spec.mma.shape, Table 39). sm90 has none (wgmma)."""
    from spec.mma import instr_desc, shape
    from spec.rule import check_all
    if r.arch == "sm90":
        raise SpecError("instr", f"{m},{n}", "sm90's wgmma takes no instruction descriptor (tcgen05.mma on "
                        "sm100/sm103 does)", instr_desc.LAYOUT_RULE.id)
    code = instr_desc.type_code(r.kind, r.dtype)
    values = {"m": m, "n": n, "atype": code, "btype": code}
    if r.kind in instr_desc.D_TYPES_PER_KIND:
        values["dtype"] = dtypes.D_TYPE_CODES["s32" if r.kind == "i8" else "f32"]
    if r.major == "MN":
        values.update(transpose_a=1, transpose_b=1)
    idesc = instr_desc.encode(r.kind, r.arch, **values)
    mma = shape.of_instr_desc(idesc, cta_group, r.dtype)
    broken = [v.as_json() for v in instr_desc.violations(idesc)] + [v.as_json() for v in check_all(shape.SUBJECT, mma)]
    return {"word": f"{idesc.word:#010x}", "kind": r.kind, "m": m, "n": n, "cta_group": cta_group,
            "a_major": idesc.a_major, "b_major": idesc.b_major,
            "d_type": "s32" if r.kind == "i8" else ("f32" if r.kind in instr_desc.D_TYPES_PER_KIND else None),
            "fields": idesc.fields, "violations": broken}
