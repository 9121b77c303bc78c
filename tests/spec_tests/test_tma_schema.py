"""The published JSON Schema of a tensor-map document (spec/tma/schema.py, `layoutproof tma schema`)
agrees with the parser it describes (spec.tma.tensormap_params.parse_params), checked by an independent
validator (the jsonschema library, draft 2020-12): every document the fuzzer makes (legal or breaking a
rule: well-formed either way) validates, and each malformation of form (a key missing or unknown, a
wrong type, an enumerator that is not cuda.h's, an integer outside its C type) is refused by both."""
from __future__ import annotations

import copy
from repo_paths import ROOT_DIR  # noqa: E402  (tests/repo_paths.py)
import json
import os

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.fuzz import engine as fuzz
from spec.rule import SpecError
from spec.tma import schema, tensormap_params

ROOT = ROOT_DIR
VALIDATOR = jsonschema.Draft202012Validator(schema.schema())


def test_the_schema_is_a_valid_draft_2020_12_schema():
    jsonschema.Draft202012Validator.check_schema(schema.schema())


def _documents():
    found = []
    for rule in [None, "tma.map.box_range", "tma.map.im2col.channels_range", "tma.map.global_address_alignment",
                 "tma.map.box_swizzle_span"]:
        violate = frozenset([rule]) if rule else frozenset()
        found += [r["case"] for r in fuzz.generate("tensormap", "sm90", violate, 6, 7)]
    for name in ("tensormap_tiled_bf16.json", "tensormap_im2col_nhwc.json"):
        with open(os.path.join(ROOT, "examples", name)) as handle:
            found.append(json.load(handle))
    return found


DOCUMENTS = _documents()


def test_every_well_formed_document_validates():
    assert len(DOCUMENTS) > 20 and {d["encode"] for d in DOCUMENTS} >= {"tiled", "im2col"}
    for document in DOCUMENTS:
        tensormap_params.parse_params(document)               # the parser reads it
        assert list(VALIDATOR.iter_errors(document)) == [], document


def _malformed(document: dict, draw) -> dict:
    bad = copy.deepcopy(document)
    keys = sorted(bad)
    kind = draw(st.sampled_from(["missing", "unknown", "enum", "type", "range", "negative"]))
    if kind == "missing":
        del bad[draw(st.sampled_from([k for k in keys if k in tensormap_params.document_keys(bad["encode"])]))]
    elif kind == "unknown":
        bad[draw(st.sampled_from(["boxdim", "stride", "tileMode", "Swizzle"]))] = 1
    elif kind == "enum":
        key = draw(st.sampled_from([k for k in ("dataType", "interleave", "swizzle", "l2Promotion", "oobFill")
                                    if k in bad]))
        bad[key] = draw(st.sampled_from(["96B", "bf16", "FLOAT8", "L2_512B", "", "CU_TENSOR_MAP_NONE", 99]))
    elif kind == "type":
        key = draw(st.sampled_from([k for k in keys if k not in ("encode",)]))
        bad[key] = draw(st.sampled_from([1.5, True, None, {"a": 1}]))
    elif kind == "range":
        key = draw(st.sampled_from([k for k in ("rank", "globalDim", "boxDim", "elementStrides") if k in bad]))
        big = 1 << 64 if key == "globalDim" else 1 << 32
        bad[key] = big if not isinstance(bad[key], list) else [big] + bad[key][1:]
    else:
        key = draw(st.sampled_from([k for k in ("rank", "globalDim", "elementStrides", "boxDim") if k in bad]))
        bad[key] = -1 if not isinstance(bad[key], list) else [-1] + bad[key][1:]
    return bad


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(DOCUMENTS), st.data())
def test_malformed_forms_are_refused_by_the_schema_and_the_parser(document, data):
    bad = _malformed(document, data.draw)
    with pytest.raises(SpecError):
        tensormap_params.parse_params(bad)
    assert list(VALIDATOR.iter_errors(bad)), bad


def test_the_command_prints_the_schema_and_lists_every_malformed_key(capsys, tmp_path):
    from solver.cli.main import main
    assert main(["tma", "schema"]) == 0
    assert json.loads(capsys.readouterr().out) == schema.schema()
    bad = dict(DOCUMENTS[0], swizzle="bogus", dataType="x", extra=1)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    assert main(["tma", "check", "--params", str(path), "--arch", "sm90", "--json"]) == 2
    out, err = capsys.readouterr()
    assert {m["field"] for m in json.loads(out)["malformed"]} == {"swizzle", "dataType", "extra"}
    assert err.count("\n") == 1 and all(k in err for k in ("swizzle", "dataType", "extra"))
    assert list(VALIDATOR.iter_errors(bad))                     # the schema refuses it too
