"""The hostile-input campaign (issue 17): thousands of malformed, huge and strange invocations of every
command, generated deterministically from a seed and kept as tests/hostile/cases.jsonl.

    python -m tests.hostile.campaign generate [--seed 17] [--out tests/hostile/cases.jsonl]
    python -m tests.hostile.campaign run [--cases tests/hostile/cases.jsonl] [--summary FILE] [--jobs 2]

`run` executes each case as its own process (`python -m layoutproof ARGS`) with a 20 s time limit and
an address-space limit of 1.5 GB, and judges it: no traceback, no exit 3, no run over 20 s or 1 GB,
and every exit-2 message one line, under 300 characters, naming the field the case spoiled (when the
case names one). tests/cli_tests/test_hostile_input.py runs the same kept cases in-process through
solver.cli.main.main, which is fast enough for CI.

A case is one JSON line: {"id", "argv": [token...], "stdin": spec | null, "files": {name: spec},
"field": [names] | null}. A token is a string, or {"repeat": text, "times": n} for a long one; in a
token "{tmp}" is the folder the case's files are written to. A file or stdin spec is {"text": ...},
{"json": ...}, {"repeat": text, "times": n, "prefix": ..., "suffix": ...}, or one of "closed" (stdin
only: no standard input at all), "/dev/zero", "/dev/null" (used as they are).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
REPOSITORY = os.path.dirname(os.path.dirname(HERE))
CASES = os.path.join(HERE, "cases.jsonl")
SEED = 17
TIME_LIMIT_S = 20
MEMORY_LIMIT = 1536 * 1024 * 1024        # the address-space limit each run gets
MEMORY_JUDGED = 1024 * 1024 * 1024       # the largest resident set a run may reach
MESSAGE_LIMIT = 300

# --- Values that break things ------------------------------------------------------------------------------
BIG = {"repeat": "9", "times": 5000}                                   # a 5,000-digit number
BIG_HEX = {"prefix": "0x", "repeat": "f", "times": 3600}              # a 3,600-digit hex number
LONG_TEXT = {"repeat": "a", "times": 100000}                          # argv holds at most 128 KiB a token
NUMBERS = ["0", "-1", "-0", "1", "7", "8", "9", "15", "16", "17", "255", "256", "257", "1023", "1024",
           "65535", "65536", "100000", "233472", "233473", "1000000000", "4294967296", "0xffffffffffffffff",
           "18446744073709551616", "-9223372036854775809", "0x", "0x-1", "-0x10", "1e9", "1.5", "nan", "inf",
           "-inf", "", " ", "  16  ", "1_000", "_", "0b101", "0o17", "١٦", "１６", "16\n17", "16\t", "x",
           "0x4_00", "+16", "--16", "٣", BIG, BIG_HEX, LONG_TEXT]
LISTS = ["0,0", "", ",", "1,,2", "1,", ",1", "256,256,256", "100000,100000", "256,256,4", "1,2,3,4,5,6",
         "1,2,3,4,5,6,7,8,9", "-1,-1", "=-1", "0", "1000000000", "1000000000,1000000000", "nan,1",
         "١٦,16", "16,\n16", {"prefix": "1", "repeat": ",1", "times": 2000}, "0x10,0x20", "8,8,8,8,8", "4294967296,1", BIG, BIG_HEX,
         LONG_TEXT]
WORDS = ["", " ", "bogus", "NONE", "none", "128B", "128b", "sm90", "sm_100a", "sm103", "sm89", "SM100",
         "bf16", "bfloat16", "BFLOAT16", "e2m1", "K", "MN", "k", "mn", "x", "ld", "st", "a\nb", "é", "ß" * 40,
         "\u202e", "Sw<3,4,3> o (64,64):(64,1)", "--json", "-", "-1", LONG_TEXT, "\\", "'", '"', "%s", "{}",
         "../../etc/passwd"]
LAYOUTS = ["", "(", ")", "(64,64):(64,1)", "Sw<3,4,3> o (64,64):(64,1)", "Sw<99,4,3> o (8,8):(8,1)",
           "Sw<3,4,-3> o (8,8):(8,1)", "Sw<3,4,3> o", {"parts": ["(64,64):(", BIG, ",1)"]},
           "(1000000000,1000000000):(1000000000,1)", {"parts": [{"repeat": "(", "times": 1000}, "8", {"repeat": ")", "times": 1000}]}, "(8,8):(8,1) o (8,8):(8,1)",
           "((8,8),64):((64,512),1)", "(0,8):(8,1)", "(8,8):(x,1)", "(8,8):(8,1)\n", "(8,8,8,8,8,8,8,8):(1,8)",
           "(65536,65536):(65536,1)", "(8,8):(-8,1)", "Sw<3,4,3> o ((8,8),64):((64,512),1)", "Sw<3,4,3>",
           LONG_TEXT, "(8,)" * 3, {"parts": ["(1", {"repeat": ",1", "times": 3000}, "):(1", {"repeat": ",1", "times": 3000}, ")"]}]

# --- JSON documents --------------------------------------------------------------------------------------
HOSTILE_JSON = [None, True, -1, 0, 2 ** 64, 2 ** 200, 1.5, -0.0, "", "x", "0x10", "0x" + "f" * 3600, [],
                [[]], {}, [1] * 6, [0], [2 ** 70, 1], ["a"], [None], "NONE", "bogus", {"a": 1}, 1e300]


def json_file_specs() -> list:
    """Document specs that are hostile as a whole (not one bad key)."""
    return [
        "/dev/zero", "/dev/null",
        {"text": ""}, {"text": "{"}, {"text": "[]"}, {"text": "null"}, {"text": "1"}, {"text": "\"x\""},
        {"text": "{\"encode\": \"tiled\"}"}, {"text": "\ufeff{}"}, {"text": "{\"a\": NaN}"},
        {"text": "{\"rank\": Infinity}"}, {"text": "{\"rank\": -Infinity}"},
        {"repeat": "[", "times": 200000}, {"parts": [{"repeat": "[", "times": 5000}, {"repeat": "]", "times": 5000}]},
        {"prefix": "{\"rank\": ", "repeat": "9", "times": 5000, "suffix": "}"},
        {"prefix": "{\"globalAddress\": ", "repeat": "1", "times": 4301, "suffix": "}"},
        {"prefix": "{\"rank\": 1", "repeat": "0", "times": 400, "suffix": "e-400}"},
        {"prefix": "{\"x\": \"", "repeat": "a", "times": 10485760, "suffix": "\"}"},
        {"prefix": "{\"encode\": \"", "repeat": "a\\n", "times": 1000, "suffix": "\"}"},
        {"prefix": " ", "repeat": " ", "times": 2 * 1024 * 1024, "suffix": "{}"},
        {"repeat": "\u00ff", "times": 100},
        {"text": "{\"encode\": \"tiled\", \"encode\": \"im2col\"}"},
    ]


def _load_example(name: str) -> dict:
    with open(os.path.join(REPOSITORY, "examples", name), encoding="utf-8") as handle:
        return json.load(handle)


# --- Base invocations: well-formed, each option's value the target of mutations ------------------------------
# (argv with "{value-of-option}" left as is; the kind of each option decides which hostile values it gets)
BASES = [
    (["desc", "decode", "--arch", "sm90", "0x4000004000010040"], {"--arch": "word", 4: "number"}),
    (["desc", "encode", "--arch", "sm90", "--start-address", "0x400", "--lbo", "16", "--sbo", "1024",
      "--swizzle", "128B", "--base-offset", "0"],
     {"--arch": "word", "--start-address": "number", "--lbo": "number", "--sbo": "number", "--swizzle": "word",
      "--base-offset": "number"}),
    (["desc", "encode", "--arch", "sm103", "--start-address", "0x400", "--lbo", "0x800", "--sbo", "1024",
      "--swizzle", "128B", "--lbo-mode", "absolute"], {"--lbo": "number", "--lbo-mode": "word"}),
    (["desc", "addresses", "--arch", "sm90", "0x4000004000010040", "--dtype", "bf16", "--major", "K", "--mn", "8",
      "--k", "16"],
     {"--arch": "word", 4: "number", "--dtype": "word", "--major": "word", "--mn": "number", "--k": "number"}),
    (["synth", "--arch", "sm90", "--dtype", "bf16", "--major", "MN", "--mn", "64", "--layout",
      "Sw<3,4,3> o (64,16):(1,64)", "--start-address", "0x400"],
     {"--arch": "word", "--dtype": "word", "--major": "word", "--mn": "number", "--layout": "layout",
      "--start-address": "number", "--k": "number", "--k-offset": "number"}),
    (["check", "0x4000004000010042", "--arch", "sm90", "--dtype", "bf16", "--major", "K", "--mn", "64", "--layout",
      "Sw<3,4,3> o ((8,8),64):((64,512),1)", "--start-address", "0x400", "--k-offset", "16"],
     {1: "number", "--mn": "number", "--layout": "layout", "--start-address": "number", "--k-offset": "number",
      "--k": "number", "--kind": "word"}),
    (["recipe", "--arch", "sm90", "--dtype", "f16", "--major", "MN", "--mn", "64", "--k-tile", "32", "--swizzle",
      "64B", "--smem-address", "0x800"],
     {"--arch": "word", "--dtype": "word", "--major": "word", "--mn": "number", "--k-tile": "number",
      "--swizzle": "word", "--smem-address": "number"}),
    (["tma", "check", "--params", "examples/tensormap_tiled_bf16.json", "--arch", "sm90"],
     {"--arch": "word", "--params": "path"}),
    (["tma", "place", "--swizzle", "32B", "--elem-bytes", "4", "--box", "8,2", "--smem-address", "0x100"],
     {"--swizzle": "word", "--elem-bytes": "number", "--box": "list", "--smem-address": "number",
      "--element-strides": "list"}),
    (["tma", "box", "--dtype", "f16", "--rows", "64", "--inner", "64", "--global-dim", "1024,1024",
      "--global-strides", "2048", "--arch", "sm90"],
     {"--dtype": "word", "--rows": "number", "--inner": "number", "--global-dim": "list",
      "--global-strides": "list", "--arch": "word"}),
    (["tmem", "check", "--arch", "sm_100a", "--ptx", "tcgen05.ld.sync.aligned.16x128b.x4.b32 {%r1, %r2, %r3, %r4}, [%r0]"],
     {"--arch": "word", "--ptx": "word", "--ptx-version": "word"}),
    (["tmem", "ld", "--shape", "32x32b", "--num", "x4", "--lane", "32", "--column", "0", "--warp", "0", "--arch",
      "sm_100a"],
     {"--shape": "word", "--num": "word", "--lane": "number", "--column": "number", "--warp": "number",
      "--arch": "word"}),
    (["tmem", "cp", "--shape", "64x128b", "--multicast", "warpx2::02_13"], {"--shape": "word", "--multicast": "word"}),
    (["tmem", "shift", "--lane", "0"], {"--lane": "number"}),
    (["tmem", "plan", "--m", "64", "--n", "16", "--dtype", "f32", "--at", "17,3"],
     {"--m": "number", "--n": "number", "--dtype": "word", "--at": "list"}),
    (["tmem", "alloc", "--ops", "examples/tmem_alloc_leak.json"], {"--ops": "path"}),
    (["tmem", "map", "--op", "ld", "--shape", "16x64b", "--num", "x1"],
     {"--op": "word", "--shape": "word", "--num": "word", "--half-splitoff": "number"}),
    (["im2col", "--mode", "im2col", "--tensor", "16,4,4,1", "--lower=0,0", "--upper=-1,-1", "--channels-per-pixel",
      "16", "--pixels-per-column", "4", "--coords", "0,0,0,0", "--elem-bytes", "2", "--swizzle", "NONE",
      "--smem-address", "0x400"],
     {"--mode": "word", "--tensor": "list", "--lower": "list", "--upper": "list", "--channels-per-pixel": "number",
      "--pixels-per-column": "number", "--coords": "list", "--elem-bytes": "number", "--swizzle": "word",
      "--smem-address": "number", "--offsets": "list", "--element-strides": "list", "--w-halo": "number",
      "--w-offset": "number", "--interleave": "word", "--oob-fill": "word"}),
    (["prove", "--layout", "Sw<3,4,3> o (64,64):(64,1)", "--dtype", "bf16", "injective"],
     {"--layout": "layout", "--dtype": "word", "--start-address": "number", "--timeout": "number",
      "--param": "word", "--range": "list", "--line": "number", "--k-slice": "number", "--engine": "word"}),
    (["prove", "--list"], {"--timeout": "number", "--save": "path", "--counterexamples": "path"}),
    (["rules", "desc.sm90.layout"], {1: "word", "--subject": "word"}),
    (["rules", "--subject", "descriptor"], {"--subject": "word"}),
    (["fuzz", "--target", "desc", "--count", "2", "--seed", "1", "--arch", "sm90"],
     {"--target": "word", "--count": "count", "--seed": "number", "--violate": "word", "--arch": "word",
      "--format": "word"}),
    (["ptx", "descriptors", "tests/fixtures/ptx/handwritten_tcgen05.ptx", "--kernel", "cta_pair"],
     {2: "path", "--kernel": "word", "--smem-base": "number", "--param": "word"}),
    (["ptx", "check", "tests/fixtures/ptx/triton_wgmma_f16_sw128.ptx", "--layout", "B=Sw<3,4,3> o (64,64):(64,1)"],
     {2: "path", "--layout": "word", "--smem-base": "number"}),
]

# options whose value a case may spoil but whose error rightly names another field
FIELD_ALIASES = {
    "--params": ["params"], "--ops": ["ops"], "--ptx": ["ptx", "instruction", "tcgen05"],
    "--layout": ["layout"], "--multicast": ["multicast"], "--num": ["num"], "--shape": ["shape"],
    "--lbo": ["leading_byte_offset"], "--sbo": ["stride_byte_offset"],
}
# words of the vocabulary: a case that puts one where another belongs may be refused for what it implies
# (e2m1 changes the instruction K, and the layout no longer covers it): no field is expected of it
VOCABULARY = {"NONE", "none", "128B", "128b", "sm90", "sm_100a", "sm103", "bf16", "bfloat16", "BFLOAT16", "e2m1",
              "K", "MN", "k", "mn", "ld", "st", "SM100"}


def field_names(option) -> list:
    """The names an error about `option` may use: --k-offset, k_offset, kOffset, k-offset."""
    if not isinstance(option, str):
        return []
    if option in FIELD_ALIASES:
        return [option] + FIELD_ALIASES[option]
    base = option.lstrip("-")
    camel = re.sub(r"-(.)", lambda m: m.group(1).upper(), base)
    return [option, base, base.replace("-", "_"), camel]


# the words every option of kind "word" gets; the rest of WORDS is sampled (15 per option)
WORDS_ALWAYS = ["", "bogus", "a\nb", "é", "\u202e", LONG_TEXT, "-1", "１６"]
# fuzz --count: the hostile counts only (a legal count of a few hundred cases is valid, and slow)
COUNTS = [v for v in NUMBERS if not (isinstance(v, str) and v.isdigit() and 16 < int(v) < 65535)]


# the numbers every option of kind "number" gets; the rest of NUMBERS is sampled (14 per option)
NUMBERS_ALWAYS = ["0", "-1", "1000000000", "18446744073709551616", "nan", "", "0x", "١٦", "１６", "16\n17", BIG,
                  BIG_HEX, LONG_TEXT]


def hostile_values(kind: str, rng: random.Random = None) -> list:
    if kind == "word" and rng is not None:
        rest = [w for w in WORDS + NUMBERS[:12] if w not in WORDS_ALWAYS]
        return WORDS_ALWAYS + rng.sample(rest, 15)
    if kind == "number" and rng is not None:
        rest = [n for n in NUMBERS if n not in NUMBERS_ALWAYS]
        return NUMBERS_ALWAYS + rng.sample(rest, 14)
    pool = {"number": NUMBERS, "count": COUNTS, "list": LISTS, "word": WORDS + NUMBERS[:12],
            "layout": LAYOUTS + WORDS[:6],
            "path": ["/dev/zero", "/dev/null", "/nonexistent", "/", "", "-", "/proc/self/mem", LONG_TEXT,
                     "{tmp}/deep.json", "{tmp}/huge.json"]}
    return pool[kind]


def _set_value(argv: list, where, value) -> list:
    out = list(argv)
    if isinstance(where, int):
        out[where] = value
        return out
    for i, token in enumerate(out):
        if token == where:
            out[i + 1] = value
            return out
        if isinstance(token, str) and token.startswith(where + "="):
            out[i] = {"prefix": where + "=", **value} if isinstance(value, dict) else f"{where}={value}"
            return out
    out += [where, value]
    return out


def _drop_option(argv: list, where) -> list:
    out = list(argv)
    if isinstance(where, int):
        return out[:where] + out[where + 1:]
    for i, token in enumerate(out):
        if token == where:
            return out[:i] + out[i + 2:]
        if isinstance(token, str) and token.startswith(where + "="):
            return out[:i] + out[i + 1:]
    return out


def _case(argv, *, field=None, stdin=None, files=None, json_out=False, expect=None) -> dict:
    argv = list(argv) + (["--json"] if json_out else [])
    case = {"argv": argv, "stdin": stdin, "files": files or {}, "field": field}
    if expect is not None:
        case["expect"] = expect          # the one right exit status, where the answer is known
    return case


# --- Issue 25: the defects found when the project was attacked, each with the exit status it must give ----
PTX_HEAD = ".version 8.7\n.target sm_100a\n.address_size 64\n"
IDESC_N0_KERNEL = (PTX_HEAD + ".visible .entry k()\n{\n.reg .b32 %r<2>;\n.reg .b64 %rd<3>;\n"
                   ".shared .align 1024 .b8 smem[32768];\n"
                   "mov.u64 %rd1, 0x4000404000010040;\nmov.u64 %rd2, 0x4000404000010040;\n"
                   "mov.b32 %r1, 0x08010490;\n"
                   "tcgen05.mma.cta_group::1.kind::f16 [%r0], %rd1, %rd2, %r1, 1;\nret;\n}\n")


def issue25_cases() -> list:
    """The examples of issue 25 with the status each must give (expect), and its runaway PTX files."""
    inside = ["prove", "--layout"]
    save_path = "/proc/forbidden"
    big = "1" + "0" * 99
    modes = ",".join(["8"] * 10000)
    entry = PTX_HEAD + ".visible .entry k()\n{\n.reg .pred %p1;\n"
    runaways = [
        {"prefix": entry + "TOP:\n", "repeat": "@%p1 bra TOP;\n", "times": 20000, "suffix": "ret;\n}\n"},
        {"prefix": PTX_HEAD + ".shared", "repeat": " .a", "times": 20000, "suffix": " .b8 s[16];\n"},
        {"parts": [entry, ".reg .b32 %r<10000>;\n",
                   {"repeat": "@%p1 bra L;\nadd.s32 %r1, %r1, 1;\n", "times": 10000}, "L:\nret;\n}\n"]},
    ]
    listed = [
        (inside + ["(64,128):(128,1)", "--dtype", "bf16", "inside", "--line", "1", "--k-slice", "1"], None, 1),
        (inside + ["(64,128):(128,1)", "--dtype", "f32", "inside", "--line", "2", "--k-slice", "1"], None, 1),
        (inside + ["(3,2048):(2048,1)", "--dtype", "e4m3", "inside", "--k-slice", "131073"], None, 1),
        (inside + ["(64,256):(256,1)", "--dtype", "e4m3", "inside", "--k-slice", "1099511627777"], None, 1),
        (["desc", "decode", "--arch", "sm90", "4000004000010040"], ["descriptor", "0x", "hex"], 2),
        (["check", "0x00004020000807d8", "--arch", "sm100", "--dtype", "tf32", "--major", "MN", "--mn", "8",
          "--k-offset", "24", "--layout", "((4,3),(8,4)):((1,128),(4,32))", "--start-address", "0x7c00"], None, 1),
        (["recipe", "--arch", "sm100", "--dtype", "bf16", "--major", "K", "--mn", "128", "--k-tile", "64",
          "--swizzle", "128B", "--smem-address", "0x400", "--instr", "128,0"], None, 1),
        (inside + ["(4,5):(1,S)", "--param", "S=4..6", "--range", "0,128", "bijective"], None, 1),
        (["prove", "desc.roundtrip.sm90.any_word", "--save", save_path], ["save", save_path], 2),
        (["tmem", "plan", "--m", "128", "--n", "16", "--dtype", "f32", "--registers", "1"], None, 0),
        (inside + [f"Sw<{big},4,3> o (8,8):(8,1)", "injective"], ["layout"], 2),
        (inside + [f"Sw<3,{big},3> o (8,8):(8,1)", "injective"], ["layout"], 2),
        (inside + [f"Sw<3,4,{big}> o (8,8):(8,1)", "injective"], ["layout"], 2),
        (["prove", "--layout-bases", '{"results": []}', "injective"], ["results", "layout-bases"], 2),
        (inside + [f"({modes}):({modes})", "injective"], ["layout"], 2),
        (inside + ["(4,5):(1,Sw)", "--param", "Sw=1..2", "injective"], ["param", "Sw"], 2),
        (inside + ["(4,5):(1,o)", "--param", "o=1..2", "injective"], ["param", "o"], 2),
        (inside + ["1073741824:1", "bijective", "--range", "0,2147483648"], None, 1),
        (["prove", "--layout", "(8,8):(8,1)", "--save", "/proc/forbidden", "injective"], None, None),
        (["fuzz", "--target", "desc", "--count", "2", "--seed", "1", "--arch", "sm90", "--against", "cat",
          "--scheduler", ""], ["scheduler"], 2),
        (["desc", "addresses", "--arch", "sm90", "0x4000004000010040", "--dtype", "bf16", "--major", "K", "--mn",
          "8", "--svg", ""], ["svg"], 2),
        (["tmem", "check", "--arch", "sm_100a", "--ptx", "tcgen05.st.sync.aligned.32x32b.x2.b32 [%r0], {%r8, 0};"],
         None, 0),
        (["tmem", "check", "--arch", "sm_100a", "--ptx",
          "tcgen05.st.sync.aligned.32x32b.x2.x2.b32 [%r0], {%r8, %r9, %r10, %r11};"], None, 1),
        (["tmem", "check", "--arch", "sm_100a", "--ptx",
          "tcgen05.st.sync.aligned.16x64b.x1.pack::16b.unpack::16b.b32 [%r0], {%r8};"], None, 1),
        (["tmem", "check", "--arch", "sm_100a", "--ptx", "tcgen05.wait::mma.sync;"], None, 1),
        (["desc", "addresses", "--arch", "sm90", "4000004000000040", "--dtype", "bf16", "--major", "K", "--mn",
          "8"], ["descriptor", "0x"], 2),
        (["desc", "decode", "--arch", "sm90", "12ab"], ["0x12ab"], 2),
        (["desc", "decode", "--arch", "sm90", "4611686293305360448"], None, 0),
        (["desc", "decode", "--arch", "sm90", "9"], None, 0),
        (["check", "4000004000010042", "--arch", "sm90", "--dtype", "bf16", "--major", "K", "--mn", "64",
          "--layout", "Sw<3,4,3> o ((8,8),64):((64,512),1)", "--start-address", "0x400"], ["descriptor", "0x"], 2),
        (["tma", "place", "--swizzle", "32B", "--elem-bytes", "4", "--box", "8,2", "--smem-address", "0x100",
          "--png", ""], ["png"], 2),
        (["tmem", "map", "--op", "ld", "--shape", "32x32b", "--num", "x4", "--svg", ""], ["svg"], 2),
        (["tmem", "plan", "--m", "64", "--n", "16", "--dtype", "bf16", "--registers", "1"], None, 0),
        (["fuzz", "--target", "desc", "--count", "1", "--arch", "sm90", "--out", ""], ["out"], 2),
        (["fuzz", "--target", "desc", "--count", "1", "--arch", "sm90", "--against", ""], ["against"], 2),
        (["fuzz", "--target", "desc", "--count", "1", "--arch", "sm90", "--against", "cat", "--scheduler",
          "tls://127.0.0.1:1"], ["scheduler"], 2),
        (["fuzz", "--target", "desc", "--count", "1", "--arch", "sm90", "--answer-timeout", "5"],
         ["answer-timeout", "against"], 2),
        (["tmem", "plan", "--m", "256", "--n", "16", "--dtype", "f32", "--cta-group", "2", "--registers", "1"],
         None, 0),
    ]
    tiled = _load_example("tensormap_tiled_bf16.json")
    cases = []
    for spoiled in ({"rank": "two", "dataType": "BOGUS", "swizzle": 7}, {"encode": "tiles", "swizzle": 7}):
        cases.append(_case(["tma", "check", "--params", "{tmp}/doc.json", "--arch", "sm90"],
                           files={"doc.json": {"json": {**tiled, **spoiled}}}, field=["swizzle"], expect=2))
    for argv, field, expect in listed:
        cases.append(_case(argv, field=field, expect=expect))
        cases.append(_case(argv, field=field, expect=expect, json_out=True))
    cases.append(_case(["ptx", "descriptors", "{tmp}/k.ptx"], files={"k.ptx": {"text": IDESC_N0_KERNEL}}, expect=1))
    cases.append(_case(["ptx", "descriptors", "{tmp}/k.ptx"],
                       files={"k.ptx": {"text": PTX_HEAD + ".shared .align 0 .b8 s[16];\n"}}, field=["align"],
                       expect=2))
    for spec in runaways:
        cases.append(_case(["ptx", "descriptors", "{tmp}/k.ptx"], files={"k.ptx": spec}))
    return cases


def _standard_files() -> dict:
    return {"deep.json": {"parts": [{"repeat": "[", "times": 100000}, {"repeat": "]", "times": 100000}]},
            "huge.json": {"prefix": "{\"x\": \"", "repeat": "a", "times": 3 * 1024 * 1024, "suffix": "\"}"}}


def generate(seed: int = SEED) -> list:
    rng = random.Random(seed)
    cases = []
    # 1. every option of every base with every hostile value of its kind
    for argv, options in BASES:
        for where, kind in options.items():
            for value in hostile_values(kind, rng):
                spoiled = _set_value(argv, where, value)
                files = _standard_files() if kind == "path" and "{tmp}" in str(value) else None
                expected = None if isinstance(value, str) and value in VOCABULARY else field_names(where)
                cases.append(_case(spoiled, field=expected, files=files,
                                   json_out=rng.random() < 0.5))
            cases.append(_case(_drop_option(argv, where), field=None))
    # 2. random combinations: two or three spoiled options at once (no field: several are wrong)
    for _ in range(600):
        argv, options = BASES[rng.randrange(len(BASES))]
        spoiled = list(argv)
        for where in rng.sample(sorted(options, key=str), min(len(options), rng.randint(2, 3))):
            spoiled = _set_value(spoiled, where, rng.choice(hostile_values(options[where])))
        files = _standard_files() if any("{tmp}" in str(t) for t in spoiled) else None
        cases.append(_case(spoiled, files=files, json_out=rng.random() < 0.5))
    # 3. the issue's examples, with the field they must name
    issue = [
        (["desc", "addresses", "--arch", "sm90", "0x4000004000010040", "--dtype", "bf16", "--major", "K", "--mn",
          "1000000000"], ["mn"]),
        (["desc", "addresses", "--arch", "sm90", "0x4000004000010040", "--dtype", "bf16", "--major", "K", "--mn",
          "64", "--k", "1000000000"], ["k"]),
        (["desc", "addresses", "--arch", "sm90", "0x4000004000010040", "--dtype", "bf16", "--major", "K", "--mn",
          "64", "--k", "0"], ["k"]),
        (["recipe", "--arch", "sm90", "--dtype", "f16", "--major", "MN", "--mn", "1000000000", "--k-tile", "32",
          "--swizzle", "64B", "--smem-address", "0x800"], None),
        (["recipe", "--arch", "sm90", "--dtype", "f16", "--major", "K", "--mn", "64", "--k-tile", "1000000000",
          "--swizzle", "64B", "--smem-address", "0x800"], None),
        (["tma", "place", "--swizzle", "128B", "--elem-bytes", "16", "--box", "100000,100000", "--smem-address",
          "0x400"], None),
        (["tma", "place", "--swizzle", "NONE", "--box", "256,256,256", "--elem-bytes", "2", "--smem-address",
          "0x400"], None),
        (["tma", "place", "--swizzle", "NONE", "--box", "256,256,4", "--elem-bytes", "1", "--smem-address",
          "0x400"], None),
        (["tma", "place", "--swizzle", "NONE", "--box", "256,256,256,256,256", "--elem-bytes", "16",
          "--smem-address", "0"], None),
        (["tma", "place", "--swizzle", "128B", "--box", "8,256,256", "--elem-bytes", "2", "--smem-address", "0",
          "--element-strides", "1,1000000000,1000000000"], None),
        (["tma", "box", "--dtype", "f16", "--rows", "64", "--inner", "64", "--global-dim", "0,0",
          "--global-strides", "2048", "--arch", "sm90"], ["global_dim", "globalDim", "global-dim"]),
        (["im2col", "--mode", "im2col", "--tensor", "16,4,4,1", "--lower=0,0", "--upper=-1,-1",
          "--channels-per-pixel", "1000000000", "--pixels-per-column", "4", "--coords", "0,0,0,0",
          "--elem-bytes", "2", "--swizzle", "NONE", "--smem-address", "0x400"], None),
        (["im2col", "--mode", "im2col", "--tensor", "16,4,4,1", "--lower=0,0", "--upper=-1,-1",
          "--channels-per-pixel", "16", "--pixels-per-column", "100000", "--coords", "0,0,0,0",
          "--elem-bytes", "2", "--swizzle", "NONE", "--smem-address", "0x400"], None),
        (["im2col", "--mode", "w128", "--tensor", "1000000000,1000000000,1000000000", "--lower=0",
          "--upper=0", "--channels-per-pixel", "16", "--coords", "0,0,0", "--elem-bytes", "2", "--swizzle",
          "128B", "--smem-address", "0x400"], None),
        (["desc", "encode", "--arch", "sm90", "--start-address", BIG_HEX, "--lbo", "16", "--sbo", "1024",
          "--swizzle", "128B"], ["start-address", "start_address"]),
        (["prove", "--layout", {"parts": ["(8,8):(", BIG, ",1)"]}, "injective"], ["layout"]),
        (["prove", "swizzle.cute.bijective", "--timeout", "nan"], ["timeout"]),
        (["prove", "swizzle.cute.bijective", "--timeout", "inf"], ["timeout"]),
        (["prove", "swizzle.cute.bijective", "--timeout", "-inf"], ["timeout"]),
        (["prove", "swizzle.cute.bijective", "--timeout", "1e400"], ["timeout"]),
        (["prove", "swizzle.cute.bijective", "--counterexamples", "/dev/null"], ["counterexamples", "save"]),
        (["prove", "swizzle.cute.bijective", "--save", "/dev/null/x"], ["counterexamples", "save"]),
        (["rules", "--subject", "bogus"], ["subject"]),
        (["rules", "--subject", "a\nb"], ["subject"]),
        (["desc", "decode", "--arch", "sm90", "١٦"], ["HEX", "descriptor"]),
        (["desc", "decode", "--arch", "sm90", "１６"], ["HEX", "descriptor"]),
    ]
    for argv, field in issue:
        cases.append(_case(argv, field=field))
        cases.append(_case(argv, field=field, json_out=True))
    # 4. documents: tma check --params, tmem alloc --ops, ptx FILE, prove written-by --tma
    tiled = _load_example("tensormap_tiled_bf16.json")
    im2col_doc = _load_example("tensormap_im2col_nhwc.json")
    for spec in json_file_specs():
        for stdin in (False, True):
            for argv in (["tma", "check", "--params", "{doc}", "--arch", "sm90"], ["tmem", "alloc", "--ops", "{doc}"],
                         ["ptx", "descriptors", "{doc}"],
                         ["prove", "--layout", "(64,64):(64,1)", "written-by", "--tma", "{doc}", "--arch", "sm90"]):
                if stdin and argv[0] == "prove":
                    continue
                if isinstance(spec, str):
                    path, files, feed = spec, None, None
                    if stdin:
                        path, feed = "-", {"text": ""} if spec == "/dev/null" else spec
                else:
                    path, files, feed = "{tmp}/doc.json", {"doc.json": spec}, None
                    if stdin:
                        path, files, feed = "-", None, spec
                cases.append(_case([path if t == "{doc}" else t for t in argv], stdin=feed, files=files))
    for argv in (["tma", "check", "--params", "-", "--arch", "sm90"], ["tmem", "alloc", "--ops", "-"],
                 ["ptx", "descriptors", "-"],
                 ["ptx", "check", "-", "--layout", "A=(8,8):(8,1)"]):
        cases.append(_case(argv, stdin="closed"))
        cases.append(_case(argv, stdin="/dev/zero"))
    for base in (tiled, im2col_doc):
        for key in sorted(base):
            for value in HOSTILE_JSON:
                document = dict(base)
                document[key] = value
                cases.append(_case(["tma", "check", "--params", "{tmp}/doc.json", "--arch", "sm90"],
                                   files={"doc.json": {"json": document}}, json_out=rng.random() < 0.5))
            document = {k: v for k, v in base.items() if k != key}
            cases.append(_case(["tma", "check", "--params", "{tmp}/doc.json", "--arch", "sm90"], files={"doc.json": {"json": document}}))
    for _ in range(200):
        base = rng.choice((tiled, im2col_doc))
        document = dict(base)
        for key in rng.sample(sorted(base), 2):
            document[key] = rng.choice(HOSTILE_JSON)
        cases.append(_case(["tma", "check", "--params", "{tmp}/doc.json", "--arch", "sm90"], files={"doc.json": {"json": document}}))
    # 5. structure: no arguments, unknown options, repeated options, stray words
    for argv, _options in BASES:
        cases.append(_case(argv + ["--bogus"]))
        cases.append(_case(argv + ["stray"]))
        if argv[0] != "prove":          # `prove` alone proves the whole catalogue: valid, and long
            cases.append(_case(argv[:1]))
        cases.append(_case(argv + ["--help"]))
        cases.append(_case(argv + ["--json", "--json"]))
    cases += [_case([]), _case(["--version"]), _case(["bogus"]), _case(["--bogus"]), _case(["desc"]),
              _case(["tma"]), _case(["tmem"]), _case(["ptx"])]
    cases += issue25_cases()
    for index, case in enumerate(cases):
        case["id"] = index
    return [{"id": c["id"], **{k: v for k, v in c.items() if k != "id"}} for c in cases]


# --- Materialising a case -----------------------------------------------------------------------------------
def expand(spec) -> str:
    if isinstance(spec, str):
        return spec
    if "parts" in spec:
        return "".join(expand(part) for part in spec["parts"])
    return spec.get("prefix", "") + spec["repeat"] * spec["times"] + spec.get("suffix", "")


def content(spec) -> bytes:
    if "json" in spec:
        return json.dumps(spec["json"]).encode("utf-8")
    if "text" in spec:
        return spec["text"].encode("utf-8")
    return expand(spec).encode("utf-8")


def materialise(case: dict, folder: str) -> list:
    """Write the case's files into `folder`; its argv with long tokens expanded and {tmp} filled in."""
    for name, spec in case["files"].items():
        with open(os.path.join(folder, name), "wb") as handle:
            handle.write(content(spec))
    return [expand(token).replace("{tmp}", folder) for token in case["argv"]]


# --- Judging ------------------------------------------------------------------------------------------------
def names_field(message: str, names) -> bool:
    for name in names:
        if re.search(r"(?<![A-Za-z0-9_])" + re.escape(name) + r"(?![A-Za-z0-9_])", message, re.IGNORECASE):
            return True
    return False


def judge(case: dict, status, stdout: str, stderr: str, seconds: float, max_rss: int = 0) -> list:
    """What is wrong with one run: [] when it behaved."""
    problems = []
    if "Traceback (most recent call last)" in stderr or "Traceback (most recent call last)" in stdout:
        problems.append("traceback")
    if status == "timeout" or seconds > TIME_LIMIT_S:
        problems.append("slow")
    elif status not in (0, 1, 2):
        problems.append(f"exit {status}")
    if max_rss > MEMORY_JUDGED:
        problems.append("heavy")
    if status == 2:
        lines = stderr.rstrip("\n").split("\n")
        if len(lines) != 1:
            problems.append("multi-line message")
        elif len(lines[0]) >= MESSAGE_LIMIT:
            problems.append("long message")
        elif case.get("field") and not names_field(lines[0], case["field"]):
            problems.append("wrong field")
    if case.get("expect") is not None and status in (0, 1, 2) and status != case["expect"]:
        problems.append("wrong status")
    return problems


def _limit_child():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def _wait(process, feed):
    """Feed and drain the process, wait for it at most TIME_LIMIT_S (killing it then) and return its
    exit status ("timeout" when killed), its largest resident set in bytes, stdout and stderr."""
    chunks = {"out": [], "err": []}

    def drain(stream, name):
        for block in iter(lambda: stream.read(65536), b""):
            chunks[name].append(block)

    def write():
        try:
            if feed:
                process.stdin.write(feed)
            process.stdin.close()
        except OSError:
            pass

    threads = [threading.Thread(target=drain, args=(process.stdout, "out")),
               threading.Thread(target=drain, args=(process.stderr, "err"))]
    if process.stdin is not None:
        threads.append(threading.Thread(target=write))
    for t in threads:
        t.daemon = True
        t.start()
    deadline = time.monotonic() + TIME_LIMIT_S
    status = "timeout"
    while True:
        pid, wait_status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            status = os.waitstatus_to_exitcode(wait_status)
            break
        if time.monotonic() > deadline:
            process.kill()
            pid, wait_status, usage = os.wait4(process.pid, 0)
            break
        time.sleep(0.01)
    process.returncode = status if status != "timeout" else -9
    for t in threads:
        t.join(5)
    return status, usage.ru_maxrss * 1024, b"".join(chunks["out"]), b"".join(chunks["err"])


def run_one(case: dict) -> dict:
    with tempfile.TemporaryDirectory(prefix="hostile-") as folder:
        argv = materialise(case, folder)
        stdin_spec = case.get("stdin")
        stdin, feed = subprocess.DEVNULL, None
        if stdin_spec == "closed":
            stdin = None
        elif isinstance(stdin_spec, str):
            stdin = open(stdin_spec, "rb")
        elif stdin_spec is not None:
            stdin, feed = subprocess.PIPE, content(stdin_spec)
        command = [sys.executable, "-m", "layoutproof", *argv]
        if stdin_spec == "closed":       # standard input closed: the shell's <&-
            command = ["sh", "-c", 'exec "$@" <&-', "sh", *command]
        started = time.monotonic()
        process = subprocess.Popen(command, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   cwd=REPOSITORY, preexec_fn=_limit_child)
        if hasattr(stdin, "close"):
            stdin.close()
        status, rss, out, err = _wait(process, feed)
        seconds = time.monotonic() - started
    stdout, stderr = out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
    problems = judge(case, status, stdout, stderr, seconds, rss)
    message_length = max((len(line) for line in stderr.split("\n")), default=0) if status == 2 else 0
    return {"id": case["id"], "status": status, "seconds": round(seconds, 3), "max_rss_mb": rss // (1 << 20),
            "message_length": message_length, "problems": problems, "stderr": stderr[-400:] if problems else ""}


def load(path: str = CASES) -> list:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def summarise(results: list) -> dict:
    counts = {"cases": len(results), "tracebacks": 0, "exit_3": 0, "slow": 0, "heavy": 0,
              "multi_line": 0, "long_message": 0, "wrong_field": 0, "wrong_status": 0, "other_exit": 0}
    names = {"traceback": "tracebacks", "exit 3": "exit_3", "slow": "slow", "heavy": "heavy",
             "multi-line message": "multi_line", "long message": "long_message", "wrong field": "wrong_field",
             "wrong status": "wrong_status"}
    by_status = {}
    for r in results:
        by_status[str(r["status"])] = by_status.get(str(r["status"]), 0) + 1
        for p in r["problems"]:
            counts[names.get(p, "other_exit")] += 1
    counts["exit_statuses"] = by_status
    counts["max_seconds"] = max((r["seconds"] for r in results), default=0)
    counts["max_rss_mb"] = max((r.get("max_rss_mb", 0) for r in results), default=0)
    counts["longest_message"] = max((r.get("message_length", 0) for r in results), default=0)
    counts["failures"] = [r for r in results if r["problems"]]
    return counts


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.hostile.campaign", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="action", required=True)
    g = sub.add_parser("generate")
    g.add_argument("--seed", type=int, default=SEED)
    g.add_argument("--out", default=CASES)
    r = sub.add_parser("run")
    r.add_argument("--cases", default=CASES)
    r.add_argument("--summary", default=None)
    r.add_argument("--jobs", type=int, default=2)
    r.add_argument("--only", default=None, help="comma-separated case ids")
    args = parser.parse_args(argv)
    if args.action == "generate":
        cases = generate(args.seed)
        with open(args.out, "w", encoding="utf-8") as handle:
            for case in cases:
                handle.write(json.dumps(case, ensure_ascii=True) + "\n")
        print(f"{len(cases)} cases -> {args.out}")
        return 0
    cases = load(args.cases)
    if args.only:
        wanted = {int(i) for i in args.only.split(",")}
        cases = [c for c in cases if c["id"] in wanted]
    with ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(run_one, cases))
    summary = summarise(results)
    text = json.dumps(summary, indent=1)
    if args.summary:
        with open(args.summary, "w", encoding="utf-8") as handle:
            handle.write(text + "\n")
    brief = {k: v for k, v in summary.items() if k != "failures"}
    print(json.dumps(brief))
    for failure in summary["failures"][:60]:
        print(failure["id"], failure["status"], failure["problems"], failure["stderr"][-200:].replace("\n", "\\n"))
    return 0 if not summary["failures"] else 1


if __name__ == "__main__":
    sys.exit(main())
