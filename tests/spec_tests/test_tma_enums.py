"""The cuda.h enumerations a tensor-map document names (spec.tma.tensormap_params.DRIVER_ENUMS) are the
driver's (tests/hardware/cuda_tensormap_enums.json: cuda-bindings' classes, generated from cuda.h,
recorded by hardware/record_cuda_enums.py), and a document may spell each enumerator as its short name in
any case (underscores optional), as cuda.h's full name, or as its value: all read the same."""
from __future__ import annotations

import json
from repo_paths import TESTS_DIR  # noqa: E402  (tests/repo_paths.py)
import os

import jsonschema
import pytest

from spec.rule import SpecError
from spec.tma import schema, tensormap_params as tp

HERE = TESTS_DIR
with open(os.path.join(HERE, "hardware", "cuda_tensormap_enums.json")) as handle:
    RECORDED = json.load(handle)["enums"]
with open(os.path.join(os.path.dirname(HERE), "examples", "tensormap_tiled_bf16.json")) as handle:
    TILED = json.load(handle)


@pytest.mark.parametrize("key", sorted(tp.DRIVER_ENUMS))
def test_every_enumeration_is_the_drivers(key):
    c_type, prefix, values = tp.DRIVER_ENUMS[key]
    recorded = RECORDED[c_type]
    assert {prefix + name: value for name, value in values.items()} == recorded


def test_data_type_table_values_are_the_drivers():
    recorded = RECORDED["CUtensorMapDataType"]
    assert {f"CU_TENSOR_MAP_DATA_TYPE_{t.name}": t.driver_enum for t in tp.DATA_TYPES.values()} == recorded


@pytest.mark.parametrize("key, short", [("swizzle", "128B"), ("swizzle", "128B_ATOM_32B"), ("swizzle", "NONE"),
                                        ("dataType", "BFLOAT16"), ("interleave", "NONE"),
                                        ("l2Promotion", "L2_256B"), ("oobFill", "NONE")])
def test_every_spelling_reads_as_the_short_name(key, short):
    c_type, prefix, values = tp.DRIVER_ENUMS[key]
    full = prefix + short
    spellings = [short, short.lower(), full, full.lower(), RECORDED[c_type][full]]
    if short == "128B_ATOM_32B":
        spellings += ["128B_atom32B", "128b_atom_32b"]          # the descriptor commands' spelling
    canonical = tp.parse_params(dict(TILED, **{key: short}))
    validator = jsonschema.Draft202012Validator(schema.schema())
    for spelling in spellings:
        document = dict(TILED, **{key: spelling})
        assert tp.parse_params(document) == canonical, spelling
        if spelling in (short, full, RECORDED[c_type][full]):
            assert list(validator.iter_errors(document)) == [], spelling


@pytest.mark.parametrize("key, value", [("swizzle", 7), ("swizzle", "CU_TENSOR_MAP_SWIZZLE_96B"), ("swizzle", True),
                                        ("dataType", 16), ("dataType", "CU_TENSOR_MAP_SWIZZLE_128B"),
                                        ("interleave", "64B"), ("l2Promotion", -1)])
def test_what_is_no_enumerator_is_refused_naming_the_key(key, value):
    with pytest.raises(SpecError) as error:
        tp.parse_params(dict(TILED, **{key: value}))
    assert error.value.field_name == key


def test_every_malformed_key_is_reported_at_once():
    document = dict(TILED, swizzle="bogus", dataType="x", boxDim=[1], extra=1)
    with pytest.raises(tp.DocumentErrors) as error:
        tp.parse_params(document)
    assert [e.field_name for e in error.value.errors] == ["extra", "dataType", "swizzle", "boxDim"]
    message = str(error.value)
    assert "\n" not in message and all(k in message for k in ("extra", "dataType", "swizzle", "boxDim"))
