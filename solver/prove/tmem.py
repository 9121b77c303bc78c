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

tcgen05.cp (multicast, decompression) and the accumulator D layouts (injective, read once by a ld
sequence) follow below, from "=== tcgen05.cp and the accumulator".

Every counterexample is replayed through spec.tmem (fragment_map, TmemAccess.footprint, lane_quarter,
alloc.is_legal_columns, cp.cell_rows / row_lanes, accumulator.d_cell) before it counts.
"""
from __future__ import annotations

import z3

from solver.model import tmem as model
from solver.model.bitvec import bv, in_range, narrow
from solver.prove.property import Query, prop

# The proved tmem properties are proved by Z3's SMT core (solver/prove/prover.py STRATEGIES): their
# products and divisions by unknowns (spans, .num, allocation sizes) bit-blast slowly.
STRATEGY = "smt"

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
         strategy="" if overlapping else STRATEGY,
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
         domain, SOURCE, "proved", family=FAMILY, strategy=STRATEGY, rules=_fragment_rules(shape, pack))(lambda: [inside(), onto()])


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
         f"leaves it", domain, SOURCE, "proved", replay=replay, family=FAMILY, strategy=STRATEGY,
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
         family=FAMILY, strategy=STRATEGY, rules=rules)(build)


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


# === tcgen05.cp and the accumulator (issue 13) ===============================================================
# For every tcgen05.cp shape S with its multicast M (ids write "::" as "_"), every decompression format F
# and every accumulator layout L (A-G; C, the sparse layout, as the manual's table reads, see the model):
#   tmem.cp.multicast.S[.M]            every destination bit is written once, each cell (lane, column) from
#                                      one source row, and row r reaches exactly the lanes the multicast's
#                                      name gives it (as many as the qualifier names warps), in N/32 columns
#   tmem.cp.decompression.F            16 elements of 6 / 4 bits (+ 32 / 64 bits of padding) fill each
#                                      16-byte chunk, land in 16 distinct bytes, and a row's bytes fill
#                                      exactly the N/32 columns the shape claims
#   tmem.accumulator.injective.L       (m, n) -> (cta, lane, column) is injective on M x N, inside 128 x 512
#   tmem.accumulator.read_once.L       the ld sequence (4 warps, .32x32b at lane 32w; layout F: a 16-lane
#                                      shape at lane 32w + offset) reads each D element exactly once
# and deliberately false claims, expected refuted:
#   tmem.cp.multicast.64x128b.warpx2_02_13.as_01_23    the 02_13 copy writes the lanes 01_23 names
#   tmem.accumulator.read_once.D.warp3_at_lane64       warp 3's loads 32 lanes low: no element read twice
CP_SOURCE = ("PTX 9.7.16.9.1, 9.7.16.2.3; CUTLASS 4.2 cute/atom/copy_traits_sm100.hpp, cute/arch/copy_sm100.hpp "
             "(SM100_UTCCP_* ValID / SrcLayout)")
DECOMPRESSION_SOURCE = "PTX 9.7.16.9.1 (.dst_fmt.src_fmt), 9.7.16.10.4"
ACCUMULATOR_SOURCE = ("PTX 9.7.16.10.5 (Layouts A-G), 9.7.16.8.3; CUTLASS 4.2 cute/atom/mma_traits_sm100.hpp "
                      "(UMMA::tmem_frg, tmem_frg_ws; layout C from the manual's table)")


def _cp_id(shape: str, multicast) -> str:
    return f"tmem.cp.multicast.{shape}" + (f".{multicast.replace('::', '_')}" if multicast else "")


def _cp_vars(shape: str, multicast, suffix: str = ""):
    rows, bits, copies = model.CP_ROWS[shape], model.CP_BITS[shape], model.cp_copies(shape, multicast)
    r, b, c = narrow(f"row{suffix}", 7), narrow(f"bit{suffix}", 8), narrow(f"copy{suffix}", 2)
    return (r, b, c), [z3.ULT(r, rows), z3.ULT(b, bits), z3.ULT(c, copies)]


def _cp_multicast(shape: str, multicast, named_as=None):
    bits = model.CP_BITS[shape]
    copies = model.cp_copies(shape, multicast)

    def address(r, b, c):
        lane, column, cell_bit = model.cp_cell(shape, multicast, r, b, c)
        return lane, column, cell_bit

    def once() -> Query:
        (r1, b1, c1), range1 = _cp_vars(shape, multicast, "_1")
        (r2, b2, c2), range2 = _cp_vars(shape, multicast, "_2")
        one, two = address(r1, b1, c1), address(r2, b2, c2)
        return Query({"row_1": r1, "bit_1": b1, "copy_1": c1, "row_2": r2, "bit_2": b2, "copy_2": c2},
                     range1 + range2,
                     z3.And(z3.Implies(z3.Or(r1 != r2, b1 != b2, c1 != c2), z3.Or([x != y for x, y in zip(one, two)])),
                            z3.Implies(z3.And(one[0] == two[0], one[1] == two[1]), r1 == r2)))

    def inside(named: list = None) -> Query:
        (r, b, c), ranges = _cp_vars(shape, multicast)
        lane, column, cell_bit = address(r, b, c)
        lanes = model.cp_named_lanes(shape, named or multicast, r)
        claim = z3.And(z3.Or([lane == x for x in lanes]), column == z3.LShR(b, 5), cell_bit == (b & 31),
                       z3.ULT(column, bits // 32))
        return Query({"row": r, "bit": b, "copy": c, "lane": lane, "column": column}, ranges, claim)

    def onto() -> Query:
        (r, b, _), ranges = _cp_vars(shape, multicast)
        k = narrow("named", 2)
        lanes = model.cp_named_lanes(shape, multicast, r)
        assert len(lanes) == copies, (shape, multicast)
        lane = z3.Sum([z3.If(k == i, x, bv(0)) for i, x in enumerate(lanes)]) if len(lanes) > 1 else lanes[0]
        hit = z3.Or([z3.And([x == y for x, y in zip(address(r, b, bv(c)), (lane, z3.LShR(b, 5), b & 31))])
                     for c in range(copies)])
        distinct = z3.And([lanes[i] != lanes[j] for i in range(len(lanes)) for j in range(i)]) \
            if len(lanes) > 1 else z3.BoolVal(True)
        return Query({"row": r, "bit": b, "named": k}, ranges[:2] + [z3.ULT(k, copies)], z3.And(hit, distinct))

    what = f"tcgen05.cp.{shape}" + (f".{multicast}" if multicast else "")
    rows = model.CP_ROWS[shape]
    domain = f"source row in [0, {rows}), bit in [0, {bits}), multicast copy in [0, {copies})"
    rules = ("tmem.cp.layout", "tmem.cp.shape", "tmem.cp.multicast")
    if named_as is not None:
        def replay(cx: dict) -> bool:
            from spec.tmem import cp
            written = cp.cell_rows(shape, multicast)
            return (written.get((cx["lane"], cx["column"])) == cx["row"]
                    and cx["lane"] not in cp.row_lanes(shape, named_as)[cx["row"]])

        prop(_cp_id(shape, multicast) + f".as_{named_as.split('::')[1]}",
             f"{what} writes source row r only to the lanes .{named_as} names (false: the two pairings of "
             f"warps differ)", domain, CP_SOURCE, "refuted", replay=replay, family=FAMILY,
             rules=rules)(lambda: inside(named_as))
        return
    prop(_cp_id(shape, multicast),
         f"{what}: every destination bit is written once (distinct (row, bit, copy) -> distinct (lane, column, "
         f"cell bit)), every written cell holds bits of one source row only, and source row r reaches exactly "
         f"the {copies} lane(s) the {'multicast ' + multicast if multicast else 'shape'} names for it (lane "
         f"r%32 of each named warp's quarter; .4x256b: lane 32r), bit b in column b/32 of {bits // 32}",
         domain, CP_SOURCE, "proved", family=FAMILY, strategy=STRATEGY, rules=rules)(lambda: [once(), inside(), onto()])


def _cp_decompression(fmt: str):
    width, padding = model.CP_FORMATS[fmt]

    def setting():
        wide = narrow("shape_256b", 1)                   # a row of 128 or 256 bits: the five shapes
        row_bits = z3.If(wide == 1, bv(256), bv(128))
        return wide, row_bits

    def element(suffix: str = ""):
        return narrow(f"chunk{suffix}", 1), narrow(f"element{suffix}", 4)

    def fits() -> Query:
        wide, row_bits = setting()
        c, i = element()
        first, bits, byte = model.cp_element(fmt, c, i)
        chunks = z3.LShR(row_bits, 7)
        claim = z3.And(
            z3.UGE(first, c * model.CP_CHUNK_BITS), z3.ULE(first + bits, c * model.CP_CHUNK_BITS
                                                                  + model.CP_CHUNK_BITS - padding),
            z3.ULE(first + bits, row_bits),                          # inside the row's source bits
            z3.ULT(z3.LShR(byte, 2), z3.LShR(row_bits, 5)),          # inside the N/32 columns
            # source bytes per row / 16 x 16 elements, a byte each = the shape's columns x 4 bytes
            chunks * model.CP_ELEMENTS == z3.LShR(row_bits, 5) * 4,
            bv(model.CP_ELEMENTS * width + padding) == model.CP_CHUNK_BITS)
        return Query({"shape_256b": wide, "chunk": c, "element": i, "first_bit": first, "byte": byte},
                     [z3.ULT(c, chunks)], claim)

    def disjoint() -> Query:
        wide, row_bits = setting()
        (c1, i1), (c2, i2) = element("_1"), element("_2")
        f1, bits, y1 = model.cp_element(fmt, c1, i1)
        f2, _, y2 = model.cp_element(fmt, c2, i2)
        chunks = z3.LShR(row_bits, 7)
        return Query({"chunk_1": c1, "element_1": i1, "chunk_2": c2, "element_2": i2},
                     [z3.ULT(c1, chunks), z3.ULT(c2, chunks), z3.Or(c1 != c2, i1 != i2)],
                     z3.And(y1 != y2, z3.Or(z3.ULE(f1 + bits, f2), z3.ULE(f2 + bits, f1))))

    def onto() -> Query:
        wide, row_bits = setting()
        byte, source = narrow("byte", 6), narrow("source_bit", 8)
        c, i = z3.LShR(byte, 4), byte & 15                       # the destination byte's element
        _, _, hit = model.cp_element(fmt, c, i)
        within = z3.URem(source, model.CP_CHUNK_BITS)
        c2, i2 = z3.LShR(source, 7), z3.UDiv(within, width)      # the source bit's element
        f2, bits, _ = model.cp_element(fmt, c2, i2)
        return Query({"shape_256b": wide, "byte": byte, "source_bit": source},
                     [z3.ULT(byte, z3.LShR(row_bits, 3)), z3.ULT(source, row_bits),
                      z3.ULT(within, model.CP_ELEMENTS * width)],
                     z3.And(hit == byte, z3.ULT(i2, model.CP_ELEMENTS), z3.ULE(f2, source), z3.ULT(source, f2 + bits)))

    prop(f"tmem.cp.decompression.{fmt}",
         f"tcgen05.cp .{fmt}: a 16-byte source chunk is {model.CP_ELEMENTS} elements of {width} bits and "
         f"{padding} bits of padding; element i of chunk c, read from bits [128c + {width}i, 128c + {width}i + "
         f"{width}), becomes destination byte 16c + i: distinct elements read disjoint bits and write distinct "
         f"bytes, every byte of the row and every non-padding source bit is used, and the row's N/8 bytes fill "
         f"exactly the N/32 columns the shape claims (source bytes per row / 16 x 16 elements x 8 bits = N/32 "
         f"x 32)",
         "every shape (rows of N = 128 or 256 bits: .128x256b, .4x256b / .128x128b, .64x128b, .32x128b); "
         "chunk in [0, N/128), element in [0, 16), destination byte in [0, N/8), source bit in [0, N)",
         DECOMPRESSION_SOURCE, "proved", family=FAMILY, strategy=STRATEGY,
         rules=("tmem.cp.decompression", "tmem.cp.format", "tmem.cp.source", "tmem.cp.layout"))(
        lambda: [fits(), disjoint(), onto()])


# --- the accumulator -----------------------------------------------------------------------------------------
def _acc_setting(layout: str, suffix: str = ""):
    """N (a multiple of 8 in [8, 256]), the lane offset, and the ranges."""
    N = narrow("N", 9)
    offsets = model.HALF_DATAPATH_OFFSETS.get(layout, (0,))
    offset = narrow("lane_offset", 5) if len(offsets) > 1 else bv(0)
    ranges = [z3.UGE(N, 8), z3.ULE(N, 256), N & 7 == 0, z3.Or([offset == o for o in offsets])]
    return N, offset, ranges


def _element_vars(layout: str, N, suffix: str = ""):
    m, n = narrow(f"m{suffix}", 8), narrow(f"n{suffix}", 9)
    return m, n, [z3.ULT(m, model.ACCUMULATOR_ROWS[layout]), z3.ULT(n, N)]


def _acc_domain(layout: str) -> str:
    offsets = model.HALF_DATAPATH_OFFSETS.get(layout, (0,))
    return (f"M = {model.ACCUMULATOR_ROWS[layout]} (cta_group::{model.ACCUMULATOR_CTAS[layout]}), N any "
            f"multiple of 8 in [8, 256] (every N the manual allows, and more), m in [0, M), n in [0, N)"
            + (f"; lane offset {' or '.join(map(str, offsets))}" if len(offsets) > 1 else ""))


def _acc_rules(layout: str) -> tuple:
    """The rules an accumulator property checks: layout C's map is its own rule (the manual's reading)."""
    return ("tmem.mma.d_layout", "tmem.mma.d_map.sparse" if layout == "C" else "tmem.mma.d_map",
            "tmem.mma.d_lane_alignment")


def _acc_injective(layout: str):
    def injective() -> Query:
        N, offset, ranges = _acc_setting(layout)
        m1, n1, range1 = _element_vars(layout, N, "_1")
        m2, n2, range2 = _element_vars(layout, N, "_2")
        one = model.accumulator_cell(layout, m1, n1, N, offset)
        two = model.accumulator_cell(layout, m2, n2, N, offset)
        return Query({"N": N, "lane_offset": offset, "m_1": m1, "n_1": n1, "m_2": m2, "n_2": n2},
                     ranges + range1 + range2,
                     z3.Implies(z3.Or(m1 != m2, n1 != n2), z3.Or([x != y for x, y in zip(one, two)])))

    def inside() -> Query:
        N, offset, ranges = _acc_setting(layout)
        m, n, element_range = _element_vars(layout, N)
        cta, lane, column = model.accumulator_cell(layout, m, n, N, offset)
        return Query({"N": N, "lane_offset": offset, "m": m, "n": n, "lane": lane, "column": column},
                     ranges + element_range,
                     z3.And(z3.ULT(cta if isinstance(cta, z3.ExprRef) else bv(cta), model.ACCUMULATOR_CTAS[layout]), z3.ULT(lane, 128), z3.ULT(column, 512),
                            z3.ULT(column, model.accumulator_columns(layout, N))))

    prop(f"tmem.accumulator.injective.{layout}",
         f"accumulator layout {layout}: (m, n) -> (cta, lane, column) is injective on the M x N matrix D and "
         f"stays inside 128 lanes x 512 columns (inside the {'N' if model.ACCUMULATOR_ATOMS[layout][1] == 1 else 'N/' + str(model.ACCUMULATOR_ATOMS[layout][1])} columns the layout uses)",
         _acc_domain(layout), ACCUMULATOR_SOURCE, "proved", family=FAMILY, strategy=STRATEGY,
         rules=_acc_rules(layout))(lambda: [injective(), inside()])


READ_SHAPES = {half: ("16x64b", "16x128b", "16x256b", "16x32bx2")      # half data path: 16-lane shapes
               for half in model.HALF_DATAPATH_OFFSETS}


def _read_setting(layout: str, shape: str, N, e, suffix: str = ""):
    """A read of the sequence: (cta, warp, load, thread, register), the legality of num = 2^e (the access
    span dividing the columns D uses) and the read's range."""
    span = model.access_span(shape, e)
    width = model.accumulator_columns(layout, N)
    cta = narrow(f"cta{suffix}", 1) if model.ACCUMULATOR_CTAS[layout] == 2 else bv(0)
    warp, load = narrow(f"warp{suffix}", 2), narrow(f"load{suffix}", 9)
    t, r = narrow(f"thread{suffix}", 5), narrow(f"register{suffix}", 7)
    ranges = [z3.ULT(cta, model.ACCUMULATOR_CTAS[layout]), z3.ULT(load, z3.UDiv(width, span)),
              z3.ULT(r, model.registers(shape, e))]
    return (cta, warp, load, t, r), [model.legal_num(shape, e), z3.URem(width, span) == 0], ranges


def _read_cell(layout: str, shape: str, read, e, offset, wrong: bool = False):
    cta, warp, load, t, r = read
    lane, column = model.sequence_read(shape, warp, load, t, r, e, offset)
    if wrong:                                                   # warp 3 at lane 64 instead of 96
        lane = z3.If(warp == 3, lane - 32, lane)
    return cta, lane, column


def _acc_read_once(layout: str, shape: str, wrong: bool = False):
    def covered() -> Query:                    # every read is of a D element
        N, offset, ranges = _acc_setting(layout)
        e = model.num_log2()
        read, legal, read_range = _read_setting(layout, shape, N, e)
        cell = _read_cell(layout, shape, read, e, offset)
        m, n = model.accumulator_element(layout, *cell, N, offset)
        return Query({"N": N, "num": bv(1) << e}, ranges + legal + read_range,
                     z3.And(z3.ULT(m, model.ACCUMULATOR_ROWS[layout]), z3.ULT(n, N),
                            z3.And([x == y for x, y in zip(model.accumulator_cell(layout, m, n, N, offset), cell)])))

    def every() -> Query:                      # every D element is read (by the read the layouts name)
        N, offset, ranges = _acc_setting(layout)
        m, n, element_range = _element_vars(layout, N)
        e = model.num_log2()
        span = model.access_span(shape, e)
        cta, lane, column = model.accumulator_cell(layout, m, n, N, offset)
        within = lane - offset
        # span is a power of two: the load and the column in it by a shift and a mask (dividing by an unknown
        # bit-blasts a divider); the claim states span == 2^span_log2, so this stays the model's span
        span_log2 = bv(model.columns_log2_factor(shape, False).bit_length() - 1 + (shape == "16x32bx2")) + e
        load, rest = z3.LShR(column, span_log2), column & ((bv(1) << span_log2) - 1)
        t, r, h = model.inverse(shape, False, within & 31, rest, bv(0), e)
        read = (cta, z3.LShR(within, 5), load, t, r)
        hit = _read_cell(layout, shape, read, e, offset)
        width = model.accumulator_columns(layout, N)
        return Query({"N": N, "num": bv(1) << e, "m": m, "n": n},
                     ranges + element_range + [model.legal_num(shape, e), z3.URem(width, span) == 0],
                     z3.And(z3.ULT(read[1], 4), z3.ULT(t, 32), z3.ULT(r, model.registers(shape, e)), h == 0,
                            z3.ULT(load, z3.UDiv(width, span)), span == bv(1) << span_log2,
                            z3.And([x == y for x, y in zip(hit, (cta, lane, column))])))

    def once() -> Query:                       # no cell read twice
        N, offset, ranges = _acc_setting(layout)
        e = model.num_log2()
        read1_, legal1, range1 = _read_setting(layout, shape, N, e, "_1")        # both at the same .num
        read2_, _, range2 = _read_setting(layout, shape, N, e, "_2")
        one = _read_cell(layout, shape, read1_, e, offset, wrong)
        two = _read_cell(layout, shape, read2_, e, offset, wrong)
        m, n = model.accumulator_element(layout, *one, N, offset)
        names = ("cta", "warp", "load", "thread", "register")
        found = {"N": N, "num": bv(1) << e, "lane_offset": offset, "lane": one[1], "column": one[2], "m": m, "n": n}
        found.update({f"{k}_1": v for k, v in zip(names, read1_)})
        found.update({f"{k}_2": v for k, v in zip(names, read2_)})
        return Query(found, ranges + legal1 + range1 + range2,
                     z3.Implies(z3.Or([x != y for x, y in zip(read1_, read2_)]),
                                z3.Or([x != y for x, y in zip(one, two)])))

    M = model.ACCUMULATOR_ROWS[layout]
    lanes = "32w + offset" if layout in model.HALF_DATAPATH_OFFSETS else "32w"
    sequence = (f"warp w in 0..3 (of each CTA) issues tcgen05.ld.{shape}.x(num) at lane {lanes}, columns "
                f"0, s, 2s, ... (s = the access's columns) across the layout's columns")
    domain = _acc_domain(layout) + f"; num = 2^e, .{shape}'s legal .num with s dividing the columns"
    if wrong:
        def replay(cx: dict) -> bool:
            from spec.tmem import accumulator, ld_st
            cells = []
            for i in (1, 2):
                lane0 = 32 * cx[f"warp_{i}"] - (32 if cx[f"warp_{i}"] == 3 else 0)
                column0 = cx[f"load_{i}"] * cx["num"]
                access = ld_st.TmemAccess("ld", shape, cx["num"], lane=lane0, column=column0, warp=cx[f"warp_{i}"])
                lane, column, _ = ld_st.fragment_map(shape, cx["num"])[cx[f"thread_{i}"]][2 * cx[f"register_{i}"]]
                cell = (lane0 + lane, column0 + column)
                if cell not in access.footprint():
                    return False
                cells.append(cell)
            reads = {tuple(cx[f"{k}_{i}"] for k in ("warp", "load", "thread", "register")) for i in (1, 2)}
            return (len(reads) == 2 and cells[0] == cells[1] == (cx["lane"], cx["column"])
                    and accumulator.d_cell(cx["m"], cx["n"], M, cx["N"]) == cells[0])

        prop(f"tmem.accumulator.read_once.{layout}.warp3_at_lane64",
             f"accumulator layout {layout}: the sequence with warp 3's address 32 lanes low (lane 64) still "
             f"reads no D element twice (false: warps 2 and 3 read the same lanes 64-95)",
             domain, ACCUMULATOR_SOURCE, "refuted", replay=replay, family=FAMILY,
             rules=_acc_rules(layout) + ("tmem.ld.fragment", "tmem.access.lane_quarter"))(once)
        return
    return [covered, every, once], sequence, domain


def _acc_read_once_all(layout: str):
    shapes = READ_SHAPES.get(layout, ("32x32b",))
    lemmas, texts = [], []
    for shape in shapes:
        builders, sequence, domain = _acc_read_once(layout, shape)
        lemmas.append(builders)
        texts.append(sequence)
    statement = (f"accumulator layout {layout}: the ld sequence reads every element of D exactly once (every "
                 f"read is of a D element, every element is read by the read the layouts' inverse names, no "
                 f"two reads share a cell); the sequence: " + "; or ".join(texts))
    prop(f"tmem.accumulator.read_once.{layout}", statement, domain if len(shapes) == 1 else
         _acc_domain(layout) + "; num = 2^e, each shape's legal .num with s dividing the columns",
         ACCUMULATOR_SOURCE, "proved", family=FAMILY, strategy=STRATEGY,
         rules=_acc_rules(layout) + ("tmem.ld.fragment", "tmem.ld.num", "tmem.access.lane_quarter"))(
        lambda: [build() for builders in lemmas for build in builders])


for _shape, _multicast in model.CP_ATOMS:
    _cp_multicast(_shape, _multicast)
for _fmt in model.CP_FORMATS:
    _cp_decompression(_fmt)
for _layout in model.ACCUMULATOR_ATOMS:
    _acc_injective(_layout)
    _acc_read_once_all(_layout)
_cp_multicast("64x128b", "warpx2::02_13", named_as="warpx2::01_23")
_acc_read_once("D", "32x32b", wrong=True)
