"""Every example a command's `--help` shows runs as written (issue 29: "examples that do not run"): each
`layoutproof ...` line of a parser's description or epilog, run from a fresh directory that sees the
repository's `tests/` and `examples/` (the files the examples name), exits 0, or 1 where the example shows
a violation. An example that needs a GPU machine says so on the comment line above it and is not run here."""
from __future__ import annotations

import argparse
from repo_paths import ROOT_DIR  # noqa: E402  (tests/repo_paths.py)
import json
import os
import re
import subprocess
import sys

import pytest

from solver.cli import main

from once import RUN_MANY, once_per_run

ROOT = ROOT_DIR


def _examples() -> list:
    found = []

    def walk(parser, path):
        for text in (parser.description or "", parser.epilog or ""):
            lines = text.splitlines()
            for i, line in enumerate(lines):
                for m in re.finditer(r"layoutproof (?!\w+ \w+ is )[^\n]*", line):
                    needs_gpu = i > 0 and lines[i - 1].strip().startswith("#") and "GPU" in lines[i - 1]
                    found.append((" ".join(path), m.group(0).strip(), needs_gpu))
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, path + [name])
    walk(main.build_parser(), [])
    return found


EXAMPLES = _examples()


def test_there_are_examples_and_few_need_a_gpu():
    assert len(EXAMPLES) >= 12
    assert sum(gpu for _, _, gpu in EXAMPLES) <= 2


@pytest.fixture(scope="module")
def ran(tmp_path_factory) -> dict:
    """{example: [exit status, stdout, stderr]} of every example that needs no GPU, run as written
    (`layoutproof`'s main on its words) from a fresh directory, all in one fresh interpreter (its start-up
    paid once), once per test run (tests/once.py)."""
    return once_per_run(tmp_path_factory, "help_examples",
                        lambda: _run_examples(tmp_path_factory.mktemp("help_examples")))


def _run_examples(folder) -> dict:
    for name in ("tests", "examples"):
        os.symlink(os.path.join(ROOT, name), folder / name)
    lines = [line for _, line, gpu in EXAMPLES if not gpu]
    done = subprocess.run([sys.executable, "-c", RUN_MANY], input=json.dumps(lines), cwd=folder, capture_output=True,
                          text=True, timeout=600, env={**os.environ, "PYTHONPATH": ROOT})
    assert done.returncode == 0, done.stderr[-2000:]
    return dict(zip(lines, json.loads(done.stdout)))


def test_every_command_shows_an_example():
    from test_vocabulary import LEAVES
    assert {command for command, _, _ in EXAMPLES} == set(LEAVES)


@pytest.mark.parametrize("command, line, needs_gpu", EXAMPLES, ids=[f"{c}:{i}" for i, (c, _, _) in enumerate(EXAMPLES)])
def test_the_example_runs(command, line, needs_gpu, ran):
    if needs_gpu:
        pytest.skip("the example needs a GPU machine (it says so)")
    status, out, err = ran[line]
    assert status in (0, 1), (line, err)
    assert out or status == 0, line
