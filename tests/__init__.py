"""The course's test suite (a package, so that the benchmarks can use its rehearsal kit)."""
