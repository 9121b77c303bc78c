"""Issue 17: hostile input never hangs, crashes or prints a bad message.

The kept campaign (tests/hostile/cases.jsonl, made by `python -m tests.hostile.campaign generate`) runs
here in-process through solver.cli.main.main, standard streams captured: no traceback, no exit 3, no
case over the time limit, and every exit-2 message one line, under 300 characters, naming the field the
case spoiled. `python -m tests.hostile.campaign run` runs the same cases as processes under a memory
limit. The unit tests below pin the individual fixes, with the legal limits taken from the manuals.
"""
from __future__ import annotations

import contextlib
import io
import json
import signal
import sys
import tempfile

import pytest

from solver.cli.main import main
from tests.hostile import campaign

IN_PROCESS_LIMIT_S = 20


class _TooSlow(BaseException):
    """Raised by the alarm: a BaseException, so that no `except Exception` of the code under test eats it."""


def _alarm(signum, frame):
    raise _TooSlow()


def run_in_process(argv, stdin=None):
    """(status, stdout, stderr) of main(argv) with stdin replaced by `stdin` (a text stream or None)."""
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin
    sys.stdin = stdin
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main(argv)
            except SystemExit as stop:          # --help, --version
                status = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 2)
            except _TooSlow:
                raise
            except BaseException as error:      # noqa: BLE001 - what would be a traceback
                status = "traceback"
                err.write(f"Traceback (most recent call last): {type(error).__name__}: {error}\n")
    finally:
        sys.stdin = saved
    return status, out.getvalue(), err.getvalue()


def _stdin_for(spec):
    if spec is None:
        return io.StringIO("")
    if spec == "closed":
        return None
    if isinstance(spec, str):
        return open(spec, encoding="utf-8")
    return io.StringIO(campaign.content(spec).decode("utf-8"))


def run_case(case: dict) -> list:
    with tempfile.TemporaryDirectory(prefix="hostile-") as folder:
        argv = campaign.materialise(case, folder)
        stdin = _stdin_for(case.get("stdin"))
        previous = signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(IN_PROCESS_LIMIT_S)
        try:
            status, stdout, stderr = run_in_process(argv, stdin)
        except _TooSlow:
            status, stdout, stderr = "timeout", "", ""
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)
            if stdin is not None:
                stdin.close()
    return campaign.judge(case, status, stdout, stderr, 0.0)


CASES = campaign.load()


def test_the_kept_campaign_is_large_and_covers_every_command():
    assert len(CASES) >= 4000
    commands = {c["argv"][0] for c in CASES if c["argv"]}
    for name in ("desc", "synth", "check", "recipe", "tma", "tmem", "im2col", "prove", "rules", "fuzz", "ptx"):
        assert name in commands
    assert [c["id"] for c in CASES] == list(range(len(CASES)))


def test_the_kept_campaign_is_what_the_seed_generates():
    assert campaign.generate(campaign.SEED) == CASES


SHARDS = 4          # (the campaign in four parts, so that pytest -n spreads it over the workers)


@pytest.mark.parametrize("shard", range(SHARDS))
def test_the_kept_campaign(monkeypatch, shard):
    monkeypatch.chdir(campaign.REPOSITORY)
    monkeypatch.delenv("LAYOUTPROOF_DEBUG", raising=False)
    failures = []
    for case in CASES[shard::SHARDS]:
        problems = run_case(case)
        if problems:
            failures.append((case["id"], problems, case["argv"][:6]))
    assert not failures, f"{len(failures)} cases misbehaved, first: {failures[:10]}"


# --- The fixes one by one ------------------------------------------------------------------------------------
def run(*argv, stdin=None):
    return run_in_process(list(argv), io.StringIO("") if stdin is None else stdin)


def one_line_error(err: str) -> str:
    lines = err.rstrip("\n").split("\n")
    assert len(lines) == 1, err
    assert len(lines[0]) < campaign.MESSAGE_LIMIT, lines[0]
    return lines[0]


# The largest legal values, from the manuals (not from the code under test):
SMEM_BYTES = 228 * 1024           # shared memory of one SM (CUDA C++ Programming Guide, compute capability 9.0/10.0)
MAX_BOX_DIM = 256                 # cuTensorMapEncodeTiled: boxDim[i] <= 256
MAX_MN = 256                      # PTX ISA wgmma / tcgen05.mma: M and N at most 256


@pytest.mark.parametrize("option, value", [("--mn", "1000000000"), ("--k", "1000000000"), ("--k", "0")])
def test_desc_addresses_refuses_sizes_beyond_any_instruction(option, value):
    argv = ["desc", "addresses", "--arch", "sm90", "0x4000004000010040", "--dtype", "bf16", "--major", "K",
            "--mn", "64", option, value]
    status, out, err = run(*argv)
    assert status == 2
    message = one_line_error(err)
    assert campaign.names_field(message, [option.lstrip("-")]), message
    if value == "0":
        assert "mn_extent" not in message


def test_desc_addresses_at_the_largest_legal_mn_still_works():
    status, out, _ = run("desc", "addresses", "--arch", "sm100", "0x4000004000010040", "--dtype", "bf16",
                         "--major", "K", "--mn", str(MAX_MN), "--json")
    assert status in (0, 1)
    assert len(json.loads(out)["addresses"]) == MAX_MN


@pytest.mark.parametrize("mn, k_tile", [("1000000000", "32"), ("64", "1000000000")])
def test_recipe_refuses_huge_tiles(mn, k_tile):
    status, _, err = run("recipe", "--arch", "sm90", "--dtype", "f16", "--major", "MN", "--mn", mn, "--k-tile",
                         k_tile, "--swizzle", "64B", "--smem-address", "0x800")
    assert status in (1, 2)
    if status == 2:
        assert campaign.names_field(one_line_error(err), ["mn", "k_tile"])


def _place(*argv):
    return run("tma", "place", *argv, "--json")


def test_tma_place_applies_the_228_KiB_rule():
    # 256 x 256 x 4 one-byte elements: 256 KiB in one load, more than one SM's shared memory
    status, out, _ = _place("--swizzle", "NONE", "--box", "256,256,4", "--elem-bytes", "1", "--smem-address", "0")
    assert 256 * 256 * 4 > SMEM_BYTES
    assert status == 1
    rules = {v["rule"] for v in json.loads(out)["violations"]}
    assert "tma.map.box_bytes" in rules


def test_tma_place_largest_legal_box_is_placed():
    # 128 x 256 x 3 two-byte elements: 192 KiB, within one SM's 228 KiB, every dimension within 256
    status, out, _ = _place("--swizzle", "NONE", "--box", "128,256,3", "--elem-bytes", "2", "--smem-address", "0")
    assert 128 * 256 * 3 * 2 <= SMEM_BYTES
    assert status == 0
    assert len(json.loads(out)["offsets"]) == 128 * 256 * 3


@pytest.mark.parametrize("box, elem", [("100000,100000", "16"), ("256,256,256", "2"), ("256,256,256,256,256", "1")])
def test_tma_place_refuses_huge_boxes_before_placing(box, elem):
    status, out, err = _place("--swizzle", "128B", "--elem-bytes", elem, "--box", box, "--smem-address", "0x400")
    assert status in (1, 2)
    if status == 1:
        document = json.loads(out)
        assert document["violations"]
        assert not document["offsets"]
    else:
        assert campaign.names_field(one_line_error(err), ["box"])


def test_tma_box_names_global_dim():
    status, _, err = run("tma", "box", "--dtype", "f16", "--rows", "64", "--inner", "64", "--global-dim", "0,0",
                         "--global-strides", "2048", "--arch", "sm90")
    assert status == 2
    message = one_line_error(err)
    assert "global_dim" in message and "max()" not in message


@pytest.mark.parametrize("option, value", [("--channels-per-pixel", "1000000000"), ("--pixels-per-column", "100000")])
def test_im2col_refuses_huge_loads(option, value):
    argv = {"--mode": "im2col", "--tensor": "16,4,4,1", "--lower": "0,0", "--upper": "-1,-1",
            "--channels-per-pixel": "16", "--pixels-per-column": "4", "--coords": "0,0,0,0", "--elem-bytes": "2",
            "--swizzle": "NONE", "--smem-address": "0x400"}
    argv[option] = value
    status, out, err = run("im2col", *[f"{k}={v}" for k, v in argv.items()], "--json")
    assert status in (1, 2)
    if status == 1:
        assert json.loads(out)["violations"]
    else:
        one_line_error(err)


def test_tma_check_caps_the_document(tmp_path):
    status, _, err = run("tma", "check", "--params", "/dev/zero", "--arch", "sm90")
    assert status == 2
    assert "params" in one_line_error(err)
    big = tmp_path / "big.json"
    big.write_text("{\"x\": \"" + "a" * (2 * 1024 * 1024) + "\"}")
    status, _, err = run("tma", "check", "--params", str(big), "--arch", "sm90")
    assert status == 2
    assert "params" in one_line_error(err)


@pytest.mark.parametrize("text", ["{\"rank\": " + "9" * 5000 + "}", "[" * 100000 + "]" * 100000])
def test_hostile_json_is_malformed_input(tmp_path, text):
    path = tmp_path / "doc.json"
    path.write_text(text)
    status, _, err = run("tma", "check", "--params", str(path), "--arch", "sm90")
    assert status == 2
    assert "params" in one_line_error(err)


def test_closed_stdin_is_malformed_input():
    status, _, err = run_in_process(["tma", "check", "--params", "-", "--arch", "sm90"], None)
    assert status == 2
    assert "params" in one_line_error(err)


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "0", "-1"])
def test_prove_timeout_must_be_a_finite_positive_number(value):
    status, _, err = run("prove", "swizzle.cute.bijective", "--timeout", value)
    assert status == 2
    assert "timeout" in one_line_error(err)


def test_prove_counterexamples_into_a_non_folder():
    status, _, err = run("prove", "swizzle.cute.bijective", "--counterexamples", "/dev/null", "--timeout", "20")
    assert status == 2
    assert campaign.names_field(one_line_error(err), ["save", "counterexamples"])


def test_huge_numbers_are_quoted_short():
    status, _, err = run("desc", "encode", "--arch", "sm90", "--start-address", "0x" + "f" * 3600, "--lbo", "16",
                         "--sbo", "1024", "--swizzle", "128B")
    assert status == 2
    assert "start" in one_line_error(err)
    status, _, err = run("prove", "--layout", "(8,8):(" + "9" * 5000 + ",1)", "injective")
    assert status == 2
    one_line_error(err)


def test_long_and_multi_line_values_are_cut_and_escaped():
    status, _, err = run("rules", "--subject", "a" * 100000)
    assert status == 2
    assert "100000 characters" in one_line_error(err)
    status, _, err = run("desc", "decode", "--arch", "sm90\nsm100", "0x40")
    assert status == 2
    assert "\\n" in one_line_error(err)


@pytest.mark.parametrize("digits", ["١٦", "１６", "٣"])
def test_non_ascii_digits_are_not_numbers(digits):
    status, _, err = run("desc", "encode", "--arch", "sm90", "--start-address", digits, "--lbo", "16", "--sbo",
                         "1024", "--swizzle", "128B")
    assert status == 2
    assert "start" in one_line_error(err)


def test_rules_unknown_subject_lists_the_subjects():
    status, _, err = run("rules", "--subject", "bogus")
    assert status == 2
    message = one_line_error(err)
    assert "subject" in message and "descriptor" in message and "tma_box" in message


def test_keyboard_interrupt_exits_130_quietly(monkeypatch):
    from solver.cli import rules as rules_command

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(rules_command, "run", interrupted)
    status, out, err = run("rules")
    assert status == 130
    assert err == "" and out == ""


@pytest.mark.parametrize("argv", [
    ["prove", "--layout", "(64,64):(64,1)", "written-by", "--tma", "{zero}", "--arch", "sm90"],
    ["prove", "--layout-bases", "{zero}", "injective"],
    ["prove", "--layout", "(8,8):(8,1)", "equals", "{zero}"],
    ["tmem", "alloc", "--ops", "{zero}"],
])
def test_every_document_is_read_with_a_cap(tmp_path, argv):
    zero = tmp_path / "endless.json"          # a file name that looks like a document, holding /dev/zero
    zero.symlink_to("/dev/zero")
    status, _, err = run(*[str(zero) if a == "{zero}" else a for a in argv])
    assert status == 2
    assert "1048576 bytes" in one_line_error(err)


def test_a_parameter_range_too_long_to_count_is_malformed():
    status, _, err = run("prove", "--layout", "(128,128):(S,1)", "--dtype", "bf16", "--param",
                         "S=1.." + "9" * 99, "injective")
    assert status == 2
    assert "param" in one_line_error(err)


def test_the_recorded_process_runs_cover_the_kept_campaign_and_found_nothing():
    """tests/hostile/last_run.json (the kept cases as processes, under the memory limit) and heldout_run.json
    (a sample drawn with another seed) are re-run when the campaign changes: same count, no failure."""
    import os
    for name in ("last_run.json", "heldout_run.json"):
        with open(os.path.join(os.path.dirname(campaign.CASES), name), encoding="utf-8") as handle:
            record = json.load(handle)
        assert record["cases"] == len(CASES), name
        assert record["failures"] == [] and record["exit_3"] == 0 and record["tracebacks"] == 0, name
