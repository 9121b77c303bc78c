"""hypothesis strategies for compiler tests: descriptors with their tiles, tile layouts, tensor maps,
recipes, tcgen05 tensor-memory instructions and allocation sequences, valid or breaking exactly the rules
you choose. The public name is `layoutproof.strategies` (the same functions):

    from hypothesis import given
    from layoutproof import strategies

    @given(strategies.tensor_maps(arch="sm90", violate=["tma.map.box_swizzle_span"]))
    def test_compiler_rejects_wide_swizzled_boxes(record):
        assert my_compiler.check_tensor_map(record["case"]) is False     # the driver would refuse it

Each strategy draws fuzz *records* (solver/fuzz/engine.py; docs/CLI.md `fuzz`): {"target", "arch", "violates",
"outcome", "witness", "case", "rules", "index"}, labelled by spec/. The cases come from `layoutproof fuzz`'s
generator (Z3 anchors over the target's constraints, then sampling), computed once per (target, arch,
rules, arguments) as a pool of up to `pool_size` distinct cases; hypothesis draws from the pool and
shrinks towards its first case (a Z3 anchor).

Arguments are checked when the strategy is made, as hypothesis checks its own: an unknown arch, rule,
dtype, major-ness, swizzle, encoder or op, an extent no MMA reads, or a request no case meets (a rule
that cannot break alone on that arch, a valid tile of a type the arch does not read) raises
StrategyArgumentError at once, naming the argument. It is both hypothesis.errors.InvalidArgument and
ValueError. Making a strategy computes its pool (a fraction of a second; cached per arguments).

A descriptor case's tile is a tile a kernel can lay out: no two of its elements share a byte (bit, for
4-bit types) and it lies inside the shared memory of one CTA (`tile_problem`). The descriptor bits the
MMA does not read are drawn freely, as a compiler may set them: compare descriptors with
solver.fuzz.compare.same_reads (what the MMA reads), not by their bits.
"""
from __future__ import annotations

import copy
import itertools
import random
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Callable, Iterable, Optional

import z3
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from spec.cute.layout import ComposedLayout, flatten
from spec.cute.notation import parse_layout
from spec.mma import descriptor as spec_descriptor
from spec.mma import dtypes
from spec.rule import SpecError

from solver.fuzz import desc
from solver.fuzz import engine as fuzz
from solver.fuzz import desc_sampling
from solver.model import desc_case as desc_model

POOL_SIZE = 200
ARCHES = spec_descriptor.ARCHES
# The largest M or N extent one MMA reads: wgmma N <= 256 (PTX ISA 9.7.15.5), tcgen05 N <= 256 (9.7.16.2.1
# Table 39); a K-major operand's MN is its row count, so this bounds a drawn tile at 256 rows.
MAX_MN = 256
# CUDA C++ Programming Guide, "Technical Specifications per Compute Capability": compute capability 9.0 and
# 10.x give one thread block at most 227 KB of shared memory (228 KB per SM, 1 KB reserved).
MAX_SHARED_MEMORY_BYTES = 227 * 1024
TENSOR_MAP_ENCODERS = ("tiled", "im2col", "im2col_wide")
TMEM_OPS = ("ld", "st", "ld.red", "cp", "shift")


class StrategyArgumentError(InvalidArgument, ValueError):
    """A strategy argument that can give no case, raised when the strategy is made (hypothesis's
    InvalidArgument, and a ValueError as spec's errors are)."""


def _refuse(argument: str, value, why: str) -> StrategyArgumentError:
    return StrategyArgumentError(f"{argument}={value!r}: {why}")


# --- Checking arguments when a strategy is made --------------------------------------------------------
def _check_arch(arch) -> str:
    if arch not in ARCHES:
        raise _refuse("arch", arch, "unknown arch; expected one of " + ", ".join(ARCHES))
    return arch


def _check_pool(pool_size, seed) -> None:
    if isinstance(pool_size, bool) or not isinstance(pool_size, int) or pool_size < 1:
        raise _refuse("pool_size", pool_size, "a positive number of cases")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise _refuse("seed", seed, "an integer")


def _violated(target: str, violate) -> frozenset:
    """The rule ids of `violate`: an iterable of ids, or one text of comma-separated ids (as --violate)."""
    text = violate if isinstance(violate, str) else None
    if text is None:
        try:
            parts = list(violate)
        except TypeError:
            raise _refuse("violate", violate, "a list of rule ids") from None
        if not all(isinstance(part, str) for part in parts):
            raise _refuse("violate", violate, "a list of rule ids (text)")
        text = ",".join(parts)
    try:
        return fuzz.parse_violate(target, text)
    except ValueError as error:
        raise _refuse("violate", violate, str(error).removeprefix("--violate: ")) from None


def _check_one_of(argument: str, value, allowed: Iterable) -> None:
    allowed = tuple(allowed)
    if value is not None and value not in allowed:
        raise _refuse(argument, value, "expected one of " + ", ".join(map(str, allowed)))


# --- Which tiles are tiles: injective and inside shared memory ----------------------------------------
@lru_cache(maxsize=4096)
def _parsed(text: str) -> tuple:
    """(offset, Layout) of a layout text, its swizzle set aside."""
    parsed = parse_layout(text)
    return (parsed.offset, parsed.layout) if isinstance(parsed, ComposedLayout) else (0, parsed)


def layout_offsets(layout) -> list:
    """Every offset of a layout with integer strides, over its whole domain: the sums of each flattened
    mode's index times its stride (CuTe's inner product; the order does not matter here)."""
    offsets = [0]
    for size, stride in zip(flatten(layout.shape), flatten(layout.stride)):
        offsets = [offset + i * stride for i in range(size) for offset in offsets]
    return offsets


def tile_problem(case: dict) -> Optional[str]:
    """Why the tile of a desc case is not one a kernel can lay out in shared memory, or None.

    The tile is its layout over the whole domain the layout text gives (whole swizzle atoms, also where the
    instruction reads fewer elements). Element offset o of a desc-target type occupies bits [o*bits,
    (o+1)*bits) past the start address (T * bits = 128 for each: PTX 9.7.16.3.3), so two elements share a
    bit exactly when their offsets are equal; the swizzle permutes 16-byte chunks inside 1024-byte blocks, so
    it neither joins two elements nor moves the end of the tile past a 1024-byte boundary it was below."""
    origin, layout = _parsed(case["layout"])
    offsets = [origin + o for o in layout_offsets(layout)]
    if len(set(offsets)) != len(offsets):
        return "two elements of the layout share an offset: the tile overlaps itself"
    bits = dtypes.dtype(case["dtype"]).bits
    end = case["start_address"] + -(-(max(offsets) + 1) * bits // 8)
    if end > MAX_SHARED_MEMORY_BYTES:
        return f"the tile ends at byte {end:#x}, past the {MAX_SHARED_MEMORY_BYTES} bytes of one CTA's shared memory"
    return None


def tile_swizzle(layout_text: str) -> str:
    """The descriptor swizzle of a desc case's layout text ("Sw<B,M,S> o ..."; "none" without one)."""
    return next((name for name, functor in desc.SWIZZLE_FUNCTORS.items()
                 if layout_text.startswith(functor + " o ")), "none")


# --- The desc target, asked for tiles of a given kind -------------------------------------------------------
@dataclass(frozen=True)
class TileRequest:
    """What the user asked of the desc target's tiles (None: any)."""
    dtype: Optional[str] = None
    major: Optional[str] = None
    swizzle: Optional[str] = None         # the tile's swizzle (the descriptor's too when valid)
    max_mn: int = MAX_MN

    def admits(self, case: dict) -> bool:
        """The case's fields that sampling may redraw (dtype, mn; desc._mutators never redraws the major-ness
        or the tile's swizzle, which the Z3 problem fixes) are what was asked."""
        return case["dtype"] == (self.dtype or case["dtype"]) and case["mn"] <= self.max_mn


def _tile_request(arch: str, violate: frozenset, dtype=None, major=None, swizzle=None, max_mn=MAX_MN) -> TileRequest:
    if dtype is not None:
        try:
            dtype = dtypes.canonical_name(dtype)
        except SpecError:
            raise _refuse("dtype", dtype, "unknown dtype; expected one of " + ", ".join(desc_model.DTYPES)) from None
        if dtype not in desc_model.DTYPES:
            raise _refuse("dtype", dtype, "descriptor tiles are drawn for " + ", ".join(desc_model.DTYPES)
                          + " (the padded 6- and 4-bit packings have no CuTe element layout)")
    if isinstance(major, str):
        major = major.upper()
    _check_one_of("major", major, desc_model.MAJORS)
    _check_one_of("swizzle", swizzle, desc_model.SWIZZLES)
    if swizzle is not None and not violate and swizzle not in spec_descriptor.swizzle_codes(arch):
        raise _refuse("swizzle", swizzle, f"not an {arch} descriptor swizzle; expected one of "
                      + ", ".join(spec_descriptor.swizzle_codes(arch)))
    if isinstance(max_mn, bool) or not isinstance(max_mn, int) or not 8 <= max_mn <= MAX_MN or max_mn % 8:
        raise _refuse("max_mn", max_mn, f"a multiple of 8 from 8 to {MAX_MN} (the M or N extents an MMA reads, "
                      "PTX ISA 9.7.15.5, 9.7.16.2.1)")
    return TileRequest(dtype, major, swizzle, max_mn)


def _narrowing(r, request: TileRequest) -> list:
    """The request as Z3 constraints on a desc_model record."""
    pinned = [r.mn <= request.max_mn]
    for name, value, names in (("dtype", request.dtype, desc_model.DTYPES), ("major", request.major, desc_model.MAJORS),
                               ("tile_swizzle", request.swizzle, desc_model.SWIZZLES)):
        if value is not None:
            pinned.append(getattr(r, name) == names.index(value))
    return pinned


def rules_forbidding(arch: str, request: TileRequest) -> list:
    """The rules that leave no valid desc case of the request on `arch` (a Z3 unsat core: e.g.
    operand.sm90.dtype for 4-bit on sm90), or [] when some valid case exists."""
    r = desc_model.symbolic_record()
    solver = z3.Solver()
    solver.add(*desc_model.domain(r), r.arch == desc_model.ARCHES.index(arch), *_narrowing(r, request))
    for rule_id, constraint in desc_model.constraints(r).items():
        solver.assert_and_track(constraint, rule_id)
    return sorted(str(rule) for rule in solver.unsat_core()) if solver.check() == z3.unsat else []


def _desc_cases_of_shape(arch: str, violate: frozenset, request: TileRequest, count: int, seed: int) -> list:
    """desc.generate's loop over its Z3 problem narrowed to the request (one major-ness and tile swizzle
    here), keeping the cases whose tile is one (tile_problem)."""
    rng = random.Random(seed)
    problem = desc_sampling.Problem(arch, violate)
    problem.solver.add(*_narrowing(problem.record, request))
    spec_label = fuzz.exactly(desc.label, arch, violate)

    def label_of(case: dict):
        return spec_label(case) if request.admits(case) and tile_problem(case) is None else None

    return list(fuzz.anchored(problem.next, desc.case_of, label_of, desc._mutators(rng), dict, count, rng,
                              fuzz.Stats(), violate, adapt=True))


def _desc_cases(arch: str, violate: frozenset, request: TileRequest, count: int, seed: int) -> list:
    """Up to `count` (case, label), an equal share for each (major-ness, tile swizzle) the request allows,
    interleaved, so that the first cases are an anchor of each kind: desc.generate alone draws a pool from
    4 anchors, a few kinds of tile."""
    shapes = [(major, swizzle) for major in ([request.major] if request.major else desc_model.MAJORS)
              for swizzle in ([request.swizzle] if request.swizzle else desc_model.SWIZZLES)]
    share = -(-count // len(shapes))
    found = [_desc_cases_of_shape(arch, violate, replace(request, major=major, swizzle=swizzle), share, seed)
             for major, swizzle in shapes]
    return [case for row in itertools.zip_longest(*found) for case in row if case is not None][:count]


# --- Pools --------------------------------------------------------------------------------------------------
@lru_cache(maxsize=None)
def _pool(target: str, arch: str, violate: frozenset, size: int, seed: int,
          request: Optional[TileRequest] = None) -> tuple:
    if target == "desc":
        cases = _desc_cases(arch, violate, request or TileRequest(), size, seed)
        return tuple(fuzz.record(target, arch, index, case, label) for index, (case, label) in enumerate(cases))
    return tuple(fuzz.generate(target, arch, violate, size, seed))


def _drawn_from(pool: tuple) -> st.SearchStrategy:
    """A record of the pool, a copy (a test may change it); shrinks towards the first. A failing test's
    report shows the record itself (hypothesis prints a sampled value)."""
    return st.sampled_from(pool).map(copy.deepcopy)


def _records(target: str, arch: str, violate, pool_size: int, seed: int, keep: Optional[Callable] = None,
             tile: Optional[dict] = None, **narrowed) -> tuple:
    """The pool of the checked arguments, less the records `keep` refuses; `tile`: the desc target's
    TileRequest arguments. StrategyArgumentError when no record is left, saying what was asked."""
    if target not in fuzz.TARGETS:
        raise _refuse("target", target, "expected one of " + ", ".join(fuzz.TARGETS))
    _check_arch(arch)
    _check_pool(pool_size, seed)
    wanted = _violated(target, violate)
    request = None
    if target == "desc":
        request = _tile_request(arch, wanted, **(tile or {}))
        narrowed.update(dtype=request.dtype, major=request.major, swizzle=request.swizzle,
                        max_mn=None if request.max_mn == MAX_MN else request.max_mn)
    pool = tuple(record for record in _pool(target, arch, wanted, pool_size, seed, request)
                 if keep is None or keep(record))
    if not pool:
        extra = ", ".join(f"{name}={value!r}" for name, value in narrowed.items() if value is not None)
        where = f"on {arch}" + (f" with {extra}" if extra else "")
        if wanted:
            raise StrategyArgumentError(f"no {target} configuration {where} breaks exactly {', '.join(sorted(wanted))} "
                                        "(`layoutproof fuzz --coverage` says what each rule is tied to)")
        forbidding = rules_forbidding(arch, request) if request is not None else []
        why = f": rules {', '.join(forbidding)} forbid it" if forbidding else ""
        raise StrategyArgumentError(f"no valid {target} configuration {where}{why}")
    return pool


# --- The strategies -----------------------------------------------------------------------------------------
def records(target: str, arch: str = "sm90", violate: Iterable[str] = (), pool_size: int = POOL_SIZE,
            seed: int = 0) -> st.SearchStrategy:
    """Fuzz records of `target` (desc, tensormap, recipe, tmem, tmem-alloc, triton-nvmma, cute-dsl, scales;
    docs/CLI.md `fuzz`) on `arch` breaking exactly `violate` (empty: valid configurations).

    >>> from hypothesis import given, settings
    >>> from layoutproof import strategies
    >>> @settings(max_examples=10)
    ... @given(strategies.records("tensormap", "sm90", violate=["tma.map.box_swizzle_span"]))
    ... def test_breaks_what_was_asked(record):
    ...     assert record["violates"] == ["tma.map.box_swizzle_span"]
    >>> test_breaks_what_was_asked()
    """
    return _drawn_from(_records(target, arch, violate, pool_size, seed))


def descriptors(arch: str = "sm90", violate: Iterable[str] = (), dtype: Optional[str] = None,
                major: Optional[str] = None, swizzle: Optional[str] = None, max_mn: int = MAX_MN,
                pool_size: int = POOL_SIZE, seed: int = 0) -> st.SearchStrategy:
    """A shared-memory descriptor with the operand tile it is meant to read (target `desc`): the record's
    case has keys descriptor (hex word), dtype, major, mn, k, layout (CuTe notation with its swizzle),
    start_address, kind, and on sm100/sm103 cta_group and m (the tcgen05.mma that reads it as B).

    Valid by default: the descriptor reads the tile (every rule of spec/ holds) and the tile is legal (no
    element overlaps another, inside shared memory: tile_problem). Narrow with `dtype` (f16 bf16 tf32 f32
    e4m3 e5m2 s8 u8 e2m1), `major` ("K" or "MN"), `swizzle` (the tile's: none, 32B, 64B, 128B,
    128B_atom32B) and `max_mn` (the largest M/N extent, a multiple of 8 up to 256). Fields the MMA does not
    read hold whatever the generator drew (the LBO of a K-major swizzled tile whose K fits one swizzle atom,
    PTX ISA 9.7.15.5.1): compare descriptors with same_reads, not by their bits.

    >>> from hypothesis import given, settings
    >>> from layoutproof import strategies
    >>> @settings(max_examples=20)
    ... @given(strategies.descriptors("sm90", dtype="bf16", major="K", swizzle="128B"))
    ... def test_one_kind_of_tile(record):
    ...     case = record["case"]
    ...     assert record["outcome"] == "ok" and case["dtype"] == "bf16" and case["major"] == "K"
    ...     assert case["layout"].startswith("Sw<3,4,3> o ")        # CuTe's 128B swizzle functor
    >>> test_one_kind_of_tile()
    """
    tile = dict(dtype=dtype, major=major, swizzle=swizzle, max_mn=max_mn)
    return _drawn_from(_records("desc", arch, violate, pool_size, seed, tile=tile))


TILE_KEYS = ("layout", "dtype", "major", "mn", "k", "start_address")


def tile_of(record: dict) -> dict:
    """The tile of a desc record: its TILE_KEYS, and "arch", "kind", "swizzle" (the tile's descriptor
    swizzle name) and "shape" / "stride" (the layout's, nested tuples of elements, as CuTe prints them)."""
    case = record["case"]
    _, layout = _parsed(case["layout"])
    return {**{key: case[key] for key in TILE_KEYS}, "arch": record["arch"], "kind": case["kind"],
            "swizzle": tile_swizzle(case["layout"]), "shape": layout.shape, "stride": layout.stride}


def tile_layouts(arch: str = "sm90", violate: Iterable[str] = (), dtype: Optional[str] = None,
                 major: Optional[str] = None, swizzle: Optional[str] = None, max_mn: int = MAX_MN,
                 pool_size: int = POOL_SIZE, seed: int = 0) -> st.SearchStrategy:
    """Operand tiles alone (tile_of): {"layout", "dtype", "major", "mn", "k", "start_address", "arch",
    "kind", "swizzle", "shape", "stride"}, from the same cases as `descriptors` with the same arguments
    (valid ones by default): what a descriptor builder takes.

    >>> from hypothesis import given, settings
    >>> from layoutproof import strategies
    >>> @settings(max_examples=20)
    ... @given(strategies.tile_layouts("sm100", major="MN", max_mn=64))
    ... def test_tiles(tile):
    ...     assert tile["major"] == "MN" and tile["mn"] <= 64
    ...     (_, _), (_, _) = tile["shape"]                          # ((mn digits), (k digits))
    >>> test_tiles()
    """
    return descriptors(arch, violate, dtype, major, swizzle, max_mn, pool_size, seed).map(tile_of)


def tensor_maps(arch: str = "sm90", violate: Iterable[str] = (), encode: Optional[str] = None,
                pool_size: int = POOL_SIZE, seed: int = 0) -> st.SearchStrategy:
    """cuTensorMapEncode* arguments as `tma check` documents them (target `tensormap`; case keys as named
    in cuda.h: encode, dataType, rank, globalDim, globalStrides, boxDim, ...); `encode` keeps one encoder
    (tiled, im2col, im2col_wide).

    >>> from hypothesis import given, settings
    >>> from layoutproof import strategies
    >>> @settings(max_examples=10)
    ... @given(strategies.tensor_maps("sm90", encode="tiled"))
    ... def test_valid_tiled_maps(record):
    ...     assert record["outcome"] == "ok" and record["case"]["encode"] == "tiled"
    >>> test_valid_tiled_maps()
    """
    _check_one_of("encode", encode, TENSOR_MAP_ENCODERS)
    keep = None if encode is None else (lambda record: record["case"]["encode"] == encode)
    return _drawn_from(_records("tensormap", arch, violate, pool_size, seed, keep, encode=encode))


def recipes(arch: str = "sm90", violate: Iterable[str] = (), pool_size: int = POOL_SIZE,
            seed: int = 0) -> st.SearchStrategy:
    """A TMA box, the smem tile it writes and the per-k descriptors that read it (target `recipe`; case keys
    dtype, major, mn, k_tile, smem_address, tma, descriptors).

    >>> from hypothesis import given, settings
    >>> from layoutproof import strategies
    >>> @settings(max_examples=10)
    ... @given(strategies.recipes("sm90"))
    ... def test_one_descriptor_per_k_step(record):
    ...     assert record["outcome"] == "ok" and record["case"]["descriptors"][0]["k_offset"] == 0
    >>> test_one_descriptor_per_k_step()
    """
    return _drawn_from(_records("recipe", arch, violate, pool_size, seed))


def _is_op(op: str) -> Callable:
    """The record's instruction is tcgen05.<op> (tcgen05.ld.red is "ld.red", not "ld")."""
    def keep(record: dict) -> bool:
        opcode = record["case"]["ptx"].split(" ")[0]
        return opcode.startswith(f"tcgen05.{op}.") and (op == "ld.red" or not opcode.startswith("tcgen05.ld.red"))
    return keep


def tmem_forms(arch: str = "sm100", violate: Iterable[str] = (), op: Optional[str] = None,
               pool_size: int = POOL_SIZE, seed: int = 0) -> st.SearchStrategy:
    """One tcgen05.ld / st / ld.red / cp / shift instruction with its target, PTX version, issuing warp and taddr
    (target `tmem`: case keys ptx, target, ptx_version, warp, address); `arch` the GPU its targets run on
    (sm100: sm_100a/f; sm103: sm_100f, sm_103a/f; sm90: sm_90a, where every form is refused, so only a
    request that breaks rules has cases there); `op` keeps one of "ld", "st", "ld.red", "cp", "shift".

    >>> from hypothesis import given, settings
    >>> from layoutproof import strategies
    >>> @settings(max_examples=10)
    ... @given(strategies.tmem_forms("sm100", op="st"))
    ... def test_stores(record):
    ...     assert record["case"]["ptx"].startswith("tcgen05.st.")
    >>> test_stores()
    """
    _check_one_of("op", op, TMEM_OPS)
    return _drawn_from(_records("tmem", arch, violate, pool_size, seed, None if op is None else _is_op(op), op=op))


def tmem_allocations(arch: str = "sm100", violate: Iterable[str] = (), pool_size: int = POOL_SIZE,
                     seed: int = 0) -> st.SearchStrategy:
    """One CTA's tcgen05.alloc / dealloc / relinquish_alloc_permit sequence (target `tmem-alloc`: case key
    ops, what `layoutproof tmem alloc` reads), on sm100 or sm103.

    >>> from hypothesis import given, settings
    >>> from layoutproof import strategies
    >>> @settings(max_examples=10)
    ... @given(strategies.tmem_allocations("sm100", violate=["tmem.alloc.dealloc_all"]))
    ... def test_leaks(record):
    ...     assert record["violates"] == ["tmem.alloc.dealloc_all"]
    >>> test_leaks()
    """
    return _drawn_from(_records("tmem-alloc", arch, violate, pool_size, seed))
