"""`python -m solver.fuzz.compiler_campaign merge` on hostile files (issue 25 item 14): a generator mutates
a valid merge (rows, recording, counterexample file; Triton and CuTe DSL) file by file and field by
field (whole files not gzip, cut short, not UTF-8, not JSON, nested too deep, another compiler's; each
field deleted, null, of another type, nested too deep), and each run is a merge (exit 0) or one line on
stderr naming the file and the field it spoiled (exit 2): never a traceback."""
from __future__ import annotations

import gzip
from repo_paths import TESTS_DIR  # noqa: E402  (tests/repo_paths.py)
import json
import os
import random
import shutil

import pytest

from solver.fuzz import compiler_campaign
from solver.fuzz.adapters import triton_gluon
from solver.fuzz.compilers import cute_dsl

HERE = TESTS_DIR
TRITON_RECORDING = os.path.join(HERE, "hardware", "triton_gluon_campaign.jsonl.gz")
CUTE_RECORDING = os.path.join(HERE, "hardware", "cute_dsl_campaign.json.gz")
DELETE, DEEP = object(), "@@deep@@"
DEEP_TEXT = "[" * 100_000 + "]" * 100_000          # deeper than json's recursion allows
VALUES = [DELETE, None, "x", -1, True, [], {}, 1.5, 10 ** 30, DEEP]
SEED = 25
PER_FILE = 150            # field mutations drawn per file and compiler


# --- The valid merges the mutations start from ----------------------------------------------------------
def _triton_rows() -> list:
    """Campaign rows of every finding (crash, misread, refuses_legal, none), with the judge's judgement."""
    _, recorded = triton_gluon.read_recording(TRITON_RECORDING)
    wanted, rows = {"crash": 2, "misread": 2, "refuses_legal": 2, None: 3}, []
    for r in recorded:
        name = r["findings"][0] if r["findings"] else None
        if wanted.get(name, 0) > 0:
            wanted[name] -= 1
            rows.append({"case": r["case"], "answer": r["answer"],
                         "judgement": triton_gluon.judge.compare(r["case"], r["answer"])})
    return rows


def _cute_rows() -> list:
    document = cute_dsl.read_document(CUTE_RECORDING)
    records = document["records"]["sm90"][:5] + document["records"]["sm100"][:5]
    return [dict(r, judgement=cute_dsl.judgement(r["case"], r["answer"])) for r in records]


ROWS = {"triton": _triton_rows, "cute_dsl": _cute_rows}
MERGE = {"triton": triton_gluon.merge, "cute_dsl": cute_dsl.merge}
RECORD_NAME = {"triton": "record.jsonl.gz", "cute_dsl": "record.json.gz"}


@pytest.fixture(scope="module")
def valid(tmp_path_factory) -> dict:
    """compiler -> {file name: its bytes}: a recording and counterexample file made from the first rows, and
    the other rows to merge into them (new classes and new members of old ones)."""
    out = {}
    for compiler, make in ROWS.items():
        folder = tmp_path_factory.mktemp(compiler)
        rows = make()
        record, kept = str(folder / RECORD_NAME[compiler]), str(folder / "counterexamples.json")
        MERGE[compiler](rows[::2], record, kept)
        files = {"rows.jsonl": "".join(json.dumps(r) + "\n" for r in rows[1::2]).encode()}
        for path in (record, kept):
            with open(path, "rb") as handle:
                files[os.path.basename(path)] = handle.read()
        out[compiler] = files
    return out


# --- Files as JSON values, and back -----------------------------------------------------------------------
def _decode(name: str, data: bytes):
    """A file's JSON: rows and Triton recordings are JSON lines (a list here), the others one document."""
    text = (gzip.decompress(data) if name.endswith(".gz") else data).decode()
    if name == "rows.jsonl" or name.endswith(".jsonl.gz"):
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return json.loads(text)


def _encode(name: str, value) -> bytes:
    if name == "rows.jsonl" or name.endswith(".jsonl.gz"):
        text = "".join(json.dumps(v) + "\n" for v in value)
    else:
        text = json.dumps(value)
    data = text.replace(json.dumps(DEEP), DEEP_TEXT).encode()
    return gzip.compress(data) if name.endswith(".gz") else data


def _paths(value, prefix=(), depth=0):
    """Every field path of a JSON value (dict keys, the first two items of a list), 5 levels deep."""
    if prefix:
        yield prefix
    if depth == 5:
        return
    if isinstance(value, dict):
        for key in value:
            yield from _paths(value[key], prefix + (key,), depth + 1)
    elif isinstance(value, list):
        for index in range(min(2, len(value))):
            yield from _paths(value[index], prefix + (index,), depth + 1)


def _mutated(value, path: tuple, new):
    value = json.loads(json.dumps(value))
    parent = value
    for step in path[:-1]:
        parent = parent[step]
    if new is DELETE:
        del parent[path[-1]]
    else:
        parent[path[-1]] = new
    return value


def field_mutations(valid: dict) -> list:
    """(compiler, file name, path, new value) drawn from every field of every file (SEED)."""
    rng = random.Random(SEED)
    out = []
    for compiler, files in sorted(valid.items()):
        for name, data in sorted(files.items()):
            every = [(path, new) for path in _paths(_decode(name, data)) for new in VALUES
                     if not (new is DELETE and isinstance(path[-1], int))]
            out += [(compiler, name, path, new) for path, new in rng.sample(every, min(PER_FILE, len(every)))]
    return out


def file_mutations(valid: dict) -> list:
    """(compiler, file name, new bytes, what): whole files spoiled."""
    out = []
    for compiler, files in sorted(valid.items()):
        other = "cute_dsl" if compiler == "triton" else "triton"
        for name, data in sorted(files.items()):
            plain = gzip.decompress(data) if name.endswith(".gz") else data
            wrap = gzip.compress if name.endswith(".gz") else (lambda b: b)
            spoiled = {"empty": b"", "not gzip" if name.endswith(".gz") else "binary": b"\x00\xffnot this\n",
                       "cut short": data[:len(data) // 2], "not UTF-8": wrap(b"\xff\xfe" + plain),
                       "not JSON": wrap(b"{this is not json\n"), "null": wrap(b"null\n"), "a number": wrap(b"7\n"),
                       "a list": wrap(b"[1, 2]\n"), "nested too deep": wrap(DEEP_TEXT.encode() + b"\n"),
                       "another compiler's": valid[other].get(name, valid[other]["rows.jsonl"])}
            if name.endswith(".gz"):
                spoiled["another compiler's"] = valid[other][RECORD_NAME[other]]
                spoiled["gzip cut short"] = gzip.compress(plain)[:-12]
            out += [(compiler, name, new, what) for what, new in spoiled.items()]
    return out


def _merge(capsys, tmp_path, compiler: str, files: dict) -> tuple:
    folder = tmp_path / "merge"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir()
    for name, data in files.items():
        (folder / name).write_bytes(data)
    argv = ["merge", "--compiler", compiler, "--record", str(folder / RECORD_NAME[compiler]),
            "--counterexamples", str(folder / "counterexamples.json"), str(folder / "rows.jsonl")]
    code = compiler_campaign.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _one_line_naming(err: str, *names) -> bool:
    return err.count("\n") == 1 and all(str(n) in err for n in names)


# --- The runs ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("compiler", sorted(ROWS))
def test_the_valid_merge_merges(capsys, tmp_path, valid, compiler):
    code, out, err = _merge(capsys, tmp_path, compiler, valid[compiler])
    rows = _decode("rows.jsonl", valid[compiler]["rows.jsonl"])
    assert code == 0 and err == "" and json.loads(out)["added"] == len(rows)


def test_spoiled_files_are_one_line_naming_the_file(capsys, tmp_path, valid):
    failures = []
    for compiler, name, data, what in file_mutations(valid):
        try:
            code, _, err = _merge(capsys, tmp_path, compiler, dict(valid[compiler], **{name: data}))
        except BaseException as error:                         # noqa: BLE001  a traceback: the bug this finds
            failures.append((compiler, name, what, f"raised {type(error).__name__}: {str(error)[:100]}"))
            continue
        if name == "rows.jsonl" and what == "empty":          # no rows: nothing to merge
            if code != 0:
                failures.append((compiler, name, what, code, err[:300]))
        elif code != 2 or not _one_line_naming(err, name):
            failures.append((compiler, name, what, code, err[:300]))
    assert not failures, "\n".join(map(str, failures))


def test_spoiled_fields_merge_or_are_one_line_naming_the_file_and_field(capsys, tmp_path, valid):
    failures = []
    for compiler, name, path, new in field_mutations(valid):
        data = _encode(name, _mutated(_decode(name, valid[compiler][name]), path, new))
        shown = "deleted" if new is DELETE else repr(new)[:20]
        try:
            code, _, err = _merge(capsys, tmp_path, compiler, dict(valid[compiler], **{name: data}))
        except BaseException as error:                         # noqa: BLE001
            failures.append((compiler, name, path, shown, f"raised {type(error).__name__}: {str(error)[:100]}"))
            continue
        # the field, by one of the keys on its path; a value nested too deep for the parser has no field
        # the parser reaches: the message says so
        keys = ["nested too deep"] if new == DEEP else [step for step in path if isinstance(step, str)]
        if code not in (0, 2) or code == 2 and not (_one_line_naming(err, name) and
                                                    (not keys or any(k in err for k in keys))):
            failures.append((compiler, name, path, shown, code, err[:300]))
    assert not failures, f"{len(failures)} runs:\n" + "\n".join(map(str, failures))


@pytest.mark.parametrize("compiler, name, path, says", [
    ("triton", "rows.jsonl", (0, "judgement", "findings"), "findings"),     # rows missing findings
    ("cute_dsl", "rows.jsonl", (0, "judgement", "kind"), "kind"),
    ("triton", "counterexamples.json", ("classes", 0, "count"), "count"),    # a corrupt counterexample file
    ("cute_dsl", "counterexamples.json", ("classes", 0, "indices"), "indices"),
])
def test_the_issue_s_fields_are_exit_2_naming_them(capsys, tmp_path, valid, compiler, name, path, says):
    data = _encode(name, _mutated(_decode(name, valid[compiler][name]), path, DELETE))
    code, out, err = _merge(capsys, tmp_path, compiler, dict(valid[compiler], **{name: data}))
    assert code == 2 and out == "" and _one_line_naming(err, name, says), err


def test_triton_rows_merged_as_cute_dsl_rows_are_exit_2_naming_the_field(capsys, tmp_path, valid):
    code, out, err = _merge(capsys, tmp_path, "cute_dsl", dict(valid["cute_dsl"], **{"rows.jsonl":
                                                                                     valid["triton"]["rows.jsonl"]}))
    assert code == 2 and out == "" and _one_line_naming(err, "rows.jsonl", "line 1: case"), err


@pytest.mark.parametrize("where", ["rows.jsonl", "counterexamples.json"])
def test_deep_nesting_is_exit_2_naming_the_file(capsys, tmp_path, valid, where):
    files = dict(valid["triton"], **{where: DEEP_TEXT.encode() + b"\n"})
    code, out, err = _merge(capsys, tmp_path, "triton", files)
    assert code == 2 and out == "" and _one_line_naming(err, where, "nested"), err
