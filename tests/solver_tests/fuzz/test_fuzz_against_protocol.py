"""`layoutproof fuzz --against CMD` holds its adapter to the line protocol (issue 25 item 12): one answer line per
record, strictly in turn, within a deadline (--answer-timeout) and a size limit; an adapter that answers twice,
answers before it is asked, reads all its input before answering, never answers, floods blank lines, writes
a line of 300 MB, ends inside a line or answers JSON nested too deep is one line on stderr, exit 2, on every
executor, and in about the deadline, not for ever. The adapter: tests/fuzz_against_stand_in.py's modes."""
from __future__ import annotations

import os
import time

import pytest

from solver.fuzz import compiler_campaign
from tests.solver_tests.fuzz.test_fuzz_against_jobs import CAMPAIGNS, STAND_IN, _cli

DEADLINE = "1.5"         # seconds an answer may take in these runs (--answer-timeout): room for a loaded
                         # machine to start the adapter (a Python process) before its first answer
SLOW = 15                # seconds no run here comes near: the deadline plus starting the adapter, generously
VALID = CAMPAIGNS["desc-valid"]

BROKEN = {   # stand-in mode -> what the one line says
    "--twice": "wrote more than one answer line to case 0",
    "--twice --empty": "wrote more than one answer line to case 0, the second '{}'",
    "--answer-first": "more than",          # one more than the records, or two for the first
    "--read-all": f"gave no answer to case 0 within {DEADLINE} s (--answer-timeout",
    "--silent": f"gave no answer to case 0 within {DEADLINE} s (--answer-timeout",
    "--no-newline": f"gave no answer to case 0 within {DEADLINE} s (--answer-timeout",
    "--blank-forever": f"wrote more than {compiler_campaign.MAX_ANSWER_BYTES} bytes without an answer line",
    "--huge-line": f"wrote more than {compiler_campaign.MAX_ANSWER_BYTES} bytes without an answer line",
    "--no-newline-exit": "ended inside its answer line to case 0 (no newline)",
    "--deep": "JSON nested too deep",
}


def _broken_run(capsys, mode: str, where: str) -> tuple:
    started = time.monotonic()
    code, out, err = _cli(capsys, ["fuzz", *VALID, "--against", f"{STAND_IN} {mode}", "--answer-timeout", DEADLINE,
                                   *where.split()])
    return code, out, err, time.monotonic() - started


@pytest.mark.parametrize("mode", sorted(BROKEN))
def test_an_adapter_that_breaks_the_pairing_deadline_or_size_is_one_line_exit_2(capsys, mode):
    code, out, err, seconds = _broken_run(capsys, mode, "--jobs 1")
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert "--against adapter" in err and BROKEN[mode] in err and seconds < SLOW


def _running(pid: int) -> bool:
    """Whether the process runs (a zombie waiting for its parent to reap it does not)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:                                     # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


@pytest.mark.parametrize("mode", ["--silent", "--no-newline", "--blank-forever"])
def test_an_adapter_that_broke_the_protocol_is_ended_with_what_it_started(capsys, tmp_path, mode):
    """CMD runs under /bin/sh -c: the adapter is the shell's child, and it is ended too (it would wait for ever
    on a record nobody reads the answer of)."""
    pids = tmp_path / "pids"
    pids.mkdir()
    code, _, _, _ = _broken_run(capsys, f"{mode} --pids {pids}", "--jobs 2")
    started = [int(name) for name in os.listdir(pids)]
    deadline = time.monotonic() + 5
    while any(map(_running, started)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert code == 2 and started and not any(map(_running, started))


@pytest.mark.parametrize("mode", ["--twice", "--silent", "--blank-forever"])
def test_the_same_with_adapters_in_several_processes(capsys, mode):
    code, out, err, seconds = _broken_run(capsys, mode, "--jobs 3")
    # which case's answer comes first is up to the processes: the message names one of them
    assert code == 2 and out == "" and err.count("\n") == 1 and seconds < SLOW, err
    assert BROKEN[mode].split(" to case")[0].split(" within")[0] in err


def test_the_same_on_a_cluster(capsys):
    pytest.importorskip("distributed")
    for mode in ("--twice --empty", "--silent"):
        code, out, err, seconds = _broken_run(capsys, mode, "--scheduler local")
        assert code == 2 and out == "" and err.count("\n") == 1 and seconds < SLOW + 30, err
        assert BROKEN[mode].split(" to case")[0].split(" within")[0] in err


def test_an_answer_within_the_deadline_is_taken(capsys):
    """The deadline is per answer: a campaign of 70 answers in well under a second each passes, with the
    default and with a short deadline, and lists what one adapter process lists."""
    plain = _cli(capsys, ["fuzz", *VALID, "--against", STAND_IN])
    short = _cli(capsys, ["fuzz", *VALID, "--against", STAND_IN, "--answer-timeout", "5"])
    assert plain == short and plain[0] == 1


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "1e9", "soon", ""])
def test_a_bad_answer_timeout_is_one_line_exit_2(capsys, value):
    code, out, err = _cli(capsys, ["fuzz", *VALID, "--against", STAND_IN, f"--answer-timeout={value}"])
    assert code == 2 and out == "" and err.count("\n") == 1 and "--answer-timeout" in err


def test_an_answer_timeout_without_against_is_one_line_exit_2(capsys):
    code, out, err = _cli(capsys, ["fuzz", *VALID, "--answer-timeout", "3"])
    assert code == 2 and out == "" and err.count("\n") == 1 and "--answer-timeout" in err and "--against" in err
