"""examples/hypothesis_builder_test.py, the README's way of testing your own descriptor builder (issue 29):
it passes as shipped, its builder's words differ from the strategy's where the MMA does not look (why it
compares reads), and a builder whose SBO is one swizzle row off fails with a report that names the tile,
both descriptors and the first element read elsewhere, every line of it shown by pytest."""
from __future__ import annotations

import importlib.util
from repo_paths import ROOT_DIR  # noqa: E402  (tests/repo_paths.py)
import os
import re
import subprocess
import sys
import textwrap

ROOT = ROOT_DIR
EXAMPLE = os.path.join(ROOT, "examples", "hypothesis_builder_test.py")
# wgmma descriptor fields (PTX ISA 9.7.15.5.1.2.2): (low bit, width); byte values stored >> 4
START, SBO, SWIZZLE = (0, 14), (32, 14), (62, 2)
SWIZZLE_ROWS = {1: 8, 2: 4, 3: 2}           # 128B, 64B, 32B: 128-byte lines per pattern (PTX 9.7.16.10.6)
ROW_BYTES = {1: 128, 2: 64, 3: 32}


def field(word: int, where: tuple) -> int:
    low, width = where
    return (word >> low) & ((1 << width) - 1)


def pytest_run(path: str, cwd: str, *options: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *options, path], cwd=cwd,
                          capture_output=True, text=True, timeout=600)


def load_example():
    spec = importlib.util.spec_from_file_location("hypothesis_builder_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_example_passes(tmp_path):
    run = pytest_run(EXAMPLE, str(tmp_path))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "2 passed" in run.stdout


def test_the_example_builder_differs_in_bits_the_mma_does_not_read():
    """The reason for same_reads: the builder writes LBO = 16 ('assumed to be 1'), the strategy's generator
    another value, for most tiles; both read the same bytes."""
    example = load_example()
    from solver.fuzz import strategies as fuzz_strategies
    records = fuzz_strategies._records("desc", "sm90", (), 60, 0, tile=dict(dtype="bf16", major="K", swizzle="128B"))
    built = [(example.make_smem_desc(example.strategies.tile_of(r)), r) for r in records]
    assert any(word != int(r["case"]["descriptor"], 16) for word, r in built)
    assert all(example.strategies.same_reads(word, r["case"]["descriptor"], r) for word, r in built)


WRONG_BUILDER = '''
    import importlib.util

    spec = importlib.util.spec_from_file_location("hypothesis_builder_example", {example!r})
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    right = example.make_smem_desc
    ROW_BYTES = {{"128B": 128, "64B": 64, "32B": 32}}


    def sbo_one_row_off(tile):
        return right(tile) + ((ROW_BYTES[tile["swizzle"]] >> 4) << 32)


    example.make_smem_desc = sbo_one_row_off
    test_the_wrong_builder = example.test_the_builder_reads_what_the_tile_holds
'''


def swizzled(address: int, code: int) -> int:
    """The address a swizzled descriptor reads for linear address `address`, base offset 0: bits [4,7) XOR the
    128-byte line index modulo the pattern's lines (PTX 9.7.16.10.6; the H100's phase, rule readmap.swizzle_phase)."""
    return address ^ (((address >> 7) % SWIZZLE_ROWS[code]) << 4)


def test_a_wrong_builder_is_caught_with_the_whole_story(tmp_path):
    test_file = tmp_path / "test_wrong_builder.py"
    test_file.write_text(textwrap.dedent(WRONG_BUILDER.format(example=EXAMPLE)))
    run = pytest_run(str(test_file), str(tmp_path), "--hypothesis-seed=0")
    report = run.stdout
    assert run.returncode == 1, report + run.stderr
    found = re.search(r"E\s+AssertionError: the descriptors read the tile differently: element \(mn=(\d+), k=(\d+)\) "
                      r"is read at (0x[0-9a-f]+) by built, at (0x[0-9a-f]+) by expected", report)
    assert found, report
    mn, k, read_built, read_expected = int(found[1]), int(found[2]), int(found[3], 16), int(found[4], 16)
    tile = re.search(r"E\s+tile:\s+sm90 bf16 K-major mn=(\d+) k=16 at (0x[0-9a-f]+): "
                     r"Sw<\d,4,3> o \(\(8,\d+\),\(\d+,1\)\)", report)
    built = re.search(r"E\s+built:\s+(0x[0-9a-f]{16})  start_address=\S+ leading_byte_offset=\S+ "
                      r"stride_byte_offset=(0x[0-9a-f]+) base_offset=0 swizzle=\w+", report)
    expected = re.search(r"E\s+expected:\s+(0x[0-9a-f]{16})  .*stride_byte_offset=(0x[0-9a-f]+)", report)
    assert tile and built and expected, report
    assert re.search(r"E\s+fields that differ: .*stride_byte_offset", report), report
    built_word, expected_word = int(built[1], 16), int(expected[1], 16)
    code = field(built_word, SWIZZLE)
    # the wrong builder's SBO is one swizzle row past the right one, and the message's fields are the words'
    assert (field(built_word, SBO) - field(expected_word, SBO)) << 4 == ROW_BYTES[code]
    assert int(built[2], 16) == field(built_word, SBO) << 4 and int(expected[2], 16) == field(expected_word, SBO) << 4
    # rows 0..7 do not read SBO; row 8 (k = 0: the first byte of the row) is the first that does: the
    # addresses are the start plus SBO, swizzled (PTX 9.7.15.5.1)
    assert (mn, k) == (8, 0) and int(tile[1]) > 8
    start = field(expected_word, START) << 4
    assert start == int(tile[2], 16)
    assert read_built == swizzled(start + (field(built_word, SBO) << 4), code)
    assert read_expected == swizzled(start + (field(expected_word, SBO) << 4), code)
