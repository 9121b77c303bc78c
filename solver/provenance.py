"""The provenance header of a recorded evidence file (tests/hardware/): one shape for all of them.

A recording is a JSON document (.json, .json.gz) whose top-level key "provenance" holds the header, beside
the data; a JSON-lines recording (.jsonl.gz) holds it in its first line (`{"provenance": {...}, ...}`, the
rows follow). The header has exactly these keys:

    what         one sentence: what the file records
    recorded_by  the repository path of the script or module that wrote it
    command      the command that reproduces it, run from the repository root (repository paths relative to
                 it; DIR, OUT and the like stand for folders of the recorder's choice)
    source       where the answers came from: the device, driver, compiler or library, with its version
    date         when it was recorded, as the recorder wrote it ("not recorded" when it did not)
    details      an object: every other fact of the recording, under its own name (the exact version
                 strings the source sentence quotes, commit, seed, conventions of the data, ...)

Facts that are data (cases, forms, counts, summaries) stay outside the header. Recorders build the header
with `header` and write with `write_json` / `write_text` / `gzip_text` (gzip with mtime 0 and no file
name, so the same content gives the same bytes); tests/hardware_replay/test_evidence_provenance.py checks every file under
tests/hardware/. Standard library only: recorders that run on a device machine import it without the
project's dependencies.
"""
from __future__ import annotations

import contextlib
import datetime
import gzip
import io
import json
import shlex
from typing import Iterator, Optional

KEYS = ("what", "recorded_by", "command", "source", "date", "details")
NOT_RECORDED = "not recorded"


def problems(value) -> list:
    """What is wrong with a provenance header's shape ([] when nothing): the keys exactly KEYS, the first
    five non-empty strings, details an object."""
    if not isinstance(value, dict):
        return [f"provenance: expected an object, found {type(value).__name__}"]
    out = []
    missing = [k for k in KEYS if k not in value]
    extra = sorted(k for k in value if k not in KEYS)
    if missing:
        out.append(f"provenance: missing {', '.join(missing)}")
    if extra:
        out.append(f"provenance: keys not in the header's shape: {', '.join(map(str, extra))}")
    for key in KEYS[:-1]:
        if key in value and not (isinstance(value[key], str) and value[key].strip()):
            out.append(f"provenance.{key}: expected a non-empty string, found {json.dumps(value[key])[:40]}")
    if "details" in value and not isinstance(value["details"], dict):
        out.append(f"provenance.details: expected an object, found {json.dumps(value['details'])[:40]}")
    return out


def header(what: str, recorded_by: str, command: str, source: str, date: str = NOT_RECORDED,
           details: Optional[dict] = None) -> dict:
    """The provenance header (ValueError when a value does not fit the shape)."""
    value = {"what": what, "recorded_by": recorded_by, "command": command, "source": source, "date": date,
             "details": dict(details or {})}
    found = problems(value)
    if found:
        raise ValueError("; ".join(found))
    return value


def today() -> str:
    return datetime.date.today().isoformat()


def command_line(script: str, argv, replace: Optional[dict] = None, python: str = "python3") -> str:
    """`python3 SCRIPT ARGS...` as a shell would take it; arguments equal to a key of `replace` are written as
    its value (a temporary folder as DIR)."""
    replace = replace or {}
    words = [replace.get(str(a), str(a)) for a in argv]
    return " ".join([python, script] + [w if w in replace.values() else shlex.quote(w) for w in words])


def sentence(*facts: tuple) -> str:
    """The source sentence from (label, value) facts, those with a value: "NVIDIA H100, driver 580.1; ..."."""
    parts = [value if not label else f"{label} {value}" for label, value in facts if value not in (None, "")]
    return "; ".join(parts) if parts else NOT_RECORDED


# --- Reading and writing -------------------------------------------------------------------------------------
def read(path: str) -> dict:
    """The provenance header of a recording (.json, .json.gz, or the first line of a .jsonl.gz)."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as handle:
        if path.endswith(".jsonl.gz") or path.endswith(".jsonl"):
            first = json.loads(handle.readline())
        else:
            first = json.load(handle)
    if not isinstance(first, dict) or "provenance" not in first:
        raise KeyError(f"{path}: no provenance header")
    return first["provenance"]


@contextlib.contextmanager
def gzip_text(path: str) -> Iterator[io.TextIOBase]:
    """A text handle writing `path` gzipped with mtime 0 and no file name (the bytes depend on the text alone)."""
    with open(path, "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as packed:
            with io.TextIOWrapper(packed, encoding="utf-8") as text:
                yield text


def write_text(path: str, text: str) -> None:
    """`text` into `path`, gzipped (gzip_text) when the name ends in .gz."""
    if path.endswith(".gz"):
        with gzip_text(path) as handle:
            handle.write(text)
    else:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)


def write_json(path: str, document: dict, newline: bool = False, **dump_options) -> None:
    """`document` as json.dumps(**dump_options) writes it (and a final newline), through write_text."""
    problem = problems(document.get("provenance"))
    if problem:
        raise ValueError("; ".join(problem))
    write_text(path, json.dumps(document, **dump_options) + ("\n" if newline else ""))
