"""The fast paths (a row at a time, table lookups) against spec's per-element reference functions:
exhaustive on small domains, seeded grids on larger ones. Each fast path must give the same values,
the same first counterexample and the same refusals; the CLI must print the same bytes."""
from __future__ import annotations

import contextlib
import io
import json
import random

import pytest

from spec.mma import dtypes
from spec.rule import SpecError
from spec.tma import im2col, place as tma_place, swizzle as tma_swizzle
from spec.cute.notation import parse_layout
from solver.cli import im2col as cli_im2col, render
from solver.cli import main as cli
from solver.synth import descriptor as synth
from solver.synth import recipe

MODES = tuple(tma_swizzle.MODES)


def assert_same(reference, fast):
    """fast() returns what reference() returns, or raises the SpecError it raises (the same message);
    the reference's value."""
    try:
        expected = reference()
    except SpecError as error:
        with pytest.raises(SpecError) as raised:
            fast()
        assert str(raised.value) == str(error)
        return None
    assert fast() == expected
    return expected


# --- spec.tma.swizzle.swizzle_byte_addresses / swizzle_byte_range / period_deltas (spec/fast/tma_swizzle.py)
@pytest.mark.parametrize("mode", MODES)
def test_swizzle_batch_exhaustive_over_small_addresses(mode):
    addresses = list(range(4 * tma_swizzle.pattern_period(mode) + 64))
    assert tma_swizzle.swizzle_byte_addresses(mode, addresses) == \
        tma_swizzle.swizzle_byte_addresses_by_element(mode, addresses) == \
        [tma_swizzle.swizzle_byte_address(mode, a) for a in addresses]


@pytest.mark.parametrize("mode", MODES)
def test_period_table_is_the_definition(mode):
    """period_deltas' table (spec.fast.tma_swizzle; the definitions keep none, no_period_deltas) places
    every address as swizzle_byte_address does, and says rightly whether it permutes each period."""
    assert tma_swizzle.no_period_deltas(mode) is None
    mask, delta, permutes = tma_swizzle.period_deltas(mode)
    period = mask + 1
    assert period == tma_swizzle.pattern_period(mode) and len(delta) == period
    rng = random.Random(mode)
    for a in list(range(3 * period)) + [rng.randrange(1 << 40) for _ in range(2000)]:
        assert a + delta[a & mask] == tma_swizzle.swizzle_byte_address(mode, a)
    assert permutes == (sorted(tma_swizzle.swizzle_byte_address(mode, r) for r in range(period)) == list(range(period)))


@pytest.mark.parametrize("mode", MODES)
def test_swizzle_batch_on_seeded_addresses_and_ranges(mode):
    rng = random.Random(19)
    addresses = [rng.randrange(1 << 32) for _ in range(3000)]
    assert tma_swizzle.swizzle_byte_addresses(mode, iter(addresses)) == \
        [tma_swizzle.swizzle_byte_address(mode, a) for a in addresses]
    for _ in range(200):
        start, count, step = rng.randrange(1 << 20), rng.randrange(0, 300), rng.choice((0, 1, 2, 4, 8, 16, 48, 128, 272))
        assert tma_swizzle.swizzle_byte_range(mode, start, count, step) == \
            [tma_swizzle.swizzle_byte_address(mode, start + i * step) for i in range(count)]


def test_swizzle_batch_refuses_what_the_reference_refuses():
    for mode, addresses in (("128B", [0, 16, -16]), ("128B", [0, -1, -32]), ("128B", range(-64, 64, 16)),
                            ("256B", [0]), ("256B", [])):
        assert_same(lambda: tma_swizzle.swizzle_byte_addresses_by_element(mode, addresses),
                    lambda: tma_swizzle.swizzle_byte_addresses(mode, addresses))
    with pytest.raises(SpecError):
        tma_swizzle.swizzle_byte_addresses("128B", [0, 16, -16])
    assert tma_swizzle.swizzle_byte_addresses("128B", []) == []


# --- spec.tma.place.place_rows (spec/fast/tma_place.py) ---------------------------------------------
def _boxes():
    rng = random.Random(7)
    for mode in MODES:
        span = tma_swizzle.mode_info(mode).span or 128
        for elem in (1, 2, 4, 8):
            for _ in range(3):
                inner = max(1, rng.choice((span, 16, 32, 64, 128)) // elem)
                dims = (inner, rng.randrange(1, 9)) + ((rng.randrange(1, 4),) if rng.random() < 0.5 else ())
                yield mode, elem, dims, rng.choice((0, 0x400, 0x480, 0x1000 + 16 * rng.randrange(64)))


@pytest.mark.parametrize("case", list(_boxes()), ids=str)
def test_place_rows_is_place(case):
    mode, elem, dims, address = case
    try:
        box = tma_place.make_box(mode, elem, dims, address)
    except SpecError:
        return
    assert_same(lambda: tma_place.place(box), lambda: tma_place.place_rows(box))


# --- solver.synth.descriptor.Tile.targets ------------------------------------------------------------
def _recipe_layouts():
    for dtype in ("bf16", "tf32", "e4m3", "e2m1", "e2m3"):
        d = dtypes.dtype(dtype)
        for major in ("K", "MN"):
            for swizzle in ("none", "32B", "64B", "128B"):
                per_row = recipe.ROW_BYTES[swizzle] * 8 // d.bits
                mn = max(per_row, 64) if major == "MN" else 64
                k_tile = 4 * max(per_row if major == "K" else 8, dtypes.default_instruction_k(d, dtypes.default_kind(d)))
                yield dtype, major, swizzle, mn, k_tile, recipe._layout(major, swizzle, per_row, mn, k_tile)


@pytest.mark.parametrize("case", list(_recipe_layouts()), ids=lambda c: "-".join(map(str, c[:5])))
def test_tile_targets_is_reference(case):
    dtype, major, swizzle, mn, k_tile, layout = case
    d = dtypes.dtype(dtype)
    kind = dtypes.default_kind(d)
    k = dtypes.default_instruction_k(d, kind)
    for k_offset in range(0, k_tile - k + 1, k):
        for start in (0, 0x400, 0x490):
            tile = synth.Tile("sm100", dtype, major, mn, k, k_offset, layout, start, kind)
            assert tile.targets() == tile.targets_reference()


def test_tile_targets_with_kept_offsets_of_other_extents():
    """The layout's offsets are kept across tiles: a tile smaller or larger than the last one, either way."""
    layout = recipe._layout("K", "128B", 64, 128, 128)
    kind = dtypes.default_kind(dtypes.dtype("bf16"))
    with synth.shared_work():
        for mn, k, k_offset in ((128, 16, 112), (8, 16, 0), (64, 32, 16), (128, 16, 0), (16, 8, 120), (128, 64, 64)):
            tile = synth.Tile("sm90", "bf16", "K", mn, k, k_offset, layout, 0x400, kind)
            assert tile.targets() == tile.targets_reference()
    assert synth._KEPT is None           # nothing is kept outside shared_work()


def test_syntheses_sharing_work_find_what_each_finds_alone():
    kind = dtypes.default_kind(dtypes.dtype("bf16"))
    for major, swizzle, per_row in (("K", "128B", 64), ("MN", "64B", 32), ("K", "none", 8)):
        layout = recipe._layout(major, swizzle, per_row, 64, 64)
        tiles = [synth.Tile("sm100", "bf16", major, 64, 16, k0, layout, 0x400, kind) for k0 in range(0, 64, 16)]
        alone = [synth.synthesize(t) for t in tiles]
        with synth.shared_work():
            shared = [synth.synthesize(t) for t in tiles]
        assert [(o.status, o.descriptor and o.descriptor.hex, o.ignored, o.reason) for o in shared] == \
            [(o.status, o.descriptor and o.descriptor.hex, o.ignored, o.reason) for o in alone]


@pytest.mark.parametrize("text", ["((8,16),(8,4)):((8,64),(1,1024))", "(64,16):(16,1)", "(32,(8,2)):(8,(1,256))",
                                  "Sw<2,4,3> o (64,32):(32,1)", "Sw<3,4,3> o 16 o ((8,8),(64,2)):((64,512),(1,4096))"])
def test_tile_targets_on_written_layouts(text):
    try:
        layout = parse_layout(text)
    except SpecError:
        pytest.skip("not a notation this parser takes")
    for dtype in ("f16", "e4m3", "tf32"):
        kind = dtypes.default_kind(dtypes.dtype(dtype))
        for k_offset in (0, 1, 3):
            tile = synth.Tile("sm90", dtype, "K", 16, 8, k_offset, layout, 0x800, kind)
            assert tile.targets() == tile.targets_reference()


# --- solver.synth.recipe: its proof is spec's recipe case, fast path or definition ---------------------
RECIPES = [("sm90", "bf16", "K", 64, 128, "128B", 0x400), ("sm90", "f16", "MN", 64, 32, "64B", 0x400),
           ("sm100", "e2m1", "K", 32, 256, "128B", 0x800), ("sm100", "tf32", "MN", 32, 16, "128B_atom32B", 0x400),
           ("sm100", "e4m3", "K", 16, 64, "none", 0x400), ("sm100", "bf16", "K", 16, 64, "128B", 0x480),
           ("sm100", "e4m3", "MN", 32, 64, "32B", 0x400), ("sm90", "bf16", "K", 24, 64, "32B", 0x2000)]


def _built(case):
    arch, dtype, major, mn, k_tile, swizzle, address = case
    kind = "mxf4" if dtype == "e2m1" else None
    return recipe.build(arch, dtype, major, mn, k_tile, swizzle, address, kind=kind, allow_unaligned=True)


@pytest.mark.parametrize("case", RECIPES, ids=lambda c: "-".join(map(str, c)))
def test_the_recipe_proof_is_the_same_with_fast_paths_off(case):
    """recipe._prove reads spec's recipe case (recipe_case.first_misread): by classes of rows while fast paths
    are on, element by element (first_misread_by_element) with them off; the same answers, also for a
    descriptor with one bit changed (the same first counterexample: k-step, mn, k order)."""
    from spec import fast
    r = _built(case)
    if not r.tma:
        pytest.skip("refused recipe: no TMA loads")
    rng = random.Random(case[3] * 1000 + case[4])
    tampered = [r]
    for _ in range(4):
        wrong = [dict(i) for i in r.instructions]
        target = rng.randrange(len(wrong))
        word = int(wrong[target]["descriptor"], 16) ^ (1 << rng.choice((0, 1, 2, 16, 17, 32, 33, 49)))
        wrong[target]["descriptor"] = f"{word:#018x}"
        tampered.append(recipe.Recipe(**{**r.__dict__, "instructions": wrong}))
    missing = [dict(i) for i in r.instructions]
    missing[-1].update(status="none", descriptor=None)
    tampered.append(recipe.Recipe(**{**r.__dict__, "instructions": missing}))
    for one in tampered:
        with fast.references_only():
            reference = lambda one=one: recipe._prove(one)       # noqa: E731
            try:
                expected = reference()
            except SpecError as error:
                expected = error
        if isinstance(expected, SpecError):
            with pytest.raises(SpecError):
                recipe._prove(one)
        else:
            assert recipe._prove(one) == expected


# --- spec.tma.im2col.placement_rows / placement_json (spec/fast/tma_im2col.py), render.im2col_placement_text
def _loads():
    yield im2col.make_load("im2col", (16, 4, 4, 1), (0, 0), (-1, -1), 16, 4, (0, 0, 0, 0), elem_bytes=2,
                           swizzle="NONE", smem_address=0x400)
    yield im2col.make_load("im2col", (16, 4, 4, 1), (-1, -1), (0, 0), 16, 32, (0, 0, 0, 0), elem_bytes=2,
                           swizzle="128B_ATOM_32B_FLIP_8B", smem_address=0x400, oob_fill="nan")
    yield im2col.make_load("im2col", (8, 5, 5, 3, 2), (-1, -1, -1), (1, 1, 1), 8, 64, (0, 1, 1, 1, 0),
                           elem_bytes=4, swizzle="64B", smem_address=0x200)
    yield im2col.make_load("w", (32, 16, 4, 2), (-2,), (2,), 32, 32, (0, 0, 1, 0), w_halo=2, w_offset=1,
                           elem_bytes=1, swizzle="128B_ATOM_64B", smem_address=0x400)
    yield im2col.make_load("w128", (64, 256, 2, 1), (0,), (0,), 64, None, (0, 0, 0, 0), elem_bytes=2,
                           swizzle="128B", smem_address=0x400)
    # channels past the tensor's C (filled), and before 0
    yield im2col.make_load("im2col", (24, 6, 6, 1), (-1, -1), (0, 0), 32, 16, (8, 0, 0, 0), elem_bytes=2,
                           swizzle="64B", smem_address=0x400)
    yield im2col.make_load("im2col", (24, 6, 6, 1), (-1, -1), (0, 0), 16, 16, (-8, 1, 0, 0), elem_bytes=4,
                           swizzle="32B", smem_address=0x600, oob_fill="nan")
    rng = random.Random(5)
    for _ in range(12):
        elem = rng.choice((1, 2, 4, 8))
        c = rng.choice((8, 16, 32, 64))
        yield im2col.make_load("im2col", (c, rng.randrange(2, 7), rng.randrange(2, 7), 2),
                               (-rng.randrange(0, 2), -rng.randrange(0, 2)), (rng.randrange(0, 2), rng.randrange(0, 2)),
                               rng.choice((8, 16, 32)) * 8 // (8 * elem) or 1, rng.choice((4, 16, 40)),
                               (rng.randrange(-4, 8), rng.randrange(-1, 3), rng.randrange(-1, 3), rng.randrange(0, 2)),
                               elem_bytes=elem, swizzle=rng.choice(MODES), smem_address=0x400 + 128 * rng.randrange(8),
                               oob_fill=rng.choice(("zero", "nan")))


@pytest.mark.parametrize("index", range(19))
def test_im2col_placement_fast_paths(index):
    load = list(_loads())[index]
    placed = assert_same(lambda: im2col.placement_json_by_element(load), lambda: im2col.placement_json(load))
    if placed is not None:
        assert placed == [e.as_json(im2col.fill_value(load)) for e in im2col.placement(load)]
        assert render.im2col_placement_text(load).text == json.dumps(placed)
    assert_same(lambda: im2col.placement_rows_by_element(load), lambda: im2col.placement_rows(load))
    if placed is not None:
        loaded = im2col.pixels(load)
        assert im2col.placement_rows(load, loaded) == im2col.placement_rows_by_element(load, loaded)


def test_dumps_with_json_text_is_json_dumps():
    document = {"a": 1, "b": [1, {"x": None}], "c": "é\n\"", "placement": [{"row": 0}, {"fill": "0"}]}
    spliced = dict(document, placement=render.JSONText(json.dumps(document["placement"])))
    assert render.dumps(spliced) == json.dumps(document)
    assert render.dumps({}) == json.dumps({})
    assert render.dumps(document) == json.dumps(document)
    assert render.dumps([1, {"a": None}]) == json.dumps([1, {"a": None}])


# --- the commands: the same bytes as the reference paths ---------------------------------------------
def _cli(argv) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            cli.main(argv)
        except SystemExit:
            pass
    return out.getvalue()


@pytest.mark.parametrize("argv", [
    "im2col --mode im2col --tensor 16,4,4,1 --lower=-1,-1 --upper=0,0 --channels-per-pixel 16 --pixels-per-column 32 "
    "--coords 0,0,0,0 --elem-bytes 2 --swizzle 128B --smem-address 0x400 --json",
    "im2col --mode im2col --tensor 24,6,6,1 --lower=-1,-1 --upper=0,0 --channels-per-pixel 32 --pixels-per-column 16 "
    "--coords 8,0,0,0 --elem-bytes 2 --swizzle 64B --smem-address 0x400 --json --oob-fill nan",
])
def test_im2col_json_is_the_reference_document(argv):
    args = cli.build_parser().parse_args(argv.split()) if hasattr(cli, "build_parser") else None
    if args is None:
        pytest.skip("no parser to read the arguments with")
    load = cli_im2col.load_from_args(args)
    found = im2col.violations(load)
    document = cli_im2col.document(load, found)
    fill = im2col.fill_value(load)
    document["placement"] = [e.as_json(fill) for e in im2col.placement(load)]
    assert _cli(argv.split()) == json.dumps(document) + "\n"


@pytest.mark.parametrize("case", RECIPES[:4], ids=lambda c: "-".join(map(str, c)))
def test_recipe_json_is_the_reference_document(case):
    from spec import fast
    arch, dtype, major, mn, k_tile, swizzle, address = case
    argv = ["recipe", "--arch", arch, "--dtype", dtype, "--major", major, "--mn", str(mn), "--k-tile", str(k_tile),
            "--swizzle", swizzle, "--smem-address", hex(address), "--allow-unaligned", "--json"]
    if dtype == "e2m1":
        argv += ["--kind", "mxf4"]
    printed = json.loads(_cli(argv))
    with fast.references_only():
        r = _built(case)
    assert printed["proof"] == r.proof
    assert printed["instructions"] == r.instructions


# --- spec.mma.readmap.first_misread (spec/fast/mma_readmap.py) ---------------------------------------
def _operands(count=150):
    from spec.mma import descriptor as spec_descriptor, readmap
    rng = random.Random(11)
    made = 0
    while made < count:
        arch = rng.choice(("sm90", "sm100", "sm103"))
        swizzle = rng.choice(sorted(spec_descriptor.swizzle_codes(arch)))
        lbo_mode = None if arch == "sm90" else rng.choice(("relative", "relative", "absolute"))
        try:
            desc = spec_descriptor.encode(arch, 16 * rng.randrange(1 << 12), 16 * rng.randrange(1, 1 << 8),
                                          16 * rng.randrange(1, 1 << 8), swizzle, rng.randrange(8), lbo_mode)
            op = readmap.make_operand(desc, rng.choice(("bf16", "e4m3", "tf32", "e2m1", "e2m3")),
                                      rng.choice(("K", "MN")), 8 * rng.randrange(1, 9))
        except SpecError:
            continue
        made += 1
        yield op


@pytest.mark.parametrize("model", ("hardware", "anchored", "absolute"))
def test_first_misread_is_the_first_difference(model):
    from spec.mma import readmap
    rng = random.Random(model)
    for op in _operands():
        read = readmap.read_addresses(op, model)
        assert readmap.first_misread(op, read, model) is None
        wrong = [list(row) for row in read]
        mn, k = rng.randrange(op.mn), rng.randrange(op.k)
        wrong[mn][k] += 16
        if rng.random() < 0.5 and mn + 1 < op.mn:
            wrong[mn + 1][0] += 1          # a later difference does not count
        assert readmap.first_misread(op, wrong, model) == (mn, k)
        other = readmap.read_addresses(op, "absolute" if model == "hardware" else "hardware")
        first = next(((m, j) for m in range(op.mn) for j in range(op.k) if read[m][j] != other[m][j]), None)
        assert readmap.first_misread(op, other, model) == first
        for expected in (read, wrong, other, wrong[:5], [row[:3] for row in wrong], wrong[:9] + [[]]):
            assert readmap.first_misread(op, expected, model) == readmap.first_misread_by_element(op, expected, model)


# --- a changed reference definition reaches the fast paths -------------------------------------------
def test_a_replaced_or_changed_tma_swizzle_reaches_the_batch(monkeypatch):
    addresses = list(range(0, 4096, 8))
    tma_swizzle.swizzle_byte_addresses("128B", addresses)          # the differences are kept
    original = tma_swizzle.swizzle_byte_address
    monkeypatch.setattr(tma_swizzle, "swizzle_byte_address", lambda mode, a: 0x480 + original(mode, a - 0x480)
                        if a >= 0x480 else a)
    assert tma_swizzle.swizzle_byte_addresses("128B", addresses) == \
        [tma_swizzle.swizzle_byte_address("128B", a) for a in addresses]
    monkeypatch.undo()
    monkeypatch.setitem(tma_swizzle._TABLES, "128B", tma_swizzle._TABLES["64B"])
    assert tma_swizzle.swizzle_byte_addresses("128B", addresses) == \
        [tma_swizzle.swizzle_byte_address("128B", a) for a in addresses]


def _fast_paths_off(monkeypatch):
    """What a test that changes a definition does (tests/mutants.py): spec.fast's one switch, off."""
    from spec import fast
    monkeypatch.setattr(fast, "ENABLED", False)


def test_a_changed_swizzle_or_byte_reaches_tile_targets(monkeypatch):
    layout = recipe._layout("K", "128B", 64, 64, 64)
    tile = synth.Tile("sm90", "bf16", "K", 64, 16, 16, layout, 0x400, dtypes.default_kind(dtypes.dtype("bf16")))
    before = tile.targets()
    _fast_paths_off(monkeypatch)
    monkeypatch.setattr(type(layout.swizzle), "__call__", lambda self, offset: offset)
    assert tile.targets() == tile.targets_reference() != before
    monkeypatch.undo()
    _fast_paths_off(monkeypatch)
    monkeypatch.setattr(dtypes, "byte_in_chunk", lambda d, kind, i: 0)
    assert tile.targets() == tile.targets_reference() != before


def test_a_changed_element_address_reaches_the_recipe_proof(monkeypatch):
    from spec.mma import readmap
    r = recipe.build("sm90", "bf16", "K", 64, 64, "128B", 0x400)
    assert r.proof["status"] == "proved"
    original = readmap.k_part          # (a definition the reads are made of: read_addresses, element_address)
    _fast_paths_off(monkeypatch)
    monkeypatch.setattr(readmap, "k_part", lambda op, k: (lambda o: (o[0], o[1] + 16 * (k == 3)))(original(op, k)))
    proof = recipe._prove(r)
    assert proof["status"] == "refuted" and proof["element"] == [0, 3]


@pytest.mark.parametrize("extra", [[], ["--map"], ["--full"], ["--json"]])
def test_desc_addresses_prints_what_it_printed(extra):
    """The text is made only without --json now: the same bytes either way."""
    from spec.mma import descriptor as spec_descriptor, readmap
    argv = ["desc", "addresses", "--arch", "sm90", "0x4000004000010040", "--dtype", "bf16", "--major", "K",
            "--mn", "64"] + extra
    d = spec_descriptor.decode("sm90", 0x4000004000010040)
    op = readmap.make_operand(d, "bf16", "K", 64)
    addresses = readmap.read_addresses(op)
    found = [v.as_json() for v in readmap.violations(op)]
    if "--json" in extra:
        expected = json.dumps({"arch": d.arch, "descriptor": d.hex, "fields": d.fields_json(), "dtype": "bf16",
                               "kind": op.kind, "major": "K", "mn": 64, "k": op.k, "phase_model": "hardware",
                               "addresses": addresses, "violations": found})
    else:
        expected = render.address_table(op, addresses, found, full="--full" in extra)
        if "--map" in extra:
            expected += "\n" + render.chunk_map(op, addresses)
    assert _cli(argv) == expected.rstrip("\n") + "\n"


# --- solver.cli.render.int_rows: `desc addresses --json` writes its rows as text --------------------------
@pytest.mark.parametrize("rows", [[], [[]], [[0]], [[1, -2, 3], [], [2 ** 70, 0]],
                                  [[random.Random(seed).randrange(-10 ** 6, 10 ** 9) for _ in range(seed % 7)]
                                   for seed in range(40)]])
def test_int_rows_is_json_dumps(rows):
    assert render.int_rows(rows).text == json.dumps(rows)


def test_desc_addresses_json_is_the_document_json_dumps_writes():
    from spec.mma import descriptor, readmap
    argv = ["desc", "addresses", "--arch", "sm90", "0x4000004000010040", "--dtype", "bf16", "--major", "K",
            "--mn", "256", "--json"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli.main(argv) == 0
    document = json.loads(out.getvalue())
    op = readmap.make_operand(descriptor.decode("sm90", 0x4000004000010040), "bf16", "K", 256)
    assert document["addresses"] == readmap.read_addresses(op)
    assert out.getvalue() == json.dumps(document) + "\n"


def test_the_fast_paths_are_registered_and_one_switch_turns_them_off():
    """spec.fast (issue 30): each fast path is registered against its reference, and with fast paths off
    every caller gets the reference."""
    from spec import fast
    from spec.cases import recipe_case
    from spec.fast import cases_recipe_case
    found = fast.registered()
    assert found[recipe_case.first_misread_by_element] is cases_recipe_case.first_misread
    with fast.references_only():
        assert not fast.enabled() and fast.fastest(recipe_case.first_misread_by_element) is \
            recipe_case.first_misread_by_element
    assert fast.enabled() and fast.fastest(recipe_case.first_misread_by_element) is cases_recipe_case.first_misread