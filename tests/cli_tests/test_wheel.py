"""The wheel carries what the README's examples use: built from this tree, installed on its own into a
folder (no source tree on the path), every `$ layoutproof` example of the README runs from an empty
directory and prints what the README shows; the bundled examples, docs/CLI.md and spec's data files
are inside it."""
from __future__ import annotations

import glob
import os
import shlex
import shutil
import subprocess
import sys
import zipfile

import pytest

from tests.cli_tests.test_docs_examples import ROOT, _examples, _pattern

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    build = tmp_path_factory.mktemp("wheel")
    # built from a copy (links kept), so that no build/ or egg-info lands in the tree and two test
    # processes never build in the same folder
    source = tmp_path_factory.mktemp("source") / "layoutproof"
    shutil.copytree(ROOT, source, symlinks=True, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "*.egg-info", "__pycache__", ".hypothesis", ".pytest_cache", "tests"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                    str(build), str(source)], check=True, capture_output=True)
    (wheel,) = glob.glob(str(build / "layoutproof-*.whl"))
    target = tmp_path_factory.mktemp("site")
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), wheel],
                   check=True, capture_output=True)
    return wheel, str(target), str(tmp_path_factory.mktemp("anywhere"))


def test_the_wheel_holds_the_examples_the_contract_and_the_data(installed):
    wheel, _, _ = installed
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"layoutproof/examples/tensormap_tiled_bf16.json", "layoutproof/docs/CLI.md",
            "spec/rule_aliases.json"} <= names
    with open(os.path.join(ROOT, "docs", "CLI.md"), "rb") as handle:
        assert zipfile.ZipFile(wheel).read("layoutproof/docs/CLI.md") == handle.read()


@pytest.mark.parametrize("command, expected", list(_examples("README.md")))
def test_the_readme_tour_runs_from_the_installed_wheel_anywhere(installed, command, expected):
    _, target, anywhere = installed
    env = dict(os.environ, PYTHONPATH=target)
    argv = [sys.executable, "-m", "layoutproof"] + shlex.split(command)[1:]
    done = subprocess.run(argv, cwd=anywhere, env=env, capture_output=True, text=True, timeout=120)
    where = subprocess.run([sys.executable, "-c", "import layoutproof, spec; print(layoutproof.__file__, spec.__file__)"],
                           cwd=anywhere, env=env, capture_output=True, text=True).stdout
    assert where.startswith(target) and f" {target}" in where, where         # the wheel's, not the tree's
    assert _pattern(expected).fullmatch(done.stdout.strip()), f"{command}\n--- printed ---\n{done.stdout}{done.stderr}"
