"""One figure per command that shows where things go (`--svg FILE` / `--png FILE`): desc addresses,
tma place, im2col, check and recipe. Each takes what spec/ computed (addresses per element) and only
arranges it; tests/test_pictures.py reads the SVG back and compares every cell with spec."""
from __future__ import annotations

from typing import List, Sequence

from spec.rule import SpecError

from solver.pictures.figure import MISMATCH, Cell, Figure, Panel, chunk_legend, hue
from solver.pictures.grids import MAX_CELLS, logical_panel, memory_panel


def _bounded(cells: int, what: str) -> None:
    if cells > MAX_CELLS:
        raise SpecError("picture", cells, f"{what} has {cells} cells to draw: at most {MAX_CELLS} "
                        "(draw a smaller tile)", "layout.notation")


def desc_addresses(title: str, caption: List[str], addresses: Sequence[Sequence[int]], element_bytes: int) -> Figure:
    """addresses[mn][k]: the byte each element is read from (spec.mma.readmap)."""
    mn, k = len(addresses), len(addresses[0]) if addresses else 0
    _bounded(2 * mn * k, "this read")
    grid = logical_panel("what the descriptor reads: (mn, k) -> byte address, coloured by 16-byte chunk",
                         mn, k, lambda r, c: addresses[r][c], lambda r, c: f"(mn={r}, k={c})", "mn", "k")
    elements = [(f"({r},{c})", addresses[r][c]) for r in range(mn) for c in range(k)]
    memory = memory_panel("shared memory: the element that starts each 16-byte chunk", elements, element_bytes)
    return Figure(title, [grid, memory], chunk_legend(), caption)


def tma_place(title: str, caption: List[str], box: Sequence[int], offsets: Sequence[int], element_bytes: int) -> Figure:
    """offsets: the byte address of each box element, d0 fastest (spec.tma.place)."""
    inner = box[0]
    outer = len(offsets) // inner if inner else 0
    _bounded(2 * len(offsets), "this box")
    names = ["i1"] if len(box) == 2 else ["(i1,...)"]

    def coordinate(r: int, c: int) -> str:
        rest, out = r, []
        for d in box[1:]:
            out.append(rest % d)
            rest //= d
        return "(" + ",".join(map(str, [c] + out)) + ")"
    grid = logical_panel("the box: (i0, i1, ...) -> shared-memory byte, coloured by 16-byte chunk", outer, inner,
                         lambda r, c: offsets[r * inner + c], coordinate, names[0], "i0")
    elements = [(coordinate(n // inner, n % inner), a) for n, a in enumerate(offsets)]
    rows = lambda index: hue(index // inner)
    memory = memory_panel("shared memory as written: the box element that starts each 16-byte chunk, coloured "
                          "by box row", elements, element_bytes, rows)
    return Figure(title, [grid, memory], chunk_legend(), caption)


def im2col(title: str, caption: List[str], pixels: list, placement: list, element_bytes: int) -> Figure:
    """pixels: spec.tma.im2col's rows ({row, n, d, h, w, halo, oob}); placement: one entry per element
    ({row, channel, smem_address, ...})."""
    _bounded(len(placement) + len(pixels), "this load")
    ws = sorted({p["w"] for p in pixels})
    hs = sorted({(p["n"], p["d"], p["h"]) for p in pixels})
    cells = []
    for p in pixels:
        tag = " (halo)" if p["halo"] else " (out of bounds)" if p["oob"] else ""
        cells.append(Cell(hs.index((p["n"], p["d"], p["h"])), ws.index(p["w"]), f"row {p['row']}", hue(p["row"]),
                          f"pixel n={p['n']} d={p['d']} h={p['h']} w={p['w']}{tag} -> shared-memory row {p['row']}",
                          "#555555" if p["halo"] or p["oob"] else None))
    image = Panel("the pixels the load brings: (n,d,h) x w, labelled by the shared-memory row each fills",
                  [f"n{n} d{d} h{h}" for n, d, h in hs], [f"w={w}" for w in ws], cells, "n,d,h", "w")
    elements = [(f"r{e['row']} c{e['channel']}", e["smem_address"]) for e in placement]
    memory = memory_panel("shared memory: pixel row r, channel c that starts each 16-byte chunk, coloured by row",
                          elements, element_bytes, lambda i: hue(placement[i]["row"]))
    return Figure(title, [image, memory], [], caption)


def check(title: str, caption: List[str], expected: Sequence[Sequence[int]], read: Sequence[Sequence[int]],
          k_offset: int = 0) -> Figure:
    """expected[mn][k]: where the layout holds each element; read[mn][k]: where the descriptor reads it."""
    mn, k = len(expected), len(expected[0]) if expected else 0
    _bounded(2 * mn * k, "this check")
    wrong = lambda r, c: expected[r][c] != read[r][c]
    name = lambda r, c: f"(mn={r}, k={k_offset + c})"
    left = logical_panel("the layout: where each element is", mn, k, lambda r, c: expected[r][c], name, "mn", "k",
                         wrong, MISMATCH)
    right = logical_panel("the descriptor: where it reads each element (red: not where the layout has it)", mn, k,
                          lambda r, c: read[r][c], name, "mn", "k", wrong, MISMATCH)
    for panel in (left, right):
        panel.column_names = [str(k_offset + c) for c in range(k)]
    legend = chunk_legend() + [("outlined: read from the wrong byte", MISMATCH)]
    return Figure(title, [left, right], legend, caption, side_by_side=True)


def recipe(title: str, caption: List[str], written: list, steps: list, element_bytes: int, max_steps: int = 4) -> Figure:
    """written: (element name, byte address, load index) for every element the TMA loads place;
    steps: per k-step (k_offset, read[mn][k], held[mn][k]) (the descriptor's read map and where the TMA
    wrote each of those elements)."""
    shown = steps[:max_steps]
    _bounded(len(written) + sum(2 * len(r) * len(r[0]) for _, r, _ in shown if r), "this recipe")
    loads = sorted({load for _, _, load in written})
    memory = memory_panel("shared memory after the TMA loads: the element that starts each chunk, coloured by load",
                          [(n, a) for n, a, _ in written], element_bytes, lambda i: hue(written[i][2] + 3, 0.75))
    panels = [memory]
    for k_offset, read, held in shown:
        wrong = lambda r, c, read=read, held=held: read[r][c] != held[r][c]
        panel = logical_panel(f"k-step at K={k_offset}: the byte its descriptor reads for each (mn, k) (red: not "
                              "what the TMA wrote there)", len(read), len(read[0]),
                              lambda r, c, read=read: read[r][c],
                              lambda r, c, k_offset=k_offset: f"(mn={r}, k={k_offset + c})", "mn", "k", wrong, MISMATCH)
        panel.column_names = [str(k_offset + c) for c in range(len(read[0]))]
        panels.append(panel)
    legend = [(f"TMA load {n}", hue(n + 3, 0.75)) for n in loads] + chunk_legend()
    if len(steps) > len(shown):
        caption = caption + [f"(first {len(shown)} of {len(steps)} k-steps drawn)"]
    return Figure(title, panels, legend, caption)


def recipe_figure(r, max_steps: int = 4) -> Figure:
    """The figure of a built recipe (solver.synth.recipe.Recipe): where spec.tma.place puts each element
    of each TMA load, and what each k-step's descriptor reads (spec.mma.readmap)."""
    from spec.mma import descriptor as spec_descriptor
    from spec.mma import dtypes, readmap
    from spec.tma import place as tma_place
    d = dtypes.dtype(r.dtype)
    b = d.bits // 8
    box = r.tma["box"]
    where = {}
    written = []
    for load, entry in enumerate(r.tma["loads"]):
        offsets = tma_place.place(tma_place.make_box(r.tma["swizzle"], b, box, entry["smem_address"]))
        for n, a in enumerate(offsets):
            i0, i1 = n % box[0], n // box[0]
            mn, k = (i1, load * box[0] + i0) if r.major == "K" else (load * box[0] + i0, i1)
            where[(mn, k)] = a
            written.append((f"({mn},{k})", a, load))
    steps = []
    for instruction in r.instructions:
        if instruction["status"] != "found":
            continue
        desc = spec_descriptor.decode(r.arch, int(instruction["descriptor"], 16))
        op = readmap.make_operand(desc, r.dtype, r.major, r.mn, None, r.kind)
        k0 = instruction["k_offset"]
        read = [[readmap.element_address(op, mn, k) for k in range(op.k)] for mn in range(r.mn)]
        held = [[where.get((mn, k0 + k), -1) for k in range(op.k)] for mn in range(r.mn)]
        steps.append((k0, read, held))
    title = (f"recipe: {r.arch} {r.major}-major {r.dtype} MN={r.mn} K-tile={r.k_tile}, {r.swizzle} at "
             f"{r.smem_address:#x}")
    caption = [f"smem layout {r.layout.notation()}; {len(r.tma['loads'])} TMA loads of box {box[0]}x{box[1]} "
               f"({r.tma['swizzle']}); {len(r.instructions)} k-steps"]
    return recipe(title, caption, written, steps, b, max_steps)


def scales_map(found) -> Figure:
    """`scales map --svg`: rows down, K blocks across, each cell the scale's position in the writer's tensor
    (spec.scales.layouts.ScaleMap), coloured by the 16-byte chunk of its 128-byte line: in the interleaved
    layout a 16-byte row holds 4 blocks of 4 rows 32 apart, so the colours repeat every 8 rows and run
    across 4 blocks."""
    _bounded(found.rows * found.k_blocks, "this map")
    grid = logical_panel("where the writer puts the scale of (row, K block): its position in the scale tensor, "
                         "coloured by 16-byte chunk", found.rows, found.k_blocks, lambda r, c: found.offsets[r][c],
                         lambda r, c: f"(row={r}, K block={c}, k {c * found.block}..{(c + 1) * found.block - 1})",
                         "row", "K block")
    caption = [f"{found.sf_layout} scales of {found.rows} rows x K {found.k} in blocks of {found.block}: "
               f"{found.k_blocks} blocks per row, {found.footprint} scale bytes (one byte per scale)"]
    return Figure(f"scales map: {found.sf_layout}", [grid], chunk_legend(), caption)
