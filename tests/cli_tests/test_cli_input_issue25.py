"""Issue 25, command-line input: a descriptor pasted without its 0x is refused, not decoded as another
word (item 3); `tmem plan` prints any plan it finds (item 9); a tensor-map document reports every
malformed key that does not depend on a malformed one (item 11); an answer that cannot be written to
standard output, and an empty --svg / --png, are exit 2 naming the field (item 15).

Expectations come from the issue's examples, from independent readings of the same text (Python's
int(text, 16) and int(text, 10)), from the --json document of the same run (holders[m][n], built apart
from the text's sample column), and from the manual's word widths (a shared-memory descriptor is 64 bits:
PTX ISA 9.7.15.5.1.2.2)."""
from __future__ import annotations

import contextlib
from repo_paths import ROOT_DIR  # noqa: E402  (tests/repo_paths.py)
import errno
import io
import json
import os
import random
import re
import subprocess
import sys

import pytest

from solver.cli.main import main
from spec.rule import SpecError
from spec.tma import tensormap_params as tp

REPOSITORY = ROOT_DIR
WORD = 0x4000004000010040          # docs/CLI.md's sm90 example: start 0x400, LBO 16, SBO 1024, 128B


def run(argv, stdout=None):
    """(status, stdout text, stderr text) of main(argv) in-process; `stdout`: the stream to write to."""
    out, err = stdout or io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(list(argv))
        except SystemExit as stop:
            status = stop.code
    return status, (out.getvalue() if stdout is None else ""), err.getvalue()


def one_line_naming(err: str, *names) -> bool:
    lines = err.rstrip("\n").split("\n")
    return len(lines) == 1 and len(lines[0]) < 300 and any(name in lines[0] for name in names)


# --- item 3: a descriptor word without its 0x ------------------------------------------------------------
DESC_COMMANDS = [
    ["desc", "decode", "--arch", "sm90", "{word}"],
    ["desc", "addresses", "--arch", "sm90", "{word}", "--dtype", "bf16", "--major", "K", "--mn", "8"],
    ["check", "{word}", "--arch", "sm90", "--dtype", "bf16", "--major", "K", "--mn", "64", "--layout",
     "Sw<3,4,3> o ((8,8),64):((64,512),1)", "--start-address", "0x400"],
]


def with_word(command, word_text):
    return [word_text if token == "{word}" else token for token in command]


@pytest.mark.parametrize("command", DESC_COMMANDS)
def test_the_issue_word_pasted_without_0x_is_refused_with_a_hint(command):
    # the issue: `desc decode --arch sm90 4000004000010040` decoded 0x000e35fb81854f38 and exited 1
    status, out, err = run(with_word(command, format(WORD, "x")))
    assert status == 2 and out == ""
    assert one_line_naming(err, "descriptor") and "0x" in err
    assert f"{WORD:#018x}" in err                               # the word it would be read as with 0x


@pytest.mark.parametrize("command", DESC_COMMANDS)
def test_hex_letters_without_0x_get_the_hint(command):
    status, _, err = run(with_word(command, "12ab"))
    assert status == 2 and one_line_naming(err, "descriptor") and "0x12ab" in err


def _decoded(text: str):
    """(status, the word decode reports or None)."""
    status, out, _ = run(["desc", "decode", "--arch", "sm90", text, "--json"])
    return status, (int(json.loads(out)["descriptor"], 16) if status in (0, 1) else None)


def _bare_texts():
    rng = random.Random(25)
    texts = [str(d) for d in range(10)] + ["10", "16", "0000000000000010", "9" * 16, "1" + "0" * 16,
                                            str(WORD), str((1 << 64) - 1), "1" * 20]
    texts += ["".join(rng.choice("0123456789") for _ in range(rng.randint(1, 20))) for _ in range(40)]
    return texts


@pytest.mark.parametrize("text", _bare_texts())
def test_a_bare_number_is_never_read_as_another_word_than_its_hex_reading(text):
    """Soundness: a bare string of digits is decoded only when its decimal reading is the one word it can
    be: the same value as its hex reading, or a hex reading that does not fit 64 bits."""
    as_hex, as_decimal = int(text, 16), int(text, 10)
    status, word = _decoded(text)
    if as_hex == as_decimal:
        assert (status, word) in ((0, as_decimal), (1, as_decimal))
    elif as_hex < 1 << 64:
        assert status == 2 and word is None
    elif as_decimal < 1 << 64:                     # cannot be hex: the decimal word
        assert status in (0, 1) and word == as_decimal
    else:
        assert status == 2


@pytest.mark.parametrize("text", [f"{WORD:#x}", f"{WORD:#X}".replace("0X", "0x"), "0X4000004000010040",
                                  "0x4000_0040_0001_0040", "0x0", "0xffffffffffffffff"])
def test_0x_words_still_decode_to_their_hex_value(text):
    status, word = _decoded(text)
    assert status in (0, 1) and word == int(text.replace("_", ""), 16)


# --- item 9: tmem plan's text for every plan it finds ---------------------------------------------------
_SAMPLE = re.compile(r"t(\d+) %r(\d+) = ([^;]+)")
_ELEMENT = re.compile(r"D\[(\d+)\]\[(\d+)\]")


def _samples(text: str):
    """(instruction index, thread, register, [(m, n)]) of each sample in the per-warp tables."""
    for line in text.splitlines():
        cells = line.split(None, 3)
        if len(cells) == 4 and cells[0].isdigit():
            for thread, register, held in _SAMPLE.findall(cells[3]):
                yield int(cells[0]), int(thread), int(register), [(int(m), int(n)) for m, n in _ELEMENT.findall(held)]


@pytest.mark.parametrize("m, n, dtype, registers, extra", [
    (128, 16, "f32", 1, []),           # the issue's case
    (64, 16, "f32", 1, []), (128, 16, "f16", 1, []), (64, 32, "bf16", 1, []), (128, 256, "s32", 1, []),
    (256, 16, "f32", 1, ["--cta-group", "2"]), (128, 16, "f32", 2, []), (128, 32, "f16", 3, []),
    (128, 16, "f32", 1, ["--warps", "0,1,2,3,4,5,6,7"]), (64, 16, "f16", 2, ["--lane-offset", "16"]),
])
def test_plan_text_shows_only_registers_that_exist_and_who_holds_them(m, n, dtype, registers, extra):
    argv = ["tmem", "plan", "--m", str(m), "--n", str(n), "--dtype", dtype, "--registers", str(registers), *extra]
    status, text, err = run(argv)
    json_status, out, _ = run(argv + ["--json"])
    assert status == json_status == 0, err
    document = json.loads(out)
    samples = list(_samples(text))
    assert samples and {index for index, *_ in samples} == set(range(len(document["instructions"])))
    for index, thread, register, elements in samples:
        instruction = document["instructions"][index]
        assert register < instruction["registers"]
        for row, column in elements:                # holders[m][n] = [warp, thread, instruction, register, half]
            assert document["holders"][row][column][:4] == [instruction["warp"], thread, index, register]


# --- item 11: every malformed key of a tensor-map document ----------------------------------------------
def _tiled():
    with open(os.path.join(REPOSITORY, "examples", "tensormap_tiled_bf16.json"), encoding="utf-8") as handle:
        return json.load(handle)


@pytest.mark.parametrize("rank", ["two", -1, 1.5, True, None, 1 << 40])
def test_a_malformed_rank_does_not_hide_the_keys_that_do_not_depend_on_it(rank):
    document = dict(_tiled(), rank=rank, dataType="BOGUS", swizzle=7, interleave=[], globalDim=["a", 4])
    with pytest.raises(tp.DocumentErrors) as error:
        tp.parse_params(document)
    named = [e.field_name for e in error.value.errors]
    # the argument order of cuTensorMapEncodeTiled: dataType, rank, globalAddress, globalDim, ...
    assert named == ["dataType", "rank", "globalDim[0]", "interleave", "swizzle"]


def test_a_malformed_rank_leaves_list_lengths_unjudged():
    # globalDim has 3 entries: with rank 2 that is malformed, with an unreadable rank it has no length to have
    document = dict(_tiled(), rank="two", globalDim=[1, 2, 3])
    with pytest.raises(tp.DocumentErrors) as error:
        tp.parse_params(document)
    assert [e.field_name for e in error.value.errors] == ["rank"]


def test_an_unknown_encoder_does_not_hide_the_keys_every_encoder_takes():
    document = dict(_tiled(), encode="tiles", dataType="BOGUS", swizzle="96B")
    with pytest.raises(tp.DocumentErrors) as error:
        tp.parse_params(document)
    assert [e.field_name for e in error.value.errors] == ["encode", "dataType", "swizzle"]


def test_tma_check_json_lists_every_malformed_key(tmp_path):
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(dict(_tiled(), rank="two", dataType="BOGUS", swizzle=7)))
    status, out, err = run(["tma", "check", "--params", str(path), "--arch", "sm90", "--json"])
    assert status == 2 and one_line_naming(err, "dataType") and "rank" in err and "swizzle" in err
    assert [m["field"] for m in json.loads(out)["malformed"]] == ["dataType", "rank", "swizzle"]


@pytest.mark.parametrize("patch", [{"rank": "two", "dataType": "BOGUS"}, {"encode": "tiles", "swizzle": 7},
                                   {"rank": -1, "globalDim": ["a"]}])
def test_the_model_still_calls_these_documents_malformed(patch):
    """tests/differential.py compares the two readers on malformed documents: both must refuse."""
    from solver.model import tensormap as tm
    document = dict(_tiled(), **patch)
    with pytest.raises(SpecError):
        tp.parse_params(document)
    with pytest.raises(tm.MalformedDocument):
        tm.read_document(document, "sm90")


# --- item 15: standard output that cannot be written; empty paths ----------------------------------------
class _FullStream(io.TextIOBase):
    """A standard output on a full disk: every write fails as /dev/full's does."""

    def writable(self):
        return True

    def write(self, text):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


SMALL_COMMANDS = [
    ["desc", "decode", "--arch", "sm90", f"{WORD:#x}"],
    ["desc", "encode", "--arch", "sm90", "--start-address", "0x400", "--lbo", "16", "--sbo", "1024", "--swizzle",
     "128B"],
    ["tma", "schema"],
    ["tma", "place", "--swizzle", "32B", "--elem-bytes", "4", "--box", "8,2", "--smem-address", "0x100"],
    ["tmem", "map", "--op", "ld", "--shape", "32x32b", "--num", "x128"],
    ["tmem", "plan", "--m", "64", "--n", "16", "--dtype", "f32"],
    ["rules", "desc.sm90.layout"],
]


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
@pytest.mark.parametrize("argv", SMALL_COMMANDS)
def test_an_unwritable_stdout_is_exit_2_naming_stdout(argv, json_flag):
    status, _, err = run(argv + json_flag, stdout=_FullStream())
    assert status == 2 and one_line_naming(err, "stdout")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("argv", [
    ["desc", "decode", "--arch", "sm90", f"{WORD:#x}"],                                   # the issue's example
    ["desc", "decode", "--arch", "sm90", f"{WORD:#x}", "--json"],
    ["desc", "addresses", "--arch", "sm90", "0x4000004000000040", "--dtype", "bf16", "--major", "K", "--mn", "256",
     "--full", "--json"],                                                                # a long answer
    ["--version"],
])
def test_dev_full_as_stdout_is_exit_2_naming_stdout(argv):
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "layoutproof", *argv], stdout=full, stderr=subprocess.PIPE,
                              text=True, cwd=REPOSITORY, timeout=120)
    assert proc.returncode == 2 and one_line_naming(proc.stderr, "stdout"), proc.stderr


def test_a_closed_stdout_is_exit_2_naming_stdout():
    # `layoutproof ... >&-`: no standard output at all (Python's sys.stdout is None)
    command = f"'{sys.executable}' -m layoutproof desc decode --arch sm90 {WORD:#x} >&-"
    proc = subprocess.run(["sh", "-c", command], stderr=subprocess.PIPE, text=True, cwd=REPOSITORY, timeout=120)
    assert proc.returncode == 2 and one_line_naming(proc.stderr, "stdout"), proc.stderr


@pytest.mark.skipif(not os.path.exists("/bin/sh"), reason="needs a shell")
def test_a_reader_that_leaves_early_is_no_error():
    # `| head -c 1`: the broken pipe stays exit 0 and quiet (no 'Exception ignored' from the exit flush)
    command = f"'{sys.executable}' -m layoutproof tmem map --op ld --shape 32x32b --num x128 | head -c 1"
    proc = subprocess.run(["sh", "-c", f"{command} >/dev/null; exit 0"], stderr=subprocess.PIPE, text=True,
                          cwd=REPOSITORY, timeout=120)
    assert proc.stderr == ""


@pytest.mark.parametrize("option", ["--svg", "--png"])
@pytest.mark.parametrize("argv", [
    ["tma", "place", "--swizzle", "32B", "--elem-bytes", "4", "--box", "8,2", "--smem-address", "0x100"],
    ["desc", "addresses", "--arch", "sm90", "0x4000004000000040", "--dtype", "bf16", "--major", "K", "--mn", "8"],
    ["tmem", "map", "--op", "ld", "--shape", "32x32b", "--num", "x4"],
])
def test_an_empty_picture_path_is_refused(argv, option):
    status, out, err = run(argv + [option, ""])
    assert status == 2 and out == "" and one_line_naming(err, option)


def _has_matplotlib() -> bool:
    from solver.pictures import png
    return png.available()


@pytest.mark.skipif(not _has_matplotlib(), reason="needs matplotlib")
def test_png_is_written_to_the_path_given(tmp_path):
    # matplotlib appends .png to a path without a suffix: `--png /dev/full` wrote /dev/full.png, exit 0
    path = tmp_path / "picture"
    status, _, err = run(SMALL_COMMANDS[3] + ["--png", str(path)])
    assert status == 0, err
    assert path.read_bytes().startswith(b"\x89PNG") and not (tmp_path / "picture.png").exists()


@pytest.mark.skipif(not (_has_matplotlib() and os.path.exists("/dev/full")), reason="needs matplotlib, /dev/full")
def test_png_on_a_full_device_is_exit_2_naming_png():
    status, _, err = run(SMALL_COMMANDS[3] + ["--png", "/dev/full"])
    assert status == 2 and one_line_naming(err, "png")
    assert not os.path.exists("/dev/full.png")


# --- item 3 in documents: spec reads every descriptor through one parser ------------------------------------
def test_a_document_descriptor_string_without_0x_is_refused_and_an_integer_is_taken_as_is():
    from spec.mma import descriptor as desc_mod
    assert desc_mod.parse_word(WORD) == WORD                      # a JSON number is a number
    assert desc_mod.parse_word(f"{WORD:#x}") == WORD
    with pytest.raises(SpecError, match="descriptor.*0x4000004000010040"):
        desc_mod.parse_word(format(WORD, "x"))
    with pytest.raises(SpecError, match="64 bits"):
        desc_mod.parse_word(1 << 64)


@pytest.mark.parametrize("option", ["--out", "--against"])
def test_fuzz_refuses_an_empty_out_or_against(option):
    status, _, err = run(["fuzz", "--target", "desc", "--count", "1", "--arch", "sm90", option, ""])
    assert status == 2 and one_line_naming(err, option)
