"""A fuzz campaign in chunks (solver/fuzz/campaign.py): the same records, in the same order, whether
its chunks run here, in a local process pool (`fuzz --jobs N`) or on a Dask distributed cluster (a
LocalCluster here: the same code path as a real cluster's `fuzz --scheduler tcp://...`); every case once,
numbered from 0; a campaign of one chunk is exactly one engine.generate() call."""
from __future__ import annotations

import json

import pytest

from solver.cli.main import main
from solver.fuzz import campaign, engine


@pytest.fixture
def small_chunks(monkeypatch):
    monkeypatch.setattr(campaign, "CHUNK", 40)


def _run(target, arch, violate, count, seed, mapper=None):
    stats = engine.Stats()
    records = list(campaign.run(target, arch, frozenset(violate), count, seed, stats, mapper))
    assert stats.disagreements == []
    return records


@pytest.mark.parametrize("target, arch, violate", [("desc", "sm90", ()), ("tensormap", "sm90", ("tma.map.box_range",)),
                                                   ("tmem", "sm100", ())])
def test_chunks_in_processes_give_the_bytes_of_one_process(small_chunks, target, arch, violate):
    here = _run(target, arch, violate, 100, 7)
    pooled = _run(target, arch, violate, 100, 7, campaign.process_mapper(2))
    assert json.dumps(here) == json.dumps(pooled)
    assert [r["index"] for r in here] == list(range(len(here))) and len(here) > 80
    assert len({json.dumps(r["case"], sort_keys=True) for r in here}) == len(here)       # every case once


def test_one_chunk_is_one_generate_call():
    stats = engine.Stats()
    assert _run("desc", "sm90", (), 25, 3) == list(engine.generate("desc", "sm90", frozenset(), 25, 3, stats))


def test_a_dask_local_cluster_gives_the_same_bytes(small_chunks):
    import distributed               # the test extra installs it (the optional extra `distributed`)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        on_cluster = _run("desc", "sm100", (), 90, 11, campaign.dask_mapper(client))
    assert json.dumps(on_cluster) == json.dumps(_run("desc", "sm100", (), 90, 11))


def test_the_command_line_with_jobs_prints_the_same_bytes(capsys, small_chunks):
    outputs = []
    for jobs in ("1", "2"):
        assert main(["fuzz", "--target", "desc", "--arch", "sm90", "--count", "90", "--seed", "5", "--jobs", jobs]) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1] and outputs[0].count("\n") == 90


def test_jobs_and_an_unreachable_scheduler_are_one_line_exit_2(capsys, monkeypatch):
    """--jobs has an upper bound checked before any process starts; a scheduler nobody answers at is a
    usage error after the connect timeout, not a hang or an internal error."""
    from solver.shell import MAX_JOBS
    for argv in (["fuzz", "--target", "desc", "--arch", "sm90", "--jobs", str(MAX_JOBS + 1)],
                 ["prove", "k48", "--jobs", "100000000"]):
        assert main(argv) == 2
        out, err = capsys.readouterr()
        assert out == "" and err.count("\n") == 1 and "--jobs" in err
    monkeypatch.setattr(campaign, "CONNECT_SECONDS", 1)
    assert main(["fuzz", "--target", "desc", "--arch", "sm90", "--count", "3", "--scheduler", "tcp://127.0.0.1:1"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "--scheduler" in err
