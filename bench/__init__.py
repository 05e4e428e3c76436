"""Benchmarks that print their figures; run from the repository root as modules
(``python -m bench.class_autograde``) so that they can use the tests' rehearsal kit."""
