"""The held-out check of issue 28: `scales map` against scale swizzles of quantizers and kernel libraries
this project was not written from (tests/hardware/scales_heldout.json.gz, recorded by
hardware/run_scales_heldout.py from vLLM, TensorRT-LLM, Transformer Engine, FlashInfer, triton_kernels,
DeepGEMM and SGLang, each reproduced with torch from its public source).

What each implementation is expected to do comes from reading its source, not from this project's code:
five produce cuBLAS's 128 x 4 layout for every shape (as does torchao's to_blocked, the evidence recorded
beside them); SGLang's (a copy of an older vLLM) only for shapes
already aligned to 128 x 4, refusing the others; triton_kernels pads K blocks to a multiple of 8, not 4;
DeepGEMM packs four K blocks into an int32 stored MN-major, and its Mega-MoE path interleaves rows as
cuBLAS does but orders the 512-byte atoms K tile first."""
from __future__ import annotations

import gzip
from repo_paths import TESTS_DIR  # noqa: E402  (tests/repo_paths.py)
import json
import os

import pytest

import layoutproof as lp

HERE = TESTS_DIR
RECORD = json.load(gzip.open(os.path.join(HERE, "hardware", "scales_heldout.json.gz"), "rt"))
BY_NAME = {i["name"]: i for i in RECORD["implementations"]}
CUBLAS = ("vllm", "tensorrt-llm", "transformer-engine", "flashinfer", "flashinfer-unswizzle", "torchao")


def _positions(layout: dict) -> dict:
    """(r, c) -> the byte the implementation put S[r][c] at."""
    blocks = layout["blocks"]
    found = {divmod(value, blocks): at for at, value in enumerate(layout["bytes"]) if value >= 0}
    assert len(found) == layout["rows"] * blocks          # every scale once
    return found


def _map(rows: int, blocks: int, block_padding: int = 4):
    padded = -(-blocks // block_padding) * block_padding
    return lp.scales_map("interleaved", rows, padded * 16, 16)


def test_the_record_holds_every_implementation_and_shape():
    assert set(BY_NAME) == set(CUBLAS) | {"triton-kernels", "deepgemm", "deepgemm-mega-moe", "sglang"}
    # torchao's to_blocked is evidence the layout was written from, SGLang's a copy of vLLM's: not held out
    assert all(len(i["layouts"]) == 13 for i in RECORD["implementations"])
    assert sum(i["independent"] for i in RECORD["implementations"]) == 8


@pytest.mark.parametrize("name", CUBLAS)
def test_scales_map_reproduces_every_byte_and_the_padding(name):
    for layout in BY_NAME[name]["layouts"]:
        rows, blocks = layout["rows"], layout["blocks"]
        found = lp.scales_map("interleaved", rows, blocks * 16, 16)
        positions = _positions(layout)
        assert all(positions[(r, c)] == found.offsets[r][c] for r in range(rows) for c in range(blocks)), (rows, blocks)
        assert len(layout["bytes"]) == found.footprint


def test_sglang_agrees_where_aligned_and_refuses_the_rest():
    for layout in BY_NAME["sglang"]["layouts"]:
        rows, blocks = layout["rows"], layout["blocks"]
        aligned = rows % 128 == 0 and blocks % 4 == 0
        assert ("error" not in layout) == aligned
        if aligned:
            found = lp.scales_map("interleaved", rows, blocks * 16, 16)
            positions = _positions(layout)
            assert all(positions[(r, c)] == found.offsets[r][c] for r in range(rows) for c in range(blocks))


def test_triton_kernels_is_the_interleaved_layout_with_blocks_padded_to_8():
    for layout in BY_NAME["triton-kernels"]["layouts"]:
        rows, blocks = layout["rows"], layout["blocks"]
        positions = _positions(layout)
        padded8 = _map(rows, blocks, 8)
        assert all(positions[(r, c)] == padded8.offsets[r][c] for r in range(rows) for c in range(blocks))
        plain = _map(rows, blocks)
        same = all(positions[(r, c)] == plain.offsets[r][c] for r in range(rows) for c in range(blocks))
        # with an odd number of 4-block tiles, each 128-row tile takes one more 512-byte atom of padding
        assert same == (rows <= 128 or -(-blocks // 4) % 2 == 0), (rows, blocks)


def test_deepgemm_packs_mn_major_words_which_no_modelled_layout_is():
    for layout in BY_NAME["deepgemm"]["layouts"]:
        rows, blocks = layout["rows"], layout["blocks"]
        positions = _positions(layout)
        aligned_rows = -(-rows // 4) * 4
        assert all(positions[(r, c)] == ((c // 4) * aligned_rows + r) * 4 + c % 4
                   for r in range(rows) for c in range(blocks))
        if rows > 4 and blocks > 4:      # (one word per row, blocks <= 4, with rows a multiple of 4, is linear-k)
            for name in ("interleaved", "linear-k", "linear-mn"):
                found = lp.scales_map(name, rows, blocks * 16, 16)
                assert any(positions[(r, c)] != found.offsets[r][c] for r in range(rows) for c in range(blocks))


def test_deepgemm_mega_moe_orders_the_atoms_k_tile_first():
    for layout in BY_NAME["deepgemm-mega-moe"]["layouts"]:
        rows, blocks = layout["rows"], layout["blocks"]
        if "error" in layout:
            assert rows % 128            # it asserts whole 128-row groups
            continue
        positions = _positions(layout)
        found = _map(rows, blocks)
        same = all(positions[(r, c)] == found.offsets[r][c] for r in range(rows) for c in range(blocks))
        assert same == (rows == 128 or -(-blocks // 4) == 1), (rows, blocks)
