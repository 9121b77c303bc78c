"""hypothesis strategies for compiler tests: descriptors with their tiles, tile layouts, tensor maps,
recipes, tcgen05 tensor-memory instructions and allocation sequences, valid or breaking exactly the rules
you choose.

    from hypothesis import given
    from solver import strategies as lp

    @given(lp.tensor_maps(arch="sm90", violate=["tma.map.box_swizzle_span"]))
    def test_compiler_rejects_wide_swizzled_boxes(record):
        assert my_compiler.check_tensor_map(record["case"]) is False     # the driver would refuse it

Each strategy draws fuzz *records* (solver/fuzz/engine.py; docs/CLI.md `fuzz`): {"target", "arch", "violates",
"outcome", "witness", "case", "rules", "index"}, labelled by spec/. The cases come from `layoutproof fuzz`'s
generator (Z3 anchors over the target's constraints, then sampling), computed once per (target, arch,
rules) as a pool of `pool_size` distinct cases; hypothesis draws from the pool and shrinks towards its
first case (a Z3 anchor). An impossible request (a rule that cannot break alone on that arch) raises
ValueError when the strategy is first drawn from, naming the rules.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Iterable, Optional

from hypothesis import strategies as st

from solver.fuzz import engine as fuzz

POOL_SIZE = 200


@lru_cache(maxsize=None)
def _pool(target: str, arch: str, violate: frozenset, size: int, seed: int) -> tuple:
    records = tuple(fuzz.generate(target, arch, violate, size, seed))
    if not records:
        asked = ", ".join(sorted(violate)) or "no rule"
        raise ValueError(f"no {target} configuration on {arch} breaks exactly {asked} "
                         f"(`layoutproof fuzz --coverage` says what it is tied to)")
    return records


def records(target: str, arch: str = "sm90", violate: Iterable[str] = (), pool_size: int = POOL_SIZE,
            seed: int = 0) -> st.SearchStrategy:
    """Fuzz records of `target` on `arch` breaking exactly `violate` (empty: valid configurations)."""
    wanted = fuzz.parse_violate(target, ",".join(violate))

    def pick(index: int) -> dict:
        pool = _pool(target, arch, wanted, pool_size, seed)
        return dict(pool[index % len(pool)])

    return st.integers(min_value=0, max_value=pool_size - 1).map(pick)


def descriptors(arch: str = "sm90", violate: Iterable[str] = (), **kw) -> st.SearchStrategy:
    """A shared-memory descriptor with the operand tile it is meant to read (target `desc`): case keys
    descriptor, dtype, major, mn, k, layout, start_address, kind."""
    return records("desc", arch, violate, **kw)


def tile_layouts(arch: str = "sm90", violate: Iterable[str] = (), **kw) -> st.SearchStrategy:
    """Operand tiles alone: {"layout" (CuTe notation with its swizzle), "dtype", "major", "mn", "k",
    "start_address"}, from the same cases as `descriptors` (valid ones by default)."""
    keys = ("layout", "dtype", "major", "mn", "k", "start_address")
    return descriptors(arch, violate, **kw).map(lambda r: {key: r["case"][key] for key in keys})


def tensor_maps(arch: str = "sm90", violate: Iterable[str] = (), encode: Optional[str] = None,
                **kw) -> st.SearchStrategy:
    """cuTensorMapEncode* arguments as `tma check` documents (target `tensormap`); `encode` keeps one
    encoder (tiled, im2col, im2col_wide)."""
    strategy = records("tensormap", arch, violate, **kw)
    return strategy if encode is None else strategy.filter(lambda r: r["case"]["encode"] == encode)


def recipes(arch: str = "sm90", violate: Iterable[str] = (), **kw) -> st.SearchStrategy:
    """A TMA box, the smem tile it writes and the per-k descriptors that read it (target `recipe`)."""
    return records("recipe", arch, violate, **kw)


def tmem_forms(arch: str = "sm100", violate: Iterable[str] = (), op: Optional[str] = None,
               **kw) -> st.SearchStrategy:
    """One tcgen05.ld / st / ld.red / cp / shift instruction with its target, PTX version, issuing warp and taddr
    (target `tmem`: case keys ptx, target, ptx_version, warp, address); `arch` the GPU its targets run on
    (sm100: sm_100a/f; sm103: sm_100f, sm_103a/f; sm90: sm_90a, where every form is refused); `op` keeps
    one of "ld", "st", "ld.red", "cp", "shift"."""
    strategy = records("tmem", arch, violate, **kw)
    if op is None:
        return strategy
    return strategy.filter(lambda r: r["case"]["ptx"].split(" ")[0].startswith(f"tcgen05.{op}.")
                           and (op == "ld.red" or not r["case"]["ptx"].startswith("tcgen05.ld.red")))


def tmem_allocations(arch: str = "sm100", violate: Iterable[str] = (), **kw) -> st.SearchStrategy:
    """One CTA's tcgen05.alloc / dealloc / relinquish_alloc_permit sequence (target `tmem-alloc`: case key
    ops, what `layoutproof tmem alloc` reads), on sm100 or sm103."""
    return records("tmem-alloc", arch, violate, **kw)
