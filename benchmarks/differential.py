"""The spec/Z3 differential of issue 17 over several processes: `--count` random legal and illegal inputs
(tensor-map documents and desc cases, tests/differential.py), cut into `--chunks` seeded chunks (chunk i
draws from seed * 1000 + i, so the cases depend on --seed and --chunks, not on --jobs).

    python -m benchmarks.differential --count 100000 --chunks 50 --jobs 16 --seed 17

Prints the tallies (legal / illegal / malformed per target) and every disagreement; exit 1 if there is
one.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import time


def _chunk(job: tuple) -> dict:
    from tests import differential
    count, seed = job
    return differential.run(count, seed)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--chunks", type=int, default=50)
    parser.add_argument("--jobs", type=int, default=multiprocessing.cpu_count())
    parser.add_argument("--seed", type=int, default=17)
    args = parser.parse_args(argv)
    sizes = [args.count // args.chunks + (i < args.count % args.chunks) for i in range(args.chunks)]
    jobs = [(size, args.seed * 1000 + i) for i, size in enumerate(sizes)]
    started = time.monotonic()
    with multiprocessing.Pool(args.jobs) as pool:
        results = pool.map(_chunk, jobs)
    tally: dict = {}
    disagreements = []
    for result in results:
        for target, counts in result["tally"].items():
            for kind, n in counts.items():
                tally.setdefault(target, {}).setdefault(kind, 0)
                tally[target][kind] += n
        disagreements += result["disagreements"]
    total = sum(r["count"] for r in results)
    print(json.dumps({"count": total, "seed": args.seed, "chunks": args.chunks, "tally": tally,
                      "disagreements": len(disagreements), "seconds": round(time.monotonic() - started, 1)}))
    for found in disagreements[:20]:
        print(json.dumps(found))
    return 1 if disagreements else 0


if __name__ == "__main__":
    sys.exit(main())
