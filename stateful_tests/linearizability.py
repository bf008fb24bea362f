"""The R7 checker: is a history of concurrent calls linearizable against the model?

Pure: no threads, no Hypothesis. A :class:`History` is what the runner in
:mod:`rollcert.stateful_tests.concurrency` recorded — per call its thread, call
time, return time (``None`` when the outcome is unknown), the action, and what
came back (a value, or the kind of error raised). :func:`check` searches for a
sequential order that

- respects real time: if call A returned before call B was called, A comes first;
- replays through :func:`rollcert.model.reference.step` with exactly the observed
  results (the same error kind, or success; the same bytes, length, depth, revision);
- places a call whose outcome is unknown anywhere after its call, or nowhere.

The search is Wing & Gong's, with Lowe's memoisation, as in Porcupine
(``checker.go``) and Knossos (``wgl.clj``): the calls and returns sorted by time
in a doubly linked list; repeatedly take a call that comes before the first
remaining return (a *minimal* call: nothing that must precede it is left), apply
it to the model, and if the observed result matches and the pair (set of calls
placed, model state) was never seen, unlink it and go on; otherwise try the next
minimal call; when none is left, undo the newest placement and try its
successor. The memo is what makes this fast: two orders that placed the same
calls and reached the same model state have the same future, so the second is
cut. The model state is a frozen, hashable :class:`ModelState`, so the memo is a
plain set.

A node budget bounds the work. A search that exhausts it says ``unknown`` —
never ``linearizable`` — because the orders it did not try might have been the
only ones that work (or the only ones that fail to).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from rollcert.model.errors import ERROR_KINDS
from rollcert.model.operations import Rollback
from rollcert.model.operations import RollbackTo
from rollcert.model.operations import Splice
from rollcert.model.operations import TakeCheckpoint
from rollcert.model.properties import OBSERVATIONS
from rollcert.model.reference import ModelState
from rollcert.model.reference import Outcome
from rollcert.model.reference import initial_state
from rollcert.model.reference import step

#: The default node budget: placements tried before the search gives up (``unknown``).
DEFAULT_BUDGET = 200_000


# -- the actions a concurrent call can make ------------------------------------------------


@dataclass(frozen=True)
class Observe:
    """An observation that changes nothing: ``read`` (the bytes), ``length``, ``depth``
    or ``revision``."""

    what: str

    def __post_init__(self) -> None:
        if self.what not in OBSERVATIONS:
            raise ValueError(f"an observation is one of {OBSERVATIONS}, got {self.what!r}")

    def describe(self) -> str:
        return f"{self.what}()"


@dataclass(frozen=True)
class Checkpoint:
    """``checkpoint()``, its token remembered under ``label`` (a name in the program,
    not the model's index: which index it gets depends on the order chosen)."""

    label: int

    def describe(self) -> str:
        return f"checkpoint() as c{self.label}"


@dataclass(frozen=True)
class RollbackToLabel:
    """``rollback_to`` the token of the checkpoint taken as ``label``."""

    label: int

    def describe(self) -> str:
        return f"rollback_to(c{self.label})"


@dataclass(frozen=True)
class SpliceCall:
    operation: Splice

    def describe(self) -> str:
        return self.operation.describe()


@dataclass(frozen=True)
class RollbackCall:
    operation: Rollback

    def describe(self) -> str:
        return self.operation.describe()


Action = SpliceCall | RollbackCall | Checkpoint | RollbackToLabel | Observe


def is_mutation(action: Action) -> bool:
    return isinstance(action, (SpliceCall, RollbackCall, RollbackToLabel))


# -- histories ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    """One call of a history. Times are ``time.perf_counter_ns`` readings taken just
    before the call and just after it returned; ``returned`` is ``None`` when the
    outcome is unknown. ``error`` is the kind of error raised (a name of
    :data:`rollcert.model.errors.ERROR_KINDS`, or ``"undocumented <Type>"``);
    ``value`` is what an observation returned (bytes or an int)."""

    id: int
    thread: str
    called: int
    returned: int | None
    action: Action
    error: str | None = None
    value: bytes | int | None = None

    def describe_result(self) -> str:
        if self.returned is None:
            return "outcome unknown"
        if self.error is not None:
            return f"raised {self.error}"
        if isinstance(self.action, Observe):
            return f"-> {self.value!r}"
        return "ok"


@dataclass(frozen=True)
class History:
    initial: bytes
    calls: tuple[Call, ...]

    def __post_init__(self) -> None:
        for index, call in enumerate(self.calls):
            if call.id != index:
                raise ValueError(f"call #{index} has id {call.id}; ids must be 0, 1, 2, ... in order")
            if call.returned is not None and call.returned < call.called:
                raise ValueError(f"call #{index} returned ({call.returned}) before it was called ({call.called})")


# -- the model, as the search steps it -----------------------------------------------------


@dataclass(frozen=True)
class SearchState:
    """The model state plus which model checkpoint index each program label got."""

    model: ModelState
    labels: tuple[tuple[int, int], ...] = ()

    def index_of(self, label: int) -> int | None:
        for known, index in self.labels:
            if known == label:
                return index
        return None


@dataclass(frozen=True)
class Prediction:
    """What the model says a call does from one state: its error kind (or none),
    the value an observation returns, and the state after."""

    error: str | None
    value: bytes | int | None
    after: SearchState

    def describe(self) -> str:
        if self.error is not None:
            return f"raise {self.error}"
        if self.value is not None:
            return f"return {self.value!r}"
        return "succeed"


def _kind(error: type[Exception]) -> str:
    for name, cls in ERROR_KINDS.items():
        if cls is error:
            return name
    return error.__name__


def _step_model(state: SearchState, operation: Splice | Rollback | RollbackTo) -> Prediction:
    try:
        outcome: Outcome = step(state.model, operation)
    except (ValueError, TypeError) as bad:  # bad arguments *in this order*: refused, nothing changes
        return Prediction(type(bad).__name__, None, state)
    if outcome.error is not None:
        # No out-of-log writes in R7 programs, so a refusal changes nothing
        # (Outcome.also_acceptable, a rollback stopped at a write, cannot arise).
        return Prediction(_kind(outcome.error), None, SearchState(outcome.state, state.labels))
    return Prediction(None, None, SearchState(outcome.state, state.labels))


def predict(state: SearchState, action: Action) -> Prediction | None:
    """The model's answer to ``action`` from ``state``; ``None`` if the action cannot
    be placed here at all (a rollback_to whose checkpoint is not yet taken)."""
    model = state.model
    if isinstance(action, Observe):
        values: dict[str, bytes | int] = {
            "read": model.current,
            "length": len(model.current),
            "depth": model.depth,
            "revision": model.revision,
        }
        return Prediction(None, values[action.what], state)
    if isinstance(action, SpliceCall):
        return _step_model(state, action.operation)
    if isinstance(action, RollbackCall):
        return _step_model(state, action.operation)
    if isinstance(action, Checkpoint):
        outcome = step(model, TakeCheckpoint())
        labels = (*state.labels, (action.label, len(model.checkpoints)))
        return Prediction(None, None, SearchState(outcome.state, labels))
    index = state.index_of(action.label)
    if index is None:
        return None
    return _step_model(state, RollbackTo(index))


def matches(call: Call, prediction: Prediction) -> bool:
    if call.returned is None:  # unknown outcome: whatever the model says happened
        return True
    return call.error == prediction.error and call.value == prediction.value


# -- the search ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Stuck:
    """A call that was next in line after the longest partial order and did not fit."""

    call: Call
    allowed: Prediction | None


@dataclass(frozen=True)
class CheckResult:
    """``linearizable`` (``order`` is a full order), ``not_linearizable`` (``order`` is
    the longest partial order found, ``stuck`` the calls that could come next and
    what the model allowed there), or ``unknown`` (the budget ran out)."""

    verdict: Literal["linearizable", "not_linearizable", "unknown"]
    order: tuple[int, ...]
    nodes: int
    stuck: tuple[Stuck, ...] = ()
    #: The model state after ``order``.
    state_after_order: SearchState | None = None


_HEAD = -1


def check(history: History, *, budget: int = DEFAULT_BUDGET) -> CheckResult:
    """Decide whether ``history`` is linearizable (see the module docstring)."""
    calls = history.calls
    start = SearchState(initial_state(history.initial))
    if not calls:
        return CheckResult("linearizable", (), 0, state_after_order=start)
    # Entries: (time, is_return, call id). A call sorts before a return at the same
    # instant, so two calls that touch only at a tick count as overlapping (the
    # permissive reading: timestamps are not finer than the clock).
    infinity = max(c.returned or c.called for c in calls) + 1
    entries = sorted(
        [(c.called, 0, c.id) for c in calls]
        + [(c.returned if c.returned is not None else infinity + c.id, 1, c.id) for c in calls]
    )
    # Doubly linked list over entry positions, with a head sentinel.
    count = len(entries)
    next_of = [*range(1, count), None]
    prev_of: list[int | None] = [_HEAD, *range(count - 1)]
    head_next: int | None = 0
    return_position = {}
    for position, (_time, is_return, call_id) in enumerate(entries):
        if is_return:
            return_position[call_id] = position

    def unlink(position: int) -> None:
        nonlocal head_next
        before, after = prev_of[position], next_of[position]
        if before == _HEAD:
            head_next = after
        else:
            assert before is not None
            next_of[before] = after
        if after is not None:
            prev_of[after] = before

    def relink(position: int) -> None:
        nonlocal head_next
        before, after = prev_of[position], next_of[position]
        if before == _HEAD:
            head_next = position
        else:
            assert before is not None
            next_of[before] = position
        if after is not None:
            prev_of[after] = position

    def lift(call_id: int, call_position: int) -> None:
        unlink(call_position)
        unlink(return_position[call_id])

    def unlift(call_id: int, call_position: int) -> None:
        relink(return_position[call_id])
        relink(call_position)

    seen: set[tuple[int, SearchState]] = set()
    placed = 0  # bitmask of call ids placed
    state = start
    stack: list[tuple[int, int, SearchState]] = []  # (call id, its entry position, state before)
    longest: tuple[tuple[int, ...], SearchState] = ((), start)
    nodes = 0
    entry = head_next
    while True:
        if entry is None or (entries[entry][1] == 1 and calls[entries[entry][2]].returned is None):
            # Nothing left but calls of unknown outcome (which may stay unplaced): done.
            return CheckResult("linearizable", tuple(c for c, _, _ in stack), nodes, state_after_order=state)
        _time, is_return, call_id = entries[entry]
        if not is_return:
            nodes += 1
            if nodes > budget:
                return CheckResult("unknown", longest[0], nodes, state_after_order=longest[1])
            call = calls[call_id]
            prediction = predict(state, call.action)
            if prediction is not None and matches(call, prediction):
                # With an unknown outcome, a refused call changed nothing: same as not placing it
                # (still placed, so the search may close; the memo keeps it cheap).
                key = (placed | (1 << call_id), prediction.after)
                if key not in seen:
                    seen.add(key)
                    stack.append((call_id, entry, state))
                    placed |= 1 << call_id
                    state = prediction.after
                    lift(call_id, entry)
                    entry = head_next
                    continue
            entry = next_of[entry]
            continue
        # A return: every call still linked before it must come first, and none fit here.
        if len(stack) > len(longest[0]):
            longest = (tuple(c for c, _, _ in stack), state)
        if not stack:
            return _failure(history, longest, nodes)
        call_id, position, state = stack.pop()
        placed &= ~(1 << call_id)
        unlift(call_id, position)
        entry = next_of[position]


def _failure(history: History, longest: tuple[tuple[int, ...], SearchState], nodes: int) -> CheckResult:
    """The calls that could have come next after the longest partial order, and why
    each did not fit."""
    order, state = longest
    done = set(order)
    remaining = [c for c in history.calls if c.id not in done]
    # Minimal calls: no remaining call with a known outcome returned before they were called.
    first_return = min((c.returned for c in remaining if c.returned is not None), default=None)
    candidates = [c for c in remaining if first_return is None or c.called <= first_return]
    stuck = tuple(Stuck(c, predict(state, c.action)) for c in candidates if c.returned is not None)
    return CheckResult("not_linearizable", order, nodes, stuck, state)


# -- replaying an order (for coverage and explanations) -----------------------------------------


@dataclass(frozen=True)
class PlacedCall:
    call: Call
    before: SearchState
    prediction: Prediction


def replay_order(history: History, order: Sequence[int]) -> list[PlacedCall]:
    """Step the model along ``order`` (a full or partial linearization)."""
    state = SearchState(initial_state(history.initial))
    placed: list[PlacedCall] = []
    for call_id in order:
        call = history.calls[call_id]
        prediction = predict(state, call.action)
        if prediction is None:
            raise ValueError(f"call #{call_id} cannot be placed at position {len(placed)} of this order")
        placed.append(PlacedCall(call, state, prediction))
        state = prediction.after
    return placed


def overlapping(history: History, call: Call) -> list[Call]:
    """The calls of other threads whose [called, returned] interval meets ``call``'s
    (an unknown outcome never returned: its interval is open to the right)."""

    def meets(a: Call, b: Call) -> bool:
        a_end = a.returned if a.returned is not None else float("inf")
        b_end = b.returned if b.returned is not None else float("inf")
        return a.called <= b_end and b.called <= a_end

    return [other for other in history.calls if other.thread != call.thread and meets(call, other)]
