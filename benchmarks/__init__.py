"""Side-by-side benchmarks for SPEC §7: ratios against baselines measured in the same run.

Run ``python -m benchmarks.run`` (thorough) or ``python -m benchmarks.run --quick``.
Nothing here is a test: no timing is ever asserted.
"""
