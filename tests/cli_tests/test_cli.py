"""The `layoutproof` command line against its contract (docs/CLI.md): `desc decode`,
`desc encode`, `desc addresses` and `rules`.

Most tests call `solver.cli.main.main(argv)` in-process (fast); a few run the installed console script in a
subprocess to prove the entry point and the process exit status work end to end.

Expected values are derived from the PTX text (bit positions of PTX 9.7.15.5.1.2.2 / 9.7.16.4.1
Table 40, core matrices of 8 rows x 16 bytes), never from the program's own output.
"""
from __future__ import annotations

import json
from repo_paths import ROOT  # noqa: E402  (tests/repo_paths.py)
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from solver.cli.main import main


FIELD_KEYS = {"start_address", "leading_byte_offset", "stride_byte_offset", "base_offset", "lbo_mode",
              "swizzle"}
DESCRIPTOR_DOC_KEYS = {"arch", "descriptor", "fields", "violations"}
VIOLATION_KEYS = {"rule", "source", "message"}

SM90_SWIZZLES = {"none": 0, "128B": 1, "64B": 2, "32B": 3}                         # bits [62,64)
SM100_SWIZZLES = {"none": 0, "128B_atom32B": 1, "128B": 2, "64B": 4, "32B": 6}      # bits [61,64)


# --- helpers ----------------------------------------------------------------------------------------
def run(capsys, *argv):
    """Run the CLI in-process: (exit status, stdout, stderr)."""
    capsys.readouterr()  # drop anything printed before
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def run_json(capsys, *argv):
    rc, out, err = run(capsys, *argv, "--json")
    assert_one_json_document(out)
    assert err == "", err
    return rc, json.loads(out)


def assert_one_json_document(out: str):
    """Exactly one JSON document on stdout and nothing else (a trailing newline is allowed)."""
    assert out.strip(), "no output on stdout"
    decoder = json.JSONDecoder()
    text = out.strip()
    document, end = decoder.raw_decode(text)
    assert end == len(text), f"more than one JSON document / trailing text on stdout: {text[end:end + 80]!r}"
    assert isinstance(document, dict)
    return document


def assert_malformed(rc, out, err, names):
    """Exit 2, nothing on stdout, exactly one line on stderr that names the field, no traceback."""
    assert rc == 2, (rc, out, err)
    assert out == "", out
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].strip(), f"stderr must be exactly one line: {err!r}"
    lowered = lines[0].lower()
    assert any(n.lower() in lowered for n in names), f"{lines[0]!r} names none of {names}"


def assert_descriptor_document(doc, arch):
    assert set(doc) == DESCRIPTOR_DOC_KEYS, set(doc)
    assert doc["arch"] == arch
    d = doc["descriptor"]
    assert isinstance(d, str) and len(d) == 18 and d.startswith("0x"), d
    assert all(c in "0123456789abcdefABCDEF" for c in d[2:]), d
    assert set(doc["fields"]) == FIELD_KEYS, set(doc["fields"])
    for key in ("start_address", "leading_byte_offset", "stride_byte_offset", "base_offset"):
        value = doc["fields"][key]
        assert isinstance(value, int) and not isinstance(value, bool), (key, value)
    if arch == "sm90":
        assert doc["fields"]["lbo_mode"] is None
    else:
        assert doc["fields"]["lbo_mode"] in ("relative", "absolute")
    assert isinstance(doc["violations"], list)
    for v in doc["violations"]:
        assert set(v) == VIOLATION_KEYS, set(v)
        assert all(isinstance(v[k], str) and v[k] for k in VIOLATION_KEYS), v
        assert "\n" not in v["message"]


def encode_args(arch, start, lbo, sbo, swizzle, base_offset=None, lbo_mode=None):
    argv = ["desc", "encode", "--arch", arch, "--start-address", start, "--lbo", lbo, "--sbo", sbo,
            "--swizzle", swizzle]
    if base_offset is not None:
        argv += ["--base-offset", base_offset]
    if lbo_mode is not None:
        argv += ["--lbo-mode", lbo_mode]
    return argv


def expected_word(arch, start, lbo, sbo, swizzle, base_offset=0, absolute=False):
    """The 64-bit word from the PTX bit tables (independent of spec.mma.descriptor)."""
    word = (start >> 4) | ((lbo >> 4) << 16) | ((sbo >> 4) << 32) | (base_offset << 49)
    if arch == "sm90":
        return word | (SM90_SWIZZLES[swizzle] << 62)
    return word | (0b001 << 46) | (int(absolute) << 52) | (SM100_SWIZZLES[swizzle] << 61)


def catalogue_ids(capsys):
    rc, doc = run_json(capsys, "rules")
    assert rc == 0
    return {r["id"] for r in doc["rules"]}


# --- desc encode ------------------------------------------------------------------------------------
ENCODE_CASES = [
    ("sm90", 0, 128, 256, "none", 0, None),
    ("sm90", 0x400, 16, 1024, "128B", 0, None),
    ("sm90", 0x3fff0, 0x3fff0, 0x3fff0, "32B", 7, None),
    ("sm90", 0x200, 0, 512, "64B", 4, None),
    ("sm100", 0, 128, 256, "none", 0, None),
    ("sm100", 0x1000, 16, 1024, "128B", 0, "relative"),
    ("sm100", 0x800, 16, 512, "128B_atom32B", 0, None),
    ("sm100", 0x100, 16, 256, "32B", 2, None),
    ("sm103", 0x1000, 0x2000, 1024, "128B", 0, "absolute"),
    ("sm103", 0x2000, 16, 512, "64B", 0, "relative"),
]


@pytest.mark.parametrize("arch,start,lbo,sbo,swizzle,base,mode", ENCODE_CASES)
def test_encode_json_document_and_bits(capsys, arch, start, lbo, sbo, swizzle, base, mode):
    rc, doc = run_json(capsys, *encode_args(arch, start, lbo, sbo, swizzle, base, mode))
    assert rc == 0, doc["violations"]
    assert_descriptor_document(doc, arch)
    assert doc["violations"] == []
    word = expected_word(arch, start, lbo, sbo, swizzle, base, mode == "absolute")
    assert doc["descriptor"] == "0x%016x" % word
    fields = doc["fields"]
    assert fields["start_address"] == start
    assert fields["leading_byte_offset"] == lbo  # in absolute mode: the absolute byte address
    assert fields["stride_byte_offset"] == sbo
    assert fields["base_offset"] == base
    assert fields["swizzle"] == swizzle
    expected_mode = None if arch == "sm90" else (mode or "relative")
    assert fields["lbo_mode"] == expected_mode


def test_encode_hand_checked_words(capsys):
    # sm90, start 0, LBO 128 (8 at bit 16), SBO 256 (16 at bit 32), no swizzle.
    assert run_json(capsys, *encode_args("sm90", 0, 128, 256, "none"))[1]["descriptor"] == \
        "0x0000001000080000"
    # sm90 128B swizzle is code 1 at bits [62,64).
    assert run_json(capsys, *encode_args("sm90", 0, 0, 0, "128B"))[1]["descriptor"] == \
        "0x4000000000000000"
    # sm100 128B swizzle is code 2 at bits [61,64), plus the fixed 0b001 at [46,49).
    assert run_json(capsys, *encode_args("sm100", 0, 0, 0, "128B"))[1]["descriptor"] == \
        "0x4000400000000000"
    # sm103 absolute mode sets bit 52.
    assert run_json(capsys, *encode_args("sm103", 0, 0x2000, 0, "128B", 0, "absolute"))[1]["descriptor"] \
        == "0x4010400002000000"


def test_encode_numbers_decimal_and_hex_agree(capsys):
    _, decimal = run_json(capsys, *encode_args("sm100", 4096, 16, 1024, "128B", 0))
    _, hexa = run_json(capsys, *encode_args("sm100", "0x1000", "0x10", "0x400", "128B", "0x0"))
    _, upper = run_json(capsys, *encode_args("sm100", "0x1000", "0x10", "0X400", "128B", "0"))
    assert decimal == hexa == upper
    assert decimal["fields"]["start_address"] == 4096


def test_encode_base_offset_in_hex(capsys):
    rc, doc = run_json(capsys, *encode_args("sm90", 0, 16, 1024, "128B", "0x5"))
    assert rc == 0
    assert doc["fields"]["base_offset"] == 5


@pytest.mark.parametrize("argv,rule", [
    # absolute LBO mode is sm103's feature
    (encode_args("sm100", 0x1000, 0x2000, 1024, "128B", 0, "absolute"), "desc.lbo_mode.arch"),
    # base offset with no swizzle, both formats
    (encode_args("sm90", 0, 128, 256, "none", 1), "desc.base_offset.no_swizzle"),
    (encode_args("sm100", 0, 128, 256, "none", 3), "desc.base_offset.no_swizzle"),
    # absolute mode only with 128B swizzle (16B atomicity)
    (encode_args("sm103", 0x1000, 0x2000, 1024, "64B", 0, "absolute"), "desc.lbo_mode.absolute.swizzle_128b"),
    (encode_args("sm103", 0x1000, 0x2000, 1024, "128B_atom32B", 0, "absolute"),
     "desc.lbo_mode.absolute.swizzle_128b"),
    # absolute mode needs base offset 0
    (encode_args("sm103", 0x1000, 0x2000, 1024, "128B", 2, "absolute"),
     "desc.lbo_mode.absolute.base_offset_zero"),
])
def test_encode_illegal_but_encodable_exits_1_with_descriptor(capsys, argv, rule):
    rc, doc = run_json(capsys, *argv)
    assert rc == 1
    assert_descriptor_document(doc, argv[3])
    assert doc["violations"], "exit 1 must list the violations"
    assert rule in {v["rule"] for v in doc["violations"]}
    # the descriptor is still encoded as asked (illegal descriptors can be made on purpose)
    fields = doc["fields"]
    assert fields["start_address"] == argv[5] and fields["leading_byte_offset"] == argv[7]
    # every violation names a rule of the catalogue
    assert {v["rule"] for v in doc["violations"]} <= catalogue_ids(capsys)


def test_encode_illegal_sm100_absolute_still_sets_bit_52(capsys):
    rc, doc = run_json(capsys, *encode_args("sm100", 0x1000, 0x2000, 1024, "128B", 0, "absolute"))
    assert rc == 1
    assert int(doc["descriptor"], 16) >> 52 & 1 == 1
    assert doc["fields"]["lbo_mode"] == "absolute"
    assert doc["fields"]["leading_byte_offset"] == 0x2000


def test_encode_illegal_human_output_lists_violation(capsys):
    rc, out, err = run(capsys, *encode_args("sm90", 0, 128, 256, "none", 1))
    assert rc == 1 and err == ""
    assert "desc.base_offset.no_swizzle" in out


# --- desc decode ------------------------------------------------------------------------------------
def test_decode_hand_checked_sm90(capsys):
    rc, doc = run_json(capsys, "desc", "decode", "--arch", "sm90", "0x0000001000080000")
    assert rc == 0
    assert_descriptor_document(doc, "sm90")
    assert doc["fields"] == {"start_address": 0, "leading_byte_offset": 128, "stride_byte_offset": 256,
                             "base_offset": 0, "lbo_mode": None, "swizzle": "none"}


def test_decode_hand_checked_sm103_absolute(capsys):
    # start 0x1000 (0x100 << 4), LBO field 0x200 -> absolute address 0x2000, SBO 1024, fixed 0b001,
    # bit 52 = absolute, swizzle code 2 = 128B.
    word = 0x100 | (0x200 << 16) | (64 << 32) | (1 << 46) | (1 << 52) | (2 << 61)
    rc, doc = run_json(capsys, "desc", "decode", "--arch", "sm103", hex(word))
    assert rc == 0, doc["violations"]
    assert doc["descriptor"] == "0x%016x" % word
    assert doc["fields"] == {"start_address": 0x1000, "leading_byte_offset": 0x2000,
                             "stride_byte_offset": 1024, "base_offset": 0, "lbo_mode": "absolute",
                             "swizzle": "128B"}


def test_decode_accepts_decimal_only_where_it_cannot_be_hex(capsys):
    # issue 25: a bare word whose hex reading is another 64-bit word is refused (tests/cli_tests/test_cli_input_issue25.py);
    # 4611686293305360448 read as hex has 76 bits, so it can only be the decimal word
    _, hexa = run_json(capsys, "desc", "decode", "--arch", "sm90", "0x4000004000010040")
    _, decimal = run_json(capsys, "desc", "decode", "--arch", "sm90", str(0x4000004000010040))
    assert hexa == decimal


@pytest.mark.parametrize("arch", ["sm90", "sm100", "sm103"])
def test_decode_lbo_mode_per_arch(capsys, arch):
    word = expected_word(arch, 0, 128, 256, "none")
    rc, doc = run_json(capsys, "desc", "decode", "--arch", arch, hex(word))
    assert rc == 0
    assert doc["fields"]["lbo_mode"] == (None if arch == "sm90" else "relative")


@pytest.mark.parametrize("arch,word", [
    ("sm90", (1 << 14)),                          # unused bit 14
    ("sm90", (1 << 46)),                          # unused bits [46,49) (the sm100 fixed field)
    ("sm100", 0),                                 # fixed 0b001 missing
    ("sm100", (1 << 46) | (1 << 55)),             # fixed-zero bits [53,61)
    ("sm103", (1 << 46) | (1 << 15)),             # reserved bit 15
])
def test_decode_stray_bits_are_violations(capsys, arch, word):
    rc, doc = run_json(capsys, "desc", "decode", "--arch", arch, hex(word))
    assert rc == 1
    assert_descriptor_document(doc, arch)
    assert doc["violations"]


# --- round trips ------------------------------------------------------------------------------------
def _random_fields(rng, arch):
    swizzles = list(SM90_SWIZZLES if arch == "sm90" else SM100_SWIZZLES)
    mode = None if arch == "sm90" else rng.choice(["relative", "absolute"])
    return (arch, rng.randrange(0, 1 << 14) << 4, rng.randrange(0, 1 << 14) << 4,
            rng.randrange(0, 1 << 14) << 4, rng.choice(swizzles), rng.randrange(0, 8), mode)


@pytest.mark.parametrize("arch", ["sm90", "sm100", "sm103"])
def test_decode_of_encode_round_trips(capsys, arch):
    rng = random.Random(f"round-trip-{arch}")
    for _ in range(40):
        fields = _random_fields(rng, arch)
        rc_e, encoded = run_json(capsys, *encode_args(*fields))
        assert rc_e in (0, 1)
        rc_d, decoded = run_json(capsys, "desc", "decode", "--arch", arch, encoded["descriptor"])
        assert decoded == encoded, fields
        assert rc_d == rc_e
        _, start, lbo, sbo, swizzle, base, mode = fields
        assert decoded["descriptor"] == "0x%016x" % expected_word(arch, start, lbo, sbo, swizzle, base,
                                                                  mode == "absolute")
        # and back: the decoded fields encode to the same word
        f = decoded["fields"]
        _, again = run_json(capsys, *encode_args(arch, f["start_address"], f["leading_byte_offset"],
                                                 f["stride_byte_offset"], f["swizzle"], f["base_offset"],
                                                 f["lbo_mode"]))
        assert again["descriptor"] == encoded["descriptor"]


# --- desc addresses ---------------------------------------------------------------------------------
def test_addresses_hand_checked_sm90_k_major_no_swizzle(capsys):
    # PTX: no-swizzle K-major core matrices are 8 rows of 16 bytes, rows 16 B apart; the second core
    # matrix along K is LBO bytes further on. bf16 = 2 bytes, 8 per 16-byte row.
    word = expected_word("sm90", 0, 128, 256, "none")
    rc, doc = run_json(capsys, "desc", "addresses", "--arch", "sm90", hex(word), "--dtype", "bf16",
                       "--major", "K", "--mn", 8)
    assert rc == 0, doc.get("violations")
    expected = [[i * 16 + (j // 8) * 128 + (j % 8) * 2 for j in range(16)] for i in range(8)]
    assert doc["addresses"] == expected


def test_addresses_hand_checked_two_row_groups_with_start(capsys):
    # Same layout, MN = 16: the second group of 8 rows is SBO bytes on; everything offset by the start.
    start, lbo, sbo = 0x400, 256, 128
    word = expected_word("sm90", start, lbo, sbo, "none")
    rc, doc = run_json(capsys, "desc", "addresses", "--arch", "sm90", hex(word), "--dtype", "f16",
                       "--major", "K", "--mn", "0x10")
    assert rc == 0
    expected = [[start + (i // 8) * sbo + (i % 8) * 16 + (j // 8) * lbo + (j % 8) * 2 for j in range(16)]
                for i in range(16)]
    assert doc["addresses"] == expected


@pytest.mark.parametrize("arch,dtype,k", [
    ("sm90", "bf16", 16), ("sm90", "f16", 16), ("sm90", "tf32", 8), ("sm90", "e4m3", 32),
    ("sm100", "bf16", 16), ("sm100", "tf32", 8), ("sm100", "e4m3", 32), ("sm100", "e2m1", 64),
    ("sm103", "e4m3", 32),   # not s8: kind::i8 is not on sm_103a (ptxas; operand.sm103.kind_i8)
])
def test_addresses_default_k_is_instruction_k(capsys, arch, dtype, k):
    word = expected_word(arch, 0, 128, 256, "none")
    rc, doc = run_json(capsys, "desc", "addresses", "--arch", arch, hex(word), "--dtype", dtype,
                       "--major", "K", "--mn", 16)
    assert rc == 0, doc.get("violations")
    addresses = doc["addresses"]
    assert len(addresses) == 16
    assert all(len(row) == k for row in addresses)
    assert all(isinstance(a, int) and not isinstance(a, bool) for row in addresses for a in row)


def test_addresses_default_k_sm103_k96_case(capsys):
    # docs/CLI.md: --k defaults to "32 bytes of K; 48 bytes for the sm103 K=96 e2m1 case". An sm103
    # absolute-LBO-mode descriptor (the mode that exists for K = 96, 128B swizzle, base offset 0) read
    # as dense e2m1 is that case: the default K is 96, and the read is legal.
    word = expected_word("sm103", 0x1000, 0x2000, 1024, "128B", 0, absolute=True)
    rc, doc = run_json(capsys, "desc", "addresses", "--arch", "sm103", hex(word), "--dtype", "e2m1",
                       "--major", "K", "--mn", 8)
    assert all(len(row) == 96 for row in doc["addresses"]), len(doc["addresses"][0])
    assert rc == 0, doc.get("violations")


def test_addresses_explicit_k_and_hex_mn(capsys):
    word = expected_word("sm90", 0, 128, 256, "none")
    rc, doc = run_json(capsys, "desc", "addresses", "--arch", "sm90", hex(word), "--dtype", "bf16",
                       "--major", "K", "--mn", "0x8", "--k", "0x10")
    assert rc == 0
    assert len(doc["addresses"]) == 8 and all(len(r) == 16 for r in doc["addresses"])


def test_addresses_document_keys(capsys):
    word = expected_word("sm100", 0x400, 16, 1024, "128B")
    rc, doc = run_json(capsys, "desc", "addresses", "--arch", "sm100", hex(word), "--dtype", "bf16",
                       "--major", "K", "--mn", 8)
    assert rc == 0
    assert "addresses" in doc   # the contract's key; other keys are extras
    assert len(doc["addresses"]) == 8 and all(len(r) == 16 for r in doc["addresses"])
    for v in doc.get("violations", []):
        assert set(v) == VIOLATION_KEYS


def test_addresses_illegal_operand_exits_1(capsys):
    # wgmma reads no 4-bit types: well-formed, breaks a rule.
    word = expected_word("sm90", 0, 128, 256, "none")
    rc, doc = run_json(capsys, "desc", "addresses", "--arch", "sm90", hex(word), "--dtype", "e2m1",
                       "--major", "K", "--mn", 8)
    assert rc == 1
    assert doc["violations"] and all(set(v) == VIOLATION_KEYS for v in doc["violations"])
    assert doc["addresses"]


# --- rules ------------------------------------------------------------------------------------------
def test_rules_json(capsys):
    rc, doc = run_json(capsys, "rules")
    assert rc == 0
    assert "rules" in doc and isinstance(doc["rules"], list) and doc["rules"]
    ids = [r["id"] for r in doc["rules"]]
    assert len(ids) == len(set(ids)), "rule ids must be unique"
    for r in doc["rules"]:
        assert {"id", "source", "statement"} <= set(r), set(r)
        assert all(isinstance(r[k], str) and r[k] for k in ("id", "source", "statement")), r
    for expected in ("desc.sm90.layout", "desc.sm100.layout", "desc.base_offset.no_swizzle",
                     "desc.lbo_mode.arch"):
        assert expected in ids


def test_rules_human(capsys):
    rc, out, err = run(capsys, "rules")
    assert rc == 0 and err == ""
    assert "desc.sm90.layout" in out and "desc.base_offset.no_swizzle" in out


# --- human output -----------------------------------------------------------------------------------
@pytest.mark.parametrize("arch", ["sm90", "sm100", "sm103"])
def test_human_decode_and_encode_show_fields(capsys, arch):
    argv = encode_args(arch, 0x400, 16, 1024, "128B")
    rc, out, err = run(capsys, *argv)
    assert rc == 0 and err == "" and out.strip()
    for name in ("start_address", "leading_byte_offset", "stride_byte_offset", "base_offset", "swizzle"):
        assert name in out, name
    if arch != "sm90":
        assert "lbo_mode" in out
    with pytest.raises(json.JSONDecodeError):
        json.loads(out)
    word = expected_word(arch, 0x400, 16, 1024, "128B")
    rc, out2, err = run(capsys, "desc", "decode", "--arch", arch, hex(word))
    assert rc == 0 and err == "" and out2.strip()
    assert "start_address" in out2 and "stride_byte_offset" in out2
    assert "%016x" % word in out2


def test_human_addresses(capsys):
    word = expected_word("sm90", 0, 128, 256, "none")
    rc, out, err = run(capsys, "desc", "addresses", "--arch", "sm90", hex(word), "--dtype", "bf16",
                       "--major", "K", "--mn", 8)
    assert rc == 0 and err == "" and out.strip()
    assert "0x80" in out  # the second K core matrix, LBO = 128 bytes on


# --- malformed input --------------------------------------------------------------------------------
GOOD = expected_word("sm90", 0, 128, 256, "none")
ADDR = ["desc", "addresses", "--arch", "sm90", hex(GOOD), "--dtype", "bf16", "--major", "K"]

MALFORMED = [
    # malformed hex
    (["desc", "decode", "--arch", "sm90", "0xZZ"], ["descriptor", "hex"]),
    (["desc", "decode", "--arch", "sm100", "12ab"], ["descriptor", "hex"]),
    (["desc", "decode", "--arch", "sm90", "0x1" + "0" * 16], ["descriptor"]),  # 65 bits
    (["desc", "addresses", "--arch", "sm90", "0xnothex", "--dtype", "bf16", "--major", "K", "--mn", "8"],
     ["descriptor", "hex"]),
    # out-of-range / unrepresentable fields
    (encode_args("sm90", 8, 128, 256, "none"), ["start_address", "start-address"]),
    (encode_args("sm100", 1 << 18, 128, 256, "none"), ["start_address", "start-address"]),
    (encode_args("sm90", "0x40000", 128, 256, "none"), ["start_address", "start-address"]),
    (encode_args("sm90", 0, 24, 256, "none"), ["lbo", "leading_byte_offset"]),
    (encode_args("sm90", 0, 1 << 18, 256, "none"), ["lbo", "leading_byte_offset"]),
    (encode_args("sm100", 0, 128, 1 << 18, "none"), ["sbo", "stride_byte_offset"]),
    (encode_args("sm90", 0, 128, 256, "128B", 8), ["base_offset", "base-offset"]),
    (encode_args("sm100", 0, 128, 256, "128B", "0x8"), ["base_offset", "base-offset"]),
    (encode_args("sm90", "abc", 128, 256, "none"), ["start_address", "start-address"]),
    (encode_args("sm90", -16, 128, 256, "none"), ["start_address", "start-address"]),
    # unknown swizzle name (128B_atom32B does not exist on sm90)
    (encode_args("sm90", 0, 128, 256, "16B"), ["swizzle"]),
    (encode_args("sm90", 0, 128, 256, "128B_atom32B"), ["swizzle"]),
    (encode_args("sm100", 0, 128, 256, "256B"), ["swizzle"]),
    # unknown arch
    (encode_args("sm80", 0, 128, 256, "none"), ["arch"]),
    (["desc", "decode", "--arch", "sm120", hex(GOOD)], ["arch"]),
    (ADDR[:3] + ["sm89"] + ADDR[4:] + ["--mn", "8"], ["arch"]),
    # unknown lbo mode
    (encode_args("sm100", 0, 128, 256, "none", 0, "abs"), ["lbo-mode", "lbo_mode"]),
    # unknown dtype / major
    (ADDR[:6] + ["bf17"] + ADDR[7:] + ["--mn", "8"], ["dtype"]),
    (ADDR[:8] + ["X", "--mn", "8"], ["major"]),
    # MN not a multiple of 8
    (ADDR + ["--mn", "12"], ["mn"]),
    (ADDR + ["--mn", "0"], ["mn"]),
    (ADDR + ["--mn", "eight"], ["mn"]),
    # missing arguments
    ([], ["command"]),
    (["desc"], ["command"]),
    (["desc", "decode", "--arch", "sm90"], ["hex", "descriptor"]),
    (["desc", "decode", hex(GOOD)], ["arch"]),
    (["desc", "encode", "--arch", "sm90", "--start-address", "0", "--lbo", "0", "--swizzle", "none"],
     ["sbo"]),
    (["desc", "encode", "--arch", "sm90", "--lbo", "0", "--sbo", "0", "--swizzle", "none"],
     ["start-address", "start_address"]),
    (["desc", "encode", "--arch", "sm90", "--start-address", "0", "--lbo", "0", "--sbo", "0"], ["swizzle"]),
    (ADDR, ["mn"]),
    (["desc", "addresses", "--arch", "sm90", hex(GOOD), "--major", "K", "--mn", "8"], ["dtype"]),
    # unknown command / flag
    (["desc", "frobnicate"], ["frobnicate", "command"]),
    (encode_args("sm90", 0, 128, 256, "none") + ["--bogus"], ["bogus"]),
]


@pytest.mark.parametrize("argv,names", MALFORMED, ids=[" ".join(map(str, a))[:70] for a, _ in MALFORMED])
@pytest.mark.parametrize("as_json", [False, True])
def test_malformed_input_exit_2_one_line(capsys, argv, names, as_json):
    rc, out, err = run(capsys, *(argv + (["--json"] if as_json and argv else [])))
    assert_malformed(rc, out, err, names)


# --- --help -----------------------------------------------------------------------------------------
HELP = [
    ([], ["desc", "rules"]),
    (["desc"], ["decode", "encode", "addresses"]),
    (["desc", "decode"], ["--arch", "--json"]),
    (["desc", "encode"], ["--arch", "--start-address", "--lbo", "--sbo", "--swizzle", "--base-offset",
                          "--lbo-mode", "--json"]),
    (["desc", "addresses"], ["--arch", "--dtype", "--major", "--mn", "--k", "--json"]),
    (["rules"], ["--json"]),
]


@pytest.mark.parametrize("argv,mentions", HELP, ids=[" ".join(a) or "top" for a, _ in HELP])
def test_help_exits_0_and_mentions_flags(capsys, argv, mentions):
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        main(argv + ["--help"])
    out, err = capsys.readouterr()
    assert exit_info.value.code in (0, None)
    assert out.strip()
    for word in mentions:
        assert word in out, word


# --- end to end through the installed console script --------------------------------------------
def _script():
    candidate = Path(sys.executable).parent / "layoutproof"
    if candidate.exists():
        return [str(candidate)]
    found = shutil.which("layoutproof")
    return [found] if found else [sys.executable, "-m", "layoutproof"]


def _subprocess(*argv):
    env = dict(os.environ)
    env.pop("LAYOUTPROOF_DEBUG", None)
    return subprocess.run(_script() + [str(a) for a in argv], capture_output=True, text=True, cwd=ROOT,
                          env=env, timeout=60)


def test_console_script_valid_exit_0():
    proc = _subprocess(*encode_args("sm90", 0, 128, 256, "none"), "--json")
    assert proc.returncode == 0, proc.stderr
    doc = assert_one_json_document(proc.stdout)
    assert doc["descriptor"] == "0x0000001000080000"
    assert proc.stderr == ""


def test_console_script_violation_exit_1():
    proc = _subprocess(*encode_args("sm100", 0x1000, 0x2000, 1024, "128B", 0, "absolute"), "--json")
    assert proc.returncode == 1, proc.stderr
    doc = assert_one_json_document(proc.stdout)
    assert doc["violations"]


def test_console_script_malformed_exit_2():
    proc = _subprocess("desc", "addresses", "--arch", "sm90", hex(GOOD), "--dtype", "bf16", "--major", "K",
                       "--mn", "12", "--json")
    assert_malformed(proc.returncode, proc.stdout, proc.stderr, ["mn"])
    help_proc = _subprocess("--help")
    assert help_proc.returncode == 0 and "desc" in help_proc.stdout


def test_addresses_map_draws_each_chunk_where_it_is_read(capsys):
    """--map: every cell 'mn:kchunk' sits in the line and 16-byte slot of that chunk's address."""
    argv = ["desc", "addresses", "--arch", "sm90", "0x4000004000010048", "--dtype", "bf16",
            "--major", "K", "--mn", "16"]
    assert main(argv + ["--json"]) == 0
    addresses = json.loads(capsys.readouterr().out)["addresses"]
    assert main(argv + ["--map"]) == 0
    picture = capsys.readouterr().out.split("read from each):\n", 1)[1].splitlines()[2:]
    seen = 0
    for line in picture:
        base, *cells = line.split()
        for slot, cell in enumerate(cells):
            if cell != ".":
                mn, chunk = map(int, cell.split(":"))
                assert addresses[mn][8 * chunk] == int(base, 16) + 16 * slot
                seen += 1
    assert seen == 16 * 2


# --- every command: --json is one document ------------------------------------------------------------
TILE_ARGS = ["--arch", "sm90", "--dtype", "bf16", "--major", "K", "--mn", "64",
             "--layout", "Sw<3,4,3> o ((8,8),64):((64,512),1)", "--start-address", "0x400"]
EVERY_COMMAND = [
    ["desc", "decode", "--arch", "sm90", "0x4000004000010040"],
    encode_args("sm100", 0x400, 16, 1024, "128B"),
    ["desc", "addresses", "--arch", "sm90", "0x4000004000010040", "--dtype", "bf16", "--major", "K", "--mn", "8"],
    ["synth", *TILE_ARGS],
    ["check", "0x4000004000010040", *TILE_ARGS],
    ["recipe", "--arch", "sm90", "--dtype", "bf16", "--major", "K", "--mn", "128", "--k-tile", "64",
     "--swizzle", "128B", "--smem-address", "0x400"],
    ["tma", "check", "--params", str(ROOT / "examples" / "tensormap_tiled_bf16.json"), "--arch", "sm90"],
    ["tma", "place", "--swizzle", "128B", "--elem-bytes", "2", "--box", "64,8", "--smem-address", "0x400"],
    ["tma", "box", "--dtype", "bf16", "--rows", "128", "--inner", "64", "--global-dim", "4096,4096",
     "--global-strides", "8192", "--arch", "sm90"],
    ["im2col", "--mode", "im2col", "--tensor", "16,4,4,1", "--lower=0,0", "--upper=-1,-1",
     "--channels-per-pixel", "16", "--pixels-per-column", "4", "--coords", "0,0,0,0", "--elem-bytes", "2",
     "--swizzle", "NONE", "--smem-address", "0x400"],
    ["prove", "k48"],
    ["prove", "--list"],
    ["rules"],
    ["rules", "desc.sm90.layout", "--where"],
    ["fuzz", "--target", "tensormap", "--arch", "sm90", "--count", "2", "--seed", "1"],
    ["fuzz", "--coverage", "--target", "desc"],
]


@pytest.mark.parametrize("argv", EVERY_COMMAND, ids=[" ".join(a[:2]) for a in EVERY_COMMAND])
def test_every_command_json_is_one_document(capsys, argv):
    rc, out, err = run(capsys, *argv, "--json")
    assert rc in (0, 1), err
    assert_one_json_document(out)


# --- rules: ids, merged ids, where, the one catalogue ----------------------------------------------------
def test_rules_json_is_the_spec_catalogue():
    """One catalogue: `layoutproof rules --json` lists exactly spec.rules.all_rules(), in the same order,
    and no module of spec/ or solver/ adds a rule that spec.rules does not already hold (each side in a
    fresh interpreter, so nothing imported by other tests counts)."""
    listed = subprocess.run([sys.executable, "-m", "layoutproof", "rules", "--json"], capture_output=True,
                            text=True, cwd=ROOT, timeout=120)
    assert listed.returncode == 0, listed.stderr
    document = assert_one_json_document(listed.stdout)
    script = ("import importlib, json, pkgutil, spec, solver\n"
              "from spec import rules\n"
              "for package in (spec, solver):\n"
              "    for info in pkgutil.walk_packages(package.__path__, package.__name__ + '.'):\n"
              "        if '.adapters.' not in info.name and not info.name.endswith('__main__'):\n"
              "            importlib.import_module(info.name)\n"
              "print(json.dumps([r.id for r in rules.all_rules()]))\n")
    everything = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT,
                                timeout=120)
    assert everything.returncode == 0, everything.stderr
    assert [r["id"] for r in document["rules"]] == json.loads(everything.stdout)
    for r in document["rules"]:
        assert {"id", "source", "statement", "evidence", "defined_in"} <= set(r)


def test_rules_named_in_the_order_given(capsys):
    rc, doc = run_json(capsys, "rules", "desc.lbo_mode.arch", "desc.sm90.layout")
    assert rc == 0 and [r["id"] for r in doc["rules"]] == ["desc.lbo_mode.arch", "desc.sm90.layout"]
    for r in doc["rules"]:
        assert isinstance(r["properties"], list) and isinstance(r["tests"], list)


def test_rules_merged_id_resolves_to_its_successor(capsys, monkeypatch):
    """An id that was merged into another rule (spec/rule_aliases.json) answers with the successor."""
    from spec import rules as catalogue
    merged = dict(catalogue.aliases())
    for old, new in merged.items():
        rc, doc = run_json(capsys, "rules", old)
        assert rc == 0 and [r["id"] for r in doc["rules"]] == [new]
    # and one made up here, so the test does not depend on which merges the catalogue has had
    monkeypatch.setattr(catalogue, "aliases", lambda: {**merged, "desc.sm90.old_layout": "desc.sm90.layout"})
    rc, doc = run_json(capsys, "rules", "desc.sm90.old_layout")
    assert rc == 0 and [r["id"] for r in doc["rules"]] == ["desc.sm90.layout"]
    assert doc["rules"][0]["statement"] == catalogue.resolve("desc.sm90.layout").statement


@pytest.mark.parametrize("as_json", [False, True])
def test_rules_unknown_id_exits_2_naming_it(capsys, as_json):
    rc, out, err = run(capsys, "rules", "desc.sm90.layout", "no.such.rule", *(["--json"] if as_json else []))
    assert_malformed(rc, out, err, ["no.such.rule"])


def test_rules_where_prints_file_and_line_that_define_the_rule(capsys):
    """--where: each rule's `path.py:line` exists and is where the rule is made: the line calls rule(...)
    (or a helper ending in rule), or writes the rule's id."""
    rc, out, err = run(capsys, "rules", "--where")
    assert rc == 0 and err == ""
    rc, doc = run_json(capsys, "rules")
    for r in doc["rules"]:
        path, line = r["defined_in"].rsplit(":", 1)
        assert f"defined in {r['defined_in']}" in out
        source = (ROOT / path).read_text().splitlines()
        assert 1 <= int(line) <= len(source), r["defined_in"]
        text = source[int(line) - 1]
        assert "rule(" in text or r["id"] in text, (r["id"], r["defined_in"], text)


def test_rules_named_lists_tests_that_mention_it(capsys):
    """Every test listed holds the id as a quoted string: `tests/x.py::test_name` inside that test's
    body, `tests/x.py:LINE` on that line (a shared table); this very test is found by name."""
    import ast
    rule_id = "desc.base_offset.no_swizzle"
    quoted = (f'"{rule_id}"', f"'{rule_id}'")
    rc, doc = run_json(capsys, "rules", rule_id)
    tests = doc["rules"][0]["tests"]
    assert "tests/cli_tests/test_cli.py::test_rules_named_lists_tests_that_mention_it" in tests
    for t in tests:
        if "::" in t:
            path, name = t.split("::")
            source = (ROOT / path).read_text()
            test = next(n for n in ast.parse(source).body if getattr(n, "name", None) == name)
            body = ast.get_source_segment(source, test)
        else:
            path, line = t.rsplit(":", 1)
            body = (ROOT / path).read_text().splitlines()[int(line) - 1]
        assert any(q in body for q in quoted), t


def test_rules_named_lists_properties_that_name_it(capsys, monkeypatch):
    from solver.prove.catalogue import all_properties
    chosen = all_properties()[0]
    monkeypatch.setattr(chosen, "rules", ("desc.sm90.layout",))
    rc, doc = run_json(capsys, "rules", "desc.sm90.layout")
    assert chosen.id in doc["rules"][0]["properties"]
    named = [p.id for p in all_properties() if "desc.sm90.layout" in p.rules]
    assert doc["rules"][0]["properties"] == named


# --- python -m layoutproof, --version, no Z3 where it is not needed ------------------------------------
def _pyproject_version() -> str:
    """The version the install recorded (pyproject.toml reads layoutproof/_version.py when it builds)."""
    from importlib import metadata
    return metadata.version("layoutproof")


def test_python_m_layoutproof_version():
    proc = subprocess.run([sys.executable, "-m", "layoutproof", "--version"], capture_output=True, text=True,
                          cwd=ROOT, timeout=60)
    assert proc.returncode == 0 and proc.stderr == ""
    assert proc.stdout.strip() == f"layoutproof {_pyproject_version()}"


def test_python_m_layoutproof_is_the_command():
    proc = subprocess.run([sys.executable, "-m", "layoutproof", *map(str, encode_args("sm90", 0, 128, 256, "none")), "--json"],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 0 and proc.stderr == ""
    assert assert_one_json_document(proc.stdout)["descriptor"] == "0x%016x" % expected_word("sm90", 0, 128, 256, "none")


def test_desc_decode_does_not_import_z3():
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "layoutproof", "desc", "decode", "--arch", "sm90",
                           "0x4000004000010040"], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 0
    assert "z3" not in proc.stderr
