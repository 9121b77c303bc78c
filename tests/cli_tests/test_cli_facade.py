"""`import layoutproof as lp`: the facade gives what the command line gives, on the same inputs.

Where a value is checked (not just compared with the CLI), it comes from the manual: the sm90 descriptor
0x4000004000010040 has start address field 0x40 (bits [0,14)), LBO field 1 (bits [16,30)), SBO field
0x40 (bits [32,46)) and swizzle code 1 = 128B (bits [62,64)), addresses being the field << 4 (PTX
9.7.15.5.1.2.2).
"""
from __future__ import annotations

import json
from repo_paths import ROOT  # noqa: E402  (tests/repo_paths.py)
import subprocess
import sys

import pytest

import layoutproof as lp
from solver.cli.main import main

WORD = 0x4000004000010040
LAYOUT = "Sw<3,4,3> o ((8,8),64):((64,512),1)"


def cli(capsys, *argv) -> tuple:
    capsys.readouterr()
    code = main([str(a) for a in argv] + ["--json"])
    return code, json.loads(capsys.readouterr().out)


def test_import_is_light():
    """`import layoutproof` loads neither spec/, solver/ nor Z3 until a function is called."""
    probe = ("import sys, layoutproof\n"
             "print(sorted(m for m in sys.modules if m.split('.')[0] in ('z3', 'spec', 'solver')))")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == "[]", proc.stdout + proc.stderr


def test_version_is_the_package_version():
    """One place holds the version: the installed metadata (built from pyproject.toml's dynamic version,
    which reads layoutproof/_version.py) and lp.__version__ agree."""
    import tomllib
    from importlib import metadata
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "version" in project["dynamic"] and "version" not in project
    assert lp.__version__ == metadata.version("layoutproof")


def test_decode_fields_from_the_manual_and_the_cli(capsys):
    d = lp.decode("sm90", WORD)
    assert (d.start_address, d.leading_byte_offset, d.stride_byte_offset, d.base_offset, d.swizzle,
            d.lbo_mode) == (0x40 << 4, 1 << 4, 0x40 << 4, 0, "128B", None)
    code, document = cli(capsys, "desc", "decode", "--arch", "sm90", hex(WORD))
    assert code == 0 and document["fields"] == d.fields_json() and document["descriptor"] == d.hex
    assert lp.decode("sm90", hex(WORD)) == d
    assert [v.as_json() for v in lp.violations(d)] == document["violations"] == []


def test_encode_is_decode_inverse_and_matches_the_cli(capsys):
    d = lp.encode("sm100", 0x400, 16, 1024, "128B")
    code, document = cli(capsys, "desc", "encode", "--arch", "sm100", "--start-address", "0x400", "--lbo", "16",
                         "--sbo", "1024", "--swizzle", "128B")
    assert code == 0 and document["descriptor"] == d.hex and document["fields"] == d.fields_json()
    assert lp.decode("sm100", d.raw) == d


def test_read_addresses_match_desc_addresses(capsys):
    """K-major bf16, 128B swizzle, start 0x400: row 0's first 16-byte chunk starts at 0x400 (the start
    address, phase 0), and the CLI gives the same table."""
    d = lp.decode("sm90", WORD)
    addresses = lp.read_addresses(d, "bf16", "K", 64)
    assert addresses[0][0] == 0x400 and len(addresses) == 64
    code, document = cli(capsys, "desc", "addresses", "--arch", "sm90", hex(WORD), "--dtype", "bf16",
                         "--major", "K", "--mn", "64")
    assert code == 0 and document["addresses"] == addresses


def test_check_tensor_map_matches_tma_check(capsys):
    path = ROOT / "examples" / "tensormap_tiled_bf16.json"
    params = json.loads(path.read_text())
    code, document = cli(capsys, "tma", "check", "--params", path, "--arch", "sm90")
    assert lp.check_tensor_map(params, arch="sm90") == document
    assert code == (0 if document["legal"] else 1)
    broken = dict(params, globalAddress=0x7f0000000008)      # cuda.h: 16-byte aligned
    report = lp.check_tensor_map(broken, arch="sm90")
    assert not report["legal"] and "tma.map.global_address_alignment" in [v["rule"] for v in report["violations"]]


def test_synthesize_matches_synth(capsys):
    """The 128B-swizzled K-major bf16 tile at 0x400 is read by 0x4000004000010040 (the descriptor above:
    128B, SBO 1024 = 8 rows of 128 bytes); from K offset 16 the start moves by 16 x 2 bytes to 0x420."""
    outcome = lp.synthesize("sm90", "bf16", "K", 64, LAYOUT, 0x400)
    assert outcome.status == "found" and outcome.descriptor.raw == WORD
    shifted = lp.synthesize("sm90", "bf16", "K", 64, LAYOUT, 0x400, k_offset=16)
    assert shifted.descriptor.start_address == 0x420
    code, document = cli(capsys, "synth", "--arch", "sm90", "--dtype", "bf16", "--major", "K", "--mn", "64",
                         "--layout", LAYOUT, "--start-address", "0x400", "--k-offset", "16")
    assert code == 0 and document["descriptor"] == shifted.descriptor.hex


def test_recipe_matches_recipe(capsys):
    from solver.synth.recipe import as_json
    r = lp.recipe("sm90", "bf16", "K", 128, 64, "128B", 0x400)
    code, document = cli(capsys, "recipe", "--arch", "sm90", "--dtype", "bf16", "--major", "K", "--mn", "128",
                         "--k-tile", "64", "--swizzle", "128B", "--smem-address", "0x400")
    # the command adds how the instructions read the tile (solver.synth.recipe_mma): the rest is lp.recipe's
    assert code == 0 and as_json(r) == {key: value for key, value in document.items() if key != "mma"}
    assert [s["rows"] for s in document["mma"]["slices"]] == [[0, 63], [64, 127], [0, 127]]
    assert [i["descriptor"] for i in document["instructions"]][0] == hex(WORD)


def test_prove_matches_prove(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = lp.prove("k48.contiguous", timeout=30.0)
    code, document = cli(capsys, "prove", "k48.contiguous")
    assert result.status == document["results"][0]["status"] == "refuted"
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(ValueError, match="no.such"):
        lp.prove("no.such.property")


def test_rules_and_rule_match_rules(capsys):
    code, document = cli(capsys, "rules")
    assert code == 0 and [r.id for r in lp.rules()] == [r["id"] for r in document["rules"]]
    code, document = cli(capsys, "rules", "desc.sm90.layout")
    assert lp.rule("desc.sm90.layout").as_json().items() <= document["rules"][0].items()
    with pytest.raises(KeyError):
        lp.rule("no.such.rule")


def test_malformed_input_raises_spec_error_naming_the_field():
    from spec.rule import SpecError
    with pytest.raises(SpecError) as error:
        lp.encode("sm90", 8, 16, 1024, "128B")
    assert error.value.field_name == "start_address"


def test_bundled_examples_resolve_by_name_and_travel_in_the_package():
    """The examples the README and docs/ use live in the package (layoutproof/examples, in the wheel's
    package-data) and resolve by a short name; an unknown name lists them."""
    import json as json_
    import os as os_
    import layoutproof as lp_
    path = lp_.example_path("tiled_bf16")
    assert path.endswith(os_.path.join("layoutproof", "examples", "tensormap_tiled_bf16.json"))
    assert json_.load(open(path))["encode"] == "tiled"
    assert lp_.example_path("tensormap_tiled_bf16.json") == path
    with pytest.raises(ValueError) as error:
        lp_.example_path("no_such_thing")
    assert "tmem_alloc_leak" in str(error.value) and "\n" not in str(error.value)
