"""A scale-factor plan for one block-scaled tcgen05.mma tile (issue 28, `layoutproof scales plan`).

Given the kind, the tile (M x N x K, .cta_group), the block of K one scale covers (or the scale vector) and
the layout the quantizer wrote the scales in, the plan says how the kernel gets every scale to the element
it belongs to:
1. one TMA load per operand brings the tile's scales to shared memory unchanged: a UINT8 tensor map of
   rank 4, dimensions (16 bytes, 32 rows, K tiles, row tiles) innermost first, which is the interleaved
   layout's own order (spec.scales.layouts: 512-byte chunks of 128 rows x 4 K blocks, K tiles first);
   its innermost box is one 16-byte row of a chunk, so every box dimension stays within 256;
2. one tcgen05.cp.32x128b.warpx4 per chunk, from a K-major descriptor without swizzle (LBO 16, SBO 128:
   the chunk's 32 rows of 16 bytes lie contiguously), to tensor-memory column 4 (j x row tiles + i) from
   the operand's first scale column (spec.scales.path.standard_reader, the copies CUTLASS and Triton emit);
3. the MMA of k-step t reads its scale operands at the column of chunk (0, t N // 4) and takes the
   scale-factor id (t N) mod 4 in the instruction descriptor (bits [29,31) for A, [4,6) for B).

Tensor memory holds D first (N columns of f32 from column 0, 128 lanes: layouts A and D), then A's
scales, then B's; the allocation is the next power of two (rule tmem.alloc.columns). With .cta_group::2
and M = 256 each CTA runs the same plan for its 128 rows of A, with all N of B's scales in its own shared
memory, and the copies are .cta_group::2 (rule tmem.cp.peer: each CTA's tensor memory from its own
shared memory). M = 128 with .cta_group::2 reads B's scales on the 2 x 2 data path
(scales.tmem.cells_2x2), which no plan here is made for: that request is refused, not answered.

Search. The choices are the scale vector (the kind and --sf-block or --scale-vec leave at most two) and the
scale type; each candidate is checked against the rules below, which the executable specification
decides. With no candidate left the answer is "none", with a minimal set of rules that together exclude
every candidate (deletion: a rule is dropped from the set while every candidate still breaks one that
remains), as `synth` answers with an unsat core.

Check. A plan found is checked by the specification, not by the search: spec.scales.path follows every
scale of A and B through the plan's copies and k-steps (first_misread is None for both), each copy's
descriptor reads its chunk's rows where the load put them (spec.tmem.cp.row_source), each copy's PTX
(its [%rI] the copy's taddr, its %rdI the descriptor; an MMA's [%sfaT] / [%sfbT] the k-step's scale taddr) is
accepted on sm_100a (spec.tmem.instruction.check), and each k-step's instruction descriptor decodes to its
M, N, scale type and scale-factor ids (spec.mma.instr_desc).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from spec.mma import descriptor as smem_descriptor
from spec.mma import instr_desc, shape as mma_shape
from spec.rule import CATALOGUE, SpecError, catalogue_position, check_all
from spec.scales import layouts, path, vectors
from spec.tma import tensormap
from spec.tmem import alloc, cp, instruction
from spec.tmem.address import COLUMNS as TMEM_COLUMNS

TARGET = "sm_100a"
DEFAULT_DTYPES = {"mxf8f6f4": "e4m3", "mxf4": "e2m1", "mxf4nvf4": "e2m1"}
D_LANES = 128
MAX_K = 1 << 16                       # elements of K a plan is made for (4096 blocks of 16: sizes before work)
MAX_MN = 4096                         # M and N a request may name (Table 39's largest is 256: the rules say why)
COPY_SHAPE = "32x128b"
COPY_MULTICAST = "warpx4"
DESC_LBO, DESC_SBO = 16, 128          # K-major, no swizzle: one 16-byte chunk per row, 8 rows 128 bytes apart
TMA_ALIGNMENT = 128                   # a tiled TMA load's shared-memory destination (CUDA Driver API)
OBJECTIVE = ("the requested scale vector and type; else the kind's first scale vector (Table 54's order) "
             "and UE4M3 for 4X (NVFP4), UE8M0 otherwise")


@dataclass(frozen=True)
class Request:
    kind: str
    m: int
    n: int
    k: int
    sf_layout: str = "interleaved"
    block: Optional[int] = None
    scale_vec: Optional[str] = None       # as written: 1X, 2X, 4X, block16, block32, .scale_vec::NX
    scale_type: Optional[str] = None      # ue8m0 | ue4m3
    cta_group: int = 1
    smem_address: int = 0                 # shared-memory address of A's scales (B's follow)


@dataclass
class Plan:
    status: str                           # "found" | "none"
    request: Request
    vector: Optional[str] = None
    scale_type: Optional[str] = None
    block: Optional[int] = None
    operands: dict = field(default_factory=dict)     # "A" | "B" -> the operand's scales (see _operand)
    copies: list = field(default_factory=list)
    steps: list = field(default_factory=list)
    tmem: dict = field(default_factory=dict)
    rules: list = field(default_factory=list)        # when "none": a minimal set of rules excluding every candidate
    always_broken: list = field(default_factory=list)  # when "none": the rules every candidate breaks
    rejected: dict = field(default_factory=dict)     # candidate "vector/type" -> the rules it breaks
    check: dict = field(default_factory=dict)

    @property
    def found(self) -> bool:
        return self.status == "found"

    def as_json(self) -> dict:
        r = self.request
        return {"status": self.status, "kind": r.kind, "m": r.m, "n": r.n, "k": r.k, "cta_group": r.cta_group,
                "sf_layout": r.sf_layout, "scale_vec": self.vector, "scale_type": self.scale_type,
                "block": self.block, "objective": OBJECTIVE, "rules": self.rules, "always_broken": self.always_broken,
                "rejected": self.rejected,
                "operands": self.operands, "copies": self.copies, "steps": self.steps, "tmem": self.tmem,
                "check": self.check}


def make_request(kind: str, m: int, n: int, k: int, sf_layout: str = "interleaved", block: Optional[int] = None,
                 scale_vec: Optional[str] = None, scale_type: Optional[str] = None, cta_group: int = 1,
                 smem_address: int = 0) -> Request:
    """Validate what is malformed (SpecError naming the field and rule) before any work."""
    if kind not in vectors.KINDS:
        raise SpecError("kind", kind, "a block-scaled kind is one of " + ", ".join(vectors.KINDS), vectors.VECTOR.id)
    for name, value, rule_id in (("m", m, mma_shape.M_RULE.id), ("n", n, mma_shape.N_RULE.id),
                                 ("k", k, path.K_STEPS.id)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise SpecError(name, value, "a positive whole number", rule_id)
    if k > MAX_K:
        raise SpecError("k", k, f"at most {MAX_K} elements for a plan", path.K_STEPS.id)
    for name, value, rule_id in (("m", m, mma_shape.M_RULE.id), ("n", n, mma_shape.N_RULE.id)):
        if value > MAX_MN:        # (sizes before work: no MMA has more than 256; a larger one is refused here)
            raise SpecError(name, value, f"at most {MAX_MN} for a plan (one MMA's M and N are at most 256)", rule_id)
    if sf_layout not in layouts.LAYOUTS:
        raise SpecError("sf_layout", sf_layout, "one of " + ", ".join(layouts.LAYOUTS), layouts.INTERLEAVED.id)
    if block is not None and block not in (16, 32):
        raise SpecError("block", block, "16 or 32 (the block sizes of Table 54)", vectors.VECTOR.id)
    if scale_vec is not None and _named_vector(scale_vec) is None:
        raise SpecError("scale_vec", scale_vec, "one of 1X 2X 4X block16 block32", vectors.VECTOR.id)
    if block is None and scale_vec is None and kind == "mxf4nvf4":
        raise SpecError("block", "none", ".kind::mxf4nvf4 needs --sf-block 16|32 or --scale-vec", vectors.VECTOR.id)
    if scale_type is not None and scale_type not in vectors.SCALE_TYPE_BIT:
        raise SpecError("scale_type", scale_type, "ue8m0 or ue4m3", vectors.SCALE_TYPE.id)
    if cta_group not in (1, 2):
        raise SpecError("cta_group", cta_group, "1 or 2", mma_shape.M_RULE.id)
    if cta_group == 2 and m == 128:
        raise SpecError("m", m, "no plan is made for the 2 x 2 data path (M = 128, .cta_group::2): B's scales "
                        "there are CUTLASS's reading alone", "scales.tmem.cells_2x2")
    if isinstance(smem_address, bool) or not isinstance(smem_address, int) or smem_address < 0 \
            or smem_address % TMA_ALIGNMENT or smem_address >= 1 << 18:
        raise SpecError("smem_address", smem_address, f"a multiple of {TMA_ALIGNMENT} below 2^18 (a TMA "
                        "destination; the descriptor's start address field)", "tma.map.smem_alignment")
    return Request(kind, m, n, k, sf_layout, block, scale_vec, scale_type, cta_group, smem_address)


def _named_vector(written: str) -> Optional[str]:
    """The vector a --scale-vec names, for any kind ("block16"/"block32" need the kind: returned as is)."""
    text = written.strip().lstrip(".")
    if text.startswith("scale_vec::"):
        text = text[len("scale_vec::"):]
    return text if text in vectors.VECTORS or text in ("block16", "block32") else None


def _wanted_vector(req: Request, vector: str) -> bool:
    """Whether the candidate is the one --scale-vec / --sf-block ask for."""
    if req.scale_vec is not None:
        named = _named_vector(req.scale_vec)
        if named == "block16":
            return vector == "4X"
        if named == "block32":
            return vector == ("1X" if req.kind == "mxf8f6f4" else "2X")
        if named != vector:
            return False
    return req.block is None or vectors.MMA_K[req.kind] // vectors.SCALES_PER_ROW[vector] == req.block


def _rows(req: Request) -> dict:
    """Rows of each operand's scales in one CTA: A's M (128 per CTA with .cta_group::2), B's N."""
    return {"A": req.m // req.cta_group if req.cta_group == 2 else req.m, "B": req.n}


def _k_tiles(req: Request, block: int) -> int:
    return -(-layouts.blocks_of(req.k, block) // layouts.TILE_BLOCKS)


def _scale_columns(req: Request, block: int) -> dict:
    """Tensor-memory columns each operand's scales take: 4 per chunk."""
    kt = _k_tiles(req, block)
    return {name: path.TILE_COLUMNS * kt * -(-rows // layouts.TILE_ROWS) for name, rows in _rows(req).items()}


def _tensor_map(rows: int, k_tiles: int) -> dict:
    """The `tma check` document of one operand's scale tile: UINT8, (16, 32, K tiles, row tiles)."""
    row_tiles = -(-rows // layouts.TILE_ROWS)
    dims = [path.ROW_BYTES, path.CHUNK_ROWS, k_tiles, row_tiles]
    return {"encode": "tiled", "dataType": "UINT8", "rank": 4, "globalAddress": 0, "globalDim": dims,
            "globalStrides": [path.ROW_BYTES, layouts.TILE_BYTES, layouts.TILE_BYTES * k_tiles],
            "boxDim": list(dims), "elementStrides": [1] * 4, "interleave": "NONE", "swizzle": "NONE",
            "l2Promotion": "NONE", "oobFill": "NONE"}


def broken_rules(req: Request, vector: str, scale_type: str) -> list:
    """The rule ids a candidate (scale vector, scale type) breaks for this request, in catalogue order."""
    broken = set()
    if vector not in vectors.VALID[req.kind] or not _wanted_vector(req, vector):
        broken.add(vectors.VECTOR.id)
    config = vectors.ScaleConfig(req.kind, vector, scale_type)
    broken |= {v.rule.id for v in check_all("scale_config", config)}
    shape = mma_shape.make_shape("sm100", req.kind, req.cta_group, req.m, req.n, vectors.MMA_K[req.kind],
                                 DEFAULT_DTYPES[req.kind], "K")
    broken |= {v.rule.id for v in check_all("mma_shape", shape)}
    broken |= {v.rule.id for v in check_all("scale_path", path.ScalePath(req.kind, vector, req.sf_layout, req.k))}
    block = vectors.block_size(req.kind, vector)
    if req.n + sum(_scale_columns(req, block).values()) > TMEM_COLUMNS:
        broken.add(alloc.ALLOC_COLUMNS.id)
    for rows in _rows(req).values():
        verdict = tensormap.check_document(_tensor_map(rows, _k_tiles(req, block)), "sm100")
        broken |= {v["rule"] for v in verdict["violations"]}
    return _in_catalogue_order(broken)


def _in_catalogue_order(ids) -> list:
    return sorted(ids, key=lambda rule_id: catalogue_position(CATALOGUE[rule_id]))


def _candidates(req: Request) -> list:
    """(vector, scale type) in the objective's order."""
    out = []
    for vector in vectors.VECTORS:
        types = [req.scale_type] if req.scale_type else (["ue4m3", "ue8m0"] if vector == "4X" else ["ue8m0", "ue4m3"])
        out += [(vector, t) for t in types]
    wanted = [c for c in out if c[0] in vectors.VALID[req.kind] and _wanted_vector(req, c[0])]
    return wanted + [c for c in out if c not in wanted]


def minimal_core(rejected: dict) -> list:
    """A minimal set of rules every candidate breaks one of (deletion-based: drop a rule while the rest
    still exclude every candidate)."""
    core = _in_catalogue_order({r for broken in rejected.values() for r in broken})
    for rule_id in list(core):
        trial = [r for r in core if r != rule_id]
        if all(set(broken) & set(trial) for broken in rejected.values()):
            core = trial
    return core


def plan(req: Request) -> Plan:
    """The plan (status "found", checked by the specification) or the rules that exclude one ("none")."""
    rejected = {}
    for vector, scale_type in _candidates(req):
        broken = broken_rules(req, vector, scale_type)
        if not broken:
            return _build(req, vector, scale_type)
        rejected[f"{vector}/{scale_type}"] = broken
    always = set.intersection(*(set(broken) for broken in rejected.values()))
    return Plan("none", req, rules=minimal_core(rejected), always_broken=_in_catalogue_order(always),
                rejected=rejected)


def _qualifier(vector: str) -> str:
    return f".scale_vec::{vector}"


def _build(req: Request, vector: str, scale_type: str) -> Plan:
    block = vectors.block_size(req.kind, vector)
    blocks = layouts.blocks_of(req.k, block)
    kt = _k_tiles(req, block)
    columns = _scale_columns(req, block)
    first_column = {"A": req.n, "B": req.n + columns["A"]}
    rows = _rows(req)
    readers, operands, copies = {}, {}, []
    smem = req.smem_address
    for name in ("A", "B"):
        reader = path.standard_reader(rows[name], blocks, vector)
        readers[name] = reader
        footprint = layouts.footprint("interleaved", rows[name], blocks)
        operands[name] = {"rows": rows[name], "k_blocks": blocks, "k_tiles": kt,
                          "row_tiles": -(-rows[name] // layouts.TILE_ROWS), "bytes": footprint,
                          "smem_address": smem, "first_column": first_column[name], "columns": columns[name],
                          "tensor_map": _tensor_map(rows[name], kt)}
        for copy in reader.copies:
            desc = smem_descriptor.encode("sm100", smem + copy.source, DESC_LBO, DESC_SBO, "none")
            column = first_column[name] + copy.column
            copies.append({"index": len(copies), "operand": name, "smem_address": smem + copy.source,
                           "column": column, "taddr": f"0x{column:08x}", "descriptor": f"0x{desc.raw:016x}",
                           "ptx": f"tcgen05.cp.cta_group::{req.cta_group}.{COPY_SHAPE}.{COPY_MULTICAST} "
                                  f"[%r{len(copies)}], %rd{len(copies)};"})
        smem += -(-footprint // TMA_ALIGNMENT) * TMA_ALIGNMENT
    steps = []
    dtype = DEFAULT_DTYPES[req.kind]
    for t, (a, b) in enumerate(zip(readers["A"].steps, readers["B"].steps)):
        word = instr_desc.encode(req.kind, "sm100", m=req.m, n=req.n, a_scale_id=a.sf_id, b_scale_id=b.sf_id,
                                 scale_type=vectors.SCALE_TYPE_BIT[scale_type],
                                 atype=instr_desc.type_code(req.kind, dtype),
                                 btype=instr_desc.type_code(req.kind, dtype)).word
        k_first = t * vectors.MMA_K[req.kind]
        a_column, b_column = first_column["A"] + a.column, first_column["B"] + b.column
        steps.append({"t": t, "k": [k_first, k_first + vectors.MMA_K[req.kind] - 1],
                      "a_column": a_column, "b_column": b_column,
                      "scale_a_taddr": f"0x{a_column:08x}", "scale_b_taddr": f"0x{b_column:08x}",
                      "sf_id_a": a.sf_id, "sf_id_b": b.sf_id, "instr_desc": f"0x{word:08x}",
                      "ptx": f"tcgen05.mma.cta_group::{req.cta_group}.kind::{req.kind}.block_scale"
                             f"{_qualifier(vector)} [%tmem_d], %adesc, %bdesc, 0x{word:08x}, [%sfa{t}], "
                             f"[%sfb{t}], %p;"})
    used = req.n + columns["A"] + columns["B"]
    allocation = max(alloc.MIN_COLUMNS, 1 << (used - 1).bit_length())
    tmem = {"d_columns": [0, req.n - 1], "a_columns": [first_column["A"], first_column["A"] + columns["A"] - 1],
            "b_columns": [first_column["B"], first_column["B"] + columns["B"] - 1], "used": used,
            "allocate": allocation}
    result = Plan("found", req, vector, scale_type, block, operands, copies, steps, tmem)
    result.check = verify(result, readers)
    return result


def verify(result: Plan, readers: dict) -> dict:
    """The specification's verdict on a plan (module docstring, "Check")."""
    req = result.request
    misread = {name: path.first_misread("interleaved", result.operands[name]["rows"], req.k, req.kind,
                                        result.vector, readers[name]) for name in ("A", "B")}
    descriptors_ok = True
    for copy in result.copies:
        desc = smem_descriptor.decode("sm100", int(copy["descriptor"], 16))
        for r in range(path.CHUNK_ROWS):
            if cp.row_source(COPY_SHAPE, desc, r, 0) != copy["smem_address"] + path.ROW_BYTES * r:
                descriptors_ok = False
    refused = [c["index"] for c in result.copies
               if not instruction.check(c["ptx"], TARGET, address=c["column"])["ptxas_accepts"]]
    idesc_ok = all(_idesc_matches(result, s) for s in result.steps)
    ok = not any(misread.values()) and descriptors_ok and not refused and idesc_ok
    return {"ok": ok, "misread": misread, "descriptors_read_their_chunks": descriptors_ok,
            "copies_refused": refused, "instr_descs_match": idesc_ok}


def _idesc_matches(result: Plan, step: dict) -> bool:
    d = instr_desc.decode(result.request.kind, int(step["instr_desc"], 16))
    return (d.m, d.n, d.field("a_scale_id"), d.field("b_scale_id"), d.field("scale_type")) == \
        (result.request.m, result.request.n, step["sf_id_a"], step["sf_id_b"],
         vectors.SCALE_TYPE_BIT[result.scale_type])
