"""Fuzz records as one self-contained CUDA C++ host program that asks the driver's tensor-map encoders.

    python -m solver.fuzz.formats.cuda [records.jsonl] > fuzz_tensormap.cpp      (fuzz records, one JSON line each)
    nvcc -o fuzz_tensormap fuzz_tensormap.cpp -lcuda && ./fuzz_tensormap         (on a machine with a GPU)

`render(records)` writes the program: for each tensormap record one function that fills the encoder's
arguments from the record's case, calls cuTensorMapEncodeTiled / Im2col / Im2colWide and prints

    {"index": <the record's index>, "driver": "<cuGetErrorName of the result>", "ours": "accept" | "refuse",
     "violates": [<the record's rule ids>], "agree": true | false}

and at the end {"cases": <encoder calls made>, "disagreements": <how many disagreed>}. "ours" is "refuse"
when the record's outcome is "refused", else "accept"; they agree when the driver refuses (any result but
CUDA_SUCCESS) exactly when we do. The program exits 0 whether or not they disagree, 1 when cuInit or the
setup after it fails.

The arguments are exactly those of solver.fuzz.adapters.driver_encode.arguments (the `fuzz --against` adapter
passes the same ones through cuda-bindings): globalAddress is a 64 KiB-aligned cuMemAlloc address plus
(the case's globalAddress mod 65536); each array holds the entries the driver reads (rank, rank - 1 for
globalStrides, rank - 2 for the im2col corners; at least one), the case's first entries then zeros. A rank
of 0 or above 5 goes to the driver as it is, so its refusal is what shows (unlike cuda-bindings, C takes
6-entry arrays). A case that C cannot express (a value outside its C type, an enumerator cuda.h lacks such
as swizzle 96B, a missing argument) is skipped: the program says why in a comment and prints
{"index": i, "skipped": "<why>"}. Records of another target are skipped the same way.
"""
from __future__ import annotations

import json
import sys
from string import Template
from typing import Iterable, Optional

from solver.fuzz.adapters.driver_encode import ADDRESS, ADDRESS_WINDOW, ARRAY_ELEMENT_TYPES, INT, NOT_A_TENSORMAP_CASE, U32, U64, Argument, EncoderCall, UnrepresentableValue, array_reads, arguments

ALLOCATION_BYTES = 1 << 18   # the program's device buffer; its 64 KiB-aligned base lies inside it


# --- values as C++ text --------------------------------------------------------------------------------

def our_verdict(record: dict) -> str:
    """layoutproof's verdict on a fuzz record: "refuse" when its outcome is "refused", else "accept"."""
    return "refuse" if record.get("outcome") == "refused" else "accept"


def record_index(record: dict, position: int) -> int:
    """The record's "index", or its position in the list when it has no integer index."""
    index = record.get("index")
    return index if isinstance(index, int) and not isinstance(index, bool) else position


def c_string(text: str) -> str:
    """`text` as a C string literal (printable ASCII kept, everything else escaped in octal)."""
    out = []
    for byte in text.encode("utf-8"):
        char = chr(byte)
        if char in '\\"?':
            out.append("\\" + char)
        elif 32 <= byte < 127:
            out.append(char)
        else:
            out.append(f"\\{byte:03o}")
    return '"' + "".join(out) + '"'


def comment_text(text: str) -> str:
    """`text` safe inside a // comment: printable ASCII, no backslash (a line splice)."""
    return "".join(c if 32 <= ord(c) < 127 and c != "\\" else "?" for c in str(text))


def json_text(value) -> str:
    return json.dumps(value, ensure_ascii=True)


def c_integer_literal(value: int, c_type: str) -> str:
    """An integer literal of C type `c_type`, exact for every value of the type."""
    if c_type == U64:
        return f"{value}ull"
    if c_type == U32:
        return f"{value}u"
    if c_type == INT and value == -(1 << 31):
        return "(-2147483647 - 1)"
    return str(value)


def array_comment(arg: Argument, rank: int) -> str:
    """Why an array holds other entries than the case's list, or ""."""
    reads = array_reads(arg.name, rank)
    if arg.case_length == reads == len(arg.value):
        return ""
    what = f"the case gives {arg.case_length} entries, the driver reads {reads}"
    if reads == 0:
        return f"  // {what}: one unused entry, a non-null pointer as a C caller passes"
    if arg.case_length < reads:
        return f"  // {what}: zero-padded"
    return f"  // {what}: the rest are left out"


def array_declaration(arg: Argument, rank: int) -> str:
    element_type = ARRAY_ELEMENT_TYPES[arg.c_type]
    entries = ", ".join(c_integer_literal(v, element_type) for v in arg.value)
    return f"  const {element_type} {arg.name}[{len(arg.value)}] = {{{entries}}};{array_comment(arg, rank)}"


def argument_expression(arg: Argument) -> str:
    """The C++ expression passed for `arg` (arrays by their name; the address as base + offset, since
    the render uses base address 0)."""
    if arg.is_array:
        return arg.name
    if arg.is_enumeration:
        return arg.value
    if arg.c_type == ADDRESS:
        return f"(void *)(uintptr_t)(base + 0x{arg.value:x}ull)"
    return f"{c_integer_literal(arg.value, arg.c_type)} /* {arg.name} */"


# --- one record ----------------------------------------------------------------------------------------

def function_name(position: int) -> str:
    return f"case_{position}"


def header_comment(record: dict, position: int) -> list:
    index = record_index(record, position)
    violates = record.get("violates") or []
    case = record.get("case")
    encode = case.get("encode") if isinstance(case, dict) else None
    lines = [f"// Case {position}: record {index}, target {record.get('target')}, arch {record.get('arch')}, "
             f"encode {encode}; outcome {record.get('outcome')}, so layoutproof says {our_verdict(record)}.",
             "// Violates: " + (", ".join(str(v) for v in violates) if violates else "no rule.")]
    if isinstance(case, dict):
        lines.append("// Case document: " + json_text(case))
    return [comment_text(line) for line in lines]


def skipped_function(record: dict, position: int, why: str) -> str:
    """A case the program cannot pass to the driver: a comment saying why, and the printed skip line."""
    line = json_text({"index": record_index(record, position), "skipped": why})
    return "\n".join(header_comment(record, position) + [
        comment_text(f"// Skipped: {why}"),
        f"static void {function_name(position)}(CUdeviceptr) {{",
        f"  std::puts({c_string(line)});",
        "}"])


def encoder_call_text(call: EncoderCall, tensor_map: str, expression=argument_expression) -> str:
    """`cuTensorMapEncode*(tensor_map, ...)` with each argument as `expression` writes it, one to a line
    (the fuzz programs here, and `recipe --emit cuda`)."""
    passed = ",\n      ".join(expression(argument) for argument in call.arguments)
    return f"{call.function}({tensor_map},\n      {passed})"


def call_function(record: dict, position: int, call: EncoderCall) -> str:
    """The function that makes one encoder call and reports it."""
    rank = call.value("tensorRank")
    arrays = [array_declaration(a, rank) for a in call.arguments if a.is_array]
    violates = json_text([str(v) for v in record.get("violates") or []])
    ours_refuses = "true" if our_verdict(record) == "refuse" else "false"
    return "\n".join(header_comment(record, position) + [
        f"static void {function_name(position)}(CUdeviceptr base) {{",
        *arrays,
        "  CUtensorMap map;",
        f"  CUresult result = {encoder_call_text(call, '&map')};",
        f"  report({record_index(record, position)}, result, {ours_refuses}, {c_string(violates)});",
        "}"])


def render_one(record: dict, position: int = 0) -> str:
    """The C++ function for one fuzz record (named case_<position>, taking the device base address)."""
    if not isinstance(record, dict) or record.get("target") != "tensormap":
        return skipped_function(record if isinstance(record, dict) else {}, position, NOT_A_TENSORMAP_CASE)
    if not isinstance(record.get("case"), dict):
        return skipped_function(record, position, "the record has no case object")
    try:
        call = arguments(record["case"], base_address=0)
    except UnrepresentableValue as error:
        return skipped_function(record, position, f"unrepresentable: {error}")
    return call_function(record, position, call)


# --- the program ---------------------------------------------------------------------------------------

FILE_NAME = "fuzz_tensormap.cpp"        # the name `layoutproof fuzz --format cuda --out DIR` gives it, and the header

PRELUDE = Template(r"""// Generated by layoutproof (solver/fuzz/formats/cuda.py): $count fuzz record(s) passed to the CUDA driver's
// tensor-map encoders. Saved as fuzz_tensormap.cpp (fuzz --format cuda --out DIR writes it so), build and
// run it on a machine with a GPU:
//     nvcc -o fuzz_tensormap fuzz_tensormap.cpp -lcuda && ./fuzz_tensormap
// Prints one JSON line per case ({"index", "driver", "ours", "violates", "agree"} or {"index", "skipped"}),
// then {"cases", "disagreements"}. Exit status 0 whether or not they disagree; 1 if the setup fails.
#include <cuda.h>
#include <cstdint>
#include <cstdio>

static int g_cases = 0;
static int g_disagreements = 0;

// Prints one case's line: the driver's result against layoutproof's verdict (ours_refuses).
static void report(long long index, CUresult result, bool ours_refuses, const char *violates_json) {
  const char *name = nullptr;
  char unknown[32];
  if (cuGetErrorName(result, &name) != CUDA_SUCCESS || name == nullptr) {
    std::snprintf(unknown, sizeof unknown, "CUresult %d", (int)result);
    name = unknown;
  }
  bool agree = (result != CUDA_SUCCESS) == ours_refuses;
  ++g_cases;
  if (!agree) ++g_disagreements;
  std::printf("{\"index\": %lld, \"driver\": \"%s\", \"ours\": \"%s\", \"violates\": %s, \"agree\": %s}\n",
              index, name, ours_refuses ? "refuse" : "accept", violates_json, agree ? "true" : "false");
  std::fflush(stdout);
}

// True when a setup call succeeded; otherwise says which failed, on stderr.
static bool setup_ok(const char *what, CUresult result) {
  if (result == CUDA_SUCCESS) return true;
  const char *name = nullptr;
  cuGetErrorName(result, &name);
  std::fprintf(stderr, "%s failed: %s (%d)\n", what, name ? name : "unknown", (int)result);
  return false;
}
""")

MAIN = Template(r"""int main() {
  if (!setup_ok("cuInit", cuInit(0))) return 1;
  CUdevice device;
  CUcontext context;
  CUdeviceptr allocation;
  if (!setup_ok("cuDeviceGet", cuDeviceGet(&device, 0))) return 1;
  if (!setup_ok("cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain(&context, device))) return 1;
  if (!setup_ok("cuCtxSetCurrent", cuCtxSetCurrent(context))) return 1;
  if (!setup_ok("cuMemAlloc", cuMemAlloc(&allocation, $allocation))) return 1;
  // globalAddress = this 64 KiB-aligned base + (the case's globalAddress mod 65536): the encoders'
  // address rules only look at the low bits.
  const CUdeviceptr base = (allocation + 0x$window_less_one) & ~(CUdeviceptr)0x$window_less_one;

$calls
  std::printf("{\"cases\": %d, \"disagreements\": %d}\n", g_cases, g_disagreements);
  cuMemFree(allocation);
  cuDevicePrimaryCtxRelease(device);
  return 0;
}
""")


def render(records: list) -> str:
    """The whole C++ program for `records` (fuzz records, as `layoutproof fuzz` writes them)."""
    functions = [render_one(record, position) for position, record in enumerate(records)]
    calls = "".join(f"  {function_name(position)}(base);\n" for position in range(len(records)))
    return (PRELUDE.substitute(count=len(records)) + "\n" + "\n\n".join(functions)
            + ("\n\n" if functions else "")
            + MAIN.substitute(allocation=ALLOCATION_BYTES, window_less_one=f"{ADDRESS_WINDOW - 1:x}", calls=calls))


def read_records(lines: Iterable[str]) -> list:
    """The fuzz records among JSON lines (objects with a "target"; other lines are left out)."""
    records = []
    for line in lines:
        if line.strip():
            value = json.loads(line)
            if isinstance(value, dict) and "target" in value:
                records.append(value)
    return records


def main(argv: Optional[list] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    if argv:
        with open(argv[0]) as f:
            records = read_records(f)
    else:
        records = read_records(sys.stdin)
    sys.stdout.write(render(records))
    return 0


if __name__ == "__main__":
    sys.exit(main())
