"""`layoutproof fuzz --against CMD` spread over adapter processes (`--jobs N`) or a Dask cluster
(`--scheduler`; a LocalCluster here, the code path of a real cluster's `tcp://...`), through the compiler
campaigns' runner (solver/fuzz/compiler_campaign.py, its generic `ADAPTER`): the same bytes on stdout and
the same exit status for every executor and number of processes, equal to one adapter process given every
record on its stdin (how `--against` ran before, kept here as the reference); an adapter that cannot run
or breaks the protocol is one line, exit 2, on every executor. The adapters: a stand-in
(tests/fuzz_against_stand_in.py, its verdict a function of the record) and the shipped ptxas adapter."""
from __future__ import annotations

import json
from repo_paths import TESTS_DIR  # noqa: E402  (tests/repo_paths.py)
import os
import subprocess
import sys

import pytest

from solver.cli.main import main
from solver.fuzz import campaign
from tests.solver_tests.fuzz import test_fuzz_ptx

HERE = TESTS_DIR
STAND_IN = f"{sys.executable} {os.path.join(HERE, 'fuzz_against_stand_in.py')}"
PTXAS_ADAPTER = f"{sys.executable} -m solver.fuzz.adapters.ptxas"
ptxas = test_fuzz_ptx.ptxas    # the fixture: ptxas on PATH; else a failure or, with LAYOUTPROOF_NO_PTXAS=1, a skip
CAMPAIGNS = {   # ours "accept" (valid cases) and "refuse" (a rule ptxas or the driver refuses)
    "desc-valid": ["--target", "desc", "--arch", "sm90", "--valid", "--count", "70", "--seed", "4"],
    "tensormap-refused": ["--target", "tensormap", "--arch", "sm90", "--violate", "tma.map.rank", "--count", "70",
                          "--seed", "2"],
}


def _cli(capsys, argv):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def one_process(command: str, records: list) -> list:
    """The reference: one process of CMD with every record on its stdin; the records whose verdict differs
    from the one their label gives (refused: "refuse", any other outcome: "accept"), null verdicts left out."""
    process = subprocess.run(command, shell=True, capture_output=True, text=True,
                             input="".join(json.dumps(r) + "\n" for r in records))
    answers = [json.loads(line) for line in process.stdout.splitlines() if line.strip()]
    assert process.returncode == 0 and len(answers) == len(records), process.stderr
    differences = []
    for record, answer in zip(records, answers):
        ours = "refuse" if record["outcome"] == "refused" else "accept"
        if answer["verdict"] is not None and answer["verdict"] != ours:
            differences.append({"index": record["index"], "ours": ours, "theirs": answer["verdict"],
                                "detail": answer["detail"], "violates": record["violates"],
                                "outcome": record["outcome"], "case": record["case"]})
    return differences


@pytest.fixture
def small_chunks(monkeypatch):
    """Generation in chunks of 40 cases, so that --jobs spreads it over processes too."""
    monkeypatch.setattr(campaign, "CHUNK", 40)


@pytest.mark.parametrize("name", sorted(CAMPAIGNS))
def test_every_executor_prints_the_bytes_of_one_adapter_process(capsys, small_chunks, name):
    code, jsonl, _ = _cli(capsys, ["fuzz", *CAMPAIGNS[name]])
    records = [json.loads(line) for line in jsonl.splitlines()]
    expected = one_process(STAND_IN, records)
    assert code == 0 and len(records) == 70 and 10 < len(expected) < 60     # some differ, some agree
    for json_flag in ([], ["--json"]):
        runs = {where: _cli(capsys, ["fuzz", *CAMPAIGNS[name], "--against", STAND_IN, *json_flag, *where.split()])
                for where in ("--jobs 1", "--jobs 3", "--scheduler local")}
        assert len(set(runs.values())) == 1, {where: run[0] for where, run in runs.items()}
        code, out, err = runs["--jobs 1"]
        listed = json.loads(out)["differences"] if json_flag else [json.loads(line) for line in out.splitlines()]
        assert code == 1 and listed == expected
        if json_flag:
            assert json.loads(out)["cases"] == records
        else:
            assert err == f"fuzz: {len(expected)} of 70 cases where {STAND_IN!r} differs from us\n"


def test_jobs_n_runs_n_adapter_processes_and_blank_answer_lines_are_skipped(capsys, tmp_path):
    pids = tmp_path / "pids"
    pids.mkdir()
    argv = ["fuzz", *CAMPAIGNS["desc-valid"]]
    one = _cli(capsys, [*argv, "--against", STAND_IN])
    three = _cli(capsys, [*argv, "--jobs", "3", "--against", f"{STAND_IN} --blank-lines --pids {pids}"])
    assert one[:2] == three[:2] and one[0] == 1                # stderr names the command
    assert len(os.listdir(pids)) == 3


def test_the_ptxas_adapter_in_two_processes_agrees_as_in_one(capsys, ptxas):
    for rule in (["--valid"], ["--violate", "operand.instruction_k"]):
        argv = ["fuzz", "--target", "desc", "--arch", "sm90", "--count", "12", "--seed", "3", *rule, "--json",
                "--against", PTXAS_ADAPTER]
        one, two = _cli(capsys, argv), _cli(capsys, [*argv, "--jobs", "2"])
        assert one == two and one[0] == 0 and json.loads(one[1])["differences"] == [], one[1][:500]


@pytest.mark.parametrize("mode, says", [
    ("--exit-at-once", "exited with status 4 before answering: stand-in: cannot start (asked to)"),
    ("--end-after 3", "ended (status 0) with cases unanswered: stand-in: stopping after 3 answers"),
    ("--not-json", "answered 'no verdict here', not JSON"),
    ("--not-object", "answered '[\"accept\"]', not a JSON object"),
    ("--extra-line", "answer line(s) more than the records it was sent"),
    ("--fail-at-end", "exited with status 3 at the end of its input: stand-in: failing at the end (asked to)"),
])
@pytest.mark.parametrize("where", ["--jobs 1", "--jobs 2"])
def test_an_adapter_that_fails_or_breaks_the_protocol_is_one_line_exit_2(capsys, mode, says, where):
    code, out, err = _cli(capsys, ["fuzz", *CAMPAIGNS["desc-valid"], "--against", f"{STAND_IN} {mode}",
                                   *where.split()])
    assert code == 2 and out == "" and err.count("\n") == 1 and says in err and "--against" in err


def test_on_a_cluster_a_failing_adapter_is_one_line_exit_2(capsys):
    code, out, err = _cli(capsys, ["fuzz", *CAMPAIGNS["desc-valid"], "--against", f"{STAND_IN} --end-after 2",
                                   "--scheduler", "local"])
    assert code == 2 and out == "" and err.count("\n") == 1 and "stopping after 2 answers" in err


def test_a_command_that_is_not_there_is_one_line_exit_2(capsys, tmp_path):
    missing = str(tmp_path / "no-such-adapter")
    code, out, err = _cli(capsys, ["fuzz", *CAMPAIGNS["desc-valid"], "--against", missing, "--jobs", "2"])
    assert code == 2 and out == "" and err.count("\n") == 1 and "before answering" in err and missing in err, err


def test_too_many_jobs_and_an_unreachable_scheduler_are_one_line_exit_2(capsys, monkeypatch):
    from solver.shell import MAX_JOBS
    code, out, err = _cli(capsys, ["fuzz", *CAMPAIGNS["desc-valid"], "--against", STAND_IN, "--jobs", str(MAX_JOBS + 1)])
    assert code == 2 and out == "" and err.count("\n") == 1 and "--jobs" in err
    monkeypatch.setattr(campaign, "CONNECT_SECONDS", 1)
    code, out, err = _cli(capsys, ["fuzz", *CAMPAIGNS["desc-valid"], "--against", STAND_IN, "--scheduler",
                                   "tcp://127.0.0.1:1"])
    assert code == 2 and out == "" and err.count("\n") == 1 and "--scheduler" in err


def test_a_chunk_skipped_after_an_error_never_comes_before_the_error(monkeypatch):
    """The thread executor skips the chunks that start after a chunk's error, and a skipped chunk can be done
    before the failing chunk's future is. The caller must see the error itself, never a skip (a skip once
    reached it as an InterruptedError: exit 3 in a CI run). Forced here: the failing chunk's thread pauses
    right after it marks the run failed, while the other thread takes the next chunk and skips it."""
    import threading
    import time
    from solver.fuzz import compiler_campaign

    class SlowToReturn(threading.Event):
        def set(self):
            super().set()
            time.sleep(0.3)
    monkeypatch.setattr(compiler_campaign.threading, "Event", SlowToReturn)

    def fn(item):
        return compiler_campaign.AdapterError("chunk 0 failed") if item == 0 else ["fine"]
    results = []
    for index, result in compiler_campaign.thread_executor(2)(fn, range(6)):
        results.append(result)
        if isinstance(result, Exception):
            break                           # what the campaign does: it raises the first error
    assert [str(r) for r in results if isinstance(r, Exception)] == ["chunk 0 failed"]
