"""`layoutproof --version` and `--help` start fast because they load no command module and nothing of
spec/ (issue 29: under 60 ms; benchmarks/bench_startup.py measures the time). Checked here by what a
fresh interpreter has imported, not by a clock."""
from __future__ import annotations

import json
from repo_paths import ROOT_DIR  # noqa: E402  (tests/repo_paths.py)
import subprocess
import sys

import pytest

ROOT = ROOT_DIR
LIGHT = {"solver", "solver.cli", "solver.cli.main", "solver.shell", "solver.cli.catalogue", "layoutproof",
         "layoutproof._version"}


def _loaded_after(argv: list) -> tuple:
    script = ("import contextlib, io, json, sys\n"
              "from solver.cli.main import main\n"
              "out = io.StringIO()\n"
              "try:\n"
              "    with contextlib.redirect_stdout(out):\n"
              f"        main({argv!r})\n"
              "except SystemExit:\n"
              "    pass\n"
              "ours = sorted(m for m in sys.modules if m.split('.')[0] in ('spec', 'solver', 'layoutproof'))\n"
              "print(json.dumps([ours, out.getvalue()]))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    return tuple(json.loads(done.stdout))


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["-h"]])
def test_version_and_help_load_no_command(argv):
    loaded, printed = _loaded_after(argv)
    assert set(loaded) <= LIGHT, sorted(set(loaded) - LIGHT)
    assert printed.startswith("layoutproof ") or "recipe" in printed


def test_the_light_help_is_the_whole_parsers_help():
    """--help lists each command with the summary its module registers (solver.cli.catalogue)."""
    from solver.cli.main import build_parser
    assert build_parser(()).format_help() == build_parser().format_help()
