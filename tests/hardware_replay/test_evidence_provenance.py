"""Every recorded evidence file under tests/hardware/ starts with the one provenance header (solver/provenance.py):
a top-level "provenance" object (for JSON lines, in the first line) with exactly the keys what, recorded_by,
command, source, date and details. recorded_by is a file of this repository, and every repository path or
module the header names (in the command above all) exists, so a header cannot go on naming a module that moved.
The files are found by globbing: a new recording is checked without a change here."""
from __future__ import annotations

import glob
from repo_paths import ROOT_DIR  # noqa: E402  (tests/repo_paths.py)
import gzip
import json
import os
import re

import pytest

from solver import provenance

ROOT = ROOT_DIR
HARDWARE = os.path.join(ROOT, "tests", "hardware")
FILES = sorted(p for p in glob.glob(os.path.join(HARDWARE, "*")) if os.path.isfile(p))
FORMATS = (".json", ".json.gz", ".jsonl.gz")

# The repository's top folders (a path naming one is a repository path) and its Python packages (a dotted
# name starting with one is a module, maybe with an attribute after it).
TOP = sorted(n for n in os.listdir(ROOT) if os.path.isdir(os.path.join(ROOT, n)) and not n.startswith((".", "_"))
             and not n.endswith(".egg-info") and n not in ("build", "dist"))
PACKAGES = [n for n in TOP if os.path.isfile(os.path.join(ROOT, n, "__init__.py"))]
PATH = re.compile(r"(?<![\w./<>-])((?:%s)/[\w./*+-]*)" % "|".join(map(re.escape, TOP)))
MODULE = re.compile(r"(?<![\w./-])((?:%s)(?:\.[A-Za-z_]\w*)+)" % "|".join(map(re.escape, PACKAGES)))
DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def header_of(path: str):
    """The provenance header of a recording (or why there is none)."""
    name = os.path.basename(path)
    if not name.endswith(FORMATS):
        return None, f"{name}: not a recording format ({', '.join(FORMATS)})"
    with (gzip.open(path, "rt", encoding="utf-8") if name.endswith(".gz") else open(path, encoding="utf-8")) as handle:
        first = json.loads(handle.readline()) if name.endswith(".jsonl.gz") else json.load(handle)
    if not isinstance(first, dict) or "provenance" not in first:
        where = "its first line" if name.endswith(".jsonl.gz") else "its top level"
        keys = sorted(first)[:8] if isinstance(first, dict) else type(first).__name__
        return None, f"{name}: no \"provenance\" at {where} (found {keys})"
    return first["provenance"], None


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _module_problem(dotted: str):
    """None when `dotted` is a module of the repository, or a module and one of its top-level names."""
    parts = dotted.split(".")
    for cut in range(len(parts), 1, -1):
        base = os.path.join(ROOT, *parts[:cut])
        source = base + ".py" if os.path.isfile(base + ".py") else os.path.join(base, "__init__.py")
        if not os.path.isfile(source):
            continue
        rest = parts[cut:]
        if not rest:
            return None
        with open(source, encoding="utf-8") as handle:
            text = handle.read()
        if re.search(r"^(?:def|class)\s+%s\b|^%s\s*[:=]|^from\s.*\bimport\b.*\b%s\b" % ((re.escape(rest[0]),) * 3),
                     text, re.M):
            return None
        return f"{dotted}: {os.path.relpath(source, ROOT)} defines no {rest[0]}"
    return f"{dotted}: no such module in the repository"


def path_problems(text: str) -> list:
    """The repository paths and modules `text` names that do not exist."""
    out = []
    for found in PATH.findall(text):
        path = found.rstrip(".,;:)'\"")
        if not glob.glob(os.path.join(ROOT, path)):
            out.append(f"{path}: no such file or folder in the repository")
    for dotted in MODULE.findall(text):
        problem = _module_problem(dotted.rstrip("."))
        if problem:
            out.append(problem)
    return out


def problems(path: str) -> list:
    """Everything wrong with the provenance header of the recording at `path` ([] when nothing)."""
    header, why = header_of(path)
    if why:
        return [why]
    out = provenance.problems(header)
    if out:
        return out
    recorded_by = header["recorded_by"]
    if os.path.isabs(recorded_by) or not os.path.isfile(os.path.join(ROOT, recorded_by)):
        out.append(f"recorded_by: {recorded_by}: not a file of the repository")
    if header["command"] == provenance.NOT_RECORDED:
        out.append("command: not recorded (a recording says how to make it again)")
    if not (header["date"] == provenance.NOT_RECORDED or DATE.match(header["date"])):
        out.append(f"date: {header['date'][:40]!r}: neither a date (YYYY-MM-DD...) nor {provenance.NOT_RECORDED!r}")
    mentioned = path_problems(header["command"])
    if not mentioned and not PATH.search(header["command"]) and not MODULE.search(header["command"]):
        out.append(f"command: {header['command'][:60]!r} names no script or module of the repository")
    out += [f"command: {p}" for p in mentioned]
    for key in ("what", "source", "details"):
        out += [f"{key}: {p}" for text in _strings(header[key]) for p in path_problems(text)]
    return out


def test_the_evidence_files_are_found():
    assert len(FILES) >= 20 and all(os.path.basename(p).endswith(FORMATS) for p in FILES)


@pytest.mark.parametrize("path", FILES, ids=os.path.basename)
def test_the_provenance_header_is_the_one_shape_and_names_what_exists(path):
    assert problems(path) == []


@pytest.mark.parametrize("path", FILES, ids=os.path.basename)
def test_the_header_is_read_by_the_helper(path):
    assert set(provenance.read(path)) == set(provenance.KEYS)


# --- the check itself: it refuses the shapes the files had before, and moved modules -------------------------
OLD_SHAPES = {
    "harness.json.gz": {"harness": {"commit": "21ac97b", "program": "hardware/wgmma_probe.cu", "date": "2026-11-22",
                                    "gpu": "NVIDIA H100 80GB HBM3", "driver": "580.159.04"}, "cases": []},
    "flat.json": {"generator": "hardware/run_ptxas_forms.py", "ptxas_version": "13.0", "forms": []},
    "source.json.gz": {"source": {"cutlass_version": "4.2.0", "command": "python3 hardware/run_cutlass_tmem_atoms.py"},
                       "atoms": []},
}
GOOD = provenance.header("A test recording.", "hardware/run_probe.py", "python3 hardware/run_probe.py --out OUT",
                         "simulated", "2026-01-01", {"seed": 1})


def _write(tmp_path, name: str, document) -> str:
    path = str(tmp_path / name)
    if name.endswith(".jsonl.gz"):
        provenance.write_text(path, "".join(json.dumps(line) + "\n" for line in document))
    else:
        provenance.write_text(path, json.dumps(document))
    return path


@pytest.mark.parametrize("name", sorted(OLD_SHAPES))
def test_an_old_header_shape_is_refused(tmp_path, name):
    found = problems(_write(tmp_path, name, OLD_SHAPES[name]))
    assert len(found) == 1 and "no \"provenance\"" in found[0]


@pytest.mark.parametrize("change, says", [
    ({"command": "python -m solver.adapters.driver_encode < cases.jsonl"}, "solver.adapters.driver_encode"),
    ({"command": "python3 hardware/fuzz_against_driver.py cases"}, None),
    ({"command": "python3 hardware/no_such_recorder.py --out OUT"}, "hardware/no_such_recorder.py"),
    ({"details": {"note": "the kernel solver/fuzz_ptx.render_case emits"}}, "solver/fuzz_ptx.render_case"),
    ({"details": {"note": "solver.fuzz.formats.ptx.render_case of the record"}}, None),
    ({"details": {"note": "solver.fuzz.formats.ptx.no_such_function"}}, "no_such_function"),
    ({"recorded_by": "hardware/moved_away.py"}, "recorded_by"),
    ({"date": "yesterday"}, "date"),
    ({"command": "not recorded"}, "command"),
    ({"extra": "a sixth key"}, "extra"),
    ({"what": ""}, "what"),
])
def test_a_header_naming_what_is_not_there_is_refused(tmp_path, change, says):
    path = _write(tmp_path, "rec.json", {"provenance": dict(GOOD, **change), "cases": []})
    found = problems(path)
    assert (found == []) if says is None else any(says in p for p in found), found


def test_a_json_lines_recording_holds_its_header_in_its_first_line(tmp_path):
    assert problems(_write(tmp_path, "rec.jsonl.gz", [{"provenance": GOOD, "count": 1}, {"case": 1}])) == []
    found = problems(_write(tmp_path, "old.jsonl.gz", [{"triton": "3.9.0", "count": 1}, {"case": 1}]))
    assert len(found) == 1 and "first line" in found[0]


def test_a_file_of_another_format_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("not a recording\n")
    assert "not a recording format" in problems(str(tmp_path / "notes.txt"))[0]


def test_gzipped_recordings_are_the_same_bytes_for_the_same_content(tmp_path):
    document = {"provenance": GOOD, "cases": list(range(100))}
    first, second = str(tmp_path / "a.json.gz"), str(tmp_path / "b.json.gz")
    provenance.write_json(first, document)
    provenance.write_json(second, document)
    with open(first, "rb") as a, open(second, "rb") as b:
        data = a.read()
        assert data == b.read() and data[4:8] == b"\0\0\0\0"          # gzip mtime 0
    with pytest.raises(ValueError):
        provenance.write_json(str(tmp_path / "c.json"), {"cases": []})
