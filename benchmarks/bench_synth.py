"""Latency of descriptor synthesis (solver.synth.synthesize), against a brute-force search by spec/.

    python -m benchmarks.bench_synth [--json FILE] [--repeat N] [--bf-found N] [--bf-none N]

1. A deterministic grid of synth queries. CUTLASS-style tiles (tests/cute_tiles.spec_layout: a
   GMMA/UMMA layout atom repeated over the tile, mn-first or k-first) for sm90 and sm100; bf16, f16,
   tf32, e4m3, s8 (and e2m1, kind::mxf4, on sm100); every major and swizzle that Table 54 and the
   dtype rules allow; MN extents 64, 128, 256 where the atom fits; every K block (instruction K) of
   the tile; tile base addresses on and off the swizzle repeat boundary (one base per query, rotating
   through the three bases over the grid). Then non-canonical tiles that no descriptor reads (status
   "none" expected; any "found" is reported). Every query is one
   `synthesize(tile)` call timed with time.perf_counter (median of --repeat calls, default 1) after
   one untimed warm-up query; the report gives median, p90, p99 (nearest rank) and max, split by
   status, by number of elements read, by arch/major, swizzle and base, and the 5 slowest queries. Every "found"
   descriptor is then checked by spec's read map on every element (untimed), and, for the CUTLASS
   tiles, compared with the fields make_gmma_desc / make_umma_desc read off the tile.
2. Brute force in the same run, on a subset of the grid (found and none queries). The restricted
   space: for every legal swizzle, every start address in the 16 KiB window around the tile's first
   element (step 16), LBO and SBO in {16 * 2^i, i = 0..13} plus the values the tile implies, base
   offset 0..7 (0 only for no swizzle: rule desc.base_offset.no_swizzle, and the read map ignores it
   there). "Values the tile implies": for each legal swizzle and base offset, the differences between
   the un-swizzled target addresses of element (0,0) and of elements (2^a, 0) and (0, 2^b); the element
   pairs the read map ties LBO and SBO to are among them. A candidate is checked with spec's read map
   element by element, stopping at the first element that differs; a search stops at the first
   descriptor that reads every element (as synth does). Brute-force times include the set-up that
   synth's time includes too: the tile's target addresses (tile.targets()), and the implied values.
   - The plain loop checks every candidate that way. It is too slow for the restricted space (seconds
     to tens of seconds a query here), so it is MEASURED on a SHRUNK space: a 256-byte start window
     (16 starts, still holding element (0,0)'s 128-byte line), all else the same. Its time over the
     restricted space is EXTRAPOLATED (set-up + its measured time per candidate x the candidates the
     restricted search reaches).
   - The shortcut search is MEASURED on the restricted space: element (0,0) is read at swizzle(start)
     whatever LBO and SBO are, so it is checked once per (swizzle, base offset, start) and the LBO x SBO
     loop runs only where it passed: the same candidates and verdicts as the plain loop, fewer calls.
     The script re-checks the premise on sampled points.
   - Times for the full field space (2^14 starts x 2^14 LBO x 2^14 SBO x 8 base offsets per swizzle)
     are EXTRAPOLATED for both.
3. Agreement: synth and brute force must agree on found/none wherever the brute force is complete over
   the fields that matter (argument printed with the table); every disagreement is listed.

The machine this was written for has 2 noisy cores: compare the ratios printed by one run, not
absolute times across runs.
"""
from __future__ import annotations

import argparse
import gc
import json
import math
import os
import random
import sys
import time


from benchmarks.common import environment, fmt_ratio, fmt_s, human_duration, median, table
from solver.synth import descriptor as synth
from spec.mma import descriptor as spec_descriptor
from spec.mma import dtypes
from spec.mma import readmap
from spec.cute.layout import ComposedLayout, Layout
from spec.cute.notation import parse_layout
from spec.cute.swizzle import DESCRIPTOR_SWIZZLES

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from cute_tiles import SWIZZLE_BITS, cute_tile, cutlass_descriptor, spec_layout  # noqa: E402

MEDIAN_AIM_S = 0.020
P99_AIM_S = 0.200

ARCHES = ("sm90", "sm100")
DTYPE_NAMES = {"sm90": ("bf16", "f16", "tf32", "e4m3", "s8"),
               "sm100": ("bf16", "f16", "tf32", "e4m3", "s8", "e2m1")}
MN_EXTENTS = (64, 128, 256)
# (name, tile base address). 0x2000 sits on every repeat boundary (1024 B); 0x2180 is line-aligned
# but 3 lines past it; 0x2040 is 64 bytes into a 128-byte line.
BASES = (("aligned", 0x2000), ("off-repeat", 0x2180), ("off-line", 0x2040))
# The rules synth itself uses to exclude a swizzle for an operand (solver.synth._modes).
LEGALITY_RULES = ("operand.swizzle.table54", "operand.swizzle.k_major_atom32", "operand.mn_major.dtype",
                  "operand.sm90.dtype")
FIELD_BITS = 14
FULL_SPACE_PER_SWIZZLE = (1 << FIELD_BITS) ** 3 * 8       # start x LBO x SBO x base offset = 2^45
POW2_VALUES = tuple(16 << i for i in range(14))          # 16 .. 131072 = 2^17
ENCODABLE = 1 << 18


# --- small helpers (the style of bench_prove) ---------------------------------------------------------
def percentile(xs, p):
    """Nearest-rank percentile."""
    ys = sorted(xs)
    return ys[max(0, math.ceil(p / 100 * len(ys)) - 1)]


def ms(seconds: float) -> str:
    v = seconds * 1e3
    if v >= 100:
        return f"{v:.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def pow2_text(n: int) -> str:
    return f"2^{math.log2(n):.1f}" if n & (n - 1) else f"2^{n.bit_length() - 1}"


def legal_swizzles(arch: str, dtype_name: str, major: str) -> list:
    """The descriptor swizzles spec allows for this operand, in the arch's code order."""
    d = dtypes.dtype(dtype_name)
    kind = dtypes.default_kind(d)
    k = dtypes.default_instruction_k(d, kind)
    legal = []
    for name in spec_descriptor.swizzle_codes(arch):
        desc = spec_descriptor.encode(arch, 0, 16, 16, name, 0)
        op = readmap.Operand(desc, d, major, 8, k, kind)
        if not any(v.rule.id in LEGALITY_RULES for v in readmap.violations(op)):
            legal.append(name)
    return legal


def instruction_k(dtype_name: str) -> int:
    d = dtypes.dtype(dtype_name)
    return dtypes.default_instruction_k(d, dtypes.default_kind(d))


def cutlass_queries() -> list:
    queries = []
    for arch in ARCHES:
        for dtype_name in DTYPE_NAMES[arch]:
            bits = dtypes.dtype(dtype_name).bits
            k_inst = instruction_k(dtype_name)
            for major in ("K", "MN"):
                for swizzle in legal_swizzles(arch, dtype_name, major):
                    width = SWIZZLE_BITS[swizzle][3]
                    per_row = width * 8 // bits
                    atom_mn = 8 if major == "K" else per_row
                    atom_k = per_row if major == "K" else (4 if swizzle == "128B_atom32B" else 8)
                    # Two atoms (or two instructions) along K, so that k-first and mn-first differ.
                    k_tile = 2 * max(atom_k, k_inst)
                    for mn in MN_EXTENTS:
                        if mn % atom_mn:
                            continue
                        for order in ("mn-first", "k-first"):
                            k_first = order == "k-first"
                            layout = spec_layout(major, swizzle, dtype_name, mn, k_tile, k_first)
                            offset, _, _, atom_k2 = cute_tile(major, swizzle, dtype_name, mn, k_tile, k_first)
                            blocks = k_tile // k_inst
                            for block in range(blocks):
                                # one base per (tile, K block), rotating through BASES over the grid
                                base_name, base = BASES[len(queries) % len(BASES)]
                                queries.append({
                                    "family": "cutlass", "arch": arch, "dtype": dtype_name, "major": major,
                                    "swizzle": swizzle, "mn": mn, "k_tile": k_tile, "order": order,
                                    "k_block": block, "k_blocks": blocks, "k_offset": block * k_inst,
                                    "base_name": base_name, "base": base, "layout": layout,
                                    "cute": (offset, atom_k2)})
    return queries


def noncanonical_layouts(arch: str, dtype_name: str) -> list:
    """(name, major, MN, layout) tiles that no descriptor should read. Sizes in elements of dtype."""
    d = dtypes.dtype(dtype_name)
    T = 128 // d.bits                 # elements per 16-byte chunk (dense)
    R = 8 * T                         # elements per 128-byte row
    k_inst = instruction_k(dtype_name)
    mn = 64
    out = [
        # K-major rows 2 chunks (32 B) apart with no swizzle: the no-swizzle core matrix needs 16 B.
        ("K rows 32B apart, no swizzle", "K", mn, Layout((mn, 2 * T), (2 * T, 1))),
        # 128-byte K-major rows (the 128B atom) under a 64B swizzle.
        ("128B rows under Sw64B", "K", mn,
         ComposedLayout(DESCRIPTOR_SWIZZLES["64B"], 0, Layout(((8, mn // 8), R), ((R, 8 * R), 1)))),
        # Second K chunk 1032 bytes after the first (not a multiple of 16), no swizzle.
        ("K chunk stride 1032B", "K", mn,
         Layout(((8, mn // 8), (T, 2)), ((T, 8 * T), (1, 1032 * 8 // d.bits)))),
        # 128-byte rows padded to 144 bytes under the 128B swizzle.
        ("128B rows padded to 144B", "K", mn,
         ComposedLayout(DESCRIPTOR_SWIZZLES["128B"], 0, Layout((mn, R), (R + T, 1)))),
    ]
    if legal_swizzles(arch, dtype_name, "MN") and d.bits < 32:
        # MN-major, K rows 128 B apart and no swizzle: no descriptor puts K rows 128 B apart unswizzled.
        out.append(("MN-major K rows 128B apart, no swizzle", "MN", mn,
                    Layout((mn, k_inst), (1, max(mn, R)))))
    if arch == "sm100" and dtype_name == "tf32":
        # 32-bit MN-major in a 128B layout: Table 54 allows only 128B_atom32B.
        out.append(("tf32 MN-major under Sw128B (Table 54)", "MN", mn,
                    parse_layout("Sw<3,4,3> o ((32,2),(8,1)):((1,256),(32,0))")))
    return out


def noncanonical_queries() -> list:
    queries = []
    for arch in ARCHES:
        for dtype_name in DTYPE_NAMES[arch]:
            if dtype_name == "e2m1":
                continue                       # dense 4-bit: the 16-byte-chunk arithmetic above is for >= 8 bits
            for name, major, mn, layout in noncanonical_layouts(arch, dtype_name):
                for base_name, base in BASES[:2]:
                    queries.append({"family": "non-canonical", "arch": arch, "dtype": dtype_name,
                                    "major": major, "swizzle": name, "mn": mn,
                                    "k_tile": None, "order": "-", "k_block": 0, "k_blocks": 1, "k_offset": 0,
                                    "base_name": base_name, "base": base, "layout": layout, "cute": None})
    return queries


def make_tile(q: dict):
    return synth.make_tile(q["arch"], q["dtype"], q["major"], q["mn"], q["layout"], q["base"],
                           k_offset=q["k_offset"])


def describe(q: dict) -> str:
    if q["family"] == "cutlass":
        return (f"{q['arch']} {q['dtype']} {q['major']} {q['swizzle']} MN{q['mn']} K{q['k_tile']} "
                f"{q['order']} blk{q['k_block']}/{q['k_blocks']} {q['base_name']}")
    return f"{q['arch']} {q['dtype']} {q['major']} [{q['swizzle']}] MN{q['mn']} {q['base_name']}"


def time_synth(tile, repeat: int):
    times, outcome = [], None
    for _ in range(repeat):
        gc.collect()
        began = time.perf_counter()
        outcome = synth.synthesize(tile)
        times.append(time.perf_counter() - began)
    return outcome, times


def reads_tile(tile, desc) -> bool:
    op = readmap.make_operand(desc, tile.dtype, tile.major, tile.mn, tile.k, tile.kind)
    return readmap.read_addresses(op) == tile.targets()


def cutlass_fields_match(q: dict, tile, outcome) -> bool:
    """synth's fields equal make_*_desc's, except fields the read ignores (as tests/solver_tests/synth/test_synth.py)."""
    offset, atom_k = q["cute"]
    bits = dtypes.dtype(q["dtype"]).bits
    start = q["base"] + offset(0, q["k_offset"]) * bits // 8
    expected = cutlass_descriptor(q["arch"], q["major"], q["swizzle"], q["dtype"], offset, start, atom_k)
    got = outcome.descriptor
    if got.swizzle != q["swizzle"] or got.base_offset != 0:
        return False
    return all(getattr(got, f) == getattr(expected, f) for f in
               ("start_address", "leading_byte_offset", "stride_byte_offset") if f not in outcome.ignored)


def bench_grid(queries: list, repeat: int) -> dict:
    warm = make_tile(queries[0])
    synth.synthesize(warm)                         # untimed: Z3 context, imports, caches
    rows = []
    for i, q in enumerate(queries):
        tile = make_tile(q)
        outcome, times = time_synth(tile, repeat)
        row = {"index": i, "query": describe(q), "family": q["family"], "arch": q["arch"], "dtype": q["dtype"],
               "major": q["major"], "swizzle": q["swizzle"], "mn": q["mn"], "k": tile.k,
               "k_offset": q["k_offset"], "base": q["base"], "order": q["order"],
               "elements": tile.mn * tile.k, "layout": q["layout"].notation(),
               "seconds": times, "median_s": median(times), "status": outcome.status,
               "descriptor": outcome.descriptor.hex if outcome.descriptor else None,
               "swizzle_found": outcome.descriptor.swizzle if outcome.descriptor else None}
        if outcome.status == "found":
            row["spec_confirms"] = reads_tile(tile, outcome.descriptor)
            if q["family"] == "cutlass":
                row["cutlass_match"] = cutlass_fields_match(q, tile, outcome)
        rows.append(row)
    # Where the time of the slowest queries goes (untimed by the grid): building the targets (one
    # layout evaluation per element) and one pass of spec's read map over every element.
    for row in sorted(rows, key=lambda r: -r["median_s"])[:5]:
        tile = make_tile(queries[row["index"]])
        gc.collect()
        began = time.perf_counter()
        targets = tile.targets()
        row["targets_s"] = time.perf_counter() - began
        if row["descriptor"]:
            desc = spec_descriptor.decode(tile.arch, int(row["descriptor"], 16))
            op = readmap.make_operand(desc, tile.dtype, tile.major, tile.mn, tile.k, tile.kind)
            began = time.perf_counter()
            assert readmap.read_addresses(op) == targets
            row["spec_pass_s"] = time.perf_counter() - began
    return {"repeat": repeat, "queries": rows}


def stats_row(label: str, rows: list) -> tuple:
    if not rows:
        return (label, 0, "-", "-", "-", "-", "-")
    xs = [r["median_s"] for r in rows]
    return (label, len(xs), ms(median(xs)), ms(percentile(xs, 90)), ms(percentile(xs, 99)), ms(max(xs)),
            ms(sum(xs) / len(xs)))


def print_grid(g: dict) -> None:
    rows = g["queries"]
    found = [r for r in rows if r["status"] == "found"]
    none = [r for r in rows if r["status"] == "none"]
    other = [r for r in rows if r["status"] not in ("found", "none")]
    cut = [r for r in rows if r["family"] == "cutlass"]
    nonc = [r for r in rows if r["family"] == "non-canonical"]
    print(f"== 1. synth latency: {len(rows)} queries ({len(cut)} CUTLASS-style tiles, {len(nonc)} "
          f"non-canonical), synthesize() per query, median of {g['repeat']} call(s), ms ==")
    headers = ("queries", "n", "median", "p90", "p99", "max", "mean")
    body = [stats_row("all", rows), stats_row("status found", found), stats_row("status none", none)]
    if other:
        body.append(stats_row("other status", other))
    body += [stats_row("CUTLASS-style tiles", cut), stats_row("non-canonical tiles", nonc)]
    print(table(headers, body))
    xs = [r["median_s"] for r in rows]
    med, p99 = median(xs), percentile(xs, 99)
    print(f"aim median < {MEDIAN_AIM_S * 1e3:g} ms: {'met' if med < MEDIAN_AIM_S else 'NOT met'} "
          f"({ms(med)} ms); aim p99 < {P99_AIM_S * 1e3:g} ms: {'met' if p99 < P99_AIM_S else 'NOT met'} "
          f"({ms(p99)} ms)")
    print()
    print("by elements read (MN x instruction K):")
    buckets = sorted({r["elements"] for r in rows})
    print(table(headers, [stats_row(str(b), [r for r in rows if r["elements"] == b]) for b in buckets]))
    print()
    print("by arch and major (CUTLASS-style tiles):")
    groups = [(a, m) for a in ARCHES for m in ("K", "MN")]
    print(table(headers, [stats_row(f"{a} {m}-major", [r for r in cut if r["arch"] == a and r["major"] == m])
                          for a, m in groups]))
    print()
    print("by tile swizzle (CUTLASS-style tiles):")
    names = [s for s in SWIZZLE_BITS if any(r["swizzle"] == s for r in cut)]
    print(table(headers, [stats_row(s, [r for r in cut if r["swizzle"] == s]) for s in names]))
    print()
    print("by tile base address:")
    print(table(headers, [stats_row(f"{n} {b:#x}", [r for r in rows if r["base"] == b]) for n, b in BASES]))
    print()
    print("slowest 5 queries:")
    slow = sorted(rows, key=lambda r: -r["median_s"])[:5]
    print(table(("ms", "status", "elements", "targets ms", "one spec pass ms", "query"),
                [(ms(r["median_s"]), r["status"], r["elements"], ms(r["targets_s"]),
                  ms(r["spec_pass_s"]) if "spec_pass_s" in r else "-", r["query"]) for r in slow]))
    print("targets ms: tile.targets() (every element's address from the layout); one spec pass ms: "
          "read_addresses() of synth's descriptor over every element (both untimed by the grid)")
    print()
    confirmed = sum(1 for r in found if r.get("spec_confirms"))
    print(f"found descriptors that spec's read map confirms on every element (untimed): {confirmed} of {len(found)}")
    cut_found = [r for r in cut if r["status"] == "found"]
    matched = sum(1 for r in cut_found if r.get("cutlass_match"))
    print(f"CUTLASS-style tiles: found {len(cut_found)} of {len(cut)}; fields equal to make_*_desc's "
          f"(start, LBO, SBO where not ignored; same swizzle; base offset 0): {matched} of {len(cut_found)}")
    for r in [r for r in cut if r["status"] != "found"][:10]:
        print(f"  CUTLASS-style tile without descriptor: {r['query']}")
    for r in [r for r in cut_found if not r.get("cutlass_match")][:10]:
        print(f"  fields differ from make_*_desc: {r['query']}: {r['descriptor']}")
    nonc_found = [r for r in nonc if r["status"] != "none"]
    print(f"non-canonical tiles with status none: {len(nonc) - len(nonc_found)} of {len(nonc)}")
    for r in nonc_found:
        print(f"  non-canonical tile with status {r['status']}: {r['query']} {r['layout']} -> {r['descriptor']}")


# --- 2. brute force -------------------------------------------------------------------------------------
def unswizzle(swizzle: str, address: int, base_offset: int) -> int:
    """The linear address whose swizzled image is `address` (the XOR leaves bits >= 7, the phase, alone)."""
    return readmap.apply_swizzle(swizzle, 0, address, base_offset)


def base_offsets(swizzle: str) -> range:
    return range(1) if swizzle == "none" else range(8)


def implied_values(tile, targets: list, swizzles: list) -> set:
    """Un-swizzled address differences between element (0,0) and elements (2^a, 0), (0, 2^b), for every
    legal swizzle and base offset, where encodable (0 <= v < 2^18, a multiple of 16)."""
    t00 = targets[0][0]
    pairs = [(1 << a, 0) for a in range(tile.mn.bit_length()) if (1 << a) < tile.mn] + \
            [(0, 1 << b) for b in range(tile.k.bit_length()) if (1 << b) < tile.k]
    implied = set()
    for sw in swizzles:
        for b in base_offsets(sw):
            origin = unswizzle(sw, t00, b)
            for mn, k in pairs:
                v = unswizzle(sw, targets[mn][k], b) - origin
                if 0 <= v < ENCODABLE and v % 16 == 0:
                    implied.add(v)
    return implied


def search_space(tile, targets: list, window: int) -> dict:
    swizzles = legal_swizzles(tile.arch, tile.dtype, tile.major)
    t00 = targets[0][0]
    low = max(0, (t00 - window // 2) // 16 * 16)
    high = min(ENCODABLE, low + window)
    low = max(0, high - window)
    starts = list(range(low, high, 16))
    implied = implied_values(tile, targets, swizzles)
    values = sorted(set(POW2_VALUES) | implied)
    size = sum(len(starts) * len(values) ** 2 * len(base_offsets(sw)) for sw in swizzles)
    return {"window": window, "swizzles": swizzles, "starts": starts, "values": values,
            "implied": sorted(implied - set(POW2_VALUES)), "size": size,
            "full_size": len(swizzles) * FULL_SPACE_PER_SWIZZLE, "t00_line": t00 // 128 * 128}


def _operand(tile, d, sw, start, lbo, sbo, b, lbo_mode):
    desc = spec_descriptor.Descriptor(tile.arch, start, lbo, sbo, b, sw, lbo_mode)
    return readmap.Operand(desc, d, tile.major, tile.mn, tile.k, tile.kind)


def brute_force(tile, window: int, shortcut: bool) -> dict:
    """Loop swizzle > base offset > start > LBO > SBO; check each candidate with spec's read map
    element by element ((0,0), (0,1), ... row by row), stopping at the first element that differs;
    stop at the first candidate that reads every element. With `shortcut`, element (0,0) is checked
    once per (swizzle, base offset, start) and the LBO x SBO loop skipped where it is wrong (its
    address does not depend on LBO or SBO): the same candidates, the same verdicts, fewer calls.
    The time includes what synth's time includes: the tile's target addresses (tile.targets()),
    and building the space (the implied LBO/SBO values)."""
    gc.collect()
    began = time.perf_counter()
    targets = tile.targets()
    space = search_space(tile, targets, window)
    setup_s = time.perf_counter() - began
    d = dtypes.dtype(tile.dtype)
    lbo_mode = None if tile.arch == "sm90" else "relative"
    flat = [(mn, k, targets[mn][k]) for mn in range(tile.mn) for k in range(tile.k)]
    t00 = targets[0][0]
    element = readmap.element_address
    values, starts = space["values"], space["starts"]
    probe = values[0]
    checks00 = survivors = inner = 0
    inner_s = 0.0
    found = None
    for sw in space["swizzles"]:
        for b in base_offsets(sw):
            for start in starts:
                if shortcut:
                    checks00 += 1
                    if element(_operand(tile, d, sw, start, probe, probe, b, lbo_mode), 0, 0) != t00:
                        continue
                    survivors += 1
                    t_in = time.perf_counter()
                for lbo in values:
                    for sbo in values:
                        inner += 1
                        op = _operand(tile, d, sw, start, lbo, sbo, b, lbo_mode)
                        for mn, k, t in flat:
                            if element(op, mn, k) != t:
                                break
                        else:
                            found = spec_descriptor.encode(tile.arch, start, lbo, sbo, sw, b, lbo_mode)
                            break
                    if found:
                        break
                if shortcut:
                    inner_s += time.perf_counter() - t_in
                if found:
                    break
            if found:
                break
        if found:
            break
    total = time.perf_counter() - began
    reached = (checks00 - survivors) * len(values) ** 2 + inner if shortcut else inner
    return {"seconds": total, "setup_s": setup_s, "found": found, "checks00": checks00, "survivors": survivors,
            "inner_candidates": inner, "inner_s": inner_s, "outer_s": total - setup_s - inner_s,
            "candidates_reached": reached, "space": space, "targets": targets}


def shortcut_violations(tile, space: dict, rng: random.Random, points: int = 24) -> int:
    """Re-check the shortcut's premise: element (0,0)'s address does not depend on LBO or SBO."""
    d = dtypes.dtype(tile.dtype)
    lbo_mode = None if tile.arch == "sm90" else "relative"
    bad = 0
    for _ in range(points):
        sw = rng.choice(space["swizzles"])
        b, start = rng.choice(base_offsets(sw)), rng.choice(space["starts"])
        seen = {readmap.element_address(_operand(tile, d, sw, start, rng.choice(space["values"]),
                                                 rng.choice(space["values"]), b, lbo_mode), 0, 0)
                for _ in range(4)}
        seen.add(readmap.element_address(_operand(tile, d, sw, start, space["values"][0],
                                                  space["values"][0], b, lbo_mode), 0, 0))
        bad += len(seen) > 1
    return bad


def completeness(tile, space: dict) -> tuple:
    """(complete?, why not). See print_agreement for the argument."""
    line = space["t00_line"]
    if not (space["starts"][0] <= line and line + 112 <= space["starts"][-1]):
        return False, f"the {space['window']} B start window does not hold element (0,0)'s line"
    if tile.arch not in ("sm90", "sm100"):
        return False, "absolute LBO mode not searched"
    return True, ""


def pick_subset(rows: list, n_found: int, n_none: int) -> list:
    found = [r for r in rows if r["status"] == "found"]
    none = [r for r in rows if r["status"] != "found"]

    def spread(xs, n):
        if n >= len(xs):
            return xs
        return [xs[(i * len(xs)) // n] for i in range(n)]
    return sorted(spread(found, n_found) + spread(none, n_none), key=lambda r: r["index"])


def bench_brute(queries: list, grid_rows: list, n_found: int, n_none: int, window: int, plain_window: int,
                repeat: int, seed: int) -> dict:
    chosen = pick_subset(grid_rows, n_found, n_none)
    out = []
    for row in chosen:
        q = queries[row["index"]]
        tile = make_tile(q)
        rng = random.Random(seed * 1000003 + row["index"])
        # back to back on the same tile: synth, the plain loop (shrunk window), the shortcut search
        outcome, synth_times = time_synth(tile, repeat)
        plain = brute_force(tile, plain_window, shortcut=False)
        short = brute_force(tile, window, shortcut=True)
        small, space = plain["space"], short["space"]
        # per candidate: the search itself, without the set-up (targets, implied values)
        per_candidate = (plain["seconds"] - plain["setup_s"]) / max(1, plain["candidates_reached"])
        synth_desc = outcome.descriptor
        synth_in_space = None
        if synth_desc is not None:
            synth_in_space = (synth_desc.swizzle in space["swizzles"]
                              and synth_desc.start_address in space["starts"]
                              and synth_desc.leading_byte_offset in space["values"]
                              and synth_desc.stride_byte_offset in space["values"])
        c00 = short["outer_s"] / max(1, short["checks00"])    # outer_s leaves out the set-up
        c_in = short["inner_s"] / short["inner_candidates"] if short["inner_candidates"] else None
        # The shortcut search over the full field space: every start and base offset gets the (0,0)
        # check; the starts that pass lie in element (0,0)'s 128-byte line (see print_agreement), so
        # they are the survivors this window saw, each with 2^28 LBO x SBO candidates. Found queries
        # stopped at the first hit, so their survivors are undercounted: a lower bound there.
        full_shortcut = None
        if c_in is not None:
            full_shortcut = (short["setup_s"]
                             + sum(len(base_offsets(sw)) for sw in space["swizzles"]) * (1 << FIELD_BITS) * c00
                             + short["survivors"] * (1 << (2 * FIELD_BITS)) * c_in)
        complete_small, why_small = completeness(tile, small)
        complete, why = completeness(tile, space)
        out.append({
            "index": row["index"], "query": row["query"], "family": row["family"], "elements": row["elements"],
            "synth_status": outcome.status, "synth_s": median(synth_times),
            "synth_descriptor": synth_desc.hex if synth_desc else None, "synth_in_space": synth_in_space,
            "swizzles": space["swizzles"], "values": len(space["values"]), "implied_extra": space["implied"],
            "plain_starts": len(small["starts"]), "plain_space": small["size"],
            "plain_status": "found" if plain["found"] else "none",
            "plain_descriptor": plain["found"].hex if plain["found"] else None,
            "plain_s": plain["seconds"], "plain_candidates": plain["candidates_reached"],
            "plain_per_candidate_s": per_candidate, "plain_complete": complete_small,
            "plain_incomplete_why": why_small,
            "starts": len(space["starts"]), "space_size": space["size"], "full_size": space["full_size"],
            "shortcut_status": "found" if short["found"] else "none",
            "shortcut_descriptor": short["found"].hex if short["found"] else None,
            "shortcut_s": short["seconds"], "checks00": short["checks00"], "survivors": short["survivors"],
            "inner_candidates": short["inner_candidates"], "candidates_reached": short["candidates_reached"],
            "complete": complete, "incomplete_why": why,
            "setup_s": short["setup_s"],
            "plain_restricted_s": plain["setup_s"] + per_candidate * short["candidates_reached"],
            "plain_full_s": plain["setup_s"] + per_candidate * space["full_size"],
            "shortcut_full_s": full_shortcut,
            "shortcut_violations": shortcut_violations(tile, space, rng),
            "spec_confirms": all(reads_tile(tile, spec_descriptor.decode(tile.arch, int(h, 16)))
                                 for h in (plain["found"] and plain["found"].hex,
                                           short["found"] and short["found"].hex) if h)})
    return {"window": window, "plain_window": plain_window, "queries": out}


def print_brute(b: dict) -> None:
    rows = b["queries"]
    print(f"== 2. brute force by spec's read map on {len(rows)} queries of the grid, in the same run "
          f"(per query, back to back: synth, plain loop, shortcut search) ==")
    print(f"restricted space per query: each legal swizzle x start in the {b['window'] // 1024} KiB window around "
          f"element (0,0), step 16 ({rows[0]['starts']} starts) x LBO, SBO in {{16*2^i, i=0..13}} + the values "
          f"the tile implies x base offset 0..7 (0 for no swizzle). Every search stops at the first descriptor "
          f"that reads every element.")
    print(f"plain loop: every candidate checked by spec from element (0,0) on; too slow for the restricted space "
          f"(see the EXTRAPOLATED column), so it is measured on a SHRUNK space: start window {b['plain_window']} B "
          f"({rows[0]['plain_starts']} starts, still holding element (0,0)'s 128-byte line), everything else the same.")
    print("shortcut search: the restricted space, element (0,0) checked once per (swizzle, base offset, start).")
    body = []
    for r in rows:
        sw = "".join({"none": "n", "32B": "3", "64B": "6", "128B": "1", "128B_atom32B": "a"}[s] for s in r["swizzles"])
        body.append((r["index"], r["query"], r["elements"], sw, r["values"], pow2_text(r["space_size"]),
                     r["synth_status"], r["plain_status"], r["shortcut_status"], ms(r["synth_s"]),
                     ms(r["plain_s"]), fmt_ratio(r["plain_s"] / r["synth_s"]), ms(r["shortcut_s"]),
                     fmt_ratio(r["shortcut_s"] / r["synth_s"]), f"{r['plain_restricted_s']:.3g}"))
    print(table(("#", "query", "elems", "sw", "|LBO|", "space", "synth", "plain", "short", "synth ms",
                 "plain ms", "plain/synth", "short ms", "short/synth", "plain, restricted s (EXTRAP.)"), body))
    print("sw: swizzles searched (n none, 3 32B, 6 64B, 1 128B, a 128B_atom32B); |LBO|: values of LBO (= of SBO); "
          "space: restricted candidates; plain ms: shrunk space, measured; every brute-force time includes its "
          "set-up (tile.targets() and the implied values), as synth's includes targets(); last column: set-up + "
          "the plain loop's measured time per candidate x the candidates the restricted search reaches (EXTRAPOLATED)")
    print()

    def split(label, sel):
        if not sel:
            return (label, 0) + ("-",) * 6
        return (label, len(sel), ms(median([r["synth_s"] for r in sel])), ms(median([r["plain_s"] for r in sel])),
                ms(median([r["shortcut_s"] for r in sel])),
                fmt_ratio(median([r["plain_s"] / r["synth_s"] for r in sel])),
                fmt_ratio(median([r["shortcut_s"] / r["synth_s"] for r in sel])),
                fmt_ratio(median([r["plain_restricted_s"] / r["synth_s"] for r in sel])))
    print(table(("queries", "n", "synth ms", "plain ms (shrunk)", "shortcut ms (restricted)", "plain/synth",
                 "shortcut/synth", "plain, restricted / synth (EXTRAP.)"),
                [split("all", rows), split("synth found", [r for r in rows if r["synth_status"] == "found"]),
                 split("synth none", [r for r in rows if r["synth_status"] != "found"])]))
    print("(medians over the queries; ratios are medians of per-query ratios)")
    synth_med = median([r["synth_s"] for r in rows])
    for label, key in (("plain loop, shrunk space", "plain_s"), ("shortcut search, restricted space", "shortcut_s")):
        ratios = [r[key] / r["synth_s"] for r in rows]
        med = median([r[key] for r in rows])
        print(f"speed-up of synth over the {label} (measured): median per-query {fmt_ratio(median(ratios))} "
              f"(range {fmt_ratio(min(ratios))} .. {fmt_ratio(max(ratios))}); ratio of medians "
              f"{fmt_ratio(med / synth_med)} ({ms(med)} ms / {ms(synth_med)} ms)")
    sizes = [r["space_size"] for r in rows]
    fraction = [r["space_size"] / r["full_size"] for r in rows]
    print(f"restricted space: median {pow2_text(int(median(sizes)))} candidates per query ({min(sizes):,} .. "
          f"{max(sizes):,}); shrunk space: median {pow2_text(int(median([r['plain_space'] for r in rows])))}; "
          f"full field space: 2^14 starts x 2^14 LBO x 2^14 SBO x 8 base offsets = 2^45 per swizzle, "
          f"{pow2_text(int(median([r['full_size'] for r in rows])))} per query (median); the restricted space is "
          f"{median(fraction):.2g} of the full space (median)")
    reached = [r["candidates_reached"] / r["space_size"] for r in rows if r["shortcut_status"] == "found"]
    if reached:
        print(f"found queries: the restricted search stopped after a median {median(reached):.1%} of the "
              "restricted space (candidates before the hit, those skipped by the shortcut included)")
    per = [r["plain_per_candidate_s"] for r in rows]
    print(f"plain loop, measured time per candidate (set-up left out): median {median(per) * 1e6:.2f} us "
          f"({min(per) * 1e6:.2f} .. {max(per) * 1e6:.2f}); set-up (targets + implied values): median "
          f"{ms(median([r['setup_s'] for r in rows]))} ms")
    pr = [r["plain_restricted_s"] for r in rows]
    pr_ratio = median([r["plain_restricted_s"] / r["synth_s"] for r in rows])
    print(f"EXTRAPOLATED plain loop over the restricted space: median {fmt_s(median(pr))} s per query "
          f"({human_duration(median(pr))}), {fmt_ratio(pr_ratio)} synth's time (median per-query ratio)")
    pf = [r["plain_full_s"] for r in rows]
    pf_ratio = median([r["plain_full_s"] / r["synth_s"] for r in rows])
    print(f"EXTRAPOLATED plain loop over the full field space (every candidate): median {median(pf):.3g} s per "
          f"query ({human_duration(median(pf))}), {fmt_ratio(pf_ratio)} synth's time")
    sf = [r["shortcut_full_s"] for r in rows if r["shortcut_full_s"] is not None]
    if sf:
        print(f"EXTRAPOLATED shortcut search over the full field space (each start and base offset gets the (0,0) "
              f"check, each start that passes 2^28 LBO x SBO candidates): median {median(sf):.3g} s per query "
              f"({human_duration(median(sf))}; a lower bound for found queries, which stop at the first hit)")
    viol = sum(r["shortcut_violations"] for r in rows)
    print(f"shortcut premise re-checked on {24 * len(rows)} sampled (swizzle, base offset, start) points x 5 "
          f"(LBO, SBO) each: element (0,0) moved with LBO/SBO at {viol} of them")
    with_found = [r for r in rows if r["plain_descriptor"] or r["shortcut_descriptor"]]
    print(f"brute-force descriptors re-checked by spec (read_addresses == targets): "
          f"{sum(1 for r in with_found if r['spec_confirms'])} of {len(with_found)} queries")


def print_agreement(b: dict) -> None:
    rows = b["queries"]
    print("== 3. synth vs brute force: found/none where the brute force is complete over the fields that matter ==")
    print("complete when: (a) the start window holds element (0,0)'s 128-byte line: in relative LBO mode element "
          "(0,0) is read at swizzle(start), and every descriptor swizzle changes address bits 4..6 only, so a "
          "start outside that line cannot read it; (b) LBO and SBO run over every encodable un-swizzled "
          "difference between element (0,0) and elements (2^a,0), (0,2^b), for each legal swizzle and base "
          "offset: the element pairs the read map ties LBO and SBO to (K-major: (8,0), (0,T); MN-major: (T,0) "
          "or (T*W/16,0), (0,8) or (0,4)) are among them, and a value outside [0, 2^18) or not a multiple of 16 "
          "cannot be encoded; (c) base offset and swizzle run over all their values (sm90/sm100: relative LBO "
          "mode, as synth, which excludes absolute mode off sm103). (a) is checked per query; (b), (c) hold by "
          "construction.")
    for key, label in (("plain", f"plain loop, {b['plain_window']} B window"),
                       ("shortcut", f"shortcut search, {b['window'] // 1024} KiB window")):
        complete_key = "plain_complete" if key == "plain" else "complete"
        why_key = "plain_incomplete_why" if key == "plain" else "incomplete_why"
        complete = [r for r in rows if r[complete_key]]
        print(f"-- {label}: complete on {len(complete)} of {len(rows)} queries")
        for r in rows:
            if not r[complete_key]:
                print(f"  not complete: #{r['index']} {r['query']}: {r[why_key]}")
        cells = {}
        for r in complete:
            cell = (r["synth_status"], r[f"{key}_status"])
            cells[cell] = cells.get(cell, 0) + 1
        print(table(("", "brute found", "brute none"),
                    [(f"synth {s}", cells.get((s, "found"), 0), cells.get((s, "none"), 0)) for s in ("found", "none")]))
        disagree = [r for r in complete if r["synth_status"] != r[f"{key}_status"]]
        print(f"disagreements: {len(disagree)}")
        for r in disagree:
            print(f"  #{r['index']} {r['query']}: synth {r['synth_status']} {r['synth_descriptor'] or ''}, "
                  f"brute {r[key + '_status']} {r[key + '_descriptor'] or ''}")
        same = sum(1 for r in complete if r["synth_descriptor"] and r["synth_descriptor"] == r[f"{key}_descriptor"])
        both = sum(1 for r in complete if r["synth_status"] == r[f"{key}_status"] == "found")
        print(f"found by both: {both}, of which the same 64-bit descriptor: {same} (several descriptors can "
              "read one tile; the searches go in different orders)")
    inside = [r for r in rows if r["synth_in_space"] is not None]
    print(f"synth's descriptor lies inside the restricted space: {sum(1 for r in inside if r['synth_in_space'])} "
          f"of {len(inside)}")


# --- main ---------------------------------------------------------------------------------------------------
def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_synth", description=__doc__.split("\n")[0])
    parser.add_argument("--json", metavar="FILE", help="also write the raw numbers to FILE")
    parser.add_argument("--repeat", type=int, default=1, help="synthesize() calls per query, median reported "
                        "(default 1)")
    parser.add_argument("--every", type=int, default=1, help="time only every N-th query of the grid (default 1: "
                        "all; for quick checks)")
    parser.add_argument("--bf-found", type=int, default=32, help="found queries in the brute-force subset (32)")
    parser.add_argument("--bf-none", type=int, default=12, help="none queries in the brute-force subset (12)")
    parser.add_argument("--window", type=int, default=16384, help="start-address window of the restricted "
                        "space, bytes (16384)")
    parser.add_argument("--plain-window", type=int, default=256, help="start-address window of the plain "
                        "loop's shrunk space, bytes (256)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the premise re-check sampling (1)")
    parser.add_argument("--skip-brute", action="store_true", help="leave out sections 2 and 3")
    args = parser.parse_args(argv)
    if args.repeat < 1 or args.every < 1:
        parser.error("--repeat and --every must be >= 1")
    for w in (args.window, args.plain_window):
        if w < 256 or w % 16:
            parser.error("windows are multiples of 16, >= 256 (two 128-byte lines)")

    began = time.perf_counter()
    given = argv if argv is not None else sys.argv[1:]
    report = {"command": "python -m benchmarks.bench_synth " + " ".join(given), "environment": environment()}
    env = report["environment"]
    print(f"machine: nproc {env['nproc']} (affinity {env['sched_getaffinity']}), python {env['python']}, "
          f"z3 {env['z3']}, {env['platform']}")
    queries = cutlass_queries() + noncanonical_queries()
    queries = queries[::args.every]
    print(f"grid: {len(queries)} queries; ratios compare times measured in this run\n")
    report["grid"] = bench_grid(queries, args.repeat)
    print_grid(report["grid"])
    print()
    if not args.skip_brute:
        report["brute"] = bench_brute(queries, report["grid"]["queries"], args.bf_found, args.bf_none,
                                      args.window, args.plain_window, args.repeat, args.seed)
        print_brute(report["brute"])
        print()
        print_agreement(report["brute"])
        print()
    report["benchmark_wall_s"] = time.perf_counter() - began
    print(f"benchmark wall time: {report['benchmark_wall_s']:.1f} s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1, default=str)
            f.write("\n")
        print(f"raw numbers: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
