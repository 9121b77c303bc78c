"""Compiler campaigns in chunks (solver/fuzz/compiler_campaign.py), without the compilers: the recorded
compiler (solver/fuzz/adapters/replay.py) answers from the recordings in tests/hardware/, and aborts its
process where Triton aborted, so the adapter processes are restarted as with the real compiler. The same
rows, in the same bytes, from local threads and from a Dask LocalCluster (the code path of a real cluster's
`--scheduler tcp://...`); a campaign resumed from its cache; recordings and counterexample files merged
without duplicates, their hand-written notes kept, a merge of what is already there changing nothing."""
from __future__ import annotations

import gzip
from repo_paths import TESTS_DIR  # noqa: E402  (tests/repo_paths.py)
import json
import os
import shutil
import sys

import pytest

from solver.fuzz import campaign, compiler_campaign
from solver.fuzz.adapters import replay, triton_gluon
from solver.fuzz.compilers import cute_dsl

HERE = TESTS_DIR
TRITON_RECORDING = os.path.join(HERE, "hardware", "triton_gluon_campaign.jsonl.gz")
CUTE_RECORDING = os.path.join(HERE, "hardware", "cute_dsl_campaign.json.gz")
TRITON_KEPT = os.path.join(HERE, "..", "counterexamples", "against", "triton", "triton_3.9.0.json")
CUTE_KEPT = os.path.join(HERE, "..", "counterexamples", "against", "cute_dsl", "disagreements.json")
TRITON_REPLAY = [sys.executable, "-m", "solver.fuzz.adapters.replay", TRITON_RECORDING]
CUTE_REPLAY = [sys.executable, "-m", "solver.fuzz.adapters.replay", CUTE_RECORDING]


@pytest.fixture(scope="module")
def triton_rows():
    return triton_gluon.read_recording(TRITON_RECORDING)[1]


def _some(rows, count=48):
    """Recorded rows of every kind: crashes, misreads, refusals of legal tiles, agreements, in recording order."""
    wanted = {"crash": 12, "misread": 6, "refuses_legal": 3}
    chosen = []
    for row in rows:
        name = row["findings"][0] if row["findings"] else row["outcome"]
        if wanted.get(name, 0) > 0 or (not row["findings"] and len(chosen) % 3 == 0):
            wanted[name] = wanted.get(name, 1) - 1
            chosen.append(row)
        if len(chosen) == count:
            break
    return chosen


def _run(cases, out, **options):
    return compiler_campaign.run(triton_gluon.COMPILER, cases, str(out), triton_gluon.tally,
                                 command=TRITON_REPLAY, **options)


def _plain(answer):
    return {k: v for k, v in answer.items() if k != "seconds"}


def test_threads_and_a_dask_local_cluster_give_the_recorded_answers_in_the_same_bytes(tmp_path, monkeypatch,
                                                                                     triton_rows):
    distributed = pytest.importorskip("distributed")   # the optional extra `distributed` (the test extra has it)
    monkeypatch.setattr(compiler_campaign, "CHUNK", 5)
    rows = _some(triton_rows)
    cases = [r["case"] for r in rows]
    one = _run(cases, tmp_path / "one.jsonl", jobs=1)
    threads = _run(cases, tmp_path / "threads.jsonl", jobs=3)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as \
            cluster, distributed.Client(cluster) as client:
        dask = _run(cases, tmp_path / "dask.jsonl", client=client)
    texts = [(tmp_path / f"{name}.jsonl").read_bytes() for name in ("one", "threads", "dask")]
    assert texts[0] == texts[1] == texts[2]
    assert one["summary"] == threads["summary"] == dask["summary"] and one["compiled"] == len(cases)
    assert one["summary"]["findings"]["crash"] == 12        # each crash killed its adapter, which was restarted
    for recorded, row in zip(rows, compiler_campaign.read_results(tmp_path / "one.jsonl")):
        assert row["answer"] == _plain(recorded["answer"])
        assert triton_gluon.recording_row(row) == dict(recorded, answer=_plain(recorded["answer"]))


def test_an_interrupted_campaign_resumes_from_its_cache(tmp_path, monkeypatch, triton_rows):
    monkeypatch.setattr(compiler_campaign, "CHUNK", 4)
    cases = [r["case"] for r in _some(triton_rows, 30)]
    cache = tmp_path / "answers.jsonl"
    _run(cases[:17], tmp_path / "first.jsonl", jobs=2, cache_path=str(cache))
    with open(cache, "a") as handle:                     # the line an interruption cut short
        handle.write('{"case": {"arch": "sm90", "dty')
    resumed = _run(cases, tmp_path / "resumed.jsonl", jobs=2, cache_path=str(cache))
    fresh = _run(cases, tmp_path / "fresh.jsonl", jobs=2)
    assert (resumed["compiled"], resumed["cached"]) == (13, 17)
    assert (tmp_path / "resumed.jsonl").read_bytes() == (tmp_path / "fresh.jsonl").read_bytes()
    assert resumed["summary"] == fresh["summary"]


def test_an_older_triton_cache_is_read(tmp_path, triton_rows):
    row = _some(triton_rows, 1)[0]
    cache = tmp_path / "old.jsonl"
    cache.write_text(json.dumps({"key": triton_gluon.case_key(row["case"]), "answer": dict(row["answer"], seconds=1.5)})
                     + "\n")
    assert compiler_campaign.AnswerCache(str(cache), triton_gluon.case_key).get(row["case"]) == _plain(row["answer"])


def test_the_recorded_compiler_answers_null_for_a_case_it_lacks():
    answers = replay.load(CUTE_RECORDING)
    assert replay.answer({"target": "cute_dsl", "case": {"arch": "sm90"}}, answers) == \
        {"verdict": None, "detail": replay.NOT_RECORDED}


def test_distinct_stops_when_the_cases_run_out():
    draws = iter([{"a": 1}, {"a": 2}] + [{"a": 1}] * 50)
    assert compiler_campaign.distinct(draws, 10, patience=20) == [{"a": 1}, {"a": 2}]


# --- merging -------------------------------------------------------------------------------------------------
def _content(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as handle:
        return handle.read()


def test_merging_what_is_recorded_changes_neither_file(tmp_path, triton_rows):
    """The kept recordings and counterexample files, merged with campaign rows they already hold: the same
    content (the format is the one the files are written in)."""
    rows = _some(triton_rows, 20)
    results = [{"case": r["case"], "answer": r["answer"], "judgement": {"outcome": r["outcome"], "elements": 0,
                "findings": [{"finding": f} for f in r["findings"]]}} for r in rows]
    record, kept = str(tmp_path / "rec.jsonl.gz"), str(tmp_path / "ce.json")
    shutil.copy(TRITON_RECORDING, record)
    shutil.copy(TRITON_KEPT, kept)
    report = triton_gluon.merge(results, record, kept)
    assert report["added"] == 0 and report["already_there"] == 20
    assert _content(record) == _content(TRITON_RECORDING) and _content(kept) == _content(TRITON_KEPT)

    document = cute_dsl.read_document(CUTE_RECORDING)
    results = [dict(r, judgement=cute_dsl.judgement(r["case"], r["answer"])) for r in document["records"]["sm100"][:30]]
    record, kept = str(tmp_path / "cute.json.gz"), str(tmp_path / "cute.json")
    shutil.copy(CUTE_RECORDING, record)
    shutil.copy(CUTE_KEPT, kept)
    assert cute_dsl.merge(results, record, kept)["added"] == 0
    assert _content(record) == _content(CUTE_RECORDING) and _content(kept) == _content(CUTE_KEPT)


def _triton_results(rows):
    """Campaign rows from the recorded ones (their recorded outcome and findings as the judgement)."""
    return [{"case": r["case"], "answer": r["answer"], "judgement": {
        "outcome": r["outcome"], "elements": 1, "findings": [{"finding": f} for f in r["findings"]]}} for r in rows]


def test_triton_runs_merged_one_after_the_other_count_each_case_once_and_keep_notes(tmp_path, triton_rows):
    results = _triton_results(triton_rows)
    record, kept = str(tmp_path / "rec.jsonl.gz"), str(tmp_path / "ce.json")
    triton_gluon.merge(results[:2500], record, kept, "first run")
    with open(kept) as handle:
        first = json.load(handle)
    assert all(c["side"] == "undecided" for c in first["classes"])
    for c in first["classes"]:                            # written by hand between the runs
        c.update(side="hand: " + c["finding"], note="a note written by hand", extra={"kept": True})
    with open(kept, "w") as handle:
        json.dump(first, handle, indent=1)
    report = triton_gluon.merge(results[2000:], record, kept, "second run")        # 500 cases again
    assert (report["added"], report["already_there"], report["cases"]) == (1500, 500, 4000)
    with open(kept) as handle:
        merged = json.load(handle)
    with open(TRITON_KEPT) as handle:
        truth = json.load(handle)
    assert {c["finding"]: c["count"] for c in merged["classes"]} == {c["finding"]: c["count"] for c in truth["classes"]}
    assert merged["summary"] == dict(truth["summary"], elements=4000) and merged["found_by"] == "first run"
    for c in merged["classes"]:
        assert (c["side"], c["note"], c["extra"]) == ("hand: " + c["finding"], "a note written by hand", {"kept": True})
        assert sum(c["by_arch"].values()) == c["count"]
        assert c["examples"] and all(e["finding"]["finding"] == c["finding"] for e in c["examples"])
    header, rows = triton_gluon.read_recording(record)
    assert [r["case"] for r in rows] == [r["case"] for r in triton_rows]        # each case once, in order
    assert header["configurations"] == 4000 and header["findings"] == truth["summary"]["findings"]


def test_cute_runs_merged_one_after_the_other_are_the_kept_file(tmp_path):
    document = cute_dsl.read_document(CUTE_RECORDING)
    results = {arch: [dict(r, judgement=cute_dsl.judgement(r["case"], r["answer"])) for r in records]
               for arch, records in document["records"].items()}
    record, kept = str(tmp_path / "rec.json.gz"), str(tmp_path / "ce.json")
    cute_dsl.merge(results["sm90"][:700] + results["sm100"][:1300], record, kept)
    with open(kept) as handle:
        first = json.load(handle)
    first["classes"][0]["note"] = "a note written by hand"
    with open(kept, "w") as handle:
        json.dump(first, handle, indent=1)
    cute_dsl.merge(results["sm100"] + results["sm90"], record, kept)
    with open(kept) as handle:
        merged = json.load(handle)
    with open(CUTE_KEPT) as handle:
        truth = json.load(handle)
    assert merged["classes"][0]["note"] == "a note written by hand"
    merged["classes"][0]["note"] = truth["classes"][0]["note"]
    assert merged["classes"] == truth["classes"] and merged["recording"] == record
    assert cute_dsl.read_document(record)["records"] == document["records"]
    assert cute_dsl.read_document(record)["figures"] == document["figures"]


def test_a_counterexample_file_of_another_recording_is_refused(tmp_path, triton_rows):
    record, kept = str(tmp_path / "rec.jsonl.gz"), str(tmp_path / "ce.json")
    shutil.copy(TRITON_KEPT, kept)
    triton_gluon.merge(_triton_results(triton_rows[:10]), record)
    with pytest.raises(compiler_campaign.CampaignUsage, match="not its recording"):
        triton_gluon.merge(_triton_results(triton_rows[10:20]), record, kept)


# --- the command lines -------------------------------------------------------------------------------------
def _one_line_exit_2(capsys, main, argv):
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1, err
    return err


@pytest.mark.parametrize("main, argv, says", [
    (triton_gluon.main, ["campaign", "--arch", "sm90", "--jobs", "257"], "--jobs"),
    (triton_gluon.main, ["campaign", "--arch", "sm90", "--count", "0"], "--count"),
    (cute_dsl.main, ["--count", str(compiler_campaign.MAX_CASES + 1)], "--count"),
    (cute_dsl.main, ["--counterexamples", "ce.json"], "--record"),
    (triton_gluon.main, ["campaign", "--arch", "sm90", "--adapter", "'"], "--adapter"),
    (triton_gluon.main, ["campaign", "--arch", "sm90", "--from-fuzz", "--count", "10001"], "--from-fuzz"),
    (compiler_campaign.main, ["merge", "--compiler", "triton", "--record", "r.jsonl.gz", TRITON_KEPT], "not campaign"),
])
def test_bad_arguments_are_one_line_exit_2(capsys, tmp_path, main, argv, says):
    needs_out = main is not compiler_campaign.main
    err = _one_line_exit_2(capsys, main, argv + (["--out", str(tmp_path / "o.jsonl")] if needs_out else []))
    assert says in err


def test_an_unreachable_or_malformed_scheduler_is_one_line_exit_2(capsys, tmp_path, monkeypatch):
    pytest.importorskip("distributed")
    monkeypatch.setattr(campaign, "CONNECT_SECONDS", 1)
    for address in ("tcp://127.0.0.1:1", "not a scheduler::"):
        err = _one_line_exit_2(capsys, cute_dsl.main, ["--count", "3", "--scheduler", address,
                                                         "--out", str(tmp_path / "o.jsonl")])
        assert "--scheduler" in err
    assert not (tmp_path / "o.jsonl").exists()


def test_without_dask_the_scheduler_says_how_to_install_it(capsys, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "dask.distributed", None)           # import fails as when not installed
    err = _one_line_exit_2(capsys, triton_gluon.main, ["campaign", "--arch", "sm90", "--scheduler", "local",
                                                       "--out", str(tmp_path / "o.jsonl")])
    assert "pip install 'layoutproof[distributed]'" in err


def test_the_campaign_command_runs_merges_and_prints_its_summary(capsys, tmp_path, monkeypatch):
    """The CuTe DSL campaign's command line end to end on the recorded compiler: its first cases are the
    recording's (seed 0), so merging them into copies of the kept files changes nothing."""
    monkeypatch.setattr(compiler_campaign, "CHUNK", 9)
    record, kept = str(tmp_path / "rec.json.gz"), str(tmp_path / "ce.json")
    shutil.copy(CUTE_RECORDING, record)
    shutil.copy(CUTE_KEPT, kept)
    argv = ["--arch", "sm90", "--count", "25", "--jobs", "2", "--out", str(tmp_path / "rows.jsonl"),
            "--adapter", " ".join(CUTE_REPLAY), "--record", record, "--counterexamples", kept]
    assert cute_dsl.main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["figures"]["sm90"]["configurations"] == 25 and summary["compiled"] == 25
    assert summary["merged"]["added"] == 0 and _content(kept) == _content(CUTE_KEPT)
    rows = compiler_campaign.read_results(str(tmp_path / "rows.jsonl"))
    recorded = cute_dsl.read_document(CUTE_RECORDING)["records"]["sm90"][:25]
    assert [r["case"] for r in rows] == [r["case"] for r in recorded]
    assert [r["answer"] for r in rows] == [r["answer"] for r in recorded]
