"""Fast path of spec/cases/recipe_case.py: the first misread element of a recipe case by classes of rows
(each class of lines, the same residues modulo the swizzles' period, compared once per k-step)."""
from __future__ import annotations

from array import array
from typing import Optional

from spec import fast
from spec.cases import recipe_case
from spec.cute.swizzle import DESCRIPTOR_SWIZZLES, pattern_rows
from spec.mma import readmap
from spec.tma import place as tma_place
from spec.tma import swizzle as tma_swizzle


# first_misread inlines the hardware read swizzle of read_addresses and the rows of place_rows: registered
# as the fast version of first_misread_by_element, it runs only while spec.fast is enabled (a test that
# changes a definition turns fast paths off, and the definition is followed element by element).
@fast.fast_version_of(recipe_case.first_misread_by_element)
def first_misread(c: recipe_case.RecipeCase) -> Optional[dict]:
    """first_misread_by_element, by classes of rows (tests/spec_tests/fast/test_recipe_fast.py checks the two equal).

    Box b writes its row r, element i at sw_tma(A + b*S + r*pitch + i*E): K-major element (r, b*inner + i),
    MN-major (b*inner + i, r). So both sides are an MN part plus a K part under a swizzle:
      written(mn, k) = sw_tma(FW[mn] + GW[k])   K-major  FW = mn*pitch, GW = A + (k div inner)*S + (k mod inner)*E
                                                MN-major FW = (mn div inner)*S + (mn mod inner)*E, GW = A + k*pitch
      read(mn, k)    = sw_desc(FR[mn] + GR[k])  (spec.mma.readmap: mn_part, k_part of the k-step's operand)
    for the elements the boxes write (a rectangle from (0, 0)). Each swizzle moves only the bits below its
    period, a power of two, so sw(x + j*P) = sw(x) + j*P for P a multiple of both periods, and whether row
    mn of a k-step reads right at k depends on mn only through its key (FW[mn] mod P, FR[mn] mod P,
    FW[mn] - FR[mn]; None for a row no box wrote): each key is compared once per k-step, K elements. A
    written element is misread also when a later box wrote the same first byte over it (boxes closer
    than their extent): the TMA swizzle permutes each period, so those are found on linear addresses."""
    rows, inner, pitch = tma_place.row_layout(recipe_case.box_at(c, 0))     # refuses the boxes that place_rows refuses
    table = tma_swizzle.period_deltas(c.tma_swizzle)
    if table is None or not table[2] or not fast.enabled():
        return recipe_case.first_misread_by_element(c)
    tma_mask, delta, _ = table
    E, S, A, count = c.element_bytes, c.box_stride, c.smem_address, c.box_count
    k_major = c.major == "K"
    mn_written, k_written = (rows, count * inner) if k_major else (count * inner, rows)
    if k_major:
        FW = [mn * pitch for mn in range(c.mn)]
        GW = [A + (k // inner) * S + (k % inner) * E for k in range(min(c.k_tile, k_written))]
    else:
        FW = [(mn // inner) * S + (mn % inner) * E for mn in range(c.mn)]
        GW = [A + k * pitch for k in range(min(c.k_tile, k_written))]
    last_box = _last_box(c, rows, inner, pitch)

    def write_of(mn: int, k: int) -> tuple:
        """(box, offset from A before the swizzle) of the write of element (mn, k)."""
        b, row, i = (k // inner, mn, k % inner) if k_major else (mn // inner, k, mn % inner)
        return b, b * S + row * pitch + i * E

    def first_lost(k0: int, k_end: int, last_row: int) -> Optional[tuple]:
        """The first element (mn, k - k0) of rows up to last_row, k0 <= k < k_end, that a later box wrote
        over: each row's writes are a few evenly spaced runs (K-major one per box the k-step reads)."""
        for mn in range(min(last_row + 1, mn_written)):
            k = k0
            while k < k_end:
                stop = min(k_end, k - k % inner + inner) if k_major else k_end
                (b, first), (_, last) = write_of(mn, k), write_of(mn, stop - 1)
                tags = last_box[first:last + 1:E if k_major else pitch]
                if tags.count(b + 1) < len(tags):
                    return mn, k - k0 + next(j for j, tag in enumerate(tags) if tag != b + 1)
                k = stop
        return None

    def classes(W, R, period) -> dict:
        """{(W[i] mod P, R[i] mod P, W[i] - R[i]): its first i}: lines that compare alike."""
        found = {}
        for i, (w, r) in enumerate(zip(W, R)):
            found.setdefault((w % period, r % period, w - r), i)
        return found

    m = min(c.mn, mn_written)              # the tile's rows the boxes wrote
    row_classes = {}                       # the operand's mn-part fields -> (FR, classes of rows)
    for k0, op in c.steps:
        d = op.desc
        # sw_desc(v) = v ^ ((((v >> 7) - base offset) mod R) << shift) (rule readmap.swizzle_phase)
        pattern = pattern_rows(d.swizzle)
        shift, low, base_offset = DESCRIPTOR_SWIZZLES[d.swizzle].base, pattern - 1, d.base_offset
        period = max(tma_mask + 1, 1 << (max(readmap.LINE.bit_length() - 1, shift) + pattern.bit_length() - 1))
        fields = (d.stride_byte_offset, d.leading_byte_offset, d.swizzle, period)
        if fields not in row_classes:
            FR = [readmap.mn_part(op, mn) for mn in range(c.mn)]
            row_classes[fields] = FR, classes(FW[:m], FR[:m], period)
        FR, by_row = row_classes[fields]
        GR = [origin + offset for origin, offset in (readmap.k_part(op, k) for k in range(op.k))]
        written_k = GW[k0:k0 + op.k]             # the columns of the k-step the boxes wrote
        cut = len(written_k)

        def first_apart(key, cross_w, cross_r) -> Optional[int]:
            """The first j where the lines of `key` read elsewhere than written, across (cross_w, cross_r):
            the columns of a row, or the rows of a column."""
            w0, r0, difference = key
            want = w0 - r0 - difference     # sw_tma(w0 + cross_w) - sw_desc(r0 + cross_r) where they agree
            apart = [(w := w0 + g) + delta[w & tma_mask] - ((v := r0 + h) ^ ((((v >> 7) - base_offset) & low) << shift))
                     for g, h in zip(cross_w, cross_r)]
            return None if apart.count(want) == len(apart) else next(j for j, x in enumerate(apart) if x != want)

        found = [(m, 0)] if m < c.mn else []           # a row no box wrote
        if cut < op.k:
            found.append((0, cut))                     # a column no box wrote
        if m and cut:
            by_column = classes(written_k, GR, period)
            if len(by_row) * cut <= len(by_column) * m:
                for key, mn in by_row.items():
                    if not found or mn <= min(found)[0]:
                        k = first_apart(key, written_k, GR)
                        found += [] if k is None else [(mn, k)]
            else:       # each column's first misread row; the first in row order is the least (mn, k)
                for key, k in by_column.items():
                    mn = first_apart(key, FW[:m], FR[:m])
                    found += [] if mn is None else [(mn, k)]
            if last_box is not None:
                found += filter(None, [first_lost(k0, k0 + cut, min(found)[0] if found else m - 1)])
        if found:
            mn, k = min(found)
            v = FR[mn] + GR[k]
            read_from = v ^ ((((v >> 7) - base_offset) & low) << shift)
            written_at = None
            b, offset = write_of(mn, k0 + k)
            if mn < mn_written and k0 + k < k_written and (last_box is None or last_box[offset] == b + 1):
                w = FW[mn] + GW[k0 + k]
                written_at = w + delta[w & tma_mask]
            witness = {"k_step": k0, "element": {"mn": mn, "k": k0 + k}, "read_from": read_from,
                       "written_at": written_at}
            holder = _last_written(c, rows, inner, pitch, table, read_from)
            if holder is not None:
                witness["holds"] = {"mn": holder[0], "k": holder[1]}
            return witness
    return None


def _last_box(c: recipe_case.RecipeCase, rows: int, inner: int, pitch: int) -> Optional[array]:
    """For each first byte from smem_address before the swizzle (it permutes each of its periods), 1 +
    the last box that wrote there, 0 where none did; None when no box can write over another (one box,
    or boxes at least a box's extent apart)."""
    E, S = c.element_bytes, c.box_stride
    extent = (rows - 1) * pitch + (inner - 1) * E + 1
    if c.box_count == 1 or S >= extent:
        return None
    last = array("H", [0]) * ((c.box_count - 1) * S + extent)       # box_count < 2^12
    for b in range(c.box_count):
        tag = array("H", [b + 1]) * inner
        for row in range(rows):
            start = b * S + row * pitch
            last[start:start + inner * E:E] = tag
    return last


def _last_written(c: recipe_case.RecipeCase, rows: int, inner: int, pitch: int, table: tuple, address: int) -> Optional[tuple]:
    """The element the boxes' last write at `address` (a first byte) left, or None: the one linear address
    the TMA swizzle sends there, written last by the latest box that covers it."""
    mask, delta, _ = table
    low = next(r for r in range(mask + 1) if r + delta[r] == address & mask)
    linear = address - (address & mask) + low
    for b in reversed(range(c.box_count)):
        offset = linear - c.smem_address - b * c.box_stride
        if offset >= 0:
            row, rest = divmod(offset, pitch)
            if row < rows and rest % c.element_bytes == 0 and rest // c.element_bytes < inner:
                i = b * c.inner + rest // c.element_bytes
                return (row, i) if c.major == "K" else (i, row)
    return None
