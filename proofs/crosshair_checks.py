"""CrossHair checks: contracts on offset arithmetic, a behaviour diff, and mutants.

What CrossHair is good for here (measured on this machine kind, see issue 5):
it *confirms* contracts over integer and small-structure arithmetic over all
paths, and it *finds* counterexamples to contracts over bytes quickly, but it
never confirms a contract over ``bytes``/``list`` code (its path space there
is unbounded). So each check below reports one of:

- ``CONFIRMED``: CrossHair explored every path and the contract holds (only the
  integer helpers reach this);
- ``UNKNOWN``: no counterexample within the budget, paths left unexplored
  (CrossHair did not exhaust them); this is testing, not proof, and is never
  reported as "proved";
- ``FOUND``: a counterexample (expected for the planted mutants; on the
  unplanted code a violation, and ``rollcert prove`` exits 1 on it);
- ``MISSED``: a planted mutant survived its budget (a failure of the check).

Each check has a *role* (:data:`Role`), which says what its status means:
``holds`` (unplanted code that must be CONFIRMED: FOUND is a violation,
UNKNOWN an unfinished obligation), ``search`` (unplanted code over bytes that
CrossHair can never exhaust: FOUND is a violation, UNKNOWN is expected and
shown as such; the same statements are proved by z3 or checked exhaustively
by :mod:`rollcert.stateful_tests.refinement`) and ``planted`` (a mutant: it must be
FOUND, else MISSED).

The pure helpers are *mirrors*: ``impl`` inlines its offset arithmetic inside
locked methods (``JournaledBuffer.splice``, ``ChunkedText.replace``), which
CrossHair cannot usefully analyse, so the same arithmetic is restated here,
line for line, as small functions. A change to ``impl`` does not change these
mirrors; the behaviour diff (``diff_impl_vs_model``) is the part that runs the
real ``impl.JournaledBuffer``.

Contracts are PEP 316 docstrings (``pre:``/``post:``), which CrossHair 0.0.113
reads natively. The mutants' inner helpers deliberately carry *no* contract:
CrossHair assumes a contracted callee meets its postcondition, and that hid a
caller's dropped-record bug for 120 s in an earlier experiment.
"""

from __future__ import annotations

import time
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import replace
from typing import Any
from typing import Literal

from rollcert.model.reference import splice_bytes

Status = Literal["CONFIRMED", "UNKNOWN", "FOUND", "MISSED"]
Role = Literal["holds", "search", "planted"]

#: CPU seconds CrossHair may spend on one condition of a contract check.
CONTRACT_BUDGET_S = 4.0
#: Budget per planted mutant: each must be caught within it.
MUTANT_BUDGET_S = 10.0
#: Budget of the behaviour diff of ``impl`` against the model.
DIFF_BUDGET_S = 8.0


# -- integer mirrors of the implementation's offset arithmetic -------------------------------


def impl_accepts_splice(length: int, offset: int, delete_length: int) -> bool:
    """The bounds check of ``JournaledBuffer.splice``, restated.

    pre: length >= 0
    post: __return__ == (0 <= offset <= length and 0 <= delete_length and offset + delete_length <= length)
    """
    if offset < 0 or offset > length:
        return False
    return not (delete_length < 0 or delete_length > length - offset)


def inverse_splice(length: int, offset: int, delete_length: int, insert_length: int) -> tuple[int, int, int]:
    """The inverse record of ``splice(o, d, s)`` as ``(offset, delete_length, new_length)``.

    The inverse deletes the ``len(s)`` inserted bytes at the same offset and puts
    back the ``d`` removed ones; it must itself be a valid splice on the new
    buffer, and must bring the length back.

    pre: 0 <= offset <= length
    pre: 0 <= delete_length <= length - offset
    pre: insert_length >= 0
    post: impl_accepts_splice(__return__[2], __return__[0], __return__[1])
    post: __return__[2] - __return__[1] + delete_length == length
    """
    new_length = length - delete_length + insert_length
    return offset, insert_length, new_length


def rebase_offset(position: int, edit_offset: int, edit_delete: int, edit_insert: int) -> int:
    """Where a position outside an edit's deleted span lands after that edit.

    This is what an inverse record's offset would need if it were replayed out
    of LIFO order (R2): positions before the edit stay, positions after it move
    by the length change. The contract says the rebased position stays in the
    buffer and keeps its distance to the edit's end.

    pre: 0 <= edit_offset and 0 <= edit_delete and 0 <= edit_insert
    pre: 0 <= position
    pre: position <= edit_offset or position >= edit_offset + edit_delete
    post: __return__ >= 0
    post: (__return__ == position) if position <= edit_offset else (__return__ - (edit_offset + edit_insert) == position - (edit_offset + edit_delete))
    """
    if position <= edit_offset:
        return position
    return position - edit_delete + edit_insert


def mutant_rebase_ignores_insert(position: int, edit_offset: int, edit_delete: int, edit_insert: int) -> int:
    """Planted bug (stale offset, integer form): the rebase forgets the inserted length.

    It shows that ``CONFIRMED`` on :func:`rebase_offset` is not vacuous: the
    same contract over the same arithmetic, one term dropped, is refuted.

    pre: 0 <= edit_offset and 0 <= edit_delete and 0 <= edit_insert
    pre: 0 <= position
    pre: position <= edit_offset or position >= edit_offset + edit_delete
    post: __return__ >= 0
    post: (__return__ == position) if position <= edit_offset else (__return__ - (edit_offset + edit_insert) == position - (edit_offset + edit_delete))
    """
    if position <= edit_offset:
        return position
    return position - edit_delete


def chunk_locate(first_length: int, second_length: int, third_length: int, offset: int) -> tuple[int, int]:
    """``ChunkedText``'s lookup on three chunks: ``(chunk index, local offset)``.

    Mirrors ``index = bisect_right(starts, offset) - 1; local = offset - starts[index]``
    with ``starts`` built from the chunk lengths (every chunk non-empty, as
    ``_rechunk`` guarantees). The contract: the local offset lies inside its
    chunk, or at the very end of the last one (an append).

    pre: first_length > 0 and second_length > 0 and third_length > 0
    pre: 0 <= offset <= first_length + second_length + third_length
    post: 0 <= __return__[0] <= 2
    post: 0 <= __return__[1]
    post: __return__[1] < (first_length, second_length, third_length)[__return__[0]] or (__return__[0] == 2 and __return__[1] == third_length)
    """
    starts = [0, first_length, first_length + second_length]
    index = bisect_right(starts, offset) - 1
    return index, offset - starts[index]


# -- bytes: the splice/inverse round trip ------------------------------------------------------


def splice_then_undo(buffer: bytes, offset: int, delete_length: int, insert: bytes) -> bytes:
    """Splice, then apply the recorded inverse: the round trip of one record.

    pre: 0 <= offset <= len(buffer)
    pre: 0 <= delete_length <= len(buffer) - offset
    post: __return__ == buffer
    """
    removed = buffer[offset : offset + delete_length]
    changed = buffer[:offset] + insert + buffer[offset + delete_length :]
    return changed[:offset] + removed + changed[offset + len(insert) :]


# -- two records, rolled back: the correct mirror and the planted mutants -------------------------


def _splice(buffer: bytes, offset: int, delete_length: int, insert: bytes) -> bytes:
    # No contract on purpose (see the module docstring).
    return buffer[:offset] + insert + buffer[offset + delete_length :]


def _records(
    buffer: bytes, o1: int, d1: int, s1: bytes, o2: int, d2: int, s2: bytes
) -> tuple[bytes, list[tuple[int, bytes, int]]]:
    """Apply two splices, recording ``(offset, removed, inserted_length)`` for each."""
    first = (o1, buffer[o1 : o1 + d1], len(s1))
    middle = _splice(buffer, o1, d1, s1)
    second = (o2, middle[o2 : o2 + d2], len(s2))
    return _splice(middle, o2, d2, s2), [first, second]


def _undo(buffer: bytes, record: tuple[int, bytes, int]) -> bytes:
    offset, removed, inserted = record
    return buffer[:offset] + removed + buffer[offset + inserted :]


# Each two-record round trip states the same contract (PEP 316 contracts live in
# the function's own docstring, read from the source).


def lifo_rollback(buffer: bytes, o1: int, d1: int, s1: bytes, o2: int, d2: int, s2: bytes) -> bytes:
    """The rule (R2/R3): undo the newest record first, each at its recorded offset.

    pre: 0 <= o1 <= len(buffer) and 0 <= d1 <= len(buffer) - o1
    pre: 0 <= o2 <= len(buffer) - d1 + len(s1) and 0 <= d2 <= len(buffer) - d1 + len(s1) - o2
    post: __return__ == buffer
    """
    current, records = _records(buffer, o1, d1, s1, o2, d2, s2)
    for record in reversed(records):
        current = _undo(current, record)
    return current


def mutant_off_by_one(buffer: bytes, o1: int, d1: int, s1: bytes, o2: int, d2: int, s2: bytes) -> bytes:
    """Planted bug: the inverse is replayed one byte to the right of where it was recorded.

    pre: 0 <= o1 <= len(buffer) and 0 <= d1 <= len(buffer) - o1
    pre: 0 <= o2 <= len(buffer) - d1 + len(s1) and 0 <= d2 <= len(buffer) - d1 + len(s1) - o2
    post: __return__ == buffer
    """
    current, records = _records(buffer, o1, d1, s1, o2, d2, s2)
    for offset, removed, inserted in reversed(records):
        current = _undo(current, (min(offset + 1, len(current)), removed, inserted))
    return current


def mutant_fifo_replay(buffer: bytes, o1: int, d1: int, s1: bytes, o2: int, d2: int, s2: bytes) -> bytes:
    """Planted bug: the records are replayed oldest first.

    pre: 0 <= o1 <= len(buffer) and 0 <= d1 <= len(buffer) - o1
    pre: 0 <= o2 <= len(buffer) - d1 + len(s1) and 0 <= d2 <= len(buffer) - d1 + len(s1) - o2
    post: __return__ == buffer
    """
    current, records = _records(buffer, o1, d1, s1, o2, d2, s2)
    for record in records:
        current = _undo(current, record)
    return current


def mutant_dropped_inverse(buffer: bytes, o1: int, d1: int, s1: bytes, o2: int, d2: int, s2: bytes) -> bytes:
    """Planted bug: a splice that inserts nothing is not logged (a "best-effort" log).

    pre: 0 <= o1 <= len(buffer) and 0 <= d1 <= len(buffer) - o1
    pre: 0 <= o2 <= len(buffer) - d1 + len(s1) and 0 <= d2 <= len(buffer) - d1 + len(s1) - o2
    post: __return__ == buffer
    """
    current, records = _records(buffer, o1, d1, s1, o2, d2, s2)
    if not s2:
        records.pop()
    for record in reversed(records):
        current = _undo(current, record)
    return current


def mutant_stale_offset(buffer: bytes, o1: int, d1: int, s1: bytes, o2: int, d2: int, s2: bytes) -> bytes:
    """Planted bug: the second record keeps its offset in the *original* buffer's
    coordinates (as a diff authored against an old snapshot would), so it is
    not where the second splice happened when the first changed the length.

    pre: 0 <= o1 <= len(buffer) and 0 <= d1 <= len(buffer) - o1
    pre: 0 <= o2 <= len(buffer) - d1 + len(s1) and 0 <= d2 <= len(buffer) - d1 + len(s1) - o2
    post: __return__ == buffer
    """
    current, records = _records(buffer, o1, d1, s1, o2, d2, s2)
    offset, removed, inserted = records[1]
    if offset > o1:
        records[1] = (max(0, offset - (len(s1) - d1)), removed, inserted)
    for record in reversed(records):
        current = _undo(current, record)
    return current


def mutant_checkpoint_skip(buffer: bytes, o1: int, d1: int, s1: bytes, o2: int, d2: int, s2: bytes) -> bytes:
    """Planted bug: rollback_to(a checkpoint two records back) undoes the newest
    record and then jumps, skipping the record in between.

    pre: 0 <= o1 <= len(buffer) and 0 <= d1 <= len(buffer) - o1
    pre: 0 <= o2 <= len(buffer) - d1 + len(s1) and 0 <= d2 <= len(buffer) - d1 + len(s1) - o2
    post: __return__ == buffer
    """
    current, records = _records(buffer, o1, d1, s1, o2, d2, s2)
    return _undo(current, records[-1])


MUTANTS: dict[str, Callable[..., bytes]] = {
    "off-by-one offset": mutant_off_by_one,
    "FIFO replay": mutant_fifo_replay,
    "dropped inverse": mutant_dropped_inverse,
    "stale offset": mutant_stale_offset,
    "checkpoint skip": mutant_checkpoint_skip,
    "stale offset (integer rebase)": mutant_rebase_ignores_insert,
}


# -- behaviour diff: impl.JournaledBuffer against the model --------------------------------------


def impl_splice_and_roll_back(
    initial: bytes, o1: int, d1: int, s1: bytes, o2: int, d2: int, s2: bytes
) -> tuple[bytes, bytes, bytes] | None:
    """Two splices then rollback(2) on the real ``impl.JournaledBuffer``.

    Returns the buffer after each splice and after the rollback; ``None`` for
    invalid arguments (both sides agree to skip them, so the diff looks only
    at behaviour on valid input).
    """
    from rollcert.impl import JournaledBuffer

    if not (0 <= o1 <= len(initial) and 0 <= d1 <= len(initial) - o1):
        return None
    buffer = JournaledBuffer(initial)
    buffer.splice(o1, d1, s1)
    middle = buffer.read()
    if not (0 <= o2 <= len(middle) and 0 <= d2 <= len(middle) - o2):
        return None
    buffer.splice(o2, d2, s2)
    final = buffer.read()
    buffer.rollback(2)
    return middle, final, buffer.read()


def model_splice_and_roll_back(
    initial: bytes, o1: int, d1: int, s1: bytes, o2: int, d2: int, s2: bytes
) -> tuple[bytes, bytes, bytes] | None:
    """The same through the model: ``rollcert.model.reference.splice_bytes`` and its history."""
    if not (0 <= o1 <= len(initial) and 0 <= d1 <= len(initial) - o1):
        return None
    middle = splice_bytes(initial, o1, d1, s1)
    if not (0 <= o2 <= len(middle) and 0 <= d2 <= len(middle) - o2):
        return None
    final = splice_bytes(middle, o2, d2, s2)
    return middle, final, initial  # the model's rollback(2) is a pointer move back to states[0]


def impl_with_dropped_record(
    initial: bytes, o1: int, d1: int, s1: bytes, o2: int, d2: int, s2: bytes
) -> tuple[bytes, bytes, bytes] | None:
    """A planted variant of the impl path whose second record is lost when it
    inserts nothing (the seed's best-effort log): the diff must tell it apart."""
    if not (0 <= o1 <= len(initial) and 0 <= d1 <= len(initial) - o1):
        return None
    middle = splice_bytes(initial, o1, d1, s1)
    if not (0 <= o2 <= len(middle) and 0 <= d2 <= len(middle) - o2):
        return None
    final = splice_bytes(middle, o2, d2, s2)
    records = [(o1, initial[o1 : o1 + d1], len(s1))]
    if s2:
        records.append((o2, middle[o2 : o2 + d2], len(s2)))
    current = final
    for offset, removed, inserted in reversed(records):
        current = current[:offset] + removed + current[offset + inserted :]
    return middle, final, current


# -- running CrossHair ----------------------------------------------------------------------------


@dataclass(frozen=True)
class CheckResult:
    name: str
    status: Status
    seconds: float
    detail: str = ""
    role: Role = "holds"

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "status": self.status,
            "role": self.role,
            "seconds": round(self.seconds, 3),
            "detail": self.detail,
        }


def _tolerate_editable_installs() -> None:
    """Let CrossHair read per-package options under an editable install.

    CrossHair looks for ``# crosshair:`` directives in every enclosing package's
    ``__init__.py`` through ``importlib.resources``; under pytest with
    rollcert installed editable, a package's path also holds the editable
    finder's hook string, and ``importlib.resources`` raises
    ``NotADirectoryError``, which CrossHair does not catch (it catches only
    ``FileNotFoundError``). rollcert's packages hold no directives, so a
    package whose ``__init__.py`` cannot be read contributes no options.
    """
    import crosshair.core
    from crosshair.options import AnalysisOptionSet

    original = crosshair.core.collect_options
    if getattr(original, "_rollcert_tolerant", False):
        return

    def collect_options(thing: Any) -> AnalysisOptionSet:
        try:
            return original(thing)
        except NotADirectoryError:
            return AnalysisOptionSet()

    collect_options._rollcert_tolerant = True  # type: ignore[attr-defined]
    crosshair.core.collect_options = collect_options  # type: ignore[assignment]


def check_contract(function: Callable[..., Any], budget_s: float = CONTRACT_BUDGET_S) -> CheckResult:
    """Run CrossHair on one contracted function.

    ``CONFIRMED`` only if CrossHair itself says every postcondition was
    confirmed over all paths; a counterexample is ``FOUND``; anything else
    (budget spent, paths left) is ``UNKNOWN``.
    """
    from crosshair.core_and_libs import AnalysisKind
    from crosshair.core_and_libs import analyze_function
    from crosshair.core_and_libs import run_checkables
    from crosshair.options import AnalysisOptionSet
    from crosshair.statespace import MessageType

    _tolerate_editable_installs()
    options = AnalysisOptionSet(
        analysis_kind=[AnalysisKind.PEP316],
        per_condition_timeout=budget_s,
        per_path_timeout=max(1.0, budget_s / 2),
        report_all=True,
        max_uninteresting_iterations=1_000_000,
    )
    started = time.perf_counter()
    messages = run_checkables(analyze_function(function, options))
    seconds = time.perf_counter() - started
    states = {message.state for message in messages}
    failures = [m for m in messages if m.state in (MessageType.POST_FAIL, MessageType.EXEC_ERR, MessageType.POST_ERR)]
    if failures:
        return CheckResult(function.__name__, "FOUND", seconds, failures[0].message)
    if states and states <= {MessageType.CONFIRMED}:
        return CheckResult(function.__name__, "CONFIRMED", seconds, f"{len(messages)} condition(s) confirmed")
    left = ", ".join(sorted(s.name for s in states)) or "no condition answered"
    return CheckResult(function.__name__, "UNKNOWN", seconds, f"not exhausted in {budget_s:g} s: {left}")


def check_mutant(name: str, function: Callable[..., Any], budget_s: float = MUTANT_BUDGET_S) -> CheckResult:
    """A planted bug must come back ``FOUND``; if it survives, it is ``MISSED``."""
    result = check_contract(function, budget_s)
    status: Status = "FOUND" if result.status == "FOUND" else "MISSED"
    return CheckResult(f"mutant: {name}", status, result.seconds, result.detail, "planted")


#: The integer contracts CrossHair is expected to confirm over all paths.
INTEGER_CONTRACTS: tuple[Callable[..., Any], ...] = (
    impl_accepts_splice,
    inverse_splice,
    rebase_offset,
    chunk_locate,
)
#: Contracts over bytes: a counterexample would show, but "confirmed" is out of reach.
BYTES_CONTRACTS: tuple[Callable[..., Any], ...] = (splice_then_undo, lifo_rollback)


def crosshair_summary(*, thorough: bool = False) -> list[dict[str, Any]]:
    """Every CrossHair check, one dict each (name, status, role, seconds, detail), for ``rollcert prove``.

    The integer contracts should be ``CONFIRMED`` (role ``holds``); the bytes
    contracts and the diff of impl against the model are ``search``es, whose
    ``UNKNOWN`` is expected and whose ``FOUND`` is a violation; each mutant,
    and the planted dropped-record variant of the diff, must be ``FOUND``.

    The diff is stated as a contract (``impl_agrees_with_model``) rather than
    through ``crosshair diffbehavior``: with 0.0.113 on this machine,
    ``diffbehavior`` reported "no differences" in 10 s even for two
    three-line functions over ``bytes`` that differ whenever one byte is
    deleted, while the contract form found the planted dropped record in ~1 s.

    The searches (bytes contracts, the two-splice diff) can never be exhausted
    and cost ~40 s of a loaded machine: since the production code is checked
    by :mod:`rollcert.proofs.symbolic_refinement` (every path, stated bounds),
    they run only with ``thorough`` (``rollcert prove --thorough``).
    """
    results = [check_contract(function) for function in INTEGER_CONTRACTS]
    if thorough:
        results.extend(replace(check_contract(function), role="search") for function in BYTES_CONTRACTS)
    results.extend(check_mutant(name, function) for name, function in MUTANTS.items())
    if thorough:
        results.append(replace(check_contract(impl_agrees_with_model, DIFF_BUDGET_S), role="search"))
        results.append(
            replace(check_mutant("dropped record (diff vs model)", dropped_record_agrees_with_model), role="planted")
        )
    return [result.as_dict() for result in results]


def impl_agrees_with_model(initial: bytes, o1: int, d1: int, s1: bytes, o2: int, d2: int, s2: bytes) -> bool:
    """The behaviour diff stated as a contract: the real impl path equals the model's.

    ``impl``'s chunk storage joins lists of ``bytearray`` chunks, which
    CrossHair's symbolic bytes cannot pass through (a ``TypeError`` inside
    CrossHair's proxies), so the inputs are made concrete (``deep_realize``)
    at impl's boundary: CrossHair still steers the search through the model's
    branches, but on impl's side this is concrete testing, hence at most
    ``UNKNOWN`` (a ``search``); a counterexample is ``FOUND``, a violation.

    post: __return__
    """
    from crosshair.core import deep_realize
    from crosshair.tracers import NoTracing
    from crosshair.tracers import is_tracing

    expected = model_splice_and_roll_back(initial, o1, d1, s1, o2, d2, s2)
    if not is_tracing():  # a plain call, outside CrossHair
        return impl_splice_and_roll_back(initial, o1, d1, s1, o2, d2, s2) == expected
    concrete = deep_realize((initial, o1, d1, s1, o2, d2, s2, expected))
    with NoTracing():  # impl runs as plain Python on the concrete inputs
        return bool(impl_splice_and_roll_back(*concrete[:7]) == concrete[7])


def dropped_record_agrees_with_model(
    initial: bytes, o1: int, d1: int, s1: bytes, o2: int, d2: int, s2: bytes
) -> bool:
    """The same diff for the planted dropped-record variant: must be ``FOUND``.

    post: __return__
    """
    return impl_with_dropped_record(initial, o1, d1, s1, o2, d2, s2) == model_splice_and_roll_back(
        initial, o1, d1, s1, o2, d2, s2
    )
