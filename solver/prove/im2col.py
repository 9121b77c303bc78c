"""Properties of multi-buffer im2col::w loads (PTX ISA 5.5.5.4 wOffset, Examples 1 and 2).

A convolution with a filter of S taps along W at traversal stride S reads each input pixel once per
tap. PTX 5.5.5.4 loads the taps into S shared-memory buffers, one copy each, that differ only in wOffset
(buffer k: wOffset k, which moves the lower corner, the upper corner and W by k). Along one image row
the copy walks the bounding box from its lower corner L by the stride (spec.tma.im2col, rules
im2col.w.traversal and im2col.w.woffset), so buffer k's j-th pixel of the row is at W = L + k + S * j.

  im2col.w.buffers_cover              the S buffers together load W = L .. L + S*J - 1 of the row exactly
                                      once each (J pixels per buffer and row)
  im2col.w.buffers_cover.one_short    the same claim with S - 1 buffers (expected refuted: the
                                      counterexample's pixel is in no buffer, as spec confirms)

The model is the walk's closed form; each counterexample is replayed through spec.tma.im2col's own walk
(buffers_footprint) on a tensor built so that one image row holds exactly J pixels of each buffer.
"""
from __future__ import annotations

import z3

from spec.tma import im2col as spec_im2col

from solver.prove.property import Query, prop

SOURCE = "PTX 5.5.5.2 (Traversal Stride), 5.5.5.4 (wOffset); rules im2col.w.traversal, im2col.w.woffset"
FAMILY = "im2col.w"
RULES = ("im2col.w.traversal", "im2col.w.woffset", "im2col.w.bounding_box")
DOMAIN = ("traversal stride S in [1, 8]; lower corner L in [-2^15, 2^15 - 1]; J in [1, 1024] pixels per "
          "buffer and image row; buffers k in [0, S) (wOffset k), pixels j in [0, J); a W position w of "
          "the row's footprint [L, L + S*J)")


def _variables():
    names = ("stride", "lower", "per_row", "w", "k1", "j1", "k2", "j2")
    return {name: z3.Int(name) for name in names}


def _range(v, buffers):
    s, low, count = v["stride"], v["lower"], v["per_row"]
    facts = [s >= 1, s <= 8, low >= -(1 << 15), low <= (1 << 15) - 1, count >= 1, count <= 1024,
             v["w"] >= low, v["w"] < low + s * count]
    for k, j in (("k1", "j1"), ("k2", "j2")):
        facts += [v[k] >= 0, v[k] < buffers(s), v[j] >= 0, v[j] < count]
    return facts


def _position(v, k, j):
    """Buffer k's j-th W position along the row: L + k + S * j."""
    return v["lower"] + v[k] + v["stride"] * v[j]


def _covered_by_some_buffer(v, buffers):
    """w = L + k + S*j for some buffer k and pixel j: with k = (w - L) mod S, j = (w - L) div S."""
    offset = v["w"] - v["lower"]
    k, j = offset % v["stride"], offset / v["stride"]
    return z3.And(k < buffers(v["stride"]), j < v["per_row"])


def _spec_rows(stride: int, lower: int, per_row: int, buffer_count: int) -> list:
    """W positions of each buffer along image 1 of a tensor whose box row holds exactly `per_row` pixels
    of every buffer (upper corner 0: box W in [L, W - 1] with W = L + S * J), walked by spec.tma.im2col."""
    width = lower + stride * per_row
    if width < 1:                                   # the tensor needs one pixel; move the row right
        return _spec_rows(stride, lower + (1 - width), per_row, buffer_count)
    load = spec_im2col.make_load("w", (16, width, 1, 3), (lower,), (0,), 16, 3 * per_row, (0, lower, 0, 0),
                                 element_strides=(1, stride, 1, 1), elem_bytes=2, swizzle="128B")
    footprints = spec_im2col.buffers_footprint(load, [(0, k) for k in range(buffer_count)])
    rows = [sorted(p.w - lower for p in buffer.pixels if p.n == 1 and not p.halo) for buffer in footprints]
    return rows


def _buffers_cover(id: str, buffers, expected: str, statement: str):
    def build() -> Query:
        v = _variables()
        assumptions = _range(v, buffers)
        distinct = z3.Implies(z3.Or(v["k1"] != v["k2"], v["j1"] != v["j2"]),
                              _position(v, "k1", "j1") != _position(v, "k2", "j2"))
        return Query(v, assumptions, z3.And(_covered_by_some_buffer(v, buffers), distinct))

    def replay(cx: dict) -> bool:
        """The counterexample's w (relative to L) is in no buffer's row, by spec's walk (the buffers' rows
        are also pairwise disjoint there, or the claim failed on distinctness)."""
        stride, per_row = cx["stride"], cx["per_row"]
        if per_row > 64:                            # keep the spec walk small; the gap repeats per row
            per_row = 64
        rows = _spec_rows(stride, cx["lower"], per_row, buffers(stride))
        loaded = [w for row in rows for w in row]
        missing = set(range(stride * per_row)) - set(loaded)
        return bool(missing) or len(loaded) != len(set(loaded))

    prop(id, statement, DOMAIN, SOURCE, expected, replay=replay, family=FAMILY, rules=RULES)(build)


_buffers_cover("im2col.w.buffers_cover", lambda s: s, "proved",
               "im2col::w with traversal stride S: the S buffers with wOffset 0 .. S-1 load every W of the "
               "row's footprint [L, L + S*J) exactly once (each pixel once per filter tap, PTX 5.5.5.4)")
_buffers_cover("im2col.w.buffers_cover.one_short", lambda s: s - 1, "refuted",
               "the same with only S - 1 buffers (wOffset 0 .. S-2): expected refuted, a W of the footprint "
               "is loaded by no buffer")


def spec_rows(stride: int, lower: int, per_row: int, buffer_count: int) -> list:
    """Public for tests: spec's W positions (relative to L) of each buffer along one image row."""
    return _spec_rows(stride, lower, per_row, buffer_count)
