"""The CUDA driver's tensor-map encoders as the oracle of `layoutproof fuzz --against`.

    layoutproof fuzz ... --against "python -m solver.fuzz.adapters.driver_encode"

Protocol (fixed; every `fuzz --against` command speaks it):

  * The command is started once per adapter process of the run (`--jobs N`: N; `--scheduler`: one per
    worker thread), and answers each line before it reads the next. It reads fuzz records on stdin, one
    JSON object per line (a line of
    `layoutproof fuzz` output: {"index", "target", "arch", "violates", "outcome", "witness", "case"}).
  * For each record it writes exactly one JSON line on stdout, in input order, and flushes after it:

        {"verdict": "accept" | "refuse" | null, "detail": "<one line>"}

    - "accept" / "refuse": the encoder returned CUDA_SUCCESS / anything else; detail is the CUresult
      name ("CUDA_SUCCESS", "CUDA_ERROR_INVALID_VALUE", ...).
    - "refuse" with detail "unrepresentable: <why, one line>": the case holds a value that cannot be
      passed at all: a negative value for an unsigned parameter, one above 2^64 - 1 (or the C type's
      range), something other than an integer where one goes, an enumerator name cuda.h lacks (swizzle
      96B), a missing argument, a rank whose arrays could not be built; or one that cuda-bindings itself
      refuses before calling the driver (it refused 6-entry lists on the H100 run: "Argument
      'elementStrides' too long, must be <= 5"). No caller can get such a call accepted.
    - null with detail "not a tensormap case": the record's target is not "tensormap". null with another
      detail: the line held no record (not JSON, or no "case" object).

    Blank input lines carry no record and get no answer; end of input ends the command (status 0).

How a case becomes an encoder call (`arguments`, a pure function, so it is tested with no GPU):

  * globalAddress: at start-up the adapter allocates one device buffer and aligns its address up to
    64 KiB; a case's globalAddress (an integer, or a decimal / 0x-hex string) is passed as that base plus
    (globalAddress mod 65536). The encoders' address rules only look at the low bits (16- and 32-byte
    alignment), so the driver judges the case's own alignment while seeing a real device address.
  * arrays: the driver reads rank entries of globalDim, boxDim and elementStrides, rank - 1 of
    globalStrides and rank - 2 of each im2col corner. Each array is passed with exactly that many
    entries, and at least one: cuda-bindings passes an empty list as a null pointer, which no C caller
    does, so a rank-1 map gets one unused stride. Entries a case lacks are zero; entries past that count
    are dropped (the driver never reads them). A rank above MAX_ARRAY_ENTRIES is unrepresentable.
  * enumerations: a case names them as cuda.h does, less the prefix ("128B" ->
    CU_TENSOR_MAP_SWIZZLE_128B).

Only `main` needs a GPU and cuda-bindings (`from cuda.bindings import driver`). Tests:
tests/solver_tests/fuzz/test_fuzz_cuda.py. hardware/run_encoder_probe.py takes `open_driver`, `encode` and `tensor_map_hex`
from here; solver/fuzz/formats/cuda.py renders `arguments` as a C++ program.
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import Callable, Iterable, Optional, TextIO, Union

from spec.rules import parse_number

from solver.fuzz.adapters import protocol

ADDRESS_WINDOW = 1 << 16      # a case's globalAddress keeps its offset inside one 64 KiB window
ALLOCATION_BYTES = 1 << 18    # the adapter's device buffer; its 64 KiB-aligned base lies inside it
MAX_ARRAY_ENTRIES = 64        # the largest rank whose arrays are built (the driver's largest rank is 5)
SUCCESS = "CUDA_SUCCESS"
NOT_A_TENSORMAP_CASE = "not a tensormap case"

ENCODER_FUNCTIONS = {"tiled": "cuTensorMapEncodeTiled", "im2col": "cuTensorMapEncodeIm2col",
                     "im2col_wide": "cuTensorMapEncodeIm2colWide"}

# C types of the encoders' parameters (cuda.h 13.0).
U32, U64, INT, ADDRESS = "cuuint32_t", "cuuint64_t", "int", "void *"
U32_ARRAY, U64_ARRAY, INT_ARRAY = "const cuuint32_t *", "const cuuint64_t *", "const int *"
ARRAY_ELEMENT_TYPES = {U32_ARRAY: U32, U64_ARRAY: U64, INT_ARRAY: INT}
INTEGER_RANGES = {U32: (0, (1 << 32) - 1), U64: (0, (1 << 64) - 1), INT: (-(1 << 31), (1 << 31) - 1),
                  ADDRESS: (0, (1 << 64) - 1)}

# Enumeration type -> (enumerator prefix, the enumerators less the prefix), as cuda.h 13.0 declares them
# (tests/solver_tests/fuzz/test_fuzz_cuda.py checks them against the header where it is installed). These names are the
# oracle's own: they are not taken from spec/, whose verdicts the oracle is there to test.
ENUMERATIONS = {
    "CUtensorMapDataType": ("CU_TENSOR_MAP_DATA_TYPE_", (
        "UINT8", "UINT16", "UINT32", "INT32", "UINT64", "INT64", "FLOAT16", "FLOAT32", "FLOAT64", "BFLOAT16",
        "FLOAT32_FTZ", "TFLOAT32", "TFLOAT32_FTZ", "16U4_ALIGN8B", "16U4_ALIGN16B", "16U6_ALIGN16B")),
    "CUtensorMapInterleave": ("CU_TENSOR_MAP_INTERLEAVE_", ("NONE", "16B", "32B")),
    "CUtensorMapSwizzle": ("CU_TENSOR_MAP_SWIZZLE_", (
        "NONE", "32B", "64B", "128B", "128B_ATOM_32B", "128B_ATOM_32B_FLIP_8B", "128B_ATOM_64B")),
    "CUtensorMapL2promotion": ("CU_TENSOR_MAP_L2_PROMOTION_", ("NONE", "L2_64B", "L2_128B", "L2_256B")),
    "CUtensorMapFloatOOBfill": ("CU_TENSOR_MAP_FLOAT_OOB_FILL_", ("NONE", "NAN_REQUEST_ZERO_FMA")),
    "CUtensorMapIm2ColWideMode": ("CU_TENSOR_MAP_IM2COL_WIDE_MODE_", ("W", "W128")),
}

# cuda.h parameter name -> (the case document's key, its C type).
PARAMETERS = {
    "tensorDataType": ("dataType", "CUtensorMapDataType"),
    "tensorRank": ("rank", U32),
    "globalAddress": ("globalAddress", ADDRESS),
    "globalDim": ("globalDim", U64_ARRAY),
    "globalStrides": ("globalStrides", U64_ARRAY),
    "boxDim": ("boxDim", U32_ARRAY),
    "pixelBoxLowerCorner": ("pixelBoxLowerCorner", INT_ARRAY),
    "pixelBoxUpperCorner": ("pixelBoxUpperCorner", INT_ARRAY),
    "pixelBoxLowerCornerWidth": ("pixelBoxLowerCornerWidth", INT),
    "pixelBoxUpperCornerWidth": ("pixelBoxUpperCornerWidth", INT),
    "channelsPerPixel": ("channelsPerPixel", U32),
    "pixelsPerColumn": ("pixelsPerColumn", U32),
    "elementStrides": ("elementStrides", U32_ARRAY),
    "interleave": ("interleave", "CUtensorMapInterleave"),
    "mode": ("mode", "CUtensorMapIm2ColWideMode"),
    "swizzle": ("swizzle", "CUtensorMapSwizzle"),
    "l2Promotion": ("l2Promotion", "CUtensorMapL2promotion"),
    "oobFill": ("oobFill", "CUtensorMapFloatOOBfill"),
}

# Array parameter -> how many entries fewer than the rank the driver reads.
ARRAY_ENTRIES_BELOW_RANK = {"globalDim": 0, "globalStrides": 1, "boxDim": 0, "elementStrides": 0,
                            "pixelBoxLowerCorner": 2, "pixelBoxUpperCorner": 2}

# Each encoder's parameters after `CUtensorMap *tensorMap`, in the C order.
_HEAD = ("tensorDataType", "tensorRank", "globalAddress", "globalDim", "globalStrides")
SIGNATURES = {
    "tiled": _HEAD + ("boxDim", "elementStrides", "interleave", "swizzle", "l2Promotion", "oobFill"),
    "im2col": _HEAD + ("pixelBoxLowerCorner", "pixelBoxUpperCorner", "channelsPerPixel", "pixelsPerColumn",
                       "elementStrides", "interleave", "swizzle", "l2Promotion", "oobFill"),
    "im2col_wide": _HEAD + ("pixelBoxLowerCornerWidth", "pixelBoxUpperCornerWidth", "channelsPerPixel",
                            "pixelsPerColumn", "elementStrides", "interleave", "mode", "swizzle",
                            "l2Promotion", "oobFill"),
}

Value = Union[int, str, tuple]


class UnrepresentableValue(ValueError):
    """A case's value that no caller can pass as the encoder's argument (see the module docstring)."""


@dataclass(frozen=True)
class Argument:
    """One argument of an encoder call.

    value: an int for integers and the address, the full enumerator name for enumerations, and for arrays
    the tuple of entries passed: as many as the driver reads, at least one.
    case_length: for arrays, how many entries the case's list has (the case's first entries are passed,
    then zeros)."""
    name: str
    c_type: str
    value: Value
    case_length: int = 0

    @property
    def given(self) -> int:
        """For arrays: how many of the entries passed come from the case (the rest are zero padding)."""
        return min(self.case_length, len(self.value))

    @property
    def is_array(self) -> bool:
        return self.c_type in ARRAY_ELEMENT_TYPES

    @property
    def is_enumeration(self) -> bool:
        return self.c_type in ENUMERATIONS


@dataclass(frozen=True)
class EncoderCall:
    """A cuTensorMapEncode* call: the function's name and its arguments after `tensorMap`, in C order."""
    function: str
    arguments: tuple

    def value(self, name: str) -> Value:
        return next(a.value for a in self.arguments if a.name == name)


# --- a case document -> the encoder's arguments (pure) -------------------------------------------------

def is_integer(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def c_integer(name: str, value, c_type: str) -> int:
    """`value` as an integer of C type `c_type`; UnrepresentableValue when it is none or does not fit."""
    if not is_integer(value):
        raise UnrepresentableValue(f"{name} = {value!r} is not an integer ({c_type})")
    low, high = INTEGER_RANGES[c_type]
    if not low <= value <= high:
        raise UnrepresentableValue(f"{name} = {value} does not fit {c_type} ({low} .. {high})")
    return value


def enumerator(name: str, value, c_type: str) -> str:
    """The cuda.h enumerator a case's name stands for ("128B" -> "CU_TENSOR_MAP_SWIZZLE_128B")."""
    prefix, names = ENUMERATIONS[c_type]
    if not isinstance(value, str) or value not in names:
        raise UnrepresentableValue(f"{name} = {value!r} names no cuda.h {c_type} enumerator")
    return prefix + value


def address_value(value) -> int:
    """A case's globalAddress (an integer, or a decimal / 0x-hex string) as a 64-bit address."""
    if isinstance(value, str):
        try:
            value = parse_number(value)
        except ValueError:
            raise UnrepresentableValue(f"globalAddress = {value!r} is not a decimal or 0x-hex number") from None
    return c_integer("globalAddress", value, ADDRESS)


def rebased_address(address: int, base_address: Optional[int]) -> int:
    """The address passed: `base_address` plus the address's offset in its 64 KiB window, or the address
    itself when there is no base."""
    return address if base_address is None else base_address + address % ADDRESS_WINDOW


def array_reads(parameter: str, rank: int) -> int:
    """How many entries of array `parameter` the driver reads for `rank`."""
    return max(rank - ARRAY_ENTRIES_BELOW_RANK[parameter], 0)


def array_value(parameter: str, values, c_type: str, rank: int) -> tuple:
    """The entries passed for array `parameter`: the case's list cut or zero-padded to the entries the
    driver reads, at least one."""
    if not isinstance(values, list):
        raise UnrepresentableValue(f"{parameter} = {values!r} is not a list")
    element_type = ARRAY_ELEMENT_TYPES[c_type]
    length = max(array_reads(parameter, rank), 1)
    entries = tuple(c_integer(f"{parameter}[{i}]", v, element_type) for i, v in enumerate(values[:length]))
    return entries + (0,) * (length - len(entries))


def argument(parameter: str, document: dict, rank: int, base_address: Optional[int]) -> Argument:
    """The encoder's argument `parameter` as `document` gives it."""
    key, c_type = PARAMETERS[parameter]
    if key not in document:
        raise UnrepresentableValue(f"{key} is missing")
    raw = document[key]
    if c_type in ENUMERATIONS:
        return Argument(parameter, c_type, enumerator(key, raw, c_type))
    if c_type == ADDRESS:
        return Argument(parameter, c_type, rebased_address(address_value(raw), base_address))
    if c_type in ARRAY_ELEMENT_TYPES:
        return Argument(parameter, c_type, array_value(parameter, raw, c_type, rank), len(raw))
    return Argument(parameter, c_type, c_integer(key, raw, c_type))


def tensor_rank(document: dict) -> int:
    """The case's rank, checked first since the arrays' lengths follow from it."""
    if "rank" not in document:
        raise UnrepresentableValue("rank is missing")
    rank = c_integer("rank", document["rank"], U32)
    if rank > MAX_ARRAY_ENTRIES:
        raise UnrepresentableValue(f"rank = {rank}: the driver would read {rank}-entry arrays; at most "
                                   f"{MAX_ARRAY_ENTRIES} are built")
    return rank


def arguments(document: dict, base_address: Optional[int] = None) -> EncoderCall:
    """The encoder call a case document stands for (pure: no driver, no GPU).

    base_address: the 64 KiB-aligned device address globalAddress is rebased on (base + globalAddress mod
    65536); None passes globalAddress as the document gives it. UnrepresentableValue when a value cannot
    be passed (the module docstring lists when)."""
    if not isinstance(document, dict):
        raise UnrepresentableValue(f"the case is not a JSON object: {document!r}")
    encode = document.get("encode")
    if encode not in SIGNATURES:
        raise UnrepresentableValue(f"encode = {encode!r} names no encoder (one of {', '.join(SIGNATURES)})")
    rank = tensor_rank(document)
    return EncoderCall(ENCODER_FUNCTIONS[encode],
                       tuple(argument(p, document, rank, base_address) for p in SIGNATURES[encode]))


# --- an encoder call -> cuda-bindings ------------------------------------------------------------------

def binding_value(driver, arg: Argument):
    """`arg` as cuda-bindings takes it: enum members, lists of cuuint64_t / cuuint32_t (plain ints for int
    arrays), plain ints for scalars and the address."""
    if arg.is_enumeration:
        return getattr(getattr(driver, arg.c_type), arg.value)
    if arg.c_type == U64_ARRAY:
        return [driver.cuuint64_t(v) for v in arg.value]
    if arg.c_type == U32_ARRAY:
        return [driver.cuuint32_t(v) for v in arg.value]
    if arg.c_type == INT_ARRAY:
        return list(arg.value)
    return arg.value


def call_encoder(driver, call: EncoderCall):
    """Run `call` through cuda-bindings; returns its (CUresult, CUtensorMap) tuple."""
    function = getattr(driver, call.function)
    return function(*(binding_value(driver, a) for a in call.arguments))


def encode(driver, document: dict, base_address: Optional[int] = None):
    """Encode a case document through cuda-bindings' `driver`; returns (CUresult, CUtensorMap).
    UnrepresentableValue, or cuda-bindings' own TypeError / ValueError / OverflowError, when a value cannot
    be passed."""
    return call_encoder(driver, arguments(document, base_address))


def result_name(result) -> str:
    """A CUresult's name ("CUDA_SUCCESS")."""
    return result.name if hasattr(result, "name") else str(result)


def tensor_map_hex(tensor_map) -> str:
    """The 128-byte CUtensorMap as hex (its 16 little-endian words), "" when there is none."""
    words = getattr(tensor_map, "opaque", None)
    if words is None:
        return ""
    return "".join(int(w).to_bytes(8, "little").hex() for w in words)


# --- the protocol --------------------------------------------------------------------------------------

DocumentEncoder = Callable[[dict], str]   # a case document -> the encoder's CUresult name
BINDING_REFUSALS = (TypeError, ValueError, OverflowError)   # UnrepresentableValue is a ValueError


def driver_encoder(driver, base_address: int) -> DocumentEncoder:
    """The DocumentEncoder that asks cuda-bindings' `driver`, rebasing addresses on `base_address`."""
    def encode_document(document: dict) -> str:
        return result_name(encode(driver, document, base_address)[0])
    return encode_document


one_line = protocol.one_line


def describe(error: BaseException) -> str:
    """An exception in one line: its message for ours, "Type: message" for the bindings' own."""
    if isinstance(error, UnrepresentableValue):
        return one_line(error)
    return one_line(f"{type(error).__name__}: {error}")


def answer(record, encode_document: DocumentEncoder) -> dict:
    """The protocol's answer to one fuzz record."""
    if not isinstance(record, dict):
        return {"verdict": None, "detail": "not a fuzz record (a JSON object)"}
    if record.get("target") != "tensormap":
        return {"verdict": None, "detail": NOT_A_TENSORMAP_CASE}
    if not isinstance(record.get("case"), dict):
        return {"verdict": None, "detail": "the record has no case object"}
    try:
        name = encode_document(record["case"])
    except BINDING_REFUSALS as error:
        return {"verdict": "refuse", "detail": "unrepresentable: " + describe(error)}
    return {"verdict": "accept" if name == SUCCESS else "refuse", "detail": one_line(name)}


def answer_line(line: str, encode_document: DocumentEncoder) -> str:
    """The answer to one input line, as one JSON line (with its newline)."""
    return protocol.answer_line(line, lambda record: answer(record, encode_document))


def serve(lines: Iterable[str], output: TextIO, encode_document: DocumentEncoder) -> int:
    """Answer every non-blank line of `lines` on `output`, flushing after each; returns how many."""
    return protocol.serve(lines, output.write, lambda record: answer(record, encode_document), output.flush)


# --- the driver ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class DriverSession:
    """cuda-bindings' driver module with device `ordinal`'s primary context current, and the 64 KiB-
    aligned base address inside one device allocation."""
    driver: object
    device: object
    allocation: int
    base_address: int


def checked(driver, result):
    """The value of a cuda-bindings call's (CUresult, value...) tuple; RuntimeError unless CUDA_SUCCESS."""
    error = result[0] if isinstance(result, tuple) else result
    if error != driver.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"driver setup failed: {result_name(error)}")
    return result[1] if isinstance(result, tuple) and len(result) > 1 else None


def aligned_base(allocation: int) -> int:
    """The first 64 KiB-aligned address at or after `allocation`."""
    return (allocation + ADDRESS_WINDOW - 1) & ~(ADDRESS_WINDOW - 1)


def open_driver(ordinal: int = 0, allocation_bytes: int = ALLOCATION_BYTES) -> DriverSession:
    """cuInit, device `ordinal`, its primary context made current, one device allocation."""
    from cuda.bindings import driver
    checked(driver, driver.cuInit(0))
    device = checked(driver, driver.cuDeviceGet(ordinal))
    context = checked(driver, driver.cuDevicePrimaryCtxRetain(device))
    checked(driver, driver.cuCtxSetCurrent(context))
    allocation = int(checked(driver, driver.cuMemAlloc(allocation_bytes)))
    return DriverSession(driver, device, allocation, aligned_base(allocation))


def main(argv: Optional[list] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m solver.fuzz.adapters.driver_encode",
        description="Answer `layoutproof fuzz --against` records (JSON lines on stdin) with the CUDA driver's "
                    "tensor-map encoders' verdicts (JSON lines on stdout).")
    parser.parse_args(argv)
    try:
        session = open_driver()
    except (ImportError, RuntimeError) as error:
        print(f"driver_encode: {error}", file=sys.stderr)
        return 1
    serve(iter(sys.stdin.readline, ""), sys.stdout, driver_encoder(session.driver, session.base_address))
    return 0


if __name__ == "__main__":
    sys.exit(main())
