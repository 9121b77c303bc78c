"""Start-up of the command line: `layoutproof --version`, `--help`, and one small command, against the
interpreter's own start-up (`python -c pass`), in fresh processes.

    python -m benchmarks.bench_startup [--repeat R]

Median wall time of R runs each (after one warm-up), and each as a ratio of the bare interpreter's in the
same run: what layoutproof adds. The issue's aim (29) is under 60 ms for --version and --help.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import time

from benchmarks.common import median, table

CASES = [
    ("python -c pass", [sys.executable, "-c", "pass"]),
    ("layoutproof --version", [sys.executable, "-m", "layoutproof", "--version"]),
    ("layoutproof --help", [sys.executable, "-m", "layoutproof", "--help"]),
    ("layoutproof recipe --help", [sys.executable, "-m", "layoutproof", "recipe", "--help"]),
    ("layoutproof desc decode", [sys.executable, "-m", "layoutproof", "desc", "decode", "--arch", "sm90",
                                 "0x4000004000010040"]),
]


def _seconds(command: list) -> float:
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=20)
    repeat = parser.parse_args().repeat
    times = {}
    for name, command in CASES:
        _seconds(command)
        times[name] = median([_seconds(command) for _ in range(repeat)])
    base = times["python -c pass"]
    print(table(["command", "median ms", "x python -c pass"],
                [[name, f"{t * 1000:.1f}", f"{t / base:.2f}"] for name, t in times.items()]))


if __name__ == "__main__":
    main()
