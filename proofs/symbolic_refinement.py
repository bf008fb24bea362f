"""CrossHair on the production code: ``impl.JournaledBuffer`` refines the model.

Why this exists (issue 44): the z3 theorems are about an encoding of the
model, and the old CrossHair checks ran hand-written copies of ``impl``'s
arithmetic. Here CrossHair symbolically executes a driver that builds the
*real* ``impl.JournaledBuffer`` (with the real ``FaultInjectingJournal`` over
the real ``InMemoryJournal``) and the reference model's state
(``model/reference.py``), applies the same operation sequence to both, and
has one postcondition: after every operation they agree on the bytes, the
depth, the revision and the error raised (the model's ``also_acceptable``
state is allowed after a rollback stopped by an out-of-log write).

The inputs are symbolic integers: the starting configuration (buffer,
capacity, policy), and per operation its kind and three arguments (offset or
steps or checkpoint number, a length, which insert). The bytes themselves are
drawn from small tables of concrete strings (:data:`STARTS`,
:data:`INSERTS`) chosen for the bug classes (distinct letters show a byte in
the wrong place; ``aa`` against a buffer of ``a``s shows a content scan that
finds the wrong copy). Where ``impl`` calls C code (``bisect``, slicing of a
``bytearray``) CrossHair *realizes* a symbolic integer: it picks one value,
adds ``x == value`` to the path condition and later explores ``x != value`` —
so the search stays complete, it just branches more.

What a verdict means, by CrossHair's own report:

- ``CONFIRMED``: CrossHair exhausted every path of the driver under its
  preconditions: the production code agrees with the model on **every**
  operation sequence within the stated bounds (a bounded proof).
- ``UNKNOWN``: the budget ran out first: *N paths, no counterexample* —
  checked, not proved. Shown with the path count, never called a proof.
- ``FOUND``: a counterexample (the operation sequence is printed).

One CrossHair defect is mended at run time (:func:`_mend_crosshair_bytes_concat`):
``b"".join`` over ``bytearray`` chunks whose contents became symbolic raised
``TypeError: can only concatenate list (not "bytes") to list`` inside
CrossHair's own proxies (``ChunkedText.read`` does exactly that join).
"""

from __future__ import annotations

import linecache
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from typing import Literal

from rollcert.model.reference import Policy

Status = Literal["CONFIRMED", "UNKNOWN", "FOUND"]

#: Starting configurations: (initial bytes, capacity, policy).
STARTS: tuple[tuple[bytes, int | None, Policy], ...] = (
    (b"", None, "reject"),
    (b"ab", None, "reject"),
    (b"aab", None, "reject"),
    (b"abcd", None, "reject"),
    (b"ab", 1, "reject"),
    (b"ab", 1, "evict_oldest"),
    (b"a", 2, "evict_oldest"),
    (b"a", None, "reject"),
)
#: Inserted bytes, by number: empty, one letter, two distinct, a repeat of the buffer's text.
INSERTS: tuple[bytes, ...] = (b"", b"X", b"YZ", b"aa")

#: Operation kinds, by number (the ``kind`` argument of each operation).
KINDS: tuple[str, ...] = (
    "splice(a, b, INSERTS[c])",
    "rollback(a)",
    "checkpoint()",
    "rollback_to(checkpoint #a) (a foreign token if #a was never taken)",
    "out-of-log write(a, b, INSERTS[c])",
    "adopt_current()",
    "arm a journal fault (the next append is refused)",
)
_SHORT: tuple[str, ...] = ("splice", "rollback", "checkpoint", "rollback_to", "out-of-log write", "adopt", "fault")
#: Largest offset, length or step count an operation's arguments take.
MAX_ARGUMENT = 4


@dataclass(frozen=True)
class SymbolicBounds:
    """The world one CrossHair run covers, stated in every report of it."""

    starts: tuple[int, ...]
    #: Per operation, the kinds it may be (numbers into :data:`KINDS`).
    plan: tuple[tuple[int, ...], ...]
    inserts: tuple[int, ...]
    max_argument: int
    budget_s: float

    @property
    def operations(self) -> int:
        return len(self.plan)

    def describe(self) -> str:
        starts = ", ".join(
            f"{STARTS[s][0]!r}" + (f" cap {STARTS[s][1]} {STARTS[s][2]}" if STARTS[s][1] is not None else "")
            for s in self.starts
        )
        steps = "; ".join(
            f"{number}: " + (" | ".join(_SHORT[k] for k in kinds) if len(kinds) < len(KINDS) else "any")
            for number, kinds in enumerate(self.plan, 1)
        )
        inserts = ", ".join(repr(INSERTS[i]) for i in self.inserts)
        return (
            f"every sequence of {self.operations} operations from {{{starts}}}, operation {steps}; "
            f"a, b in 0..{self.max_argument}, inserts {{{inserts}}}"
        )


class _Mismatch(Exception):
    """impl and the model disagreed: the message says where and how."""


def _errors_match(expected: type[Exception] | None, got: BaseException | None) -> bool:
    return (expected is None and got is None) or (
        expected is not None and got is not None and type(got) is expected
    )


def _start(start: int) -> tuple[Any, Any, Any]:
    """The journal, the buffer and the model state of starting configuration ``start``."""
    from rollcert.impl.journal import FaultInjectingJournal
    from rollcert.impl.journal import InMemoryJournal
    from rollcert.impl.journaled_buffer import JournaledBuffer
    from rollcert.model import reference

    initial, capacity, policy = STARTS[start]
    journal = FaultInjectingJournal(InMemoryJournal())
    buffer = JournaledBuffer(initial, capacity=capacity, policy=policy, journal=journal)
    return journal, buffer, reference.initial_state(initial, capacity=capacity, policy=policy)


def _concretely(function: Callable[..., Any], *arguments: Any) -> Any:
    """``function`` on realized arguments, outside CrossHair's tracing.

    Sound where the result depends on nothing symbolic but those arguments:
    realizing an argument adds its value to the path condition, and CrossHair
    explores the other values on other paths. Used for the construction of
    the starting buffer, which is the same code on every path of a start
    and costs a third of a path when traced."""
    try:
        from crosshair.core import realize
        from crosshair.tracers import NoTracing
        from crosshair.tracers import is_tracing
    except ImportError:  # CrossHair is not installed: a plain replay
        return function(*arguments)
    if not is_tracing():  # type: ignore[no-untyped-call]
        return function(*arguments)
    concrete = [realize(argument) for argument in arguments]
    with NoTracing():  # type: ignore[no-untyped-call]
        return function(*concrete)


def run_sequence(start: int, operations: tuple[tuple[int, int, int, int], ...]) -> str:
    """Run one operation sequence on the real impl and on the model; ``""`` if
    they agree after every step, else what differed. Plain Python: CrossHair
    executes it symbolically, and a counterexample is replayed through it."""
    from rollcert.impl.journaled_buffer import JournaledBuffer
    from rollcert.model import reference
    from rollcert.model.operations import AdoptCurrent
    from rollcert.model.operations import ArmJournalFault
    from rollcert.model.operations import Operation
    from rollcert.model.operations import OutOfLogWrite
    from rollcert.model.operations import Rollback
    from rollcert.model.operations import RollbackTo
    from rollcert.model.operations import RollbackToForeign
    from rollcert.model.operations import Splice
    from rollcert.model.operations import TakeCheckpoint

    journal, buffer, state = _concretely(_start, start)
    foreign: Any = None
    tokens: list[Any] = []
    for number, (kind, a, b, c) in enumerate(operations, 1):
        operation: Operation
        if kind == 0:
            operation = Splice(a, b, INSERTS[c])
        elif kind == 1:
            operation = Rollback(a)
        elif kind == 2:
            operation = TakeCheckpoint()
        elif kind == 3:
            operation = RollbackTo(a) if a < len(tokens) else RollbackToForeign()
        elif kind == 4:
            operation = OutOfLogWrite(a, b, INSERTS[c])
        elif kind == 5:
            operation = AdoptCurrent()
        else:
            operation = ArmJournalFault()
        try:
            outcome = reference.step(state, operation)
        except (ValueError, TypeError) as error:
            expected: type[Exception] | None = type(error)
            allowed = [state]
        else:
            expected = outcome.error
            allowed = [outcome.state] + ([outcome.also_acceptable] if outcome.also_acceptable is not None else [])
        got: BaseException | None = None
        try:
            if isinstance(operation, Splice):
                buffer.splice(operation.offset, operation.delete_length, operation.insert)
            elif isinstance(operation, Rollback):
                buffer.rollback(operation.steps)
            elif isinstance(operation, TakeCheckpoint):
                tokens.append(buffer.checkpoint())
            elif isinstance(operation, RollbackTo):
                buffer.rollback_to(tokens[operation.checkpoint])
            elif isinstance(operation, RollbackToForeign):
                foreign = foreign or JournaledBuffer(b"").checkpoint()
                buffer.rollback_to(foreign)
            elif isinstance(operation, OutOfLogWrite):
                length = len(buffer.storage)
                if not (0 <= a <= length and 0 <= b <= length - a):
                    raise ValueError("out-of-log write outside the buffer")
                buffer.storage.replace(a, b, operation.insert)
            elif isinstance(operation, AdoptCurrent):
                buffer.adopt_current()
            else:
                journal.fail_next_append()
        except Exception as error:  # the documented errors, and anything else impl raises
            got = error
        # Words only on a mismatch: formatting a symbolic integer realizes it,
        # which would split every path by its value.
        if not _errors_match(expected, got):
            said = f"operation {number}, {operation.describe()}"
            wanted = "success" if expected is None else expected.__name__
            return f"{said}: the model says {wanted}, impl {'succeeded' if got is None else repr(got)}"
        observed = (buffer.read(), buffer.depth, buffer.revision)
        matching = [s for s in allowed if (s.current, s.depth, s.revision) == observed]
        if not matching:
            said = f"operation {number}, {operation.describe()}"
            model = allowed[0]
            return (
                f"{said}: the model has {model.current!r} at depth {model.depth}, revision {model.revision}; "
                f"impl has {observed[0]!r} at depth {observed[1]}, revision {observed[2]}"
            )
        state = matching[0]
    return ""


def _driver(bounds: SymbolicBounds) -> Callable[..., bool]:
    """A function of ``1 + 4 * operations`` integers with PEP 316 preconditions
    stating the bounds and the postcondition ``impl agrees with the model``,
    for CrossHair to analyse. Built from source because CrossHair needs a
    fixed signature and reads the contract from the docstring."""
    names = [f"k{i}: int, a{i}: int, b{i}: int, c{i}: int" for i in range(bounds.operations)]
    parameters = ", ".join(["start: int", *names])
    pre = [f"pre: start in {bounds.starts!r}"]
    for i in range(bounds.operations):
        pre.append(f"pre: k{i} in {bounds.plan[i]!r}")
        pre.append(f"pre: 0 <= a{i} <= {bounds.max_argument} and 0 <= b{i} <= {bounds.max_argument}")
        pre.append(f"pre: c{i} in {bounds.inserts!r}")
    tuples = ", ".join(f"(k{i}, a{i}, b{i}, c{i})" for i in range(bounds.operations))
    doc = "\n    ".join(["impl refines the model on this sequence.", "", *pre, "post: __return__"])
    source = (
        f"def impl_refines_model({parameters}) -> bool:\n"
        f'    """{doc}\n    """\n'
        f"    _count_path()\n"
        f"    return run_sequence(start, ({tuples},)) == ''\n"
    )
    # CrossHair reads the contract from the function's source lines: register them
    # with linecache under a name of their own, as if the driver were in a file.
    filename = f"<rollcert symbolic refinement driver {bounds.operations}x{abs(hash(source))}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    namespace: dict[str, Any] = {"run_sequence": run_sequence, "_count_path": _count_path}
    exec(compile(source, filename, "exec"), namespace)  # our own template, no outside input
    driver: Callable[..., bool] = namespace["impl_refines_model"]
    driver.__module__ = __name__
    return driver


def _mend_crosshair_bytes_concat() -> None:
    """CrossHair 0.0.114's ``SymbolicBytes.__add__`` adds its inner ``list`` to
    the inner sequence of the other operand, which for a ``bytearray`` proxy
    can be a plain ``bytes`` or another proxy: ``list + bytes`` raises inside
    CrossHair. Unwrap the proxies and turn a plain byte string into a list of
    ints, which is what CrossHair's own code expects there."""
    import crosshair.libimpl.builtinslib as builtinslib

    original = builtinslib.buffer_to_byte_seq
    if getattr(original, "_rollcert_mended", False):
        return

    def buffer_to_byte_seq(obj: object) -> Any:
        sequence = original(obj)
        while isinstance(sequence, (builtinslib.SymbolicBytes, builtinslib.SymbolicByteArray)):
            sequence = original(sequence)
        if isinstance(sequence, (bytes, bytearray)):
            return list(sequence)
        return sequence

    buffer_to_byte_seq._rollcert_mended = True  # type: ignore[attr-defined]
    builtinslib.buffer_to_byte_seq = buffer_to_byte_seq


@dataclass(frozen=True)
class SymbolicResult:
    name: str
    status: Status
    seconds: float
    paths: int
    bounds: SymbolicBounds
    detail: str = ""
    counterexample: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "status": self.status,
            "seconds": round(self.seconds, 3),
            "paths": self.paths,
            "bounds": self.bounds.describe(),
            "detail": self.detail,
            "counterexample": self.counterexample or None,
        }


_PATHS = [0]


def _count_path() -> None:
    """Count the paths CrossHair runs the driver on (outside its tracing, so
    the count does not become part of the path condition)."""
    from crosshair.tracers import NoTracing
    from crosshair.tracers import is_tracing

    if not is_tracing():  # type: ignore[no-untyped-call]
        _PATHS[0] += 1
        return
    with NoTracing():  # type: ignore[no-untyped-call]
        _PATHS[0] += 1


def check(name: str, bounds: SymbolicBounds) -> SymbolicResult:
    """Run CrossHair on the driver for ``bounds``; CONFIRMED only if CrossHair
    says so (every path explored), FOUND with the replayed mismatch."""
    from crosshair.core_and_libs import AnalysisKind
    from crosshair.core_and_libs import analyze_function
    from crosshair.core_and_libs import run_checkables
    from crosshair.options import AnalysisOptionSet
    from crosshair.statespace import MessageType

    from rollcert.proofs.crosshair_checks import _tolerate_editable_installs

    _tolerate_editable_installs()
    _mend_crosshair_bytes_concat()
    driver = _driver(bounds)
    options = AnalysisOptionSet(
        analysis_kind=[AnalysisKind.PEP316],
        per_condition_timeout=bounds.budget_s,
        per_path_timeout=max(2.0, bounds.budget_s / 4),
        report_all=True,
        max_uninteresting_iterations=10**9,
    )
    _PATHS[0] = 0
    started = time.perf_counter()
    messages = run_checkables(analyze_function(driver, options))
    seconds = time.perf_counter() - started
    paths = _PATHS[0]
    failures = [m for m in messages if m.state in (MessageType.POST_FAIL, MessageType.EXEC_ERR, MessageType.POST_ERR)]
    if failures:
        return SymbolicResult(name, "FOUND", seconds, paths, bounds, failures[0].message,
                              _replay(failures[0].message, bounds))
    states = {m.state for m in messages}
    if states and states <= {MessageType.CONFIRMED}:
        return SymbolicResult(name, "CONFIRMED", seconds, paths, bounds,
                              f"every path explored ({paths} paths): no disagreement within the bounds")
    return SymbolicResult(name, "UNKNOWN", seconds, paths, bounds,
                          f"no counterexample in {paths} paths / {seconds:.0f} s; paths left unexplored "
                          "(checked, not proved)")


def _replay(message: str, bounds: SymbolicBounds) -> str:
    """The mismatch, in words, by re-running CrossHair's failing call concretely.
    CrossHair reports it as ``... when calling impl_refines_model(1, 0, ...)``."""
    import re

    found = re.search(r"impl_refines_model\(([-\d, ]+)\)", message)
    if found is None:
        return ""
    values = [int(v) for v in found.group(1).split(",")]
    start, rest = values[0], values[1:]
    operations = tuple((rest[i], rest[i + 1], rest[i + 2], rest[i + 3]) for i in range(0, len(rest), 4))
    initial, capacity, policy = STARTS[start]
    where = f"from {initial!r}" + (f", capacity {capacity} ({policy})" if capacity is not None else "")
    try:
        said = run_sequence(start, operations)
    except Exception as error:  # the driver itself raised
        said = f"raised {error!r}"
    return f"{where}, operations {operations}: {said or 'agrees when replayed concretely'}"


#: ``rollcert prove``'s default runs: each small enough for CrossHair to explore
#: every path in seconds of CPU (about 0.1-0.2 s of CPU per path here; on the
#: shared 2-core machine, 3-4 times that in wall-clock time). ``budget_s`` is a
#: hang guard; a default run that hits it is UNKNOWN and ``prove`` exits 2.
Role = Literal["bounded", "search"]


@dataclass(frozen=True)
class SymbolicCheck:
    """One CrossHair run of the driver: its name in ``rollcert prove``, the rules
    its operations exercise, and whether it must be exhausted (``bounded``) or
    is a wider search whose UNKNOWN is expected (``search``, ``--thorough``)."""

    name: str
    properties: tuple[str, ...]
    bounds: SymbolicBounds
    role: Role = "bounded"


_SPLICE, _ROLLBACK, _CHECKPOINT, _ROLLBACK_TO, _OUT_OF_LOG, _ADOPT, _FAULT = range(7)
ALL_KINDS = tuple(range(len(KINDS)))

DEFAULT_CHECKS: tuple[SymbolicCheck, ...] = (
    SymbolicCheck(
        "impl-symbolic/splice-rollback", ("R0", "R2", "S3"),
        SymbolicBounds((1,), ((_SPLICE,), (_ROLLBACK,)), (0, 2), 1, 120.0),
    ),
    SymbolicCheck(
        "impl-symbolic/bounded-log", ("R0", "R6"),
        SymbolicBounds((5,), ((_SPLICE,), (_SPLICE,), (_ROLLBACK,)), (1,), 1, 120.0),
    ),
    SymbolicCheck(
        "impl-symbolic/dead-checkpoint", ("R0", "R3", "S3"),
        SymbolicBounds((0,), ((_SPLICE,), (_CHECKPOINT,), (_ROLLBACK,), (_SPLICE,), (_ROLLBACK_TO,)), (1,), 1, 120.0),
    ),
    SymbolicCheck(
        "impl-symbolic/refused-append", ("R0", "R1"),
        SymbolicBounds((1,), ((_FAULT,), (_SPLICE,), (_ROLLBACK,)), (1,), 1, 120.0),
    ),
    SymbolicCheck(
        "impl-symbolic/divergence", ("R0", "R4"),
        SymbolicBounds((7,), ((_SPLICE,), (_OUT_OF_LOG,), (_ROLLBACK,)), (1,), 1, 120.0),
    ),
)
#: ``--thorough``: every kind at every step, more starts, longer sequences; a
#: search whose UNKNOWN (paths left) is reported with its path count.
THOROUGH_CHECKS: tuple[SymbolicCheck, ...] = (
    SymbolicCheck(
        "impl-symbolic/any-two", ("R0", "R1", "R2", "R3", "R4", "R6", "S3"),
        SymbolicBounds((0, 1, 2, 4, 5, 7), (ALL_KINDS, ALL_KINDS), (0, 1, 2, 3), 2, 300.0),
        # measured: no counterexample in 4,383 paths / 656 s on the loaded machine, not exhausted
        role="search",
    ),
    SymbolicCheck(
        "impl-symbolic/any-three", ("R0", "R1", "R2", "R3", "R4", "R6", "S3"),
        SymbolicBounds((1, 5), (ALL_KINDS, ALL_KINDS, ALL_KINDS), (1, 3), 2, 300.0),
        role="search",
    ),
)


def check_named(name: str) -> SymbolicCheck:
    for candidate in DEFAULT_CHECKS + THOROUGH_CHECKS:
        if candidate.name == name:
            return candidate
    raise KeyError(name)
