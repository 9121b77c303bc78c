"""Citations point at documents a user can open: the primary sources (PTX ISA sections, the CUDA Driver
API pages, CUTLASS/CuTe files and docs), the project's own docs/CLI.md, and recordings under
tests/hardware/. No file of the project cites the working notes it was written from (a digest named
REFERENCE.md, manual excerpts called seeds, paths under ../shared), which do not ship with it."""
from __future__ import annotations

import os
from repo_paths import ROOT_DIR  # noqa: E402  (tests/repo_paths.py)
import re

import pytest

from solver.model.tensormap import RULES
from solver.prove.catalogue import all_properties

ROOT = ROOT_DIR
TREES = ("spec", "solver", "layoutproof", "tests", "hardware", "benchmarks", "docs")
FILES = ("README.md",)
# This file names the forbidden strings; the rule catalogue test keeps its own history.
EXEMPT = {os.path.join("tests", "spec_tests", "test_citations.py"), os.path.join("tests", "spec_tests", "test_rules_catalogue.py")}
FORBIDDEN = ("reference.md", "../shared", "seed 00")
HARDWARE_PATH = re.compile(r"tests/hardware/[A-Za-z0-9_./-]*[A-Za-z0-9_]")


def _text_files():
    for tree in TREES:
        for directory, subdirs, names in os.walk(os.path.join(ROOT, tree)):
            subdirs[:] = [d for d in subdirs if d != "__pycache__" and not d.startswith(".")]
            for name in names:
                yield os.path.relpath(os.path.join(directory, name), ROOT)
    for name in FILES:
        if os.path.exists(os.path.join(ROOT, name)):
            yield name


def _text(relative: str):
    """The file's text, or None for a binary file (recordings, compressed data)."""
    with open(os.path.join(ROOT, relative), "rb") as f:
        data = f.read()
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def test_no_citation_of_documents_that_do_not_ship():
    found = []
    for relative in _text_files():
        if relative in EXEMPT:
            continue
        text = _text(relative)
        if text is None:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            lowered = line.lower()
            found += [f"{relative}:{number}: {word!r}" for word in FORBIDDEN if word in lowered]
    assert not found, "\n".join(found)


def _cited_hardware_paths():
    sources = [p.source for p in all_properties()] + [r.source for r in RULES.values()]
    return sorted({path for source in sources for path in HARDWARE_PATH.findall(source)})


def test_some_source_cites_a_recording():
    assert _cited_hardware_paths()


@pytest.mark.parametrize("path", _cited_hardware_paths())
def test_cited_recording_exists(path):
    assert os.path.isfile(os.path.join(ROOT, path)), path
