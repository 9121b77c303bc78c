"""im2col, im2col::w and im2col::w::128 TMA loads (spec/tma/im2col.py and `layoutproof im2col`).

Every expectation is worked out by hand from the manual's text (PTX 5.5.4, 5.5.5) with
the readings spec/tma/im2col.py states as rules; the comment above each test gives the derivation.

Dimension order (rule im2col.layout): "Tensor Size[0..3]" of a 4-D NHWC tensor are C, W, H, N (dimension
0 is C: the 5.5.4 examples read channels c .. c + channels-per-pixel - 1 from Tensor Size[0]), and
"Tensor Coordinates (a, b, c, d)" are (c, w, h, n). Bounding box (rule im2col.bounding_box): spatial
dimension of size S spans [lower corner, S - 1 + upper corner], ends included.
"""
import dataclasses
import json

import pytest

from solver.cli.main import main
from spec.tma import im2col
from spec.rules import SpecError, rules_for

# PTX 5.5.7 tables, one row per 128-byte shared-memory line: entry j is the chunk that lands at j.
ROW_128B = [[0, 1, 2, 3, 4, 5, 6, 7], [1, 0, 3, 2, 5, 4, 7, 6], [2, 3, 0, 1, 6, 7, 4, 5], [3, 2, 1, 0, 7, 6, 5, 4],
            [4, 5, 6, 7, 0, 1, 2, 3], [5, 4, 7, 6, 1, 0, 3, 2], [6, 7, 4, 5, 2, 3, 0, 1], [7, 6, 5, 4, 3, 2, 1, 0]]
ROW_64B = ROW_128B[:4]


def nw(found):
    return [(p.n, p.w) for p in found]


def nhw(found):
    return [(p.n, p.h, p.w) for p in found]


# === im2col::w (PTX 5.5.5) ============================================================================
def seed_w_load(mode="w", **changes):
    """PTX 5.5.5.3 example: Tensor Size 128, 9, 7, 64 -> C = 128, W = 9, H = 7, N = 64;
    Pixels-per-column 128 (w mode), Channels-per-pixel 64, Bounding Box Lower / Upper Corner W = 0 / 0,
    Tensor Coordinates (7, 2, 3, 0) -> c = 7, w = 2, h = 3, n = 0; wHalo 2. Element size 2 (bf16, so a
    pixel's 64 channels are one 128-byte row) and 128B swizzle are our choice (PTX gives neither)."""
    fields = dict(mode=mode, tensor=(128, 9, 7, 64), lower=(0,), upper=(0,), channels_per_pixel=64,
                  pixels_per_column=128 if mode == "w" else None, coords=(7, 2, 3, 0), w_halo=2,
                  elem_bytes=2, swizzle="128B", smem_address=0)
    fields.update(changes)
    return im2col.make_load(**fields)


# The walk of the PTX 5.5.5.3 example (rules im2col.w.bounding_box, im2col.w.traversal): box W in
# [0, 9 - 1 + 0] = [0, 8], one pixel in H at h = 3; stride 1. Image 0 from w = 2: w = 2..8 (7 pixels);
# past W = 8 the walk goes back to W = 0 of the next image: images 1..13 give 9 pixels each (117, 124 so
# far), image 14 gives w = 0..3 for pixels 124..127. The walk then goes on to (14, 4), (14, 5), ...
SEED_WALK = [(0, w) for w in range(2, 9)] + [(n, w) for n in range(1, 14) for w in range(9)] + \
            [(14, w) for w in range(9)]


def test_w_seed_example_loads_128_pixels_and_2_halo_pixels():
    """'loads 128 pixels and the two halo pixels' ... 'the halo pixels are always loaded in the shared
    memory next to the main row pixels': rows 0..127 = walk steps 0..127, rows 128, 129 = steps 128, 129."""
    found = im2col.pixels(seed_w_load())
    assert len(found) == 130
    assert nw(found) == SEED_WALK[:130]
    assert [p.halo for p in found] == [False] * 128 + [True] * 2
    assert nw(found[127:]) == [(14, 3), (14, 4), (14, 5)]
    assert {p.h for p in found} == {3} and {p.d for p in found} == {0}
    assert not any(p.oob for p in found)      # n <= 14 < 64, w in [0, 9), h = 3 < 7
    assert im2col.violations(seed_w_load()) == []


def test_w_halo_rows_are_the_filter_taps_of_a_3_wide_filter():
    """PTX 5.5.5.3's reason for wHalo = 2: a 3x3 filter. On an image wide enough not to wrap (W = 300, start
    w = 10): main row j holds w = 10 + j, halo rows 128, 129 hold w = 138, 139, so filter tap s (0..2)
    of output pixel j (j = 0..127) finds its input w = 10 + j + s in row j + s."""
    found = im2col.pixels(seed_w_load(tensor=(128, 300, 7, 64), coords=(7, 10, 3, 0)))
    assert [p.w for p in found] == list(range(10, 140))
    for j in range(128):
        for s in range(3):
            assert found[j + s].w == 10 + j + s


def test_w_first_element_may_lie_left_of_the_box():
    """PTX 5.5.5.1: 'The first element can lie outside of the Bounding Box in the W-dimension only
    and only on the left side'. Box W in [0, 8], first w = -3: the walk reads w = -3, -2, -1 (outside the
    tensor: out of bounds) and goes on into the box; no rule broken. One right of the box (w = 9) is."""
    left = seed_w_load(coords=(7, -3, 3, 0))
    found = im2col.pixels(left)
    assert [p.w for p in found[:5]] == [-3, -2, -1, 0, 1]
    assert [p.oob for p in found[:5]] == [True, True, True, False, False]
    assert im2col.violations(left) == []
    right = seed_w_load(coords=(7, 9, 3, 0))
    assert [v.rule.id for v in im2col.violations(right)] == ["im2col.w.first_element"]


# === im2col::w::128 ==================================================================================
def test_w128_seed_example_has_a_halo_after_every_32_pixels():
    """PTX 5.5.5.3, im2col::w::128 example (same tensor and coordinates, wHalo 2): 'loads 128
    elements such that after every 32 elements, wHalo number of elements are loaded' (rule
    im2col.w128.halo): 4 blocks of 32 + 2 rows = 136 rows. Block b's main rows hold walk steps 32b..32b+31,
    its 2 halo rows the walk's next steps 32b+32, 32b+33. Walk step k (SEED_WALK): k < 7 -> (0, 2 + k),
    else m = k - 7 -> (1 + m // 9, m % 9):
      row 0 = step 0 = (0, 2); row 31 = step 31 (m 24) = (3, 6); rows 32, 33 (halo) = steps 32, 33 = (3, 7),
      (3, 8); row 34 (block 1's first) = step 32 = (3, 7) again; row 135 (last halo) = step 129 = (14, 5)."""
    found = im2col.pixels(seed_w_load("w128"))
    assert len(found) == 136
    assert sum(p.halo for p in found) == 8
    assert nw([found[0], found[31], found[32], found[33], found[34], found[135]]) == \
        [(0, 2), (3, 6), (3, 7), (3, 8), (3, 7), (14, 5)]
    for block in range(4):
        first_row = 34 * block
        assert nw(found[first_row:first_row + 32]) == SEED_WALK[32 * block:32 * block + 32]
        assert nw(found[first_row + 32:first_row + 34]) == SEED_WALK[32 * block + 32:32 * block + 34]
        assert [p.halo for p in found[first_row:first_row + 34]] == [False] * 32 + [True] * 2


def test_w128_ignores_pixels_per_column():
    """'Pixels-per-Column is ignored in im2col::w::128 mode': any value, or none, loads the same rows."""
    expected = im2col.pixels(seed_w_load("w128"))
    assert im2col.pixels(seed_w_load("w128", pixels_per_column=5)) == expected
    assert im2col.pixels(seed_w_load("w128", pixels_per_column=4096)) == expected
    assert im2col.violations(seed_w_load("w128", pixels_per_column=None)) == []
    # ... but the driver still holds a W128 map's pixelsPerColumn to [1, 1024] (the H100's driver refused
    # 1025 in mode W128: tests/hardware/tensormap_encode_sm90.json.gz), so a load naming 4096 breaks it.
    assert [v.rule.id for v in im2col.violations(seed_w_load("w128", pixels_per_column=4096))] == [
        "tma.map.im2col.pixels_range"]


def test_w128_each_block_carries_its_own_filter_taps():
    """W = 300 (no wrap), first w = 0, wHalo 3: block b's main rows hold w = 32b .. 32b + 31 and its halo
    rows w = 32b + 32 .. 32b + 34, so tap s <= 3 of the block's output i is in row 35b + i + s."""
    found = im2col.pixels(seed_w_load("w128", tensor=(128, 300, 7, 64), coords=(7, 0, 3, 0), w_halo=3))
    assert len(found) == 4 * 35
    for block in range(4):
        for i in range(32):
            for s in range(4):
                assert found[35 * block + i + s].w == 32 * block + i + s


# === wOffset: several buffers (PTX 5.5.5.4) ===========================================================
def test_woffset_example_1_two_buffers_stride_2():
    """PTX 5.5.5.4 Example 1: Tensor Size 128, 9, 67, 64 -> C = 128, W = 9, H = 67, N = 64; Pixels-per-Column
    128, Channels-per-pixel 64, corners W -1 / 0, Traversal Stride 2, coordinates (7, 2, -1, 0) -> c = 7,
    w = 2, h = -1, n = 0. Buffer 1: wHalo 1, wOffset 0; buffer 2: wHalo 0, wOffset 1.
    Buffer 1: box W in [-1, 9 - 1 + 0] = [-1, 8], first w = 2, step 2: image 0: 2, 4, 6, 8 (4); then from
    the lower corner in each next image: -1, 1, 3, 5, 7 (5 each; images 1..24 give 120, 124 so far); image
    25: -1, 1, 3, 5 (128); halo: the walk's next pixel, (25, 7).
    Buffer 2 (wOffset 1: lower, upper and w all + 1): box [0, 9], first w = 3: image 0: 3, 5, 7, 9, then
    0, 2, 4, 6, 8 per image: each row is buffer 1's row + 1 in W, same image; no halo rows.
    The 3-wide filter at stride 2: output pixel j's tap 0 is buffer 1 row j, tap 1 = W + 1 is buffer 2 row
    j, tap 2 = W + 2 is buffer 1 row j + 1 (within one image row); j = 127 uses the halo row (25, 7).
    h = -1 lies outside H in [0, 67): every pixel of this example is out of bounds (zero filled)."""
    load = im2col.make_load("w", (128, 9, 67, 64), (-1,), (0,), 64, 128, (7, 2, -1, 0),
                            element_strides=(1, 2, 1, 1))
    one, two = im2col.buffers_footprint(load, [(1, 0), (0, 1)])
    buffer_1 = [(0, w) for w in (2, 4, 6, 8)] + [(n, w) for n in range(1, 25) for w in (-1, 1, 3, 5, 7)] + \
               [(25, w) for w in (-1, 1, 3, 5)] + [(25, 7)]
    assert nw(one.pixels) == buffer_1 and len(one.pixels) == 129 and one.pixels[128].halo
    assert nw(two.pixels) == [(n, w + 1) for n, w in buffer_1[:128]] and len(two.pixels) == 128
    for j in range(128):
        tap0, tap1, next_row = one.pixels[j], two.pixels[j], one.pixels[j + 1]
        assert (tap1.n, tap1.w) == (tap0.n, tap0.w + 1)
        if next_row.n == tap0.n:
            assert next_row.w == tap0.w + 2
    assert one.oob_rows == tuple(range(129)) and two.oob_rows == tuple(range(128))
    for halo, offset in [(1, 0), (0, 1)]:
        assert im2col.violations(dataclasses.replace(load, w_halo=halo, w_offset=offset)) == []


def test_woffset_example_2_three_buffers_stride_3():
    """PTX 5.5.5.4 Example 2: Tensor Size 128, 7, 7, 64 -> C = 128, W = 7, H = 7, N = 64; corners W -1 / -1,
    Traversal Stride 3, coordinates (7, 2, -1, 0); buffers k = 0, 1, 2 with wHalo 0, wOffset k.
    Buffer k: box W in [-1 + k, 7 - 1 - 1 + k] = [-1 + k, 5 + k], first w = 2 + k, step 3: image 0:
    2 + k, 5 + k; each next image from the lower corner: -1 + k, 2 + k, 5 + k; 128 = 2 + 3 * 42 pixels
    (images 1..42). Tap k of the 3-wide filter (W + k) is buffer k's row: every pixel is used once, and the
    three buffers together cover each image's W = -1 .. 7 exactly once."""
    load = im2col.make_load("w", (128, 7, 7, 64), (-1,), (-1,), 64, 128, (7, 2, -1, 0),
                            element_strides=(1, 3, 1, 1))
    buffers = im2col.buffers_footprint(load, [(0, 0), (0, 1), (0, 2)])
    for k, buffer in enumerate(buffers):
        expected = [(0, 2 + k), (0, 5 + k)] + [(n, w + k) for n in range(1, 43) for w in (-1, 2, 5)]
        assert nw(buffer.pixels) == expected
        assert buffer.w_offset == k and not any(p.halo for p in buffer.pixels)
    for n in range(1, 43):
        covered = sorted(p.w for b in buffers for p in b.pixels if p.n == n)
        assert covered == list(range(-1, 8))


# === im2col mode: PTX 5.5.4 examples ================================================================
def ptx_im2col_load(lower, upper, coords, offsets, pixels_per_column=64, channels=8, strides=None,
                    tensor=(64, 9, 14, 64)):
    return im2col.make_load("im2col", tensor, lower, upper, channels, pixels_per_column, coords, offsets,
                            element_strides=strides, elem_bytes=2, swizzle="NONE", smem_address=0)


def test_ptx_im2col_example_1():
    """PTX 5.5.4.1 Example 1: Tensor Size 64, 9, 14, 64 -> C = 64, W = 9, H = 14, N = 64; Pixels-per-Column
    64, channels-per-pixel 8, corners W, H = -1 / -1, coordinates (7, 7, 4, 0) -> c = 7, w = 7, h = 4,
    offsets (0, 0). Box W in [-1, 9 - 1 - 1] = [-1, 7], H in [-1, 12]; the filter base (7, 4) is inside.
    Pixel 0 = (h 4, w 7), the box's last W; then row h = 5 from w = -1 .. 7, and so on: 1 + 9 * 7 = 64
    pixels, rows h = 5..11. The pixels with w = -1 are out of bounds (rows 1, 10, ..., 55)."""
    found = im2col.pixels(ptx_im2col_load((-1, -1), (-1, -1), (7, 7, 4, 0), (0, 0)))
    assert nhw(found) == [(0, 4, 7)] + [(0, h, w) for h in range(5, 12) for w in range(-1, 8)]
    assert [p.row for p in found if p.oob] == [1, 10, 19, 28, 37, 46, 55]
    assert im2col.violations(ptx_im2col_load((-1, -1), (-1, -1), (7, 7, 4, 0), (0, 0))) == []


def test_ptx_im2col_example_2_puts_the_filter_base_outside_the_box():
    """PTX 5.5.4.1 Example 2: corners 0 / -2, offsets (2, 2), same tensor and coordinates. Box (filter
    base) W in [0, 9 - 1 - 2] = [0, 6], H in [0, 11]: the base w = 7 is outside it, against 'the filter
    corner location must be within the bounding box' (rule im2col.filter_base_in_box; see the note of
    im2col.bounding_box). The model still says what the walk reads: box + offsets W in [2, 8], H in [2, 13];
    pixel 0 = base + offsets = (h 6, w 9), out of bounds (W = 9); then rows h = 7..13 of w = 2..8
    (1 + 7 * 7 = 50); h = 14 > 13 goes to the next image at h = 2: rows h = 2, 3 (64). Only pixel 0 is
    out of bounds."""
    load = ptx_im2col_load((0, 0), (-2, -2), (7, 7, 4, 0), (2, 2))
    found = im2col.pixels(load)
    assert nhw(found) == [(0, 6, 9)] + [(0, h, w) for h in range(7, 14) for w in range(2, 9)] + \
        [(1, h, w) for h in (2, 3) for w in range(2, 9)]
    assert [p.row for p in found if p.oob] == [0]
    assert [v.rule.id for v in im2col.violations(load)] == ["im2col.filter_base_in_box"]


def test_ptx_im2col_traversal_stride_example():
    """PTX 5.5.4.2 (Figure 15): Tensor Size 64, 8, 14, 64 -> C = 64, W = 8, H = 14; Traversal Stride 2,
    Pixels-per-Column 32, channels-per-pixel 16, corners -1 / -1, coordinates (7, 7, 5, 0), offsets (1, 1).
    Box + offsets: W in [-1 + 1, 8 - 1 - 1 + 1] = [0, 7], H in [0, 13]; pixel 0 = (h 6, w 8): out of bounds;
    next w = 10 > 7: back to w = 0, h = 8; rows h = 8, 10, 12 of w = 0, 2, 4, 6 (12 pixels); h = 14 > 13:
    next image, h = 0: rows 0, 2, 4, 6 (16) and h = 8: w = 0, 2, 4 -> 1 + 12 + 16 + 3 = 32 pixels. Again
    the base (w = 7) lies outside the box W in [-1, 6]."""
    load = ptx_im2col_load((-1, -1), (-1, -1), (7, 7, 5, 0), (1, 1), pixels_per_column=32, channels=16,
                           strides=(1, 2, 2, 1), tensor=(64, 8, 14, 64))
    found = im2col.pixels(load)
    assert nhw(found) == [(0, 6, 8)] + [(0, h, w) for h in (8, 10, 12) for w in (0, 2, 4, 6)] + \
        [(1, h, w) for h in (0, 2, 4, 6) for w in (0, 2, 4, 6)] + [(1, 8, w) for w in (0, 2, 4)]
    assert [p.row for p in found if p.oob] == [0]
    assert [v.rule.id for v in im2col.violations(load)] == ["im2col.filter_base_in_box"]


# === im2col mode: Triton's tutorial (triton-lang/triton python/tutorials/gluon/13-tma-im2col.py) =======
# Its tests assert what a Hopper GPU loads, so these are hardware-checked cases of rules im2col.bounding_box,
# im2col.offsets_shift and im2col.traversal. A [N, H, W, C] = [N, 4, 4, 32] float tensor holds, in every
# channel of pixel (n, h, w), the value 1 + 16 n + 4 h + w; an out-of-bounds pixel loads 0. Triton orders
# coordinates [n, h, w, c] and corners / offsets [h, w]: ours are the reverse.
def triton_values(load):
    return [0 if p.oob else 1 + 16 * p.n + 4 * p.h + p.w for p in im2col.pixels(load)]


def triton_load(images, lower, upper, coords, offsets):
    return im2col.make_load("im2col", (32, 4, 4, images), lower, upper, 32, 16, coords, offsets,
                            elem_bytes=4, swizzle="128B", smem_address=0)


def test_triton_padded_box():
    """Corners -1 / -1, coordinates n = 0, h = -1, w = -1, offsets 0: box H, W in [-1, 4 - 1 - 1] = [-1, 2];
    16 pixels: rows h = -1..2 of w = -1..2; h = -1 or w = -1 is outside the tensor (value 0)."""
    load = triton_load(1, (-1, -1), (-1, -1), (0, -1, -1, 0), (0, 0))
    assert triton_values(load) == [0, 0, 0, 0, 0, 1, 2, 3, 0, 5, 6, 7, 0, 9, 10, 11]


def test_triton_offsets_move_the_box():
    """The same load with offsets (1, 1): start (0, 0) and box [0, 3] in H and W: exactly the image."""
    load = triton_load(1, (-1, -1), (-1, -1), (0, -1, -1, 0), (1, 1))
    assert triton_values(load) == list(range(1, 17))


def test_triton_walk_continues_into_the_next_image():
    """Two images, corners 0 / 0 (box [0, 3]), start n = 0, h = 1, w = 3: values 8..16 from image 0, then
    image 1 from its lower corner: 17..23."""
    load = triton_load(2, (0, 0), (0, 0), (0, 3, 1, 0), (0, 0))
    assert triton_values(load) == list(range(8, 24))


# === im2col mode: 3-D and 5-D ========================================================================
def test_5d_positive_upper_corner():
    """NDHWC tensor C = 16, W = 4, H = 3, D = 2, N = 2 (dimensions C, W, H, D, N); lower (W, H, D) =
    (-1, 0, 0), upper (1, 0, -1): box W in [-1, 4 - 1 + 1] = [-1, 4], H in [0, 2], D in [0, 2 - 1 - 1] =
    [0, 0]. Start (w, h, d) = (-1, 0, 0), n = 0, 20 pixels: image 0 rows h = 0, 1, 2 of w = -1..4 (18),
    then D wraps (d + 1 = 1 > 0) into image 1: w = -1, 0. Out of bounds: w = -1 or w = 4 (2 per row of
    image 0, 1 in image 1): 7. d = 1 is never read."""
    load = im2col.make_load("im2col", (16, 4, 3, 2, 2), (-1, 0, 0), (1, 0, -1), 16, 20, (0, -1, 0, 0, 0),
                            swizzle="32B")
    found = im2col.pixels(load)
    assert [(p.n, p.d, p.h, p.w) for p in found] == \
        [(0, 0, h, w) for h in range(3) for w in range(-1, 5)] + [(1, 0, 0, -1), (1, 0, 0, 0)]
    assert sum(p.oob for p in found) == 7
    assert im2col.violations(load) == []


def test_5d_offsets_move_every_spatial_dimension():
    """The same load with offsets (W, H, D) = (1, 0, 1): box W in [0, 5], H in [0, 2], D in [1, 1]; start
    (0, 0, 1): image 0 rows h = 0..2 of w = 0..5 at d = 1, then image 1: w = 0, 1. Out of bounds: w = 4, 5
    in image 0's 3 rows: 6."""
    load = im2col.make_load("im2col", (16, 4, 3, 2, 2), (-1, 0, 0), (1, 0, -1), 16, 20, (0, -1, 0, 0, 0),
                            offsets=(1, 0, 1), swizzle="32B")
    found = im2col.pixels(load)
    assert [(p.n, p.d, p.h, p.w) for p in found] == \
        [(0, 1, h, w) for h in range(3) for w in range(6)] + [(1, 1, 0, 0), (1, 1, 0, 1)]
    assert sum(p.oob for p in found) == 6


def test_3d_traversal_stride_and_channels_past_c():
    """NWC tensor C = 8, W = 10, N = 3; lower -2, upper 1: box W in [-2, 10 - 1 + 1] = [-2, 10]; stride 3;
    start w = -2, c = 4; 10 pixels: -2, 1, 4, 7, 10 (13 > 10 wraps) in images 0 and 1. w = -2 and w = 10
    are out of bounds (4 pixels). Channels 4..11 of C = 8: 8..11 are out of bounds in every row, so 6
    pixels x 4 channels (4..7) are read from the tensor, the rest is filled."""
    load = im2col.make_load("im2col", (8, 10, 3), (-2,), (1,), 8, 10, (4, -2, 0), element_strides=(1, 3, 1),
                            swizzle="NONE")
    found = im2col.pixels(load)
    assert nw(found) == [(n, w) for n in (0, 1) for w in (-2, 1, 4, 7, 10)]
    assert {(p.h, p.d) for p in found} == {(0, 0)}
    assert [p.row for p in found if p.oob] == [0, 4, 5, 9]
    read = [e.source for e in im2col.placement(load) if e.source]
    assert len(read) == 24 and {s[4] for s in read} == {4, 5, 6, 7}
    moved = im2col.make_load("im2col", (8, 10, 3), (-2,), (1,), 8, 10, (4, -2, 0), offsets=(2,),
                             element_strides=(1, 3, 1), swizzle="NONE")
    assert nw(im2col.pixels(moved)) == [(n, w) for n in (0, 1) for w in (0, 3, 6, 9, 12)]


# === Shared-memory placement ========================================================================
def test_placement_128b_rows_follow_the_table_of_their_line():
    """Rule im2col.placement: 64 bf16 channels per pixel = one 128-byte row per pixel at destination 0x400
    + 128 r; channel k is byte 2k of the row, chunk 2k // 16, which the table row of line (0x400 + 128 r)
    / 128 moves to the position holding that chunk number."""
    load = seed_w_load(smem_address=0x400)
    placed = im2col.placement(load)
    assert len(placed) == 130 * 64
    for e in placed:
        line = 0x400 + 128 * e.row
        k = e.channel - 7
        chunk, inside = divmod(2 * k, 16)
        assert e.smem_address == line + 16 * ROW_128B[(line // 128) % 8].index(chunk) + inside


def test_placement_64b_two_rows_per_line():
    """32 bf16 channels = 64-byte rows, 64B swizzle, destination 0: row r's byte 2k is linear byte 64 r + 2k
    of line (64 r + 2k) // 128, moved by that line's 64B table row. E.g. row 3, channel 0: linear 192, line
    1, chunk 4 -> table row 1 puts chunk 4 at position 5 -> 128 + 80 = 208."""
    load = im2col.make_load("im2col", (32, 9, 14, 1), (-1, -1), (-1, -1), 32, 16, (0, -1, -1, 0),
                            swizzle="64B", smem_address=0)
    placed = im2col.placement(load)
    assert placed[3 * 32].smem_address == 208
    for e in placed:
        linear = 64 * e.row + 2 * e.channel
        line, within = divmod(linear, 128)
        chunk, inside = divmod(within, 16)
        assert e.smem_address == 128 * line + 16 * ROW_64B[line % 4].index(chunk) + inside


def test_placement_none_is_dense_and_out_of_bounds_elements_are_filled():
    """No swizzle: element (r, k) at destination + r * row bytes + k * element size. Triton's padded box:
    pixel 0 (h = -1) is out of bounds, so its elements have no source and are filled (0, or OOB-NaN)."""
    load = dataclasses.replace(triton_load(1, (-1, -1), (-1, -1), (0, -1, -1, 0), (0, 0)), swizzle="NONE",
                          smem_address=0x200)
    placed = im2col.placement(load)
    assert [e.smem_address for e in placed] == [0x200 + 128 * r + 4 * k for r in range(16) for k in range(32)]
    assert placed[0].source is None and placed[5 * 32].source == (0, 0, 0, 0, 0)
    assert placed[0].as_json(im2col.fill_value(load))["fill"] == "0"
    assert im2col.fill_value(dataclasses.replace(load, oob_fill="nan")) == "OOB-NaN"


# === Constraint rules: a breaker for every one ======================================================
def im2col_valid(**changes):
    fields = dict(mode="im2col", tensor=(64, 9, 14, 4), lower=(-1, -1), upper=(-1, -1), channels_per_pixel=64,
                  pixels_per_column=64, coords=(0, -1, -1, 0), offsets=(0, 0), elem_bytes=2, swizzle="128B",
                  smem_address=0x400)
    fields.update(changes)
    return im2col.make_load(**fields)


def w_valid(mode="w", **changes):
    fields = dict(mode=mode, tensor=(64, 300, 7, 4), lower=(0,), upper=(0,), channels_per_pixel=64,
                  pixels_per_column=128, coords=(0, 0, 3, 0), w_halo=2, elem_bytes=2, swizzle="128B",
                  smem_address=0)
    fields.update(changes)
    return im2col.make_load(**fields)


BREAKERS = {
    "im2col.filter_base_in_box": im2col_valid(coords=(0, 8, -1, 0)),          # box W in [-1, 7]
    "tma.map.im2col.corner_range": im2col_valid(lower=(-129, -1)),                    # rank 4: [-128, 127]
    "tma.map.im2col.box_area": im2col_valid(upper=(-10, -1)),                    # W in [-1, -2]
    "im2col.offset_range": im2col_valid(offsets=(256, 0)),                    # rank 4: [0, 255]
    "tma.map.im2col.channels_range": im2col_valid(channels_per_pixel=512, elem_bytes=1, swizzle="NONE"),
    "tma.map.im2col.pixels_range": im2col_valid(pixels_per_column=1025),
    "tma.map.element_strides_range": im2col_valid(element_strides=(1, 9, 1, 1)),
    "tma.map.element_strides_inner": im2col_valid(element_strides=(2, 1, 1, 1)),
    "tma.map.im2col.channel_span": im2col_valid(swizzle="64B"),                        # 128 bytes > 64
    "tma.map.im2col.channels_16B": im2col_valid(channels_per_pixel=4),                     # 8 bytes
    "tma.box.destination_alignment": im2col_valid(smem_address=0x410),
    "im2col.w.first_element": w_valid(coords=(0, 300, 3, 0)),                 # box W in [0, 299]
    "im2col.w.whalo_range": w_valid("w128", w_halo=32),                       # w128: [0, 32)
    "im2col.w.woffset_range": w_valid(w_offset=32),
    "tma.map.im2col_wide.corner_range": w_valid(lower=(-40000,)),
    "im2col.w.swizzle": w_valid(swizzle="NONE"),
    "tma.map.im2col_wide.swizzle": w_valid(channels_per_pixel=16, swizzle="32B"),  # PTX allows 32B, the driver not
    "tma.map.im2col_wide.interleave": w_valid(interleave="16B"),
}


def test_every_im2col_rule_has_a_breaker():
    assert set(BREAKERS) == {r.id for r in rules_for("im2col_load")}


@pytest.mark.parametrize("rule_id", sorted(BREAKERS))
def test_im2col_rule_is_broken(rule_id):
    assert rule_id in [v.rule.id for v in im2col.violations(BREAKERS[rule_id])]


@pytest.mark.parametrize("load", [im2col_valid(), w_valid(), w_valid("w128"), w_valid(w_halo=511),
                                  w_valid("w128", w_halo=31, w_offset=31, swizzle="128B_ATOM_32B"),
                                  im2col_valid(tensor=(64, 9, 1000), lower=(-32768,), upper=(32767,),
                                               coords=(0, 0, 0), offsets=(65535,))],
                         ids=["im2col", "w", "w128", "w-halo-511", "w128-limits", "3d-limits"])
def test_valid_loads_break_nothing(load):
    assert im2col.violations(load) == []


def test_w_halo_limit_differs_by_mode():
    """wHalo 32 is fine in im2col::w ([0, 512)) and breaks im2col::w::128 ([0, 32))."""
    assert im2col.violations(w_valid(w_halo=32)) == []
    assert [v.rule.id for v in im2col.violations(w_valid("w128", w_halo=32))] == ["im2col.w.whalo_range"]


# === Malformed input names the field ================================================================
@pytest.mark.parametrize("field, changes", [
    ("mode", dict(mode="im2col::x")),
    ("tensor", dict(tensor=(64, 9))),
    ("tensor", dict(tensor=(64, 0, 14, 4), coords=(0, 0, 0, 0))),
    ("coords", dict(coords=(0, 0, 0))),
    ("lower", dict(lower=(-1,))),
    ("offsets", dict(offsets=(0,))),
    ("w_halo", dict(w_halo=2)),
    ("element_strides", dict(element_strides=(1, 1))),
    ("channels_per_pixel", dict(channels_per_pixel=0)),
    ("pixels_per_column", dict(pixels_per_column=None)),
    ("elem_bytes", dict(elem_bytes=3)),
    ("swizzle", dict(swizzle="256B")),
    ("smem_address", dict(smem_address=-16)),
    ("interleave", dict(interleave="8B")),
    ("oob_fill", dict(oob_fill="one")),
])
def test_malformed_input_names_the_field(field, changes):
    with pytest.raises(SpecError) as error:
        im2col_valid(**changes)
    assert error.value.field_name == field


def test_w_modes_take_no_im2col_offsets_and_footprints_need_a_w_mode():
    with pytest.raises(SpecError) as error:
        w_valid(offsets=(1,))
    assert error.value.field_name == "offsets"
    with pytest.raises(SpecError) as error:
        im2col.buffers_footprint(im2col_valid(), [(0, 0)])
    assert error.value.field_name == "mode"


# === layoutproof im2col ==============================================================================
def run_cli(argv):
    """`layoutproof ARGV` in-process: the exit status."""
    return main(argv)


SEED_W_ARGS = ["im2col", "--mode", "w", "--tensor", "128,9,7,64", "--lower", "0", "--upper", "0",
               "--channels-per-pixel", "64", "--pixels-per-column", "128", "--coords", "7,2,3,0",
               "--w-halo", "2", "--elem-bytes", "2", "--swizzle", "128B", "--smem-address", "0"]


def test_cli_json_for_the_seed_w_example(capsys):
    assert run_cli(SEED_W_ARGS + ["--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert len(document["pixels"]) == 130 and document["violations"] == []
    assert document["bounding_box"] == {"w": [0, 8], "h": [3, 3]} and document["mode"] == ".im2col::w"
    assert document["pixels"][0] == {"row": 0, "n": 0, "d": 0, "h": 3, "w": 2, "halo": False, "oob": False}
    assert [p["halo"] for p in document["pixels"][128:]] == [True, True]
    assert len(document["placement"]) == 130 * 64
    assert document["placement"][64] == {"row": 1, "channel": 7, "source": [0, 0, 3, 3, 7], "fill": None,
                                         "smem_address": 128 + 16}   # row 1: chunk 0 -> position 1


def test_cli_human_table_and_negative_lists(capsys):
    argv = ["im2col", "--mode", "im2col", "--tensor", "32,4,4,1", "--lower=-1,-1", "--upper=-1,-1",
            "--channels-per-pixel", "32", "--pixels-per-column", "16", "--coords=0,-1,-1,0",
            "--elem-bytes", "4", "--swizzle", "128B", "--smem-address", "0x400"]
    assert run_cli(argv) == 0
    text = capsys.readouterr().out
    assert "NHWC" in text and "violations: none" in text
    assert len([line for line in text.splitlines() if "OOB" in line and "main" in line]) == 7


def test_cli_violation_exits_1_and_malformed_exits_2(capsys):
    assert run_cli(SEED_W_ARGS[:-4] + ["--swizzle", "NONE", "--smem-address", "0", "--json"]) == 1
    found = json.loads(capsys.readouterr().out)["violations"]
    assert {v["rule"] for v in found} == {"im2col.w.swizzle", "tma.map.im2col_wide.swizzle"}
    assert run_cli(SEED_W_ARGS + ["--offsets", "1"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "offsets" in error
