"""Benchmarks (not timed tests): figures with the machine they ran on, as ratios
against a baseline measured in the same run."""
