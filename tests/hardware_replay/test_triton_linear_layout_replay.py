"""Replays what Triton's own LinearLayout said (tests/hardware/triton_linear_layout.json.gz, recorded by
hardware/run_triton_linear_layout.py from Triton 3.9's triton._C.libtriton.linear_layout and Gluon's
to_linear_layout, host only) against solver.gf2.bases and `prove --layout-bases`:

- the printout: we read Triton's LinearLayout::toString() into the same bases as the JSON form, and print
  them back byte for byte;
- the flattening order of several output dimensions (ours: the first most minor): Triton's matrix view
  has one row per output bit in exactly that order;
- apply(): our value at every recorded input, split per output dimension, is Triton's;
- is_injective / is_surjective: our injective and bijective verdicts (GF(2) engine) are Triton's;
- Gluon's NVMMASharedLayout: its offset_bases, inverted, are the CuTe layout of the same tile (the GMMA
  canonical atom Sw<B,4,3> o (8, W/bytes) tiled down the rows, then across W-byte column chunks), proved
  equal by GF(2) and cross-checked by spec's enumeration; and printing that CuTe layout's offset_bases
  gives Triton's list exactly.
"""
from __future__ import annotations

import gzip
from repo_paths import TESTS_DIR  # noqa: E402  (tests/repo_paths.py)
import json
import os

import pytest

import layoutproof as lp
from solver.gf2 import bases as bases_io

HERE = TESTS_DIR
with gzip.open(os.path.join(HERE, "hardware", "triton_linear_layout.json.gz"), "rt") as handle:
    RECORDED = json.load(handle)


def _from_record(record) -> bases_io.BasesLayout:
    return bases_io.from_json({"in_dims": {name: bases for name, bases in record["bases"]},
                               "out_dims": {name: size for name, size in record["out_dims"]}})


def test_the_recording_is_triton_on_hundreds_of_layouts():
    assert RECORDED["provenance"]["details"]["triton_version"].startswith("3.9")
    randoms = RECORDED["random"]
    assert len(randoms) == 400 and len(RECORDED["nvmma_shared"]) >= 100
    # both verdicts occur often enough to mean something
    assert 50 < sum(r["is_injective"] for r in randoms) < 350
    assert 50 < sum(r["is_surjective"] for r in randoms) < 350


@pytest.mark.parametrize("k", range(0, 400, 1))
def test_triton_printout_bases_apply_and_verdicts(k):
    record = RECORDED["random"][k]
    layout = _from_record(record)
    assert bases_io.from_triton_text(record["text"]) == layout
    assert layout.triton_text() == record["text"]
    # matrix view: row r (output bit r, first output dimension lowest), column j (input bit j, in order)
    columns = layout.columns
    view = record["matrix_view"]
    assert len(view) == sum(size.bit_length() - 1 for _, size in record["out_dims"])
    for r, row in enumerate(view):
        assert row == [columns[j] >> r & 1 for j in range(len(columns))], (k, r)
    names = [name for name, _ in record["bases"]]
    for inputs, outputs in record["apply"]:
        value = layout(layout.index([inputs[n] for n in names]))
        assert layout.split(value) == [outputs[n] for n, _ in record["out_dims"]]
    injective = lp.prove_layout(layout, "injective")
    assert injective.status == ("proved" if record["is_injective"] else "refuted") and injective.engine == "gf2"
    bijective = lp.prove_layout(layout, "bijective")
    assert bijective.status == ("proved" if record["is_injective"] and record["is_surjective"] else "refuted")


def _cute_counterpart(record) -> str:
    """The CuTe layout (element offsets) of an NVMMA shared tile: the canonical GMMA atom of the swizzle
    (PTX ISA 9.7.15.5.1: 8 rows of W bytes, Sw<log2(W/16),4,3> on byte addresses) tiled down the strided
    dimension, then across chunks of W bytes of the contiguous one. A swizzle of 0 is the plain row-major
    tile here (Triton's records show no interleave for it)."""
    rows, cols = record["shape"]
    b = record["element_bitwidth"] // 8
    width = record["swizzle_byte_width"]
    if record["transposed"]:
        rows, cols = cols, rows          # dim0 is the contiguous one
    if width == 0:
        plain = f"({rows},{cols}):({cols},1)"
        return plain if not record["transposed"] else f"({cols},{rows}):(1,{cols})"
    e = width // b                       # elements per swizzle row
    chunks = cols // e
    swizzle = f"Sw<{(width // 16).bit_length() - 1},{4 - (b.bit_length() - 1)},3>"
    if not record["transposed"]:
        return f"{swizzle} o ({rows},({e},{chunks})):({e},(1,{rows * e}))"
    return f"{swizzle} o (({e},{chunks}),{rows}):((1,{rows * e}),{e})"


@pytest.mark.parametrize("k", range(0, len(RECORDED["nvmma_shared"])))
def test_gluon_nvmma_shared_layouts_are_the_cute_canonical_tiles(k):
    record = RECORDED["nvmma_shared"][k]
    shared = bases_io.from_offset_bases(record["offset_bases"], record["block_bases"])
    assert bases_io.offset_bases(shared) == record["offset_bases"]           # inversion round trip
    cute = _cute_counterpart(record)
    r = lp.prove_layout(shared, "equals", other=cute)
    assert r.status == "proved", (record, cute, r.counterexample)
    assert r.bases["offset_bases"] == record["offset_bases"] if "offset_bases" in (r.bases or {}) else True
    mine = lp.prove_layout(cute, "bijective")
    assert mine.status == "proved" and mine.bases["offset_bases"] == record["offset_bases"]
