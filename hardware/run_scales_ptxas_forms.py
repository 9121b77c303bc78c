"""Record what ptxas decides about the scale-vector qualifiers of block-scaled tcgen05.mma:
tests/hardware/scales_ptxas_forms.json.

Each form is one `tcgen05.mma.cta_group::G.kind::KIND.block_scale{QUALIFIER}` (PTX ISA 9.0 9.7.16.10.9.1)
alone in a kernel, with its operands as TEMPLATE writes them ([d-tmem], a-desc, b-desc, idesc,
[scale-A-tmem], [scale-B-tmem], enable-input-d), assembled with `ptxas -arch TARGET` under `.version
VERSION`. The grid: the three block-scaled kinds x no qualifier, .scale_vec::1X / 2X / 4X, .block16,
.block32 x .cta_group::1 / ::2 x sm_100a, sm_103a. Only the qualifiers vary: the instruction descriptor
(a register) and the scale-factor ids in it are run-time values ptxas cannot see.

    python hardware/run_scales_ptxas_forms.py            # writes tests/hardware/scales_ptxas_forms.json
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from solver import provenance  # noqa: E402
from solver.fuzz.scales import MMA_KERNEL  # noqa: E402

KINDS = ("mxf8f6f4", "mxf4", "mxf4nvf4")
QUALIFIERS = ("", ".scale_vec::1X", ".scale_vec::2X", ".scale_vec::4X", ".block16", ".block32")
CTA_GROUPS = (1, 2)
TARGETS = ("sm_100a", "sm_103a")
VERSION = "8.8"
TEMPLATE = MMA_KERNEL          # one block-scaled MMA alone in a kernel (solver/fuzz/scales.py)
OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "hardware",
                   "scales_ptxas_forms.json")


def _first_error(stderr: str) -> str:
    """The first error line, without ptxas's "FILE, line N; error   :" prefix."""
    for line in stderr.splitlines():
        found = re.match(r"^.*?\berror\s*:\s*(.*)$", line)
        if found:
            return found.group(1).strip()
    return stderr.strip().splitlines()[0] if stderr.strip() else ""


def assemble(kind: str, qualifier: str, cta_group: int, target: str) -> dict:
    text = TEMPLATE.format(version=VERSION, target=target, cta_group=cta_group, kind=kind, qualifier=qualifier)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "k.ptx")
        with open(path, "w") as handle:
            handle.write(text)
        done = subprocess.run(["ptxas", "-arch", target, path, "-o", os.path.join(folder, "k.cubin")],
                              capture_output=True, text=True)
    return {"kind": kind, "qualifier": qualifier, "cta_group": cta_group, "target": target,
            "accepted": done.returncode == 0, "error": "" if done.returncode == 0 else _first_error(done.stderr)}


def main() -> int:
    version = subprocess.run(["ptxas", "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1]
    forms = [assemble(kind, qualifier, cta_group, target) for target in TARGETS for cta_group in CTA_GROUPS
             for kind in KINDS for qualifier in QUALIFIERS]
    header = provenance.header(
        what="ptxas's verdict on the scale-vector qualifiers of block-scaled tcgen05.mma: per kind, qualifier, "
             ".cta_group and target, accepted or ptxas's first error.",
        recorded_by="hardware/run_scales_ptxas_forms.py", command="python3 hardware/run_scales_ptxas_forms.py",
        source=provenance.sentence(("ptxas:", version)), date=provenance.today(),
        details={"ptxas": version, "ptx_version": VERSION, "template": TEMPLATE})
    provenance.write_json(OUT, {"provenance": header, "forms": forms}, newline=True, indent=1)
    print(f"{len(forms)} forms, {sum(f['accepted'] for f in forms)} accepted -> {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
