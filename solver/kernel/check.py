"""`ptx check`: does every MMA read an operand through a descriptor that reads the tile its author meant?

The author names the operand's tile as `check` takes it: a CuTe layout from (mn, k) to element offsets over
the whole tile (its K mode may span several instructions), optionally composed with a byte-address
swizzle, at a tile address B. Each MMA reading that operand reads one K slice of the tile: the slice
whose element (mn=0, k=KO) has, in the tile's linear layout, the descriptor's start address
(KO = 0, K, 2K, ... for the instruction's K; when none has it, the nearest one, and rule
desc.tile.start_address says so). The slice is then a desc case (spec.cases.desc_case) and its
desc.tile.* rules and first misread element decide.

B is given as LAYOUT@ADDRESS, or taken from the first MMA (in file order, per function) reading the
operand with a known start address: that MMA is taken to read K slice 0.

Real kernels (issue 26) read their tiles by pieces: a pipeline keeps one tile per stage
(LAYOUT@ADDRESS+COUNT*STRIDE: stage s at ADDRESS + s x STRIDE), each warpgroup of a 128-row tile reads its
64 rows (the slice may start at any multiple of the MMA's M/N as well as of its K), and one operand letter
may read several tiles (attention's K and V are both B: OPERAND:NAME=LAYOUT@ADDRESS, a name per tile). Each
descriptor value the MMA was fed (every visit of the run; where the run did not know it, each value of the
any-launch sets; else its first-iteration value) is checked against the piece whose element (MO, KO) has
its start address in some stage of some tile of its operand.

The values checked are every value the launch's CTA feeds the operand, or a row says they are not
(_values): the run's where it is whole (executor.Run.incomplete), else those and the any-launch sets'
others, else an unknown row.

Where each value comes from decides what a misread shows. A value the run fed on a path it decided, or
the one value of an any-launch set (the site, where reached, is fed it), that misreads is a mismatch. One
the run fed only on a side of a branch on an unknown value (or under an unknown guard: Visit.maybe) may be
one no launch feeds: its misread is unknown. The any-launch sets of
several values take the registers of different blocks apart and unknown inputs as any value, so they may
hold values no launch feeds (valuesets.py): one of them that misreads is unknown, with the rules it breaks
and its witness, as `ptx descriptors` lists such values under possible_violations; one that reads its
tile is a match, since every value fed is among them.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Optional

from spec.cases import desc_case
from spec.cute.layout import ComposedLayout, product
from spec.cute.notation import parse_layout
from spec.cute.swizzle import DESCRIPTOR_SWIZZLES
from spec.mma import descriptor as desc_mod
from spec.mma import dtypes
from spec.rule import SpecError, check_all, parse_number

from solver.kernel import mma
from solver.kernel.concrete import executor
from solver.kernel.symbolic import bits, valuesets
from solver.kernel.frontend import source
from solver.kernel.frontend.instruction import destinations, parse_integer

ROLES = ("a", "b")
MAX_K_SLICES = 4096     # K slices of a tile looked at per MMA (4096 x 128 bytes: more than any shared memory)


MAX_STAGES = 64        # pipeline stages of one tile (shared memory holds no more of the smallest slice)


@dataclass(frozen=True)
class Intended:
    role: str                     # "a" or "b"
    text: str                     # the layout as written
    layout: ComposedLayout
    tile_address: Optional[int]   # B when given
    name: str = ""                # the tile's name (OPERAND:NAME=...), "" when unnamed
    stages: int = 1
    stage_stride: int = 0         # bytes from one stage's tile to the next

    @property
    def label(self) -> str:
        return self.role.upper() + (f":{self.name}" if self.name else "")


NVMMA_SWIZZLES = {128: "Sw<3,4,3> o ", 64: "Sw<2,4,3> o ", 32: "Sw<1,4,3> o ", 0: ""}


def nvmma_layout_text(arguments: str) -> str:
    """nvmma(W, BITS, MN, K, MAJOR): the tile of MN x K elements that Triton's NVMMASharedLayout(
    swizzle_byte_width=W, element_bitwidth=BITS) stores with K (MAJOR K) or MN (MAJOR MN) contiguous, as a
    CuTe layout (mn, k) -> element offset. The contiguous dimension comes in atoms of E = 8W / BITS elements,
    each atom R rows of W bytes, one after another: element (r, c) of the stored [R, C] tile is at
    (c div E) * R * E + r * E + c mod E, under Sw<log2(W/16),4,3> (tests/fixtures/ptx/README.md: Triton's
    own to_linear_layout gave the same offsets); W = 0 is plain row-major."""
    parts = [p.strip() for p in arguments.split(",")]
    if len(parts) != 5 or parts[4].upper() not in ("K", "MN"):
        raise SpecError("layout", f"nvmma({arguments})", "nvmma(SWIZZLE_BYTES, ELEMENT_BITS, MN, K, K|MN)", source.RULE)
    try:
        width, bits, mn, k = (parse_number(p) for p in parts[:4])
    except ValueError:
        raise SpecError("layout", f"nvmma({arguments})", "the first four are numbers", source.RULE) from None
    major = parts[4].upper()
    contiguous, outer = (k, mn) if major == "K" else (mn, k)
    if width not in NVMMA_SWIZZLES or bits not in (8, 16, 32) or not (0 < mn <= 1 << 16 and 0 < k <= 1 << 16):
        raise SpecError("layout", f"nvmma({arguments})", "swizzle 0, 32, 64 or 128 bytes; 8-, 16- or 32-bit "
                        "elements; MN and K from 1 to 65536", source.RULE)
    if width == 0:
        return f"({mn},{k}):({k},1)" if major == "K" else f"({mn},{k}):(1,{mn})"
    atom = 8 * width // bits
    if contiguous % atom:
        raise SpecError("layout", f"nvmma({arguments})", f"the contiguous dimension ({contiguous}) is not a "
                        f"multiple of the {atom}-element swizzle atom", source.RULE)
    atoms = contiguous // atom
    if major == "K":
        return f"{NVMMA_SWIZZLES[width]}({mn},({atom},{atoms})):({atom},(1,{outer * atom}))"
    return f"{NVMMA_SWIZZLES[width]}(({atom},{atoms}),{k}):((1,{outer * atom}),{atom})"


def recipe_layout_text(arguments: str) -> str:
    """recipe(ARCH, DTYPE, MAJOR, MN, K, SWIZZLE): the smem layout `layoutproof recipe --arch ARCH --dtype
    DTYPE --major MAJOR --mn MN --k K --swizzle SWIZZLE` gives its tile (where its TMA boxes put each
    element), with the recipe's checks of the tile's shape."""
    from solver.synth import recipe
    parts = [p.strip() for p in arguments.split(",")]
    if len(parts) != 6:
        raise SpecError("layout", f"recipe({arguments})", "recipe(ARCH, DTYPE, K|MN, MN, K, SWIZZLE), as the "
                        "recipe command's --arch --dtype --major --mn --k --swizzle", source.RULE)
    try:
        mn, k = parse_number(parts[3]), parse_number(parts[4])
    except ValueError:
        raise SpecError("layout", f"recipe({arguments})", "MN and K are numbers", source.RULE) from None
    _, _, _, layout = recipe.tile_layout(parts[0], parts[1], parts[2].upper(), mn, k, parts[5])
    return str(layout)


def parse_intended(text: str) -> Intended:
    """OPERAND[:NAME]=LAYOUT[@ADDRESS[+COUNT*STRIDE]], OPERAND A or B."""
    head, sep, rest = text.partition("=")
    role, _, name = head.partition(":")
    role, name = role.strip().lower(), name.strip()
    if not sep or role not in ROLES or (":" in head and not name.isidentifier()):
        raise SpecError("layout", text, "expected A[:NAME]=<CuTe layout> or B[:NAME]=<CuTe layout> (optionally "
                        "@ADDRESS or @ADDRESS+STAGES*STRIDE)", source.RULE)
    layout_text, at, address_text = rest.rpartition("@") if "@" in rest else (rest, "", "")
    address, stages, stride = None, 1, 0
    if at:
        address_text, plus, staging = address_text.partition("+")
        try:
            address = parse_number(address_text.strip())
            if plus:
                count, star, stride_text = staging.partition("*")
                stages, stride = parse_number(count.strip()), parse_number(stride_text.strip())
                if not star:
                    raise ValueError("no '*'")
        except ValueError:
            raise SpecError("layout", text, "after '@': ADDRESS or ADDRESS+STAGES*STRIDE, numbers", source.RULE) from None
        if not 0 <= address < 1 << 32 or (plus and not (1 <= stages <= MAX_STAGES and 0 < stride < 1 << 32)):
            raise SpecError("layout", text, f"a shared address below 2^32, 1 to {MAX_STAGES} stages and a positive "
                            "stride below 2^32", source.RULE)
    layout_text = layout_text.strip()
    if layout_text.startswith("nvmma(") and layout_text.endswith(")"):
        layout_text = nvmma_layout_text(layout_text[len("nvmma("):-1])
    elif layout_text.startswith("recipe(") and layout_text.endswith(")"):
        layout_text = recipe_layout_text(layout_text[len("recipe("):-1])
    layout = parse_layout(layout_text)
    if not isinstance(layout, ComposedLayout):
        layout = ComposedLayout(DESCRIPTOR_SWIZZLES["none"], 0, layout)
    if layout.layout.rank != 2:
        raise SpecError("layout", layout_text.strip(), "needs two modes, (mn, k)", "layout.notation")
    return Intended(role, layout_text.strip(), layout, address, name, stages, stride)


def _element_bytes(op: mma.Operand, kind: Optional[str], offset: int) -> int:
    """byte(o) of spec.cases.desc_case: (o div T) * 16 + the element's byte inside its chunk."""
    d = dtypes.dtype(op.dtype)
    kind = kind or dtypes.default_kind(d)
    per_chunk = dtypes.elements_per_chunk(d, kind)
    return (offset // per_chunk) * 16 + dtypes.byte_in_chunk(d, kind, offset % per_chunk)


def _sizes(intended: Intended) -> tuple:
    inner = intended.layout.layout
    return product(inner.shape[0]), product(inner.shape[1])


def _kind(site: mma.Site) -> Optional[str]:
    return site.kind if site.family == "tcgen05" else None


MAX_PIECES = 1 << 16   # (stage, MO, KO) pieces of a tile looked at per MMA; past it, MO = 0 only


def inferred_tile_address(intended: Intended, sites: list) -> Optional[int]:
    """B from the first site with a known start address: its start is the linear address of (0, 0)."""
    for site in sites:
        op = site.operands[intended.role]
        start = mma.known_fields((desc_mod.START,), op.word)["start_address"] if op.word is not None else None
        if start is not None and op.dtype in dtypes.DTYPES:
            return (start << 4) - _element_bytes(op, _kind(site), intended.layout.offset + intended.layout.layout(0, 0))
    return None


@dataclass(frozen=True)
class Piece:
    intended: Intended
    tile_address: int             # the tile's address in this stage
    stage: int
    mn_offset: int
    k_offset: int
    exact: bool                   # its element (MO, KO) has the descriptor's start address


def _pieces(intended: Intended, site: mma.Site, op: mma.Operand, tile_address: int):
    """Every (stage, MO, KO) the MMA may read: MO a multiple of its M/N, KO of its K, and their starts."""
    mn_size, k_size = _sizes(intended)
    inner, kind = intended.layout.layout, _kind(site)
    mn_offsets = range(0, mn_size - op.mn + 1, op.mn) if op.mn > 0 else range(1)
    k_offsets = range(0, k_size - op.k + 1, op.k) if op.k > 0 else range(1)
    if intended.stages * len(mn_offsets) * len(k_offsets) > MAX_PIECES:
        mn_offsets = range(1)           # too many rows to look for the piece in: rows 0.. only (the K slices)
    for stage in range(intended.stages):
        base = tile_address + stage * intended.stage_stride
        for mo in mn_offsets:
            for ko in k_offsets:
                yield stage, base, mo, ko, base + _element_bytes(op, kind, intended.layout.offset + inner(mo, ko))


def choose_piece(candidates: list, site: mma.Site, op: mma.Operand, start: int) -> Piece:
    """The piece of the operand's tiles whose element (MO, KO) the start address names; else the nearest
    (the first tile's, then stage, MO, KO order break ties)."""
    best = None
    for intended, tile_address in candidates:
        for stage, base, mo, ko, address in _pieces(intended, site, op, tile_address):
            key = (abs(address - start),)
            if best is None or key < best[0]:
                best = (key, Piece(intended, base, stage, mo, ko, address == start))
                if address == start:
                    return best[1]
    return best[1]


def _splits_at(intended: Intended, mn_offset: int, k_offset: int, mn: int, k: int) -> bool:
    """L(MO + i, KO + j) = L(MO, KO) + L(i, j) - L(0, 0) for the MMA's i < mn, j < k: the piece is a layout."""
    inner = intended.layout.layout
    base = inner(mn_offset, k_offset) - inner(0, 0)
    return all(inner(mn_offset + i, k_offset + j) == base + inner(i, j) for i in range(mn) for j in range(k))


def _limits(intended: Intended, site: mma.Site, op: mma.Operand) -> None:
    mn_size, k_size = _sizes(intended)
    if op.mn > mn_size or op.k > k_size:
        raise SpecError("layout", intended.text, f"covers {mn_size} x {k_size} elements (mn x k); the MMA at "
                        f"line {site.line} reads {op.mn} x {op.k} of operand {intended.role.upper()}", source.RULE)
    if k_size // op.k > MAX_K_SLICES:
        raise SpecError("layout", intended.text, f"its K ({k_size}) holds {k_size // op.k} K slices of the MMA at "
                        f"line {site.line} (K {op.k}), more than the {MAX_K_SLICES} read: a slice is at least 8 "
                        "rows of 16 bytes, so no shared memory holds so many", source.RULE)


FROM_RUN, FROM_SETS, FROM_ONE_OF_SETS, FROM_FIRST_ITERATION = "run", "any launch", "one of the any-launch sets", \
    "first iteration"
FROM_UNDECIDED_RUN = "the run, on paths it could not decide"
NOT_EVERY_VALUE = "not every value"      # (no value: the row that says the values checked are not all)
POSSIBLE = "possibly misread: a value of the any-launch sets, which may be one no launch feeds (give --param)"
POSSIBLE_IN_RUN = ("possibly misread: the run fed it only on a side of a branch on an unknown value (or under "
                   "an unknown guard), which a launch may not take (give --param)")


def _row(site: mma.Site, role: str, word, visits: Optional[int], origin: str) -> dict:
    """A check's row before its tile is looked at: unknown, with no reason yet."""
    return {"function": site.function, "line": site.line, "instruction": site.text, "operand": role,
            "tile": None, "stage": None, "mn_offset": None, "status": "unknown",
            "descriptor": word.hex() if word is not None else None, "visits": visits,
            "k_offset": None, "tile_address": None,
            "first_iteration": site.loop is not None and origin == FROM_FIRST_ITERATION,
            "any_launch": origin in (FROM_SETS, FROM_ONE_OF_SETS),
            "violations": [], "witness": None, "reason": None}


def check_operand(candidates: list, site: mma.Site, role: str, word=None, visits: Optional[int] = None,
                  origin: str = FROM_FIRST_ITERATION) -> dict:
    """One descriptor value of an operand against its tiles: candidates [(Intended, tile address or None)].
    origin: where the value comes from (_values): a misread of FROM_ONE_OF_SETS or FROM_UNDECIDED_RUN is
    unknown (POSSIBLE, POSSIBLE_IN_RUN)."""
    op = site.operands[role]
    if word is not None:
        op = dataclasses.replace(op, word=bits.const(word, 64))
    result = _row(site, role, op.word, visits, origin)
    possible = {FROM_ONE_OF_SETS: POSSIBLE, FROM_UNDECIDED_RUN: POSSIBLE_IN_RUN}.get(origin)
    misread = "mismatch" if possible is None else "unknown"
    reason = mma.missing_read_map(site, op)
    placed = [(i, address) for i, address in candidates if address is not None]
    if reason is None and not placed:
        reason = "no tile address: no MMA reading this operand has a known start address (give LAYOUT@ADDRESS)"
    if reason is not None:
        result["reason"] = reason
        return result
    for intended, _ in placed:
        _limits(intended, site, op)
    desc = desc_mod.decode(site.arch, op.word.value)
    piece = choose_piece(placed, site, op, desc.start_address)
    intended = piece.intended
    result.update(tile=intended.label, stage=piece.stage, mn_offset=piece.mn_offset, k_offset=piece.k_offset,
                  tile_address=piece.tile_address)
    if not _splits_at(intended, piece.mn_offset, piece.k_offset, op.mn, op.k):
        result["reason"] = (f"the layout does not split at (MN {piece.mn_offset}, K {piece.k_offset}) into a piece "
                            f"of {op.mn} x {op.k}")
        return result
    inner = intended.layout.layout
    piece_layout = ComposedLayout(intended.layout.swizzle, intended.layout.offset + inner(piece.mn_offset,
                                  piece.k_offset) - inner(0, 0), inner)
    case = {"descriptor": desc.hex, "dtype": op.dtype, "major": op.major, "mn": op.mn, "k": op.k,
            "layout": piece_layout, "start_address": piece.tile_address, "kind": _kind(site)}
    if site.family == "tcgen05":
        case.update(cta_group=site.cta_group, m=site.m)
    try:
        c = desc_case.parse_case(case, site.arch)
    except SpecError as error:          # the PTX's values (an M or N of 0, ...) break the rule it names
        result.update(status=misread, violations=[mma.violation_of(error)], reason=possible)
        return result
    broken = check_all(desc_case.SUBJECT, c)
    witness = desc_case.first_misread(c)
    if witness is not None:
        witness = dict(witness, tile_element={"mn": piece.mn_offset + witness["element"]["mn"],
                                              "k": piece.k_offset + witness["element"]["k"]})
    result.update(status=misread if broken or witness else "match",
                  violations=[v.as_json() for v in broken], witness=witness,
                  reason=possible if broken or witness else None)
    return result


def _values(analysis, site: mma.Site, role: str) -> list:
    """(descriptor value or None: the site's own word, visits or None, origin or NOT_EVERY_VALUE with its
    reason) for each value the operand was fed. Together they hold every value the launch's CTA feeds it,
    or end with a NOT_EVERY_VALUE row, which is unknown:
    - the run's values, with their visits: every value where the run is whole (executor.Run.incomplete);
      one fed only on sides of branches the run could not decide (Visit.maybe) FROM_UNDECIDED_RUN;
    - else the any-launch sets' values, which hold every value of any launch (the run's are among them:
      tests/solver_tests/kernel/test_kernel_corpus.py), those the run did not feed FROM_SETS where the set
      is one value, FROM_ONE_OF_SETS (possible) where it is several;
    - else the run's values and a NOT_EVERY_VALUE row;
    - with neither, the site's own word: its first-iteration value, every value outside a loop (bits the
      first-iteration evaluation knows hold for every thread and launch: symbolic/evaluate.py); inside a
      loop, a NOT_EVERY_VALUE row follows."""
    key = (site.function, site.line)
    found = analysis.iterations.get(key)
    op = site.operands[role]
    values = found.operands.get(op.text) if found is not None else None
    run = analysis.runs.get(site.function)
    seen = []
    if values is not None and values.known and values.distinct:
        counts = {}
        for visit in found.visits:
            word = visit.values.get(op.text)
            counts[word] = counts.get(word, 0) + 1
        undecided = mma.undecided_words(found, op.text)
        seen = [(word, counts.get(word, 0), FROM_UNDECIDED_RUN if word in undecided else FROM_RUN)
                for word in values.distinct]
    incomplete = run.incomplete() if isinstance(run, executor.Run) else \
        run if isinstance(run, str) else "the function was not run"      # (a str: "not run: why")
    if seen and incomplete is None:
        return seen
    sets = analysis.any_launch.get(key, {}).get(op.text)
    if isinstance(sets, frozenset) and sets:
        origin = FROM_SETS if len(sets) == 1 else FROM_ONE_OF_SETS
        fed = {word for word, _, _ in seen}
        return seen + [(word, None, origin) for word in sorted(sets) if word not in fed]
    why = f"the any-launch sets do not know it ({sets.reason})" if isinstance(sets, valuesets.Top) \
        else "no any-launch sets were made"
    if seen:
        return seen + [(None, None, (NOT_EVERY_VALUE, f"values the run did not see may be fed: {incomplete}; {why}"))]
    if site.loop is None:
        return [(None, None, FROM_FIRST_ITERATION)]
    reason = f"only the first iteration's value is known: {incomplete or 'the run did not know it'}; {why}"
    return [(None, None, FROM_FIRST_ITERATION), (None, None, (NOT_EVERY_VALUE, reason))]


def shape_unknown(analysis, site: mma.Site) -> Optional[str]:
    """Why the MMA's shape (a tcgen05.mma's, from its instruction descriptor) may not be the one read here in
    every iteration, or None. The shape is every iteration's where the first-iteration evaluation knows the
    descriptor outside every loop, or the run fed that one value only and is whole, or the any-launch sets
    hold that one value, or every write of its register is a mov of that constant (_only_written_as); a first
    iteration's value inside a loop may change in later ones."""
    if site.family != "tcgen05" or not site.idesc_text or site.idesc_word is None or not site.idesc_word.is_known:
        return None         # (wgmma: from the opcode; an unknown descriptor: no read map, every row unknown)
    word = site.idesc_word.value
    if site.loop is None:
        return None
    key = (site.function, site.line)
    found = analysis.iterations.get(key)
    values = found.operands.get(site.idesc_text) if found is not None else None
    run = analysis.runs.get(site.function)
    if values is not None and values.known and values.distinct == [word] and isinstance(run, executor.Run) \
            and run.incomplete() is None:
        return None
    sets = analysis.any_launch.get(key, {}).get(site.idesc_text)
    if isinstance(sets, frozenset) and sets == {word}:
        return None
    if _only_written_as(analysis, site.function, site.idesc_text, word):
        return None
    return (f"the instruction descriptor ({site.idesc_text}: the MMA's shape) is {word:#x} in the first "
            "iteration; a whole run or the any-launch sets do not show it is that in every iteration")


def _only_written_as(analysis, function_name: str, register: str, word: int) -> bool:
    """Whether every statement of the function that writes the register is a mov of that constant (an
    instruction descriptor set once, as FlashAttention's inline asm does): it holds it wherever it was
    written."""
    function = next((f for f in analysis.module.functions if f.name == function_name), None)
    if function is None:
        return False
    writes = [s.instruction for s in function.statements
              if s.instruction is not None and register in destinations(s.instruction)]
    return bool(writes) and all(ins.base == "mov" and ins.guard is None and len(ins.operands) == 2 and
                                parse_integer(ins.operands[1].strip()) == word for ins in writes)


def check(analysis, intended_list: list) -> dict:
    """Each MMA, each descriptor value it was fed, against the tiles meant for its operand (see the
    module); an operand the run saw hold one value only is checked with it (mma.with_every_iteration)."""
    checks, addresses = [], {}
    every = [mma.with_every_iteration(s, analysis.iterations.get((s.function, s.line)),
                                      analysis.any_launch.get((s.function, s.line))) for s in analysis.sites]
    for role in ROLES:
        tiles = [i for i in intended_list if i.role == role]
        if not tiles:
            continue
        sites = [s for s in every if s.operands[role].source == "descriptor"]
        if not sites:
            raise SpecError("layout", tiles[0].label + "=" + tiles[0].text, "no MMA in the PTX reads operand "
                            f"{role.upper()} through a shared-memory descriptor", source.RULE)
        if len(tiles) > 1 or tiles[0].stages > 1:
            missing = next((i for i in tiles if i.tile_address is None), None)
            if missing is not None:
                raise SpecError("layout", missing.label + "=" + missing.text, "with several tiles or stages of "
                                "one operand, each tile needs its @ADDRESS", source.RULE)
        for function in dict.fromkeys(s.function for s in sites):
            in_function = [s for s in sites if s.function == function]
            candidates = [(i, i.tile_address if i.tile_address is not None else inferred_tile_address(i, in_function))
                          for i in tiles]
            for intended, address in candidates:
                addresses.setdefault(intended.label, {"layout": intended.text, "tile_address": {},
                                                      "stages": intended.stages, "stage_stride": intended.stage_stride,
                                                      "tile_address_from": "given" if intended.tile_address is not None
                                                      else "first MMA's start address"})
                addresses[intended.label]["tile_address"][function] = address
            for site in in_function:
                shape = shape_unknown(analysis, site)
                for word, visits, origin in _values(analysis, site, role):
                    if isinstance(origin, tuple):               # (NOT_EVERY_VALUE, why)
                        checks.append(dict(_row(site, role, None, None, NOT_EVERY_VALUE), reason=origin[1]))
                    elif shape is not None:                     # (the rows would assume a shape not shown)
                        checks.append(dict(_row(site, role, bits.const(word, 64) if word is not None else
                                                site.operands[role].word, visits, origin), reason=shape))
                    else:
                        checks.append(check_operand(candidates, site, role, word, visits, origin))
    checks.sort(key=lambda c: (c["line"], c["operand"]))
    summary = {status: sum(c["status"] == status for c in checks) for status in ("match", "mismatch", "unknown")}
    summary["unread"] = len(analysis.unread)
    return {"smem_base": analysis.smem_base, "functions": analysis.functions, "layouts": addresses,
            "checks": checks, "summary": summary, "unread": analysis.unread}
