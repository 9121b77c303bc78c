"""Every example a command's `--help` shows runs as written (issue 29: "examples that do not run"): each
`layoutproof ...` line of a parser's description or epilog, run from a fresh directory that sees the
repository's `tests/` and `examples/` (the files the examples name), exits 0, or 1 where the example shows
a violation. An example that needs a GPU machine says so on the comment line above it and is not run here."""
from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys

import pytest

from solver.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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


@pytest.mark.parametrize("command, line, needs_gpu", EXAMPLES, ids=[f"{c}:{i}" for i, (c, _, _) in enumerate(EXAMPLES)])
def test_the_example_runs(command, line, needs_gpu, tmp_path):
    if needs_gpu:
        pytest.skip("the example needs a GPU machine (it says so)")
    for name in ("tests", "examples"):
        os.symlink(os.path.join(ROOT, name), tmp_path / name)
    argv = shlex.split(line)[1:]
    done = subprocess.run([sys.executable, "-m", "layoutproof", *argv], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": ROOT})
    assert done.returncode in (0, 1), (line, done.stderr[-500:])
    assert done.stdout or done.returncode == 0, line
