"""Properties of tensor memory (PTX 9.7.16): the tcgen05.ld/st fragment maps and the cells an access
touches, over the Z3 model of solver/model/tmem.py (CuTe's layouts of CUTLASS 4.2's TMEM atoms, .num
symbolic: one query covers every legal .num of a shape).

For every shape S of tcgen05.ld/st and P in {"", ".pack"} (.pack::16b on ld, .unpack::16b on st):
  tmem.fragment.injective.S[P]     distinct (thread, register, 16-bit half) pieces land on distinct
                                   (lane, column, cell half) (for .16x32bx2: split offset >= the
                                   columns of one half)
  tmem.fragment.footprint.S[P]     the pieces land exactly on lanes [0, L) x columns [0, C(num)) (x both
                                   cell halves, or only the low half with packing): every piece inside,
                                   and every such cell hit by the piece the layouts' right inverse names
  tmem.alloc.inside.S[P]           an access at column base + o of an allocation [base, base + n) stays
                                   in it when o + C(num) <= n (+ the split offset for .16x32bx2)
For every shape S:
  tmem.lane_quarter.S              warp w's access at lane a stays in its quarter [32(w%4), 32(w%4)+32)
                                   iff a is in [32(w%4), 32(w%4) + 32 - L]
and deliberately false claims, expected refuted:
  tmem.lane_quarter.S.lane_in_quarter     "the address lane in the warp's quarter is enough"
  tmem.alloc.inside.S.start_inside        "an access that starts inside the allocation stays inside"
  tmem.fragment.injective.16x32bx2.overlapping   any split offset (below one half's columns the two
                                          halves overlap)

Every counterexample is replayed through spec.tmem (fragment_map, TmemAccess.footprint, lane_quarter,
alloc.is_legal_columns) before it counts.
"""
from __future__ import annotations

import z3

from solver.model import tmem as model
from solver.model.bitvec import bv, in_range, narrow
from solver.prove.property import Query, prop

SOURCE = ("PTX 9.7.16.1.1, 9.7.16.2.3, 9.7.16.8.3 Table 49; CUTLASS 4.2 cute/atom/copy_traits_sm100.hpp "
          "(SM100_TMEM_LOAD/STORE atoms' CuTe layouts)")
FAMILY = "tmem"
SPLIT_BITS = 16             # the .16x32bx2 split offsets ranged over: [0, 2^16)


def _suffix(pack: bool) -> str:
    return ".pack" if pack else ""


def _num_domain(shape: str) -> str:
    return f".num = 2^e for every e in [0, {model.max_num_log2(shape)}] (x1 .. x{1 << model.max_num_log2(shape)})"


def _columns_text(shape: str, pack: bool) -> str:
    return f"{model.columns_log2_factor(shape, pack)}*num"


def _fragment_rules(shape: str, pack: bool) -> tuple:
    return (("tmem.ld.fragment", "tmem.ld.registers_per_thread", "tmem.ld.num")
            + (("tmem.ld.packing",) if pack else ()) + (("tmem.ld.half_splitoff",) if shape == "16x32bx2" else ()))


def _piece_vars(suffix: str = ""):
    return narrow(f"thread{suffix}", 5), narrow(f"register{suffix}", 7), narrow(f"half{suffix}", 1)


def _splitoff(shape: str):
    return narrow("splitoff", SPLIT_BITS) if shape == "16x32bx2" else None


def _spec_map(shape: str, num: int, pack: bool, splitoff):
    from spec.tmem import ld_st
    return ld_st.fragment_map(shape, num, pack, half_splitoff=splitoff if shape == "16x32bx2" else None)


# --- injective ------------------------------------------------------------------------------------------
def _injective(shape: str, pack: bool, overlapping: bool = False):
    def build() -> Query:
        e, s = model.num_log2(), _splitoff(shape)
        t1, r1, h1 = _piece_vars("_1")
        t2, r2, h2 = _piece_vars("_2")
        first = model.piece(shape, pack, t1, r1, h1, e, s)
        second = model.piece(shape, pack, t2, r2, h2, e, s)
        assumptions = [model.in_domain(shape, t1, r1, h1, e), model.in_domain(shape, t2, r2, h2, e)]
        if s is not None and not overlapping:
            assumptions.append(z3.UGE(s, model.columns(shape, e, pack)))
        claim = z3.Implies(z3.Or(t1 != t2, r1 != r2, h1 != h2), z3.Or([a != b for a, b in zip(first, second)]))
        variables = {"num": bv(1) << e, "thread_1": t1, "register_1": r1, "half_1": h1,
                     "thread_2": t2, "register_2": r2, "half_2": h2,
                     "lane": first[0], "column": first[1], "cell_half": first[2]}
        if s is not None:
            variables["splitoff"] = s
        return Query(variables, assumptions, claim)

    def replay(cx: dict) -> bool:
        pieces = _spec_map(shape, cx["num"], pack, cx.get("splitoff"))
        one = pieces[cx["thread_1"]][2 * cx["register_1"] + cx["half_1"]]
        other = pieces[cx["thread_2"]][2 * cx["register_2"] + cx["half_2"]]
        distinct = (cx["thread_1"], cx["register_1"], cx["half_1"]) != (cx["thread_2"], cx["register_2"], cx["half_2"])
        return distinct and one == other == (cx["lane"], cx["column"], cx["cell_half"])

    split = (" (.16x32bx2: threads 16-31 at the split offset, which is at least the "
             f"{_columns_text(shape, pack)} columns of one half)" if shape == "16x32bx2" and not overlapping else "")
    false = (" for every split offset (false: an offset below the columns of one half overlaps the halves)"
             if overlapping else "")
    domain = f"{_num_domain(shape)}; thread in [0, 32), register in [0, {model.BASE[shape]}*num), half in {{0, 1}}"
    if shape == "16x32bx2":
        domain += ("; split offset s in [0, 2^16)" if overlapping
                   else f"; split offset s in [{_columns_text(shape, pack)}, 2^16)")
    prop(f"tmem.fragment.injective.{shape}{_suffix(pack)}" + (".overlapping" if overlapping else ""),
         f"tcgen05.ld/st .{shape}{' .pack::16b/.unpack::16b' if pack else ''}: the fragment map (thread, "
         f"register, 16-bit half) -> (lane, column, cell half) is injective{split}{false}",
         domain, SOURCE, "refuted" if overlapping else "proved", replay=replay, family=FAMILY,
         rules=_fragment_rules(shape, pack))(build)


# --- footprint ------------------------------------------------------------------------------------------
def _footprint(shape: str, pack: bool):
    lanes = model.LANES[shape]

    def cell_in_footprint(lane, column, half, e, s):
        width = model.columns(shape, e, pack)
        columns = z3.ULT(column, width) if s is None else \
            z3.Or(z3.ULT(column, width), z3.And(z3.UGE(column, s), z3.ULT(column, s + width)))
        return z3.And(z3.ULT(lane, lanes), columns, half == 0 if pack else z3.ULE(half, 1))

    def ranges(e, s):
        return [model.legal_num(shape, e)] + ([z3.UGE(s, model.columns(shape, e, pack))] if s is not None else [])

    def inside() -> Query:
        e, s = model.num_log2(), _splitoff(shape)
        t, r, h = _piece_vars()
        lane, column, half = model.piece(shape, pack, t, r, h, e, s)
        return Query({"num": bv(1) << e, "thread": t, "register": r, "half": h, "lane": lane, "column": column,
                      "cell_half": half}, ranges(e, s) + [model.in_domain(shape, t, r, h, e)],
                     cell_in_footprint(lane, column, half, e, s))

    def onto() -> Query:
        e, s = model.num_log2(), _splitoff(shape)
        lane, column, half = narrow("lane", 16), narrow("column", 17), narrow("cell_half", 1)
        t, r, h = model.inverse(shape, pack, lane, column, half, e, s)
        hit = model.piece(shape, pack, t, r, h, e, s)
        claim = z3.And(model.in_domain(shape, t, r, h, e), hit[0] == lane, hit[1] == column, hit[2] == half)
        return Query({"num": bv(1) << e, "lane": lane, "column": column, "cell_half": half},
                     ranges(e, s) + [cell_in_footprint(lane, column, half, e, s)], claim)

    columns = f"[0, {_columns_text(shape, pack)})"
    if shape == "16x32bx2":
        columns += f" and [s, s + {_columns_text(shape, pack)})"
    halves = "the low cell half only" if pack else "both cell halves"
    domain = _num_domain(shape) + (f"; split offset s in [{_columns_text(shape, pack)}, 2^16)"
                                   if shape == "16x32bx2" else "")
    prop(f"tmem.fragment.footprint.{shape}{_suffix(pack)}",
         f"tcgen05.ld/st .{shape}{' .pack::16b/.unpack::16b' if pack else ''}: the fragment map's image is "
         f"exactly lanes [0, {lanes}) x columns {columns} x {halves}: every piece (thread < 32, register < "
         f"{model.BASE[shape]}*num, half < 2) lands inside, and every such cell is the image of the piece "
         f"the layouts' right inverse names (an explicit witness, checked)",
         domain, SOURCE, "proved", family=FAMILY, rules=_fragment_rules(shape, pack))(lambda: [inside(), onto()])


# --- lane quarter ---------------------------------------------------------------------------------------
def _touched(shape: str, pack: bool, lane0, column0, t, r, h, e, s) -> tuple:
    """The absolute (lane, column) of a piece of an access at address (lane0, column0): the address plus
    the piece's offset in the address layout."""
    lane, column, _ = model.piece(shape, pack, t, r, h, e, s)
    touched = model.address(lane0, column0) + model.address(lane, column)
    return model.address_lane(touched), model.address_column(touched)


def _lane_quarter(shape: str, in_quarter_only: bool = False):
    lanes = model.LANES[shape]

    def setting():
        warp, lane0, column0 = narrow("warp", 5), narrow("address_lane", 16), narrow("address_column", 9)
        e = model.num_log2()
        s = narrow("splitoff", 9) if shape == "16x32bx2" else None
        first = (warp & 3) << 5
        return warp, lane0, column0, e, s, first

    def condition(lane0, first):
        return z3.And(z3.UGE(lane0, first), z3.ULE(lane0, first + (32 - lanes)))

    def stays(lane, first):
        return z3.And(z3.UGE(lane, first), z3.ULT(lane, first + 32))

    def variables(warp, lane0, column0, e, s, t, r, h, lane):
        found = {"warp": warp, "address_lane": lane0, "address_column": column0, "num": bv(1) << e,
                 "thread": t, "register": r, "half": h, "lane_touched": lane}
        if s is not None:
            found["splitoff"] = s
        return found

    def inside() -> Query:
        warp, lane0, column0, e, s, first = setting()
        t, r, h = _piece_vars()
        lane, _ = _touched(shape, False, lane0, column0, t, r, h, e, s)
        quarter = z3.ULT(lane0, first + 32) if in_quarter_only else condition(lane0, first)
        assumptions = [model.in_domain(shape, t, r, h, e), z3.UGE(lane0, first), quarter]
        return Query(variables(warp, lane0, column0, e, s, t, r, h, lane), assumptions, stays(lane, first))

    def outside() -> Query:
        """Outside the condition some piece leaves the quarter: the piece at lane 0 of the access (address
        lane outside the quarter) or the one at lane L-1 (address lane in the quarter, past
        32(w%4) + 32 - L), each named by the layouts' right inverse."""
        warp, lane0, column0, e, s, first = setting()
        below = z3.Not(stays(lane0, first))
        t, r, h = (z3.If(below, a, b) for a, b in zip(model.inverse(shape, False, bv(0), bv(0), bv(0), e, s),
                                                        model.inverse(shape, False, bv(lanes - 1), bv(0), bv(0), e, s)))
        lane, _ = _touched(shape, False, lane0, column0, t, r, h, e, s)
        return Query(variables(warp, lane0, column0, e, s, t, r, h, lane),
                     [model.legal_num(shape, e), z3.Not(condition(lane0, first))],
                     z3.And(model.in_domain(shape, t, r, h, e), z3.Not(stays(lane, first))))

    def replay(cx: dict) -> bool:
        from spec.tmem import address as spec_address, ld_st
        access = ld_st.TmemAccess("ld", shape, cx["num"], lane=cx["address_lane"], column=cx["address_column"],
                                  warp=cx["warp"], half_splitoff=cx.get("splitoff") if shape == "16x32bx2" else None)
        pieces = _spec_map(shape, cx["num"], False, cx.get("splitoff"))
        lane = cx["address_lane"] + pieces[cx["thread"]][2 * cx["register"] + cx["half"]][0]
        footprint_lanes = {cell_lane for cell_lane, _ in access.footprint()}
        quarter = spec_address.lane_quarter(cx["warp"])
        return (lane == cx["lane_touched"] and lane in footprint_lanes and lane not in quarter
                and cx["address_lane"] in quarter)

    split = "; split offset in [0, 512)" if shape == "16x32bx2" else ""
    domain = (f"warp w in [0, 32); address lane a in [0, 2^16), address column in [0, 512); "
              f"{_num_domain(shape)}{split}")
    rules = ("tmem.access.lane_quarter", "tmem.address.layout", "tmem.ld.fragment")
    if in_quarter_only:
        prop(f"tmem.lane_quarter.{shape}.lane_in_quarter",
             f"tcgen05.ld/st .{shape} by warp w at address lane a in w's quarter [32(w%4), 32(w%4) + 32) "
             f"touches only lanes of that quarter (false: the access spans {lanes} lanes from a, so a must "
             f"be at most 32(w%4) + {32 - lanes})",
             domain + "; a in the warp's quarter", SOURCE, "refuted", replay=replay, family=FAMILY,
             rules=rules)(inside)
        return
    prop(f"tmem.lane_quarter.{shape}",
         f"tcgen05.ld/st .{shape} by warp w at address lane a touches only lanes of w's quarter "
         f"[32(w%4), 32(w%4) + 32) iff 32(w%4) <= a <= 32(w%4) + {32 - lanes}: inside the condition every "
         f"piece stays in the quarter; outside it the piece at lane 0 or lane {lanes - 1} of the access "
         f"leaves it", domain, SOURCE, "proved", replay=replay, family=FAMILY,
         rules=rules)(lambda: [inside(), outside()])


# --- inside an allocation -------------------------------------------------------------------------------
def _alloc_inside(shape: str, pack: bool, start_inside: bool = False):
    def build() -> Query:
        e = model.num_log2()
        log2_n = narrow("log2_columns", 4)
        n = bv(1) << log2_n
        base, offset, lane0 = narrow("base", 10), narrow("offset", 10), narrow("lane", 7)
        s = narrow("splitoff", 10) if shape == "16x32bx2" else None
        t, r, h = _piece_vars()
        width = model.columns(shape, e, pack)
        _, column = _touched(shape, pack, lane0, base + offset, t, r, h, e, s)
        assumptions = [in_range(log2_n, 5, 10), z3.ULE(base + n, 512), model.in_domain(shape, t, r, h, e)]
        if start_inside:
            assumptions.append(z3.ULT(offset, n))
        else:
            assumptions.append(z3.ULE(offset + width + (s if s is not None else 0), n))
        variables = {"allocation_columns": n, "base": base, "offset": offset, "lane": lane0,
                     "num": bv(1) << e, "thread": t, "register": r, "half": h, "column_touched": column}
        if s is not None:
            variables["splitoff"] = s
        return Query(variables, assumptions, z3.And(z3.UGE(column, base), z3.ULT(column, base + n)))

    def replay(cx: dict) -> bool:
        from spec.tmem import alloc, ld_st
        access = ld_st.TmemAccess("ld", shape, cx["num"], lane=cx["lane"], column=cx["base"] + cx["offset"],
                                  pack=pack, half_splitoff=cx.get("splitoff") if shape == "16x32bx2" else None)
        pieces = _spec_map(shape, cx["num"], pack, cx.get("splitoff"))
        column = cx["base"] + cx["offset"] + pieces[cx["thread"]][2 * cx["register"] + cx["half"]][1]
        columns = cx["allocation_columns"]
        end = cx["base"] + columns
        return (alloc.is_legal_columns(columns) and end <= 512 and cx["offset"] < columns
                and column == cx["column_touched"] and (cx["lane"], column) in access.footprint()
                and not cx["base"] <= column < end)

    split = " + s (the split offset)" if shape == "16x32bx2" else ""
    what = f"tcgen05.ld/st .{shape}{' .pack::16b/.unpack::16b' if pack else ''}"
    domain = (f"allocation of n = 2^k columns, k in [5, 9], at base column b with b + n <= 512; offset o in "
              f"[0, 1024); address lane in [0, 128); {_num_domain(shape)}"
              + ("; split offset s in [0, 1024)" if shape == "16x32bx2" else ""))
    rules = ("tmem.alloc.columns", "tmem.address.layout") + _fragment_rules(shape, pack)
    if start_inside:
        prop(f"tmem.alloc.inside.{shape}{_suffix(pack)}.start_inside",
             f"{what} at column b + o of an allocation [b, b + n) with o < n touches only columns of the "
             f"allocation (false: the access spans {_columns_text(shape, pack)} columns{split} from its address)",
             domain + "; o < n", SOURCE, "refuted", replay=replay, family=FAMILY, rules=rules)(build)
        return
    prop(f"tmem.alloc.inside.{shape}{_suffix(pack)}",
         f"{what} at column b + o of an allocation [b, b + n) touches only columns of the allocation when "
         f"o + {_columns_text(shape, pack)}{split} <= n",
         domain + f"; o + {_columns_text(shape, pack)}{split} <= n", SOURCE, "proved", replay=replay,
         family=FAMILY, rules=rules)(build)


for _shape in model.SHAPES:
    for _pack in (False, True):
        _injective(_shape, _pack)
        _footprint(_shape, _pack)
    _lane_quarter(_shape)
    for _pack in (False, True):
        _alloc_inside(_shape, _pack)
_injective("16x32bx2", False, overlapping=True)
for _shape in model.SHAPES:
    _lane_quarter(_shape, in_quarter_only=True)
    _alloc_inside(_shape, False, start_inside=True)
