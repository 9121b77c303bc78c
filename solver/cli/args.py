"""What every command shares on its way in: the exit statuses, the argument parser whose usage errors
are one line, and the argument types (numbers, number lists, the vocabulary of docs/CLI.md).

Values are parsed here; whether they are legal (an arch that exists, an MN that is a multiple of 8) is
decided by spec/, whose errors name the field and the rule. The vocabulary below is taken from spec/ so
that help texts list exactly what spec/ accepts.
"""
from __future__ import annotations

import argparse
import json
import re
import sys

from spec.mma import descriptor as desc_mod
from spec.mma import dtypes, readmap
from spec.rule import SpecError, parse_number, shown
from spec.tma import swizzle as tma_swizzle

from solver.shell import (ERROR_PREFIX, MAX_JOBS, HelpFormatter, Parser, UsageError, closest,  # noqa: F401
                          did_you_mean, job_count, number, option_names, positive_number, signed_number,
                          usage_error_line)   # (re-exported: the command modules take them from here)

# Exit statuses (docs/CLI.md): 0 valid / found / as expected; 1 well-formed but breaks a rule, or no solution;
# 2 malformed input (one line on stderr); 3 an internal error (a bug; one line, no traceback).
EXIT_OK, EXIT_VIOLATION, EXIT_MALFORMED, EXIT_INTERNAL = 0, 1, 2, 3


def exit_status(violations) -> int:
    """EXIT_VIOLATION when any rule is broken, else EXIT_OK."""
    return EXIT_VIOLATION if violations else EXIT_OK


MAX_LIST_LENGTH = 64     # no list option takes more than a handful of numbers (a tensor has at most 5 dimensions)


def number_list(text: str) -> tuple:
    """Comma-separated numbers ('-1,-1' needs '=' on the command line: --lower=-1,-1); spec/ checks
    their ranges."""
    parts = text.split(",")
    if len(parts) > MAX_LIST_LENGTH:
        raise argparse.ArgumentTypeError(f"{shown(text)}: {len(parts)} numbers, more than any list takes "
                                         f"({MAX_LIST_LENGTH})")
    try:
        return tuple(parse_number(part) for part in parts)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"{shown(text)} is not a comma-separated list of numbers: "
                                         f"{error}") from None


# --- words: descriptors as users paste them from a debugger or a dump -------------------------------------
# The 64-bit shared-memory matrix descriptor of `desc decode`, `desc addresses` and `check`: the text as
# given; spec.mma.descriptor.parse_word reads it, refusing a bare number that reads as another word in hex
# (spec.rule.word_ambiguity, issue 25 item 3)
DESCRIPTOR_HELP = "the 64-bit descriptor, 0x-hex (decimal only where it cannot be hex: its hex reading over 64 bits)"


_DIGIT_RUN = re.compile(r"(?<![A-Za-z_])[0-9][0-9a-fA-FxX_]{100,}")


def checked_text(text: str, field_name: str, rule_id: str = "") -> str:
    """A text argument that holds numbers (a layout in CuTe notation, a descriptor): a number longer than
    any field takes (spec.rule.NUMBER_CHARACTERS) is refused before the text is parsed."""
    long = _DIGIT_RUN.search(text)
    if long:
        raise SpecError(field_name, text, f"holds a number of {len(long.group(0))} characters, longer than any "
                        "value it may take", rule_id)
    return text


def layout_text(text: str) -> str:
    """argparse type of a --layout in CuTe notation (checked_text), whose swizzle C++ CuTe accepts
    (spec.cute.swizzle.refuse_outside_cute: Sw<1,0,0> is refused as CuTe refuses it)."""
    from spec.cute import swizzle as cute_swizzle
    try:
        cute_swizzle.refuse_outside_cute(text)
        return checked_text(text, "layout", "layout.notation")
    except SpecError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


MAX_SECONDS = 7 * 24 * 3600


def seconds(text: str) -> float:
    """A time limit: a finite positive number of seconds (not nan, not inf), at most a week."""
    try:
        value = float(text) if text.isascii() else None
    except ValueError:
        value = None
    if value is None or value != value or value in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"{shown(text)} is not a finite number of seconds")
    if not 0 < value <= MAX_SECONDS:
        raise argparse.ArgumentTypeError(f"{shown(text)}: must be more than 0 and at most {MAX_SECONDS} seconds")
    return value


# --- the vocabulary (docs/CLI.md) --------------------------------------------------------------------------------
ARCHES = desc_mod.ARCHES
ARCH_HELP = "sm90 (wgmma), sm100 (tcgen05), sm103 (tcgen05 + absolute LBO mode / K=96)"
DTYPES = tuple(dtypes.DTYPES)
MAJORS = readmap.MAJORS
DESCRIPTOR_SWIZZLES = tuple(dict.fromkeys([*desc_mod.swizzle_codes("sm90"), *desc_mod.swizzle_codes("sm100")]))
TMA_SWIZZLES = tuple(tma_swizzle.MODES)


class _Pretty(argparse.Action):
    """--pretty: the JSON indented for reading; on a command whose text is not JSON, it implies --json."""

    def __init__(self, option_strings, dest, implies_json=True, **options):
        self.implies_json = implies_json
        super().__init__(option_strings, dest, nargs=0, default=False, **options)

    def __call__(self, parser, namespace, values, option_string=None):
        namespace.pretty = True
        if self.implies_json:
            namespace.json = True


def add_json(p, json_lines: bool = False) -> None:
    """--json and --pretty. `json_lines`: the command prints JSON lines already (fuzz), and --pretty
    indents them rather than asking for the one document of --json."""
    p.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    p.add_argument("--pretty", action=_Pretty, implies_json=not json_lines,
                   help="each JSON case indented over several lines, for reading (files under --out stay one "
                        "line per case)" if json_lines else "--json, indented for reading")


def add_group(commands, name: str, help: str):
    """A command with sub-commands (`desc decode`, `tma check`): the sub-parsers object to add them to."""
    group = commands.add_parser(name, help=help)
    return group.add_subparsers(dest=f"{name}_command", required=True, parser_class=Parser)


def add_command(commands, name: str, run, json_lines: bool = False, examples=(), **parser_options):
    """The one way a command is declared: a sub-parser of `commands` that takes --json and --pretty
    (add_json) and runs `run` (a function of the parsed arguments returning the exit status). `examples`:
    command lines `--help` shows under "examples:" (tests/cli_tests/test_help_examples.py runs each)."""
    if examples:
        parser_options["epilog"] = "examples:\n" + "\n".join(f"  {line}" for line in examples)
    p = commands.add_parser(name, **parser_options)
    add_json(p, json_lines)
    p.set_defaults(run=run)
    return p


# --- names: one spelling per thing, matched the way users write it ---------------------------------------
def _spec_type(convert, name: str, known=()):
    """An argparse type from a spec/ conversion: its SpecError becomes argparse's one-line usage error
    (with "did you mean" one of `known` for a near miss)."""
    def parse(text: str):
        try:
            return convert(text)
        except SpecError as error:
            hint = did_you_mean(text.lower(), known) if isinstance(text, str) else ""
            raise argparse.ArgumentTypeError(f"{shown(text)}: {error.problem}{hint}") from None
    parse.__name__ = name
    return parse


arch_name = _spec_type(desc_mod.canonical_arch, "arch", ARCHES)          # sm90 | sm_90a | SM90 -> sm90
dtype_name = _spec_type(dtypes.canonical_name, "dtype", DTYPES)          # bf16 | bfloat16 | BF16 -> bf16


def folded_choice(names, what: str):
    """One of `names`, matched in any case with underscores optional: the TMA's 128B_ATOM_32B and the
    descriptor's 128B_atom32B are one swizzle, `none` is NONE (spec.tma.tensormap_params.fold)."""
    from spec.tma.tensormap_params import fold
    table = {fold(n): n for n in names}

    def parse(text: str) -> str:
        found = table.get(fold(text)) if isinstance(text, str) and len(text) < 64 else None
        if found is None:
            near = closest(fold(text), table) if isinstance(text, str) else None
            raise argparse.ArgumentTypeError(f"{shown(text)}: expected one of {' '.join(names)} (any case)"
                                             + (f" (did you mean {table[near]}?)" if near else ""))
        return found
    parse.__name__ = what
    return parse


def add_arch(p, help: str = ARCH_HELP) -> None:
    """--arch, required by every command that reads or makes something for one GPU (docs/CLI.md)."""
    p.add_argument("--arch", required=True, type=arch_name,
                   help=help + "; required (sm_90a, sm_100a, sm_103a and any case accepted)")


def tma_dtype_name(text: str) -> str:
    """--dtype of `tma box`: a cuda.h data type in any case (BFLOAT16, float32_ftz), or any --dtype
    spelling (bf16, bfloat16), which solver.synth.box maps to the data type."""
    from spec.tma import tensormap_params
    if isinstance(text, str) and text.upper() in tensormap_params.DATA_TYPES:
        return text.upper()
    return dtype_name(text)


def accumulator_dtype_name(text: str) -> str:
    """--dtype of `tmem plan`: D's element type (f32, f16, bf16, s32; int32 and every --dtype spelling)."""
    from solver.synth.tmem_plan import accumulator_dtype
    try:
        return accumulator_dtype(text)
    except SpecError as error:
        raise argparse.ArgumentTypeError(str(error)) from None      # the field, the problem and the rule


def tcgen05_arch(text: str) -> str:
    """--arch of a tensor-memory or block-scaling command: sm100 or sm103 (rule tmem.target: sm90 has no
    tensor memory)."""
    arch = arch_name(text)
    if arch == "sm90":
        raise argparse.ArgumentTypeError(f"{shown(text)}: tensor memory and tcgen05 exist on sm100 and sm103 "
                                         "only (tmem.target)")
    return arch


def add_optional_arch(p, help: str, tcgen05_only: bool = False) -> None:
    """--arch where the answer is the same on every GPU that has the feature: optional, but checked when
    given (a tcgen05 command refuses sm90; `tma place` checks the swizzle's arch rule)."""
    p.add_argument("--arch", default=None, type=tcgen05_arch if tcgen05_only else arch_name,
                   help=help + " (optional; checked when given)")


def add_dtype(p, names=DTYPES) -> None:
    p.add_argument("--dtype", required=True, type=dtype_name,
                   help=" ".join(names) + " (also bfloat16, float16, float32, ...)")


def element_bytes_of_dtype(text: str) -> int:
    """--dtype where a command counts bytes (tma place, im2col): the element size of the type. A
    sub-byte type has none: TMA moves it packed, so its byte count is --elem-bytes's to give."""
    name = dtype_name(text)
    bits = dtypes.dtype(name).bits
    if bits % 8:
        raise argparse.ArgumentTypeError(f"{shown(text)}: a {bits}-bit type has no whole element size; "
                                         "TMA moves it packed: give --elem-bytes")
    return bits // 8


def add_element_size(p, type=number) -> None:
    """The element type as --dtype, or its size as --elem-bytes (the older spelling, which also reaches
    sizes no dtype names): one of the two, stored as the byte count `elem_bytes`."""
    size = p.add_mutually_exclusive_group(required=True)
    size.add_argument("--dtype", dest="elem_bytes", type=element_bytes_of_dtype,
                      help=" ".join(DTYPES) + " (also bfloat16, ...): the element type, whose size is used")
    size.add_argument("--elem-bytes", dest="elem_bytes", type=type, help="element size in bytes instead of --dtype")


def add_major(p) -> None:
    p.add_argument("--major", required=True, type=folded_choice(MAJORS, "major"),
                   help=" or ".join(MAJORS) + " (any case): which extent is contiguous in shared memory")


def add_descriptor_swizzle(p) -> None:
    p.add_argument("--swizzle", required=True, type=folded_choice(DESCRIPTOR_SWIZZLES, "swizzle"),
                   help=" ".join(DESCRIPTOR_SWIZZLES) + " (128B_atom32B only on sm100/sm103; any case, "
                        "128B_ATOM_32B too)")


def add_tma_swizzle(p) -> None:
    p.add_argument("--swizzle", required=True, type=folded_choice(TMA_SWIZZLES, "swizzle"),
                   help=" ".join(TMA_SWIZZLES) + " (any case; 128B_atom32B too)")


def add_smem_address(p, help: str, *, dest: str = "smem_address", aliases=(), required: bool = True,
                     default=None, type=number) -> None:
    """--smem-address: the shared-memory byte address of the tile, box or buffer (one name everywhere;
    `aliases` are the older spellings a command still takes: --start-address, --smem-base)."""
    p.add_argument("--smem-address", *aliases, dest=dest, required=required, default=default, type=type,
                   metavar="ADDRESS", help=help)


def add_mn(p) -> None:
    p.add_argument("--mn", required=True, type=number, help="M or N extent, a multiple of 8")


def _not_empty(text: str, what: str) -> str:
    """An argument that names something (a file, a command): an empty one is refused, not taken for 'none
    asked for' (issue 25: `--svg ""` drew nothing and said nothing)."""
    if not text:
        raise argparse.ArgumentTypeError(f"empty: name the {what}")
    return text


def output_path(text: str) -> str:
    """--svg, --png, --out, --save: the file or folder to write."""
    return _not_empty(text, "file or folder to write")


def command_text(text: str) -> str:
    """--against: the command to run."""
    return _not_empty(text, "command to run")


def add_picture(p) -> None:
    """--svg FILE and --png FILE: a picture of where things go (solver.cli.pictures)."""
    p.add_argument("--svg", metavar="FILE", default=None, type=output_path,
                   help="also draw the picture as SVG into FILE")
    p.add_argument("--png", metavar="FILE", default=None, type=output_path,
                   help="also draw it as PNG into FILE (needs matplotlib: pip install 'layoutproof[pictures]')")


def add_kind(p) -> None:
    p.add_argument("--kind", default=None,
                   help="tcgen05 kind, which decides sub-byte packing (default: e2m1 -> mxf4 dense, "
                        "e2m3/e3m2 -> f8f6f4 padded)")


MAX_DOCUMENT_BYTES = 1024 * 1024     # every document a command reads is far smaller (a tensor map: ~1 KiB)


def _bundled_or_path(path: str) -> str:
    """`path`, or, where no such file exists, the bundled example it names (`tiled_bf16`,
    `examples/tma_box_128b_bf16.json` outside a checkout: layoutproof.example_path), so that the docs'
    examples run after `pip install` too."""
    import os
    folder, name = os.path.split(path)
    # only a bare name or the docs' examples/NAME: a missing file elsewhere is an error, never a stand-in
    if os.path.exists(path) or not path or folder not in ("", "examples"):
        return path
    import layoutproof
    try:
        return layoutproof.example_path(name)
    except ValueError:
        return path                # the open then says what is wrong with the path the user gave


def read_text_document(path: str, field_name: str, rule_id: str = "", limit: int = MAX_DOCUMENT_BYTES) -> str:
    """The text of file `path` (stdin for '-'), at most `limit` bytes; unreadable, too large, not UTF-8
    or no standard input: malformed input reported against `field_name`."""
    try:
        if path == "-":
            if sys.stdin is None or sys.stdin.closed:
                raise SpecError(field_name, path, "standard input is closed", rule_id)
            stream = getattr(sys.stdin, "buffer", None)
            data = stream.read(limit + 1) if stream is not None else sys.stdin.read(limit + 1)
        else:
            with open(_bundled_or_path(path), "rb") as handle:
                data = handle.read(limit + 1)
        if len(data) > limit:
            raise SpecError(field_name, path, f"larger than {limit} bytes: not a document this command reads",
                            rule_id)
        return data.decode("utf-8") if isinstance(data, bytes) else data
    except (OSError, UnicodeDecodeError, ValueError) as error:
        if isinstance(error, SpecError):
            raise
        reason = getattr(error, "strerror", None) or str(error)
        raise SpecError(field_name, path, f"cannot read: {reason}", rule_id) from None


def _no_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


def _bounded_int(text: str) -> int:
    if len(text) > 100:
        raise ValueError(f"a number of {len(text)} digits, beyond any field's range")
    return int(text)


def parse_json_text(text: str, field_name: str, rule_id: str = "", source: str = ""):
    """JSON from `text`; not JSON, nested too deeply, a number of more than 100 digits, NaN or Infinity:
    malformed input reported against `field_name`."""
    try:
        return json.loads(text, parse_int=_bounded_int, parse_constant=_no_constant)
    except json.JSONDecodeError as error:
        raise SpecError(field_name, source, f"not JSON: {error.msg} (line {error.lineno}, column {error.colno})",
                        rule_id) from None
    except RecursionError:
        raise SpecError(field_name, source, "not JSON this command reads: nested too deeply", rule_id) from None
    except ValueError as error:
        raise SpecError(field_name, source, f"not JSON this command reads: {error}", rule_id) from None


def read_json_document(path: str, field_name: str, rule_id: str):
    """The JSON document in file `path` (stdin for '-'); unreadable, larger than MAX_DOCUMENT_BYTES or
    not JSON is malformed input, reported against `field_name` and the rule that defines the document."""
    return parse_json_text(read_text_document(path, field_name, rule_id), field_name, rule_id, path)
