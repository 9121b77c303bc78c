"""Benchmarks of the prover (run `python -m benchmarks.bench_prove`; see BENCHMARKS.md)."""
