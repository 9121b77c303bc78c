"""The driver's tensor-map encoders as a fuzz oracle, with no GPU:

  * solver/fuzz/formats/cuda.py renders fuzz records as a C++ host program; it is compiled with the local nvcc
    (linked against a stub libcuda where one is installed, else compiled only), and its structure is
    checked in any case;
  * solver/fuzz/adapters/driver_encode.py: the pure document -> encoder-call conversion, and the
    `fuzz --against` stdin/stdout protocol driven through a fake cuda-bindings driver.
"""
import glob
from repo_paths import ROOT_DIR  # noqa: E402  (tests/repo_paths.py)
import io
import json
import os
import re
import shutil
import subprocess
import sys
import warnings

import pytest

from solver.fuzz.formats import cuda as fuzz_cuda
from solver.fuzz.adapters import driver_encode as de
from spec.tma import tensormap

ROOT = ROOT_DIR
BASE = 0x7F12_3450_0000   # a 64 KiB-aligned device address, as the adapter's allocation gives


# --- hand-written cases and records ---------------------------------------------------------------------

def tiled_case(**changes):
    """A legal rank-2 tiled map (FLOAT16 64 x 32, one 128B-swizzled box)."""
    case = {"encode": "tiled", "dataType": "FLOAT16", "rank": 2, "globalAddress": 0x10000,
            "globalDim": [64, 32], "globalStrides": [128], "boxDim": [64, 32], "elementStrides": [1, 1],
            "interleave": "NONE", "swizzle": "128B", "l2Promotion": "L2_128B", "oobFill": "NONE"}
    return {**case, **changes}


def im2col_case(**changes):
    """A legal rank-4 im2col map (NHWC: C = 64, W = H = 8, N = 2; 3 x 3 filter corners)."""
    case = {"encode": "im2col", "dataType": "FLOAT16", "rank": 4, "globalAddress": "0x20000",
            "globalDim": [64, 8, 8, 2], "globalStrides": [128, 1024, 8192],
            "pixelBoxLowerCorner": [-1, -1], "pixelBoxUpperCorner": [-1, -1],
            "channelsPerPixel": 64, "pixelsPerColumn": 32, "elementStrides": [1, 1, 1, 1],
            "interleave": "NONE", "swizzle": "128B", "l2Promotion": "L2_128B", "oobFill": "NONE"}
    return {**case, **changes}


def wide_case(**changes):
    """A legal rank-3 im2col_wide map in W128 mode."""
    case = {"encode": "im2col_wide", "dataType": "BFLOAT16", "rank": 3, "globalAddress": 0x30000,
            "globalDim": [64, 256, 4], "globalStrides": [128, 32768],
            "pixelBoxLowerCornerWidth": -1, "pixelBoxUpperCornerWidth": 0,
            "channelsPerPixel": 64, "pixelsPerColumn": 128, "elementStrides": [1, 1, 1],
            "interleave": "NONE", "mode": "W128", "swizzle": "128B", "l2Promotion": "L2_128B", "oobFill": "NONE"}
    return {**case, **changes}


def rank6_case():
    return tiled_case(rank=6, globalDim=[64, 32, 2, 2, 2, 2], globalStrides=[128, 4096, 8192, 16384, 32768],
                      boxDim=[64, 32, 1, 1, 1, 1], elementStrides=[1] * 6)


def record(index, case, outcome="ok", violates=(), target="tensormap", arch="sm90"):
    return {"index": index, "target": target, "arch": arch, "violates": list(violates), "outcome": outcome,
            "witness": None, "case": case}


RECORDS = [
    record(0, tiled_case()),
    record(1, im2col_case()),
    record(2, wide_case(), arch="sm100"),
    record(3, rank6_case(), outcome="refused", violates=["tma.map.rank"]),
    record(4, tiled_case(boxDim=[-1, 32]), outcome="refused", violates=["tma.map.box_range"]),
    record(5, tiled_case(globalDim=[2 ** 64, 32]), outcome="refused", violates=["tma.map.global_dim_range"]),
    record(6, tiled_case(swizzle="96B"), outcome="refused", violates=["tma.swizzle.modes"]),
    record(7, {"whatever": 1}, target="descriptor"),
    record(8, tiled_case(rank=1, globalDim=[64], globalStrides=[], boxDim=[64], elementStrides=[1])),
    record(9, tiled_case(rank=0), outcome="refused", violates=["tma.map.rank", "tma.map.params"]),
]
ENCODED = {0: "cuTensorMapEncodeTiled", 1: "cuTensorMapEncodeIm2col", 2: "cuTensorMapEncodeIm2colWide",
           3: "cuTensorMapEncodeTiled", 8: "cuTensorMapEncodeTiled", 9: "cuTensorMapEncodeTiled"}
SKIPPED = {4: "boxDim[0] = -1", 5: "globalDim[0] = 18446744073709551616", 6: "'96B'", 7: "not a tensormap case"}


def test_the_hand_written_legal_cases_are_legal():
    for case in (tiled_case(), im2col_case(), wide_case()):
        assert tensormap.check_document(case, "sm100")["legal"], case["encode"]


# --- (a) the C++ program --------------------------------------------------------------------------------

def function_body(source: str, position: int) -> str:
    match = re.search(r"static void case_%d\(CUdeviceptr(?: base)?\) \{\n(.*?)\n\}" % position, source, re.S)
    assert match, f"no function case_{position}"
    return match.group(1)


def check_structure(source: str) -> None:
    """One function per record, called once from main in order; one encoder call per encoded case with
    the right function; a skip line for the others; only the three allowed headers."""
    assert re.findall(r"^#include .*$", source, re.M) == ["#include <cuda.h>", "#include <cstdint>",
                                                          "#include <cstdio>"]
    calls = re.findall(r"^  case_(\d+)\(base\);$", source, re.M)
    assert calls == [str(i) for i in range(len(RECORDS))]
    assert len(re.findall(r"cuTensorMapEncode\w+\(&map,", source)) == len(ENCODED)
    for position, function in ENCODED.items():
        body = function_body(source, position)
        assert re.findall(r"cuTensorMapEncode\w+", body) == [function]
        assert f"report({position}, result," in body
    for position, why in SKIPPED.items():
        body = function_body(source, position)
        assert "cuTensorMapEncode" not in body and "skipped" in body and why.replace('"', '\\"') in body
    assert "Violates: tma.map.rank, tma.map.params" in source
    assert '{\\"cases\\": %d, \\"disagreements\\": %d}' in source


def test_the_program_has_one_block_per_record():
    check_structure(fuzz_cuda.render(RECORDS))


def test_the_program_passes_the_values_exactly():
    source = fuzz_cuda.render(RECORDS)
    rank6 = function_body(source, 3)
    assert "const cuuint64_t globalDim[6] = {64ull, 32ull, 2ull, 2ull, 2ull, 2ull};" in rank6
    assert "const cuuint32_t elementStrides[6] = {1u, 1u, 1u, 1u, 1u, 1u};" in rank6
    assert "6u /* tensorRank */" in rank6
    assert 'report(3, result, true, "[\\"tma.map.rank\\"]");' in rank6
    im2col = function_body(source, 1)
    assert "const int pixelBoxLowerCorner[2] = {-1, -1};" in im2col
    assert "(void *)(uintptr_t)(base + 0x0ull)" in im2col    # 0x20000 mod 65536
    assert "64u /* channelsPerPixel */" in im2col and "32u /* pixelsPerColumn */" in im2col
    wide = function_body(source, 2)
    assert "CU_TENSOR_MAP_IM2COL_WIDE_MODE_W128" in wide and "-1 /* pixelBoxLowerCornerWidth */" in wide
    rank1 = function_body(source, 8)
    assert "const cuuint64_t globalStrides[1] = {0ull};  // the case gives 0 entries, the driver reads 0" in rank1
    rank0 = function_body(source, 9)
    assert "const cuuint64_t globalDim[1] = {64ull};" in rank0 and "0u /* tensorRank */" in rank0
    assert 'report(0, result, false, "[]");' in function_body(source, 0)


def test_the_program_writes_int_min_and_uint64_max_as_c_accepts_them():
    source = fuzz_cuda.render([record(0, wide_case(pixelBoxLowerCornerWidth=-2 ** 31,
                                                   globalDim=[2 ** 64 - 1, 256, 4]))])
    assert "(-2147483647 - 1) /* pixelBoxLowerCornerWidth */" in source
    assert "18446744073709551615ull" in source


def test_render_one_escapes_what_c_cannot_take_as_is():
    block = fuzz_cuda.render_one(record(7, tiled_case(), violates=['a"b\\c\n??=']), 7)
    assert '\\"a\\\\\\"b\\\\\\\\c\\\\n\\?\\?=\\"' in block     # JSON-escaped, then C-escaped
    assert all("\\" not in line for line in block.splitlines() if line.startswith("//"))


def stub_libcuda_dirs(nvcc: str) -> list:
    """Folders holding a stub libcuda.so in the toolkit nvcc belongs to (or CUDA_HOME)."""
    roots = {os.path.dirname(os.path.dirname(os.path.realpath(nvcc)))}
    if os.environ.get("CUDA_HOME"):
        roots.add(os.environ["CUDA_HOME"])
    found = []
    for root in sorted(roots):
        for pattern in ("lib64/stubs", "lib/stubs", "targets/*/lib/stubs"):
            found += [d for d in glob.glob(os.path.join(root, pattern))
                      if os.path.exists(os.path.join(d, "libcuda.so"))]
    return found


def test_the_program_compiles_with_nvcc(tmp_path):
    source = fuzz_cuda.render(RECORDS)
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        warnings.warn("nvcc not found: checked the generated program's structure only")
        check_structure(source)
        return
    path = tmp_path / "fuzz_cases.cpp"
    path.write_text(source)
    stubs = stub_libcuda_dirs(nvcc)
    if stubs:
        command = [nvcc, "-o", str(tmp_path / "fuzz_cases"), str(path), "-L" + stubs[0], "-lcuda"]
    else:   # no stub libcuda to link against: compile only
        command = [nvcc, "-c", "-o", str(tmp_path / "fuzz_cases.o"), str(path)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{' '.join(command)}\n{done.stdout}\n{done.stderr}"
    assert "warning" not in done.stderr.lower(), done.stderr


# --- (b) the adapter: document -> encoder call ----------------------------------------------------------

def names_and_values(call):
    return [(a.name, a.value) for a in call.arguments]


def test_a_tiled_case_becomes_the_tiled_encoders_arguments_in_c_order():
    call = de.arguments(tiled_case(globalAddress=0x12345), BASE)
    assert call.function == "cuTensorMapEncodeTiled"
    assert names_and_values(call) == [
        ("tensorDataType", "CU_TENSOR_MAP_DATA_TYPE_FLOAT16"), ("tensorRank", 2),
        ("globalAddress", BASE + 0x2345), ("globalDim", (64, 32)), ("globalStrides", (128,)),
        ("boxDim", (64, 32)), ("elementStrides", (1, 1)), ("interleave", "CU_TENSOR_MAP_INTERLEAVE_NONE"),
        ("swizzle", "CU_TENSOR_MAP_SWIZZLE_128B"), ("l2Promotion", "CU_TENSOR_MAP_L2_PROMOTION_L2_128B"),
        ("oobFill", "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE")]
    assert [a.c_type for a in call.arguments][:6] == ["CUtensorMapDataType", "cuuint32_t", "void *",
                                                      "const cuuint64_t *", "const cuuint64_t *",
                                                      "const cuuint32_t *"]


def test_im2col_and_wide_cases_follow_their_signatures():
    assert [a.name for a in de.arguments(im2col_case(), BASE).arguments] == [
        "tensorDataType", "tensorRank", "globalAddress", "globalDim", "globalStrides", "pixelBoxLowerCorner",
        "pixelBoxUpperCorner", "channelsPerPixel", "pixelsPerColumn", "elementStrides", "interleave",
        "swizzle", "l2Promotion", "oobFill"]
    wide = de.arguments(wide_case(), BASE)
    assert wide.function == "cuTensorMapEncodeIm2colWide"
    assert [a.name for a in wide.arguments] == [
        "tensorDataType", "tensorRank", "globalAddress", "globalDim", "globalStrides",
        "pixelBoxLowerCornerWidth", "pixelBoxUpperCornerWidth", "channelsPerPixel", "pixelsPerColumn",
        "elementStrides", "interleave", "mode", "swizzle", "l2Promotion", "oobFill"]
    assert wide.value("mode") == "CU_TENSOR_MAP_IM2COL_WIDE_MODE_W128"
    assert wide.value("pixelBoxLowerCornerWidth") == -1


def test_the_address_keeps_its_offset_in_a_64_kib_window():
    for address, offset in ((0, 0), (0x10, 0x10), (0xFFFF, 0xFFFF), (0x10000, 0), (0x7F00_0001_0020, 0x20),
                            ("0x30008", 8), ("65552", 16), (2 ** 64 - 1, 0xFFFF)):
        assert de.arguments(tiled_case(globalAddress=address), BASE).value("globalAddress") == BASE + offset
    assert de.arguments(tiled_case(globalAddress=0x7F00_0001_0020)).value("globalAddress") == 0x7F00_0001_0020
    assert de.aligned_base(0x7F00_0001_0000) == 0x7F00_0001_0000
    assert de.aligned_base(0x7F00_0001_0001) == 0x7F00_0002_0000


def test_arrays_hold_the_entries_the_driver_reads_and_at_least_one():
    rank1 = de.arguments(tiled_case(rank=1, globalDim=[64], globalStrides=[], boxDim=[64], elementStrides=[1]))
    assert rank1.value("globalStrides") == (0,)                  # one unused stride, not a null pointer
    rank0 = de.arguments(tiled_case(rank=0))
    assert rank0.value("globalDim") == (64,) and rank0.value("globalStrides") == (128,)
    short = de.arguments(tiled_case(rank=3))                        # the case gives rank-2 lists
    assert short.value("globalDim") == (64, 32, 0) and short.value("globalStrides") == (128, 0)
    assert [a.given for a in short.arguments if a.is_array] == [2, 1, 2, 2]
    long = de.arguments(tiled_case(rank=1))                         # rank-2 lists for a rank-1 map
    assert long.value("globalDim") == (64,) and long.value("globalStrides") == (128,)
    corners = de.arguments(im2col_case(rank=3))
    assert corners.value("pixelBoxLowerCorner") == (-1,)
    assert de.arguments(rank6_case()).value("elementStrides") == (1,) * 6


ALL_ENUMERATORS = {
    ("dataType", "CUtensorMapDataType"): [
        "CU_TENSOR_MAP_DATA_TYPE_" + n for n in (
            "UINT8", "UINT16", "UINT32", "INT32", "UINT64", "INT64", "FLOAT16", "FLOAT32", "FLOAT64", "BFLOAT16",
            "FLOAT32_FTZ", "TFLOAT32", "TFLOAT32_FTZ", "16U4_ALIGN8B", "16U4_ALIGN16B", "16U6_ALIGN16B")],
    ("interleave", "CUtensorMapInterleave"): ["CU_TENSOR_MAP_INTERLEAVE_NONE", "CU_TENSOR_MAP_INTERLEAVE_16B",
                                              "CU_TENSOR_MAP_INTERLEAVE_32B"],
    ("swizzle", "CUtensorMapSwizzle"): [
        "CU_TENSOR_MAP_SWIZZLE_NONE", "CU_TENSOR_MAP_SWIZZLE_32B", "CU_TENSOR_MAP_SWIZZLE_64B",
        "CU_TENSOR_MAP_SWIZZLE_128B", "CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B",
        "CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B_FLIP_8B", "CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B"],
    ("l2Promotion", "CUtensorMapL2promotion"): [
        "CU_TENSOR_MAP_L2_PROMOTION_NONE", "CU_TENSOR_MAP_L2_PROMOTION_L2_64B",
        "CU_TENSOR_MAP_L2_PROMOTION_L2_128B", "CU_TENSOR_MAP_L2_PROMOTION_L2_256B"],
    ("oobFill", "CUtensorMapFloatOOBfill"): ["CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE",
                                             "CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA"],
    ("mode", "CUtensorMapIm2ColWideMode"): ["CU_TENSOR_MAP_IM2COL_WIDE_MODE_W",
                                            "CU_TENSOR_MAP_IM2COL_WIDE_MODE_W128"],
}


@pytest.mark.parametrize("key,enum_type", list(ALL_ENUMERATORS))
def test_every_value_of_every_enumeration_names_its_cuda_h_enumerator(key, enum_type):
    prefix = de.ENUMERATIONS[enum_type][0]
    expected = ALL_ENUMERATORS[(key, enum_type)]
    for enumerator in expected:
        call = de.arguments(wide_case(**{key: enumerator[len(prefix):]}))
        argument = next(a for a in call.arguments if a.c_type == enum_type)
        assert argument.value == enumerator and argument.is_enumeration
    assert [prefix + n for n in de.ENUMERATIONS[enum_type][1]] == expected   # no other names


def cuda_h() -> str:
    nvcc = shutil.which("nvcc")
    candidates = [os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(nvcc))), "include", "cuda.h")
                  ] if nvcc else []
    candidates += glob.glob("/usr/local/cuda*/include/cuda.h")
    return next((c for c in candidates if os.path.exists(c)), "")


def test_the_enumerators_are_those_of_the_installed_cuda_h():
    path = cuda_h()
    if not path:
        warnings.warn("no cuda.h found: the enumerator names were checked against the literal lists only")
        return
    header = open(path).read()
    for enum_type, (prefix, names) in de.ENUMERATIONS.items():
        body = re.search(r"typedef enum %s_enum \{(.*?)\} %s;" % (enum_type, enum_type), header, re.S)
        assert body, enum_type
        declared = re.findall(r"\b(CU_TENSOR_MAP_\w+)", body.group(1))
        assert declared == [prefix + n for n in names], enum_type
    for encode, function in de.ENCODER_FUNCTIONS.items():
        declaration = re.search(r"CUresult CUDAAPI %s\(CUtensorMap \*tensorMap, (.*?)\);" % function, header)
        assert declaration, function
        parameters = [re.match(r"(.*?)\s*(\w+)$", p.strip()).groups() for p in declaration.group(1).split(",")]
        assert [name for _, name in parameters] == list(de.SIGNATURES[encode])
        assert [" ".join(c_type.replace("*", " *").split()) for c_type, _ in parameters] == \
            [de.PARAMETERS[name][1] for name in de.SIGNATURES[encode]], function


@pytest.mark.parametrize("changes,detail", [
    ({"boxDim": [-1, 32]}, "boxDim[0] = -1 does not fit cuuint32_t"),
    ({"globalDim": [2 ** 64, 32]}, "globalDim[0] = 18446744073709551616 does not fit cuuint64_t"),
    ({"globalStrides": [-16]}, "globalStrides[0] = -16 does not fit cuuint64_t"),
    ({"elementStrides": [1, 2 ** 32]}, "elementStrides[1] = 4294967296 does not fit cuuint32_t"),
    ({"rank": -1}, "rank = -1 does not fit cuuint32_t"),
    ({"rank": 2 ** 32}, "rank = 4294967296 does not fit cuuint32_t"),
    ({"rank": 2 ** 32 - 1}, "the driver would read 4294967295-entry arrays"),
    ({"rank": 2.0}, "rank = 2.0 is not an integer"),
    ({"rank": True}, "rank = True is not an integer"),
    ({"boxDim": [64, "32"]}, "boxDim[1] = '32' is not an integer"),
    ({"boxDim": 64}, "boxDim = 64 is not a list"),
    ({"globalAddress": -16}, "globalAddress = -16 does not fit void *"),
    ({"globalAddress": 2 ** 64}, "does not fit void *"),
    ({"globalAddress": "0xZZ"}, "is not a decimal or 0x-hex number"),
    ({"swizzle": "96B"}, "swizzle = '96B' names no cuda.h CUtensorMapSwizzle enumerator"),
    ({"dataType": "FLOAT8"}, "dataType = 'FLOAT8' names no cuda.h CUtensorMapDataType enumerator"),
    ({"interleave": 0}, "interleave = 0 names no cuda.h"),
    ({"encode": "gather4"}, "encode = 'gather4' names no encoder"),
])
def test_values_no_caller_can_pass_are_unrepresentable(changes, detail):
    with pytest.raises(de.UnrepresentableValue, match=re.escape(detail)):
        de.arguments(tiled_case(**changes), BASE)


def test_im2col_values_outside_int_and_missing_arguments_are_unrepresentable():
    with pytest.raises(de.UnrepresentableValue, match=re.escape("pixelBoxUpperCorner[1] = 2147483648")):
        de.arguments(im2col_case(pixelBoxUpperCorner=[0, 2 ** 31]))
    with pytest.raises(de.UnrepresentableValue, match=re.escape("pixelBoxLowerCornerWidth = -2147483649")):
        de.arguments(wide_case(pixelBoxLowerCornerWidth=-2 ** 31 - 1))
    assert de.arguments(wide_case(pixelBoxLowerCornerWidth=-2 ** 31)).value("pixelBoxLowerCornerWidth") == -2 ** 31
    case = wide_case()
    del case["mode"]
    with pytest.raises(de.UnrepresentableValue, match="mode is missing"):
        de.arguments(case)


def test_keys_the_encoder_does_not_take_are_left_out():
    call = de.arguments(tiled_case(smemAddress=1024, direction="load", pixelsPerColumn=3), BASE)
    assert call == de.arguments(tiled_case(), BASE)


# --- (b) the adapter: the protocol, through a fake cuda-bindings driver ---------------------------------

class FakeDriver:
    """Enough of cuda.bindings.driver for the adapter: enum classes, cuuint32_t / cuuint64_t, and encoders
    that accept ranks 1 to 5, refuse the rest with CUDA_ERROR_INVALID_VALUE, and refuse lists of more than
    5 entries with ValueError before "calling the driver", as cuda-bindings does."""

    class CUresult:
        class _Result:
            def __init__(self, name):
                self.name = name

        CUDA_SUCCESS = _Result("CUDA_SUCCESS")
        CUDA_ERROR_INVALID_VALUE = _Result("CUDA_ERROR_INVALID_VALUE")

    class _Integer:
        bits = 64

        def __init__(self, value):
            if not 0 <= value < 2 ** self.bits:
                raise OverflowError(f"{value} out of range")
            self.value = value

    class cuuint64_t(_Integer):
        bits = 64

    class cuuint32_t(_Integer):
        bits = 32

    def __init__(self):
        self.calls = []

    def __getattr__(self, name):
        if name in de.ENUMERATIONS:
            prefix = de.ENUMERATIONS[name][0]
            return type(name, (), {prefix + n: (name, prefix + n) for n in de.ENUMERATIONS[name][1]})
        if name in de.ENCODER_FUNCTIONS.values():
            return lambda *arguments: self.encode(name, arguments)
        raise AttributeError(name)

    def encode(self, function, arguments):
        for position, value in enumerate(arguments):
            if isinstance(value, list) and len(value) > 5:
                raise ValueError(f"Argument {position} too long, must be <= 5")
        self.calls.append((function, arguments))
        rank = arguments[1]
        result = self.CUresult.CUDA_SUCCESS if 1 <= rank <= 5 else self.CUresult.CUDA_ERROR_INVALID_VALUE
        return result, object()


class FlushRecorder(io.StringIO):
    """An output that remembers what had been written at each flush."""

    def __init__(self):
        super().__init__()
        self.flushed = []

    def flush(self):
        self.flushed.append(self.getvalue())


def serve(lines, driver=None):
    driver = driver or FakeDriver()
    output = FlushRecorder()
    answered = de.serve(lines, output, de.driver_encoder(driver, BASE))
    replies = [json.loads(line) for line in output.getvalue().splitlines()]
    assert answered == len(replies)
    return replies, output, driver


def test_the_loop_answers_each_record_with_one_flushed_line_in_order():
    lines = [json.dumps(r) + "\n" for r in RECORDS]
    replies, output, driver = serve(lines)
    assert replies == [
        {"verdict": "accept", "detail": "CUDA_SUCCESS"},
        {"verdict": "accept", "detail": "CUDA_SUCCESS"},
        {"verdict": "accept", "detail": "CUDA_SUCCESS"},
        {"verdict": "refuse", "detail": "unrepresentable: ValueError: Argument 3 too long, must be <= 5"},
        {"verdict": "refuse", "detail": "unrepresentable: boxDim[0] = -1 does not fit cuuint32_t (0 .. 4294967295)"},
        {"verdict": "refuse", "detail": "unrepresentable: globalDim[0] = 18446744073709551616 does not fit "
                                        "cuuint64_t (0 .. 18446744073709551615)"},
        {"verdict": "refuse", "detail": "unrepresentable: swizzle = '96B' names no cuda.h CUtensorMapSwizzle "
                                        "enumerator"},
        {"verdict": None, "detail": "not a tensormap case"},
        {"verdict": "accept", "detail": "CUDA_SUCCESS"},
        {"verdict": "refuse", "detail": "CUDA_ERROR_INVALID_VALUE"},
    ]
    # flushed after every line, each flush holding one more line
    assert [text.count("\n") for text in output.flushed] == list(range(1, len(RECORDS) + 1))
    # the driver saw the rebased address and cuda-bindings' types
    function, arguments = driver.calls[0]
    assert function == "cuTensorMapEncodeTiled"
    assert arguments[0] == ("CUtensorMapDataType", "CU_TENSOR_MAP_DATA_TYPE_FLOAT16")
    assert arguments[1] == 2 and arguments[2] == BASE       # globalAddress 0x10000: offset 0
    assert [type(v).__name__ for v in arguments[3]] == ["cuuint64_t", "cuuint64_t"]
    assert [type(v).__name__ for v in arguments[5]] == ["cuuint32_t", "cuuint32_t"]
    im2col = driver.calls[1][1]
    assert im2col[5] == [-1, -1] and im2col[7] == 64


def test_lines_that_are_no_record_get_a_null_verdict_and_blank_lines_none():
    replies, _, driver = serve(["\n", "not json\n", "[1, 2]\n", json.dumps({"target": "tensormap"}) + "\n",
                                "   \n", json.dumps(record(0, tiled_case(), target="layout")) + "\n"])
    assert [r["verdict"] for r in replies] == [None, None, None, None]
    assert replies[0]["detail"].startswith("not JSON: ") and "\n" not in replies[0]["detail"]
    assert replies[1]["detail"] == "not a fuzz record (a JSON object)"
    assert replies[2]["detail"] == "the record has no case object"
    assert replies[3]["detail"] == "not a tensormap case"
    assert driver.calls == []


def test_bindings_overflow_and_type_errors_are_unrepresentable():
    def overflowing(document):
        raise OverflowError("value too large to convert to unsigned int")
    reply = de.answer(record(0, tiled_case()), overflowing)
    assert reply == {"verdict": "refuse", "detail": "unrepresentable: OverflowError: value too large to convert "
                                                    "to unsigned int"}


def test_other_errors_are_not_taken_for_refusals():
    def broken(document):
        raise KeyError("a bug in the adapter")
    with pytest.raises(KeyError):
        de.answer(record(0, tiled_case()), broken)


def test_the_module_runs_and_fails_cleanly_without_a_driver():
    """`python -m solver.fuzz.adapters.driver_encode` imports from the repository root; without cuda-bindings or a
    GPU it says why on stderr and exits 1 (with both, empty input ends it with status 0)."""
    done = subprocess.run([sys.executable, "-m", "solver.fuzz.adapters.driver_encode"], cwd=ROOT, input="",
                          capture_output=True, text=True, timeout=120)
    assert done.stdout == ""
    assert (done.returncode, done.stderr.startswith("driver_encode: ")) in ((1, True), (0, False)), done.stderr


def test_the_encoder_probe_still_imports_its_encoder():
    """hardware/run_encoder_probe.py runs from anywhere and takes `encode` from the adapter."""
    done = subprocess.run([sys.executable, os.path.join(ROOT, "hardware", "run_encoder_probe.py"), "--help"],
                          cwd="/", capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    sys.path.insert(0, os.path.join(ROOT, "hardware"))
    try:
        import run_encoder_probe
    finally:
        sys.path.remove(os.path.join(ROOT, "hardware"))
    assert run_encoder_probe.encode is de.encode and run_encoder_probe.tensor_map_hex is de.tensor_map_hex
