"""The executor's optimised path (REPLAY, concrete/executor.py): a warp that copies the previous warp's
writes where nothing it reads differs runs exactly as it does computing every statement. Checked on real
kernels of the corpus, with their recorded problems where they have one (every iteration of every warp)."""
from __future__ import annotations

import json
import lzma
from pathlib import Path

import pytest

from solver.kernel import analysis
from solver.kernel.concrete import executor

CORPUS = Path(__file__).parent / "fixtures" / "ptx" / "corpus"
CHOSEN = ["tut09_tma_persistent_f16_128x128x64_s4_w4_sm_90a", "tut06_attn_fwd_ws_f16_d128_128x128_s3_w4_sm_90a",
          "tut03_matmul_f16_128x256x64_s3_w8_sm_90a", "tut10_block_scaled_mxfp8_128x256x128_s4_w4_sm_100a",
          "quack_sm90_pingpong_bf16_128x192_c2x1", "fa4_fwd_sm100_hd128_causal", "sm90_coop_bf16_256x128x64_mA_nB",
          "tl_sm90_mha_fwd_bshd_f16_d128_128x128_s2"]


def _entries():
    for manifest in sorted(CORPUS.glob("*/manifest.json")):
        for entry in json.loads(manifest.read_text())["kernels"]:
            if entry["file"].split(".")[0] in CHOSEN:
                yield manifest.parent, entry


ENTRIES = list(_entries())


def _runs(text: str, launch) -> list:
    result = analysis.analyse(text, launch=launch, any_launch="never")
    return [([(v.line, v.warp, v.iteration, v.values) for v in run.visits],
             [(w.warp, w.steps, w.stopped, w.notes) for w in run.warps])
            for run in result.runs.values() if not isinstance(run, str)]


def test_the_chosen_kernels_are_found():
    assert len(ENTRIES) == len(CHOSEN)


@pytest.mark.parametrize("folder, entry", ENTRIES, ids=[e["file"].split(".")[0] for _, e in ENTRIES])
def test_replaying_warps_changes_nothing(folder, entry, monkeypatch):
    text = lzma.open(folder / entry["file"], "rt").read()
    grid = (entry.get("problem") or {}).get("grid")
    launch = executor.Launch(params=dict(entry.get("params") or {}), grid=tuple(grid) if grid else None)
    monkeypatch.setattr(executor, "REPLAY", False)
    plain = _runs(text, launch)
    monkeypatch.setattr(executor, "REPLAY", True)
    replayed = _runs(text, launch)
    assert replayed == plain
    assert sum(len(visits) for visits, _ in plain) > 0
