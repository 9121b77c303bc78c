"""Time and peak memory of every picture a command draws (`--svg FILE`, `--png FILE`), at the largest size
each command accepts (issue 29, friction 5: a picture should take under 2 s and 100 MB).

    python -m benchmarks.bench_pictures [--repeat R] [--only NAME] [--timeout SECONDS] [--keep DIR]

Each case runs as its own `python -m layoutproof ...` process: without a picture (what the command costs
by itself), with --svg and with --png, each R times (default 3). Seconds are the median of the process's
wall times, MB the largest of its peak resident sets (os.wait4's ru_maxrss: the whole process,
interpreter and imports included). The picture's
size in pixels is read back from the file (the SVG's width/height, the PNG's IHDR). The sizes come from
the commands' own bounds: desc addresses and check take MN and K up to 4096 with MN x K up to 2^20
(spec.mma.readmap.MAX_READ_EXTENT, MAX_READ_ELEMENTS); recipe an MN up to 256 and a tile up to 228 KiB
(solver.synth.recipe); tma place a box up to 256 per dimension and 228 KiB (spec.tma.place); im2col up to
1024 pixels plus a w halo of 511, 256 channels (spec.tma.im2col); tmem map .num up to x128
(spec.tmem.ld_st); scales map rows x K blocks up to 2^20 (spec.scales.layouts.MAX_ELEMENTS).
"""
from __future__ import annotations

import argparse
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import time

from benchmarks.common import table

DESC = ["desc", "addresses", "--arch", "sm90", "0x4000004000000040", "--dtype", "bf16", "--major", "K"]
IM2COL_W = ["im2col", "--arch", "sm100", "--mode", "w", "--tensor", "256,8192,1,1", "--lower=0", "--upper=0",
            "--channels-per-pixel", "256", "--pixels-per-column", "1024", "--coords", "0,0,0,0", "--w-halo", "511",
            "--elem-bytes", "1", "--swizzle", "128B", "--smem-address", "0"]

# (name, argv without a picture): the largest of each command, tall and wide where both exist
CASES = [
    ("desc addresses 4096x256", DESC + ["--mn", "4096", "--k", "256"]),
    ("desc addresses 256x4096", DESC + ["--mn", "256", "--k", "4096"]),
    ("check 4096x256", ["check", "0x4000004000000040", "--arch", "sm90", "--dtype", "bf16", "--major", "K",
                        "--mn", "4096", "--k", "256", "--layout", "(4096,256):(256,1)", "--start-address", "0"]),
    ("recipe bf16 256x256 128B", ["recipe", "--arch", "sm90", "--dtype", "bf16", "--major", "K", "--mn", "256",
                                  "--k-tile", "256", "--swizzle", "128B", "--smem-address", "0x400"]),
    ("recipe bf16 MN 256x448 none", ["recipe", "--arch", "sm90", "--dtype", "bf16", "--major", "MN", "--mn", "256",
                                     "--k-tile", "448", "--swizzle", "none", "--smem-address", "0x400"]),
    ("recipe e2m1 256x1792 128B", ["recipe", "--arch", "sm100", "--dtype", "e2m1", "--major", "K", "--mn", "256",
                                   "--k-tile", "1792", "--swizzle", "128B", "--smem-address", "0x400"]),
    ("tma place 256x228x4 1B", ["tma", "place", "--swizzle", "NONE", "--elem-bytes", "1", "--box", "256,228,4",
                                "--smem-address", "0"]),
    ("tma place 128x256x7 128B", ["tma", "place", "--swizzle", "128B", "--elem-bytes", "1", "--box", "128,256,7",
                                  "--smem-address", "0x400"]),
    ("im2col w 1535x256", IM2COL_W),
    ("tmem map 32x32b x128 pack", ["tmem", "map", "--op", "ld", "--shape", "32x32b", "--num", "x128", "--pack"]),
    ("tmem map 16x32bx2 x128", ["tmem", "map", "--op", "ld", "--shape", "16x32bx2", "--num", "x128",
                                "--half-splitoff", "128"]),
    ("scales map 2^20 rows", ["scales", "map", "--sf-layout", "interleaved", "--rows", "1048576", "--k", "16",
                              "--block", "16"]),
    ("scales map 2^20 blocks", ["scales", "map", "--sf-layout", "linear-k", "--rows", "1", "--k", "16777216",
                                "--block", "16"]),
    ("scales map 1024x1024", ["scales", "map", "--sf-layout", "interleaved", "--rows", "1024", "--k", "16384",
                              "--block", "16"]),
    # the largest each drew before issue 29 refused more than 32,768 cells (the picture: 128 x 64)
    ("recipe bf16 128x64 128B", ["recipe", "--arch", "sm90", "--dtype", "bf16", "--major", "K", "--mn", "128",
                                 "--k-tile", "64", "--swizzle", "128B", "--smem-address", "0x400"]),
    ("recipe bf16 128x128 128B", ["recipe", "--arch", "sm90", "--dtype", "bf16", "--major", "K", "--mn", "128",
                                  "--k-tile", "128", "--swizzle", "128B", "--smem-address", "0x400"]),
    ("desc addresses 256x64", DESC + ["--mn", "256", "--k", "64"]),
    ("tma place 64x256 128B", ["tma", "place", "--swizzle", "128B", "--elem-bytes", "2", "--box", "64,256",
                               "--smem-address", "0x400"]),
    ("scales map 256x128", ["scales", "map", "--sf-layout", "interleaved", "--rows", "256", "--k", "2048",
                            "--block", "16"]),
]


def measure(argv: list, timeout: float) -> tuple:
    """(exit status, wall seconds, peak RSS in MB) of `python -m layoutproof argv` (None status: timed out)."""
    began = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "layoutproof"] + argv, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    deadline = began + timeout
    while True:      # os.wait4: the rusage of this child alone (RUSAGE_CHILDREN would be the max of all)
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            process.returncode = os.waitstatus_to_exitcode(status)
            return process.returncode, time.perf_counter() - began, usage.ru_maxrss / 1024
        if time.perf_counter() > deadline:
            process.kill()
            os.wait4(process.pid, 0)
            return None, time.perf_counter() - began, float("nan")
        time.sleep(0.01)


def pixel_size(path: str) -> str:
    """'W x H' of a written picture (SVG width/height attributes, PNG IHDR), '-' when none was written."""
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return "-"
    with open(path, "rb") as handle:
        head = handle.read(400)
    if head.startswith(b"\x89PNG"):
        width, height = struct.unpack(">II", head[16:24])
        return f"{width}x{height}"
    text = head.decode("utf-8", "replace")
    width = text.split('width="', 1)[1].split('"', 1)[0]
    height = text.split('height="', 1)[1].split('"', 1)[0]
    return f"{width}x{height}"


def measure_repeated(argv: list, timeout: float, repeat: int) -> tuple:
    """(exit status of the last run, median seconds, largest peak MB) of `repeat` runs."""
    runs = [measure(argv, timeout) for _ in range(repeat)]
    return runs[-1][0], statistics.median(r[1] for r in runs), max(r[2] for r in runs)


def run(names, timeout: float, folder: str, repeat: int) -> str:
    rows = []
    for name, argv in CASES:
        if names and not any(n in name for n in names):
            continue
        stem = os.path.join(folder, name.replace(" ", "_").replace("^", ""))
        row = [name]
        code, seconds, mb = measure_repeated(argv, timeout, repeat)
        row += [f"{seconds:.2f}", f"{mb:.0f}"]
        for flag, suffix in (("--svg", ".svg"), ("--png", ".png")):
            path = stem + suffix
            if os.path.exists(path):
                os.remove(path)
            code, seconds, mb = measure_repeated(argv + [flag, path], timeout, repeat)
            status = "timeout" if code is None else str(code)
            row += [f"{seconds:.2f}", f"{mb:.0f}", status, pixel_size(path),
                    f"{os.path.getsize(path) / 1024:.0f}" if os.path.exists(path) else "-"]
        rows.append(row)
        print(" ".join(row), file=sys.stderr, flush=True)
    return table(["case", "alone s", "MB", "svg s", "MB", "exit", "pixels", "KiB",
                  "png s", "MB", "exit", "pixels", "KiB"], rows)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeat", type=int, default=3, help="runs of each command (median seconds, largest MB)")
    p.add_argument("--only", action="append", default=[], help="cases whose name contains this (repeatable)")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds before a run is killed")
    p.add_argument("--keep", default=None, help="write the pictures into this folder (default: a temporary one)")
    args = p.parse_args(argv)
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
        print(run(args.only, args.timeout, args.keep, args.repeat))
    else:
        with tempfile.TemporaryDirectory() as folder:
            print(run(args.only, args.timeout, folder, args.repeat))


if __name__ == "__main__":
    main()
