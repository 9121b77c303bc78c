"""Record which MMA forms ptxas accepts: tests/hardware/ptxas_forms.json.

Every form is one desc case rendered by solver.fuzz.formats.ptx.render_case (the kernel the ptxas adapter
assembles) and run through `ptxas -arch=<target>`:

  sm_90a  (wgmma, PTX 9.7.15.5): every dtype x major (K, MN) x every N in SM90_N at the instruction K,
          and x K in SM90_K at N in SM90_N_FOR_K;
  sm_100a, sm_103a (tcgen05.mma, PTX 9.7.16): every kind x the dtypes it reads (and one it does not)
          x major x N in SM100_N at the kind's instruction K (and K = 96 for the mxf4 kinds).

The B descriptor is a valid no-swizzle one; a few forms carry descriptors with bad bits instead, to
record that ptxas does not inspect descriptor words. The file records the ptxas version, so CI can
replay the verdicts without a toolkit.

Usage (from the repository root): python3 hardware/run_ptxas_forms.py [--ptxas PATH]
                                  [--out tests/hardware/ptxas_forms.json]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from solver import provenance  # noqa: E402
from solver.fuzz.formats import ptx as fuzz_ptx  # noqa: E402
from solver.fuzz.adapters import ptxas as ptxas_adapter  # noqa: E402
from spec.mma import descriptor as desc_mod  # noqa: E402
from spec.mma import dtypes  # noqa: E402

DEFAULT_OUT = os.path.join("tests", "hardware", "ptxas_forms.json")
SM90_N = (4, 12) + tuple(range(8, 257, 8)) + (264, 512)
SM90_K = (8, 16, 32, 64)
SM90_N_FOR_K = (8, 64, 256)
SM100_N = (8, 12, 64, 256)
SM100_ARCHES = ("sm100", "sm103")
B_START = 1024
BAD_DESCRIPTORS = {"sm90": 0xFFFFFFFFFFFFFFFF,            # every unused bit set
                   "sm100": 0xE000000000000000,            # swizzle code 7, fixed bits [46,49) = 0
                   "sm103": 0xE000000000000000}


def valid_descriptor(arch: str) -> int:
    return desc_mod.encode(arch, B_START, 128, 256, "none").raw


def form_record(index: int, arch: str, dtype: str, major: str, mn: int, k: int, kind, word: int) -> dict:
    """A desc fuzz record for one form (the fields solver/fuzz_ptx reads)."""
    return {"index": index, "target": "desc", "arch": arch, "violates": [], "outcome": "unknown",
            "witness": None,
            "case": {"descriptor": desc_mod.format_hex(word), "dtype": dtype, "major": major, "mn": mn,
                     "k": k, "layout": "", "start_address": desc_mod.decode(arch, word).start_address,
                     "kind": kind}}


def sm90_forms() -> list:
    word = valid_descriptor("sm90")
    forms = []
    for d in dtypes.DTYPES:
        k_inst = dtypes.default_instruction_k(dtypes.dtype(d), dtypes.default_kind(dtypes.dtype(d)))
        for major in ("K", "MN"):
            forms += [("sm90", d, major, n, k_inst, None, word) for n in SM90_N]
            forms += [("sm90", d, major, n, k, None, word)
                      for n in SM90_N_FOR_K for k in SM90_K if k != k_inst]
    forms += [("sm90", "f16", "K", 64, 16, None, BAD_DESCRIPTORS["sm90"]),
              ("sm90", "bf16", "MN", 128, 16, None, BAD_DESCRIPTORS["sm90"])]
    return forms


def sm100_kind_dtypes(kind: str) -> list:
    """The dtypes a kind reads, plus one it does not (f16 for kinds that lack it, else e4m3)."""
    reads = [d for d in dtypes.DTYPES if kind in dtypes.DTYPES[d].kinds]
    return reads + ["f16" if "f16" not in reads else "e4m3"]


def sm100_k_values(kind: str, dtype: str, arch: str) -> list:
    d = dtypes.dtype(dtype)
    if kind in d.kinds:
        values = list(dtypes.instruction_k_values(d, kind, arch))
    else:
        values = [dtypes.default_instruction_k(d, dtypes.default_kind(d))]
    if kind in dtypes.DENSE_SUBBYTE_KINDS and 96 not in values:
        values.append(96)
    return values


def sm100_forms() -> list:
    forms = []
    for arch in SM100_ARCHES:
        word = valid_descriptor(arch)
        for kind in dtypes.ALL_KINDS:
            for d in sm100_kind_dtypes(kind):
                for major in ("K", "MN"):
                    for n in SM100_N:
                        for k in sm100_k_values(kind, d, arch):
                            forms.append((arch, d, major, n, k, kind, word))
        forms.append((arch, "f16", "K", 64, 16, "f16", BAD_DESCRIPTORS[arch]))
    return forms


def run_form(form: tuple, ptxas: str) -> dict:
    arch, dtype, major, mn, k, kind, word = form
    target, text = fuzz_ptx.render_case(form_record(0, arch, dtype, major, mn, k, kind, word))
    accepted, detail = ptxas_adapter.assemble(target, text, ptxas)
    return {"arch": arch, "target": target, "dtype": dtype, "major": major, "mn": mn, "k": k,
            "kind": kind, "descriptor": desc_mod.format_hex(word), "accepted": accepted,
            "first_error": "" if accepted else detail}


def dumps_one_form_a_line(document: dict) -> str:
    """The JSON document with each form on a line of its own (diffs stay readable)."""
    head = {key: value for key, value in document.items() if key != "forms"}
    lines = ["{"] + [f" {json.dumps(key)}: {json.dumps(value)}," for key, value in head.items()]
    forms = [f"  {json.dumps(form, sort_keys=False)}" for form in document["forms"]]
    return "\n".join(lines + [' "forms": ['] + [",\n".join(forms)] + [" ]", "}", ""])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ptxas", default=None)
    parser.add_argument("--out", default=DEFAULT_OUT)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 4)
    args = parser.parse_args(argv)
    ptxas = ptxas_adapter.find_ptxas(args.ptxas)
    if ptxas is None:
        print("ptxas not found", file=sys.stderr)
        return 2
    forms = sm90_forms() + sm100_forms()
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(lambda form: run_form(form, ptxas), forms))
    version = ptxas_adapter.ptxas_version(ptxas)
    header = provenance.header(
        what="Which static MMA forms ptxas accepts: per form (sm_90a wgmma dtype x major x N x K; sm_100a / sm_103a "
             "tcgen05.mma kinds), the verdict and ptxas's first error.",
        recorded_by="hardware/run_ptxas_forms.py",
        command=provenance.command_line("hardware/run_ptxas_forms.py", argv if argv is not None else sys.argv[1:]),
        source=provenance.sentence(("ptxas:", version)), date=provenance.today(),
        details={"ptxas_version": version, "ptx_isa_version": fuzz_ptx.PTX_VERSION,
                 "note": "Each form is the kernel solver.fuzz.formats.ptx.render_case emits for a desc case with "
                         "these values (B = the descriptor; A fixed, K-major, no swizzle). sm90: wgmma.mma_async "
                         "m64n{mn}k{k}; sm100/sm103: tcgen05.mma.cta_group::1.kind::{kind}, whose M, N, K, "
                         "types and major-ness travel in the run-time instruction descriptor. Descriptor words "
                         "are run-time values: ptxas does not inspect them."})
    document = {"provenance": header, "forms": results}
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    provenance.write_text(args.out, dumps_one_form_a_line(document))
    accepted = sum(r["accepted"] for r in results)
    print(f"{len(results)} forms, {accepted} accepted, {len(results) - accepted} refused -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
