"""One figure per command that shows where things go (`--svg FILE` / `--png FILE`): desc addresses,
tma place, im2col, check, recipe and scales map. Each takes what spec/ computed (addresses per element)
and only arranges it; tests/cli_tests/test_pictures.py reads the SVG back and compares every cell with spec.

Every size a command accepts is drawn: past the budget of solver.pictures.figure, a panel draws its first
rows and columns and says so ("showing rows 0-63 of 4096"). Only the elements drawn are named and
coloured, so a picture of a million-element read costs about what one of a few thousand does."""
from __future__ import annotations

from typing import List, Sequence

from solver.pictures.figure import (CHUNK_COLOURS, HALO, MAX_COLUMNS, MAX_GRID_WIDTH, MAX_ROWS, MISMATCH, PANEL_ROWS,
                                    Cell, Figure, Panel, chunk_colour, chunk_legend, fit_columns, logical_chunk,
                                    palette, window)
from solver.pictures.grids import logical_panel, memory_panel

MAX_STEPS = 4                # k-steps a recipe draws (each one more panel)
RECIPE_LINES = 32            # shared-memory lines a recipe draws above its k-steps (4 periods of a 128B swizzle)


def _stacked(title: str, caption: List[str], panels: List[Panel], legend: list) -> Figure:
    """Panels one above the other, each cut to the figure's width."""
    return Figure(title, [fit_columns(p, MAX_GRID_WIDTH) for p in panels], legend, caption)


def _side_by_side(title: str, caption: List[str], panels: List[Panel], legend: list) -> Figure:
    """Panels next to each other, sharing the figure's width."""
    width = MAX_GRID_WIDTH // len(panels)
    return Figure(title, [fit_columns(p, width) for p in panels], legend, caption, side_by_side=True)


def _chunk_fill(position: int, element_bits: int) -> str:
    """The colour of the 16-byte chunk of its row an element at `position` along the row fills unswizzled."""
    return CHUNK_COLOURS[logical_chunk(position, element_bits)]


def _misread_line(count: int, total: int, first) -> str:
    """A caption line: how many elements are misread, and the first, which may lie outside what is drawn."""
    if not count:
        return f"all {total} elements read where they are"
    return f"{count} of {total} elements misread (outlined red where drawn); the first is (mn={first[0]}, k={first[1]})"


MEMORY_TITLE = ("shared memory: the element that starts each 16-byte chunk, coloured by the chunk of its row it "
                "fills unswizzled")


def desc_addresses(title: str, caption: List[str], addresses: Sequence[Sequence[int]], element_bytes: int,
                   major: str = "K") -> Figure:
    """addresses[mn][k]: the byte each element is read from (spec.mma.readmap); major: the operand's
    (K: k runs along a row of shared memory, MN: mn does), which the shared-memory map's colours follow."""
    mn, k = len(addresses), len(addresses[0]) if addresses else 0
    grid = logical_panel("what the descriptor reads: (mn, k) -> byte address, coloured by 16-byte chunk",
                         mn, k, lambda r, c: addresses[r][c], lambda r, c: f"(mn={r}, k={c})", "mn", "k",
                         PANEL_ROWS)
    flat = [a for row in addresses for a in row]
    along = (lambda i: i % k) if major == "K" else (lambda i: i // k)
    memory = memory_panel(MEMORY_TITLE, flat, 8 * element_bytes, lambda i: f"({i // k},{i % k})",
                          lambda i: _chunk_fill(along(i), 8 * element_bytes), PANEL_ROWS)
    return _stacked(title, caption, [grid, memory], chunk_legend())


def _box_coordinate(box: Sequence[int], n: int) -> str:
    """'(i0,i1,...)' of box element n, dimension 0 fastest."""
    rest, out = n, []
    for d in box:
        out.append(rest % d)
        rest //= d
    return "(" + ",".join(map(str, out)) + ")"


def tma_place(title: str, caption: List[str], box: Sequence[int], offsets: Sequence[int], element_bytes: int) -> Figure:
    """offsets: the byte address of each box element, d0 fastest (spec.tma.place)."""
    inner = box[0]
    outer = len(offsets) // inner if inner else 0
    grid = logical_panel("the box: (i0, i1, ...) -> shared-memory byte, coloured by 16-byte chunk", outer, inner,
                         lambda r, c: offsets[r * inner + c], lambda r, c: _box_coordinate(box, r * inner + c),
                         "i1" if len(box) == 2 else "(i1,...)", "i0", PANEL_ROWS)
    memory = memory_panel("shared memory as written: the box element that starts each 16-byte chunk, coloured by "
                          "the chunk of its box row it fills unswizzled", offsets, 8 * element_bytes,
                          lambda i: _box_coordinate(box, i), lambda i: _chunk_fill(i % inner, 8 * element_bytes),
                          PANEL_ROWS)
    return _stacked(title, caption, [grid, memory], chunk_legend())


def _pixel_image(pixels: list, max_rows: int) -> Panel:
    """The pixels of an im2col load, (n, d, h) down and w across, each labelled with its shared-memory row."""
    hs = sorted({(p["n"], p["d"], p["h"]) for p in pixels})
    ws = sorted({p["w"] for p in pixels})
    shown_h, shown_w = hs[:window(len(hs), max_rows)], ws[:window(len(ws), MAX_COLUMNS)]
    row_of, column_of = {h: r for r, h in enumerate(shown_h)}, {w: c for c, w in enumerate(shown_w)}
    cells = []
    for p in pixels:
        r, c = row_of.get((p["n"], p["d"], p["h"])), column_of.get(p["w"])
        if r is None or c is None:
            continue
        tag = " (halo)" if p["halo"] else " (out of bounds)" if p["oob"] else ""
        cells.append(Cell(r, c, f"row {p['row']}", palette(p["row"]),
                          f"pixel n={p['n']} d={p['d']} h={p['h']} w={p['w']}{tag} -> shared-memory row {p['row']}",
                          HALO if p["halo"] or p["oob"] else None))
    return Panel("the pixels the load brings: (n,d,h) x w, labelled by the shared-memory row each fills",
                 [f"n{n} d{d} h{h}" for n, d, h in shown_h], [f"w={w}" for w in shown_w], cells, "n,d,h", "w",
                 rows_total=len(hs), columns_total=len(ws))


def im2col(title: str, caption: List[str], pixels: list, placement: list, element_bytes: int) -> Figure:
    """pixels: spec.tma.im2col's rows ({row, n, d, h, w, halo, oob}); placement: one entry per element
    ({row, channel, smem_address, ...}), each row's channels in order from the load's first channel."""
    first_channel = placement[0]["channel"] if placement else 0
    memory = memory_panel("shared memory: pixel row r, channel c that starts each 16-byte chunk, coloured by the "
                          "chunk of its row it fills unswizzled", [e["smem_address"] for e in placement],
                          8 * element_bytes, lambda i: f"r{placement[i]['row']} c{placement[i]['channel']}",
                          lambda i: _chunk_fill(placement[i]["channel"] - first_channel, 8 * element_bytes),
                          PANEL_ROWS)
    legend = chunk_legend() + [("outlined: a halo or out-of-bounds pixel", HALO)]
    return _stacked(title, caption, [_pixel_image(pixels, PANEL_ROWS), memory], legend)


def _misreads(expected: Sequence[Sequence[int]], read: Sequence[Sequence[int]], k_offset: int) -> tuple:
    """(how many elements are read elsewhere than expected, the first as (mn, k))."""
    count, first = 0, None
    for m, (want, got) in enumerate(zip(expected, read)):
        if want != got:
            wrong = [k for k, (a, b) in enumerate(zip(want, got)) if a != b]
            count += len(wrong)
            first = first or (m, k_offset + wrong[0])
    return count, first


def check(title: str, caption: List[str], expected: Sequence[Sequence[int]], read: Sequence[Sequence[int]],
          k_offset: int = 0) -> Figure:
    """expected[mn][k]: where the layout holds each element; read[mn][k]: where the descriptor reads it."""
    mn, k = len(expected), len(expected[0]) if expected else 0
    wrong = lambda r, c, _: expected[r][c] != read[r][c]
    name = lambda r, c: f"(mn={r}, k={k_offset + c})"
    column = lambda c: str(k_offset + c)
    left = logical_panel("the layout: where each element is", mn, k, lambda r, c: expected[r][c], name, "mn", "k",
                         MAX_ROWS, wrong, MISMATCH, column)
    right = logical_panel("the descriptor: where it reads each element (red: not where the layout has it)", mn, k,
                          lambda r, c: read[r][c], name, "mn", "k", MAX_ROWS, wrong, MISMATCH, column)
    count, first = _misreads(expected, read, k_offset)
    legend = chunk_legend() + [("outlined: read from the wrong byte", MISMATCH)]
    return _side_by_side(title, caption + [_misread_line(count, mn * k, first)], [left, right], legend)


def _step_rows(steps: int, mn: int) -> int:
    """Rows of each k-step panel: the figure's grid rows shared between the k-steps drawn."""
    return window(mn, MAX_ROWS // max(1, steps))


def recipe_figure(r) -> Figure:
    """The figure of a built recipe (solver.synth.recipe.Recipe): where its TMA loads put each element
    (solver.synth.recipe.written_addresses: spec.cases.recipe_case.written), and what each of its first k-steps'
    descriptors reads (spec.mma.readmap), outlined red where that is not what the TMA wrote."""
    from solver.synth import recipe as synth_recipe
    from spec.mma import descriptor as spec_descriptor
    from spec.mma import dtypes, readmap
    bits = dtypes.dtype(r.dtype).bits
    box, loads = r.tma["box"], r.tma["loads"]
    per_row = box[0]                       # elements of a box row: along K (K-major) or MN (MN-major)
    written = synth_recipe.written_addresses(r)
    flat = [a for row in written for a in row]
    k_tile = r.k_tile

    def box_place(i: int) -> tuple:
        """(load, element's row in the box, its place in the row) of tile element i = (mn, k), mn * K + k."""
        mn, k = divmod(i, k_tile)
        return (k // per_row, mn, k % per_row) if r.major == "K" else (mn // per_row, k, mn % per_row)

    def unswizzled(i: int) -> int:
        """The byte tile element i would land at without the swizzle: its load's box, dense, d0 fastest."""
        load, row, inner = box_place(i)
        return loads[load]["smem_address"] + (row * per_row + inner) * bits // 8
    memory = memory_panel("shared memory after the TMA loads: the element that starts each chunk, coloured by the "
                          "chunk it would fill without the swizzle (a swizzle moves colours off their column)",
                          flat, bits, lambda i: f"({i // k_tile},{i % k_tile})", lambda i: chunk_colour(unswizzled(i)),
                          RECIPE_LINES, lambda i: f"load {box_place(i)[0]}")
    found = [i for i in r.instructions if i["status"] == "found"]
    shown = found[:MAX_STEPS]
    rows = _step_rows(len(shown), r.mn)
    panels = [memory]
    for instruction in shown:
        op = readmap.make_operand(spec_descriptor.decode(r.arch, int(instruction["descriptor"], 16)), r.dtype,
                                  r.major, r.mn, None, r.kind)
        k0 = instruction["k_offset"]
        read = lambda m, k, op=op: readmap.element_address(op, m, k)
        wrong = lambda m, k, a, k0=k0: a != written[m][k0 + k]
        panels.append(logical_panel(f"k-step at K={k0}: the byte its descriptor reads for each (mn, k) (red: not "
                                    "what the TMA wrote there)", r.mn, op.k, read,
                                    lambda m, k, k0=k0: f"(mn={m}, k={k0 + k})", "mn", "k", rows, wrong,
                                    MISMATCH, lambda k, k0=k0: str(k0 + k)))
    title = (f"recipe: {r.arch} {r.major}-major {r.dtype} MN={r.mn} K-tile={r.k_tile}, {r.swizzle} at "
             f"{r.smem_address:#x}")
    caption = [f"smem layout {r.layout.notation()}; {len(loads)} TMA load{'s' if len(loads) != 1 else ''} of box "
               f"{box[0]}x{box[1]} ({r.tma['swizzle']}); {len(r.instructions)} k-steps"
               + (f", the first {len(shown)} drawn" if len(found) > len(shown) else ""),
               _proof_line(r.proof)]
    legend = chunk_legend() + [("outlined: read from a byte the TMA did not write that element to", MISMATCH)]
    return _stacked(title, caption, panels, legend)


def _proof_line(proof: dict) -> str:
    """The recipe's proof (every k-step, every element), which holds beyond what the picture draws."""
    if proof.get("status") == "proved":
        return f"proved for all {proof.get('elements')} elements the k-steps read, drawn or not"
    if "element" in proof:
        m, k = proof["element"]
        return (f"refuted: element (mn={m}, k={k}) is written at {proof['written']:#x} but read at "
                f"{proof['read']:#x}")
    return f"not proved: {proof.get('reason') or proof.get('status')}"


def scales_map(found) -> Figure:
    """`scales map --svg`: rows down, K blocks across, each cell the scale's position in the writer's tensor
    (spec.scales.layouts.ScaleMap), coloured by the 16-byte chunk of its 128-byte line: in the interleaved
    layout a 16-byte row holds 4 blocks of 4 rows 32 apart, so the colours repeat every 8 rows and run
    across 4 blocks."""
    grid = logical_panel("where the writer puts the scale of (row, K block): its position in the scale tensor, "
                         "coloured by 16-byte chunk", found.rows, found.k_blocks, lambda r, c: found.offsets[r][c],
                         lambda r, c: f"(row={r}, K block={c}, k {c * found.block}..{(c + 1) * found.block - 1})",
                         "row", "K block", MAX_ROWS)
    caption = [f"{found.sf_layout} scales of {found.rows} rows x K {found.k} in blocks of {found.block}: "
               f"{found.k_blocks} blocks per row, {found.footprint} scale bytes (one byte per scale)"]
    return _stacked(f"scales map: {found.sf_layout}", caption, [grid], chunk_legend())
