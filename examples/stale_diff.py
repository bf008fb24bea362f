"""A stale self-authored diff, rejected with the region it read named.

The agent snapshots a config, reads the ``timeout`` line to decide what to do,
and authors a diff that rewrites the ``retries`` line (a hunk it writes) while
declaring the ``timeout`` line as a region it read. Before the diff is applied
a tool rewrites the ``timeout`` line. The hunk's own surroundings are intact,
so a check of the write-set alone would apply it; the read-set rule (S1)
refuses it with ``StaleBaseError`` naming the changed region, and nothing
changes. A second diff whose reads are untouched is moved past the tool's
edit and applied.

Run: python examples/stale_diff.py
"""

from __future__ import annotations

from rollcert.impl import JournaledBuffer
from rollcert.impl.diffs import DiffableBuffer
from rollcert.model.diffs import Hunk  # the vocabulary of a diff (SPEC S1)
from rollcert.model.diffs import Region  # the vocabulary of a diff (SPEC S1)
from rollcert.model.errors import StaleBaseError

CONFIG = b"timeout = 30\nretries = 3\nname = demo\n"
TIMEOUT = (CONFIG.index(b"timeout"), CONFIG.index(b"\nretries"))
RETRIES_VALUE = CONFIG.index(b"3\n")

buffer = DiffableBuffer(JournaledBuffer(CONFIG))
snapshot = buffer.snapshot()
print(f"snapshot B0: {snapshot.content!r}")

# The author read the timeout line and decided to raise retries.
diff = buffer.author_diff(snapshot, "content", [Hunk(RETRIES_VALUE, RETRIES_VALUE + 1, b"5")], [Region(*TIMEOUT)])

# Meanwhile a tool rewrites the timeout line.
buffer.write(CONFIG.index(b"30"), 2, b"2")
print(f"a tool wrote: {buffer.read()!r}")

try:
    buffer.apply_diff(diff)
    print("applied (this would be the write-set-only bug)")
except StaleBaseError as error:
    print(f"rejected: StaleBaseError: {error}")
    if error.conflict is not None:
        start, end = error.conflict
        print(f"conflicting region in B0: [{start}, {end}) = {CONFIG[start:end]!r}")
    print(f"the same region in the live base: {error.live_conflict}")
print(f"unchanged: {buffer.read()!r}")

# A diff that read only the name line still applies, moved past the tool's edit.
name = (CONFIG.index(b"name"), len(CONFIG) - 1)
fresh = buffer.author_diff(snapshot, "content", [Hunk(name[1] - 4, name[1], b"prod")], [Region(*name)])
buffer.apply_diff(fresh)
print(f"a diff whose reads are intact applies: {buffer.read()!r}")
