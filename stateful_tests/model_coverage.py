"""Model-branch coverage: which branches of the reference model a run exercised.

Situations (``model/properties.py``) are the cases somebody thought of. They do
not generalise: a bug of a class nobody named hides in a case of the model that
no run reaches (``rollback(0)`` on a non-empty log, a refused splice on a full
evicting journal, a rollback of a poisoned durable journal). The model states
every rule as a branch of its step functions, so the branches a run reached
say, without a hand list, which of the model's cases the target was compared
on. A run that passed without reaching a branch it could reach is ``unknown``,
naming the branch, as for a missing situation (SPEC §6).

**What is measured.** Every step the machine judges asks the model for its
prediction (``family.predict`` for each reading the judge keeps). The harness
notes those calls (:func:`note`); at the end of each round they are replayed
under coverage.py (its C tracer, ``branch=True``, ``include=`` the model's
files), and the arcs executed are the round's. The model is pure, so the replay
executes exactly what the run did; tracing only the replay keeps the tracer off
Hypothesis, the target and the judge (tracing the whole round doubled a run's
time). The model calls the machines make to shrink or to check a trace is
generable are not judged steps and are not counted.

**The branches** are coverage.py's static analysis of ``model/reference.py``
(the rollback family, R0–R6) and ``model/diffs.py`` (the diff family, S1–S3):
every arc out of a line with more than one exit (an ``if``, a loop, a
``return``/``raise`` under a condition), in the functions the family's step
function calls (the ast's call graph from :data:`ENTRY_POINTS`). An error exit
is the branch into its ``raise``.

**Which a property requires** (the rule): the branches of its family's step
functions, minus

1. a branch whose guard — the condition it branches on, every ``if``
   around either of its ends, the condition of the ``if`` it lands on (the
   next case of a dispatch) and the functions the line it lands on calls —
   reads something the property's machine cannot vary on this
   target (:data:`VARIES`: ``fault_armed`` needs a machine that arms journal
   faults, ``capacity``/``full`` a bounded machine (``policy`` one whose target
   does not fix the policy by its history bound), ``barriers`` out-of-log
   writes, ``isinstance(operation, Compact)`` a machine that sends ``Compact``...).
   What a machine can send is read from its rules' code (the operations they
   construct, :func:`machine_traits`), so a target without a capability loses
   exactly the branches that capability's operations reach;
2. a branch of a function that only an operation the machine never sends can
   reach (:data:`FUNCTION_NEEDS`, the explicit mapping of model functions
   to operations), or a case of a function serving several operations that
   only some reach (:data:`CONDITION_NEEDS`, by the condition's source, or
   by ``"<condition> -> raise"`` for the branch into its raise alone: a range
   check only a machine that sends bad arguments fails, ``Traits.bad_arguments``);
3. a branch into or out of a line marked ``# unreachable: <why>`` in the model:
   a defensive check no generated run can reach (an argument no machine draws).
   Few, each with its reason on the line;
4. the branches of the functions that compute a reading the rules *allow*,
   never require (:data:`ALLOWANCES`, and ``content_verified_rollback``, which
   is no step function), and the branches on what such a function returned:
   not required.

R7 runs concurrent programs, not a step machine; its certificate says its
branches were not measured. The breach predicates of ``model/properties.py``
run only on a failing step, so a sound target's run never executes them; they
are not required (a requirement no passing run can meet would make every
certificate unknown).
"""

from __future__ import annotations

import ast
import inspect
import textwrap
import warnings
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Sequence
from collections.abc import Set
from contextlib import suppress
from dataclasses import dataclass
from dataclasses import field
from functools import cache
from pathlib import Path
from typing import Any

import rollcert.model as _model_package
from rollcert.model import operations as _operations

#: The marker that excludes a branch: ``# unreachable: <why>`` on its line.
MARKER = "# unreachable:"
#: The model's files whose branches are measured, by the family they serve.
MODEL_FILES: dict[str, str] = {"rollback": "reference.py", "diffs": "diffs.py"}
#: Where each family's step function starts: the call graph from these is the scope.
ENTRY_POINTS: dict[str, tuple[str, ...]] = {
    # Not content_verified_rollback: it gives a reading the rules allow, never
    # require (R4, SPEC §6a); its general checks have cases no rollback reaches.
    "rollback": ("step",),
    "diffs": ("diff_step",),
}
#: Functions that compute a reading the rules *allow*, never require (SPEC §6a):
#: how an allowance can fail to apply is not a case of the rule a target must be
#: compared on. Their branches are measured and not required.
#: ``_fault_met_anyway`` too: it adds the states in which a refused splice also
#: spent an armed fault (both orders of the checks are allowed). Whether a run
#: combined a full or poisoned journal with an armed fault is a situation to
#: require of the machines, not a branch of this allowance (left open, issue 42).
ALLOWANCES: frozenset[str] = frozenset({"apply_over_equal_rewrites", "_between_neighbours", "_fault_met_anyway"})
_MODEL_DIR = Path(_model_package.__file__).resolve().parent


@dataclass(frozen=True)
class Traits:
    """What a property's machine can do: the operation kinds its rules send,
    and whether its journals are bounded (some examples) or durable."""

    operations: frozenset[str]
    bounded: bool = False
    durable: bool = False
    #: The policies a full bounded journal can follow: both, or the one of the
    #: target's own history bound (``Target.history_bound``).
    policies: frozenset[str] = frozenset({"reject", "evict_oldest"})
    #: Whether a rule sends arguments of the wrong sign or range (R0's
    #: ``bad_arguments``, marked ``sends_bad_arguments``): only such a machine
    #: takes the model's range checks of a rollback or a compaction.
    bad_arguments: bool = False

    def sends(self, *kinds: str) -> bool:
        return any(kind in self.operations for kind in kinds)


Need = Callable[[Traits], bool]


def _sends(*kinds: str) -> Need:
    return lambda traits: traits.sends(*kinds)


#: A name a branch's guard reads -> whether a machine with these traits can make
#: it take either value. Operation class names are added below (``isinstance``).
#: ``durable`` is constant within every machine (R5's is always durable, the
#: others never): a branch on it is decided by which machine runs, not by the run.
VARIES: dict[str, Need] = {
    "fault_armed": _sends("ArmJournalFault"),
    "disk_fault": _sends("DiskFault"),
    "poisoned": lambda t: t.durable and t.sends("DiskFault", "ArmJournalFault"),
    "in_doubt": lambda t: t.durable and t.sends("DiskFault"),
    "clean_refusal": lambda t: t.durable and t.sends("DiskFault", "ArmJournalFault"),
    "capacity": lambda t: t.bounded,
    "full": lambda t: t.bounded,
    "policy": lambda t: t.bounded and len(t.policies) > 1,
    "barriers": _sends("OutOfLogWrite"),
    "durability": lambda t: t.durable,
    "since_flush": lambda t: t.durable,
    "durable": lambda t: False,
    "checkpoints": _sends("TakeCheckpoint"),
    "applied": _sends("ApplyDiff"),
    "snapshots": _sends("TakeSnapshot"),
}
#: The model functions that only some operations reach, and those operations.
FUNCTION_NEEDS: dict[str, Need] = {
    "_refused_cleanly": _sends("ArmJournalFault", "DiskFault"),
    "_rollback_to": _sends("RollbackTo"),
    "_compact": _sends("Compact"),
    "_crash_during": _sends("CrashDuring"),
    "_recovery": _sends("Restart", "CrashDuring", "CorruptRecord"),
    "_reopen": _sends("Reopen"),
    "_out_of_log_write": _sends("OutOfLogWrite"),
    "author": _sends("ApplyDiff"),
    "apply": _sends("ApplyDiff"),
    "apply_over_equal_rewrites": _sends("ApplyDiff"),
    "_between_neighbours": _sends("ApplyDiff"),
    "locate": _sends("ApplyDiff"),
    "splice_placed": _sends("ApplyDiff"),
}
#: Cases of a function that serves several operations which only some of them
#: reach, by ``"function: condition"`` (the ``if`` test's source): the diff
#: model's rollback refuses past the horizon only for a plain ``Rollback`` (a
#: ``RollbackDiff`` names a state in the history, never past it).
CONDITION_NEEDS: dict[str, Need] = {
    "_roll_back: steps > state.depth": _sends("Rollback"),
    "_rollback_steps: steps > state.depth": _sends("Rollback"),
    # SPEC §2's range checks: only a machine that sends bad arguments takes the
    # branch into the raise ("-> raise": that arm only; the other is every
    # valid rollback's and compaction's).
    "_commit: steps < 0 -> raise": lambda traits: traits.bad_arguments,
    "_compact: not 0 <= keep <= state.depth -> raise": lambda traits: traits.bad_arguments,
}
_OPERATION_KINDS = frozenset(
    name for name, value in vars(_operations).items() if inspect.isclass(value) and hasattr(value, "describe")
)


@dataclass(frozen=True)
class Branch:
    """One arc of the model: from ``source`` to ``target`` (a negative target
    leaves the function), in ``function`` of ``file`` (``model/reference.py``)."""

    file: str
    source: int
    target: int
    function: str
    guards: frozenset[str] = field(default=frozenset(), compare=False)

    @property
    def name(self) -> str:
        """How a certificate names it: ``model/reference.py:123->130 (rollback)``."""
        target = "exit" if self.target < 0 else str(self.target)
        return f"{self.file}:{self.source}->{target} ({self.function})"


def _functions(tree: ast.Module) -> list[ast.FunctionDef]:
    return [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)]


def _innermost(functions: Sequence[ast.FunctionDef], line: int) -> ast.FunctionDef | None:
    around = [f for f in functions if f.lineno <= line <= (f.end_lineno or f.lineno)]
    return min(around, key=lambda f: (f.end_lineno or f.lineno) - f.lineno) if around else None


def _names_in(node: ast.AST | None) -> set[str]:
    if node is None:
        return set()
    names: set[str] = set()
    for inner in ast.walk(node):
        if isinstance(inner, ast.Name):
            names.add(inner.id)
        elif isinstance(inner, ast.Attribute):
            names.add(inner.attr)
    return names


def _guards(function: ast.FunctionDef, line: int) -> frozenset[str]:
    """The names read by the condition of the statement at ``line`` and by every
    ``if``/``while`` test around it, inside ``function``."""
    names: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            start, end = getattr(child, "lineno", None), getattr(child, "end_lineno", None)
            if start is None or end is None or not start <= line <= end:
                continue
            if isinstance(child, (ast.If, ast.While)):
                names.update(_names_in(child.test))
            elif isinstance(child, ast.For):
                names.update(_names_in(child.iter))
            visit(child)

    visit(function)
    return frozenset(names)


def _calls_at(function: ast.FunctionDef, line: int) -> frozenset[str]:
    """The functions the statement at ``line`` calls (a branch into ``return
    _rollback_to(...)`` needs what ``_rollback_to`` needs)."""
    return frozenset(
        node.func.id
        for node in ast.walk(function)
        if isinstance(node, ast.stmt) is False
        and isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.lineno == line
    )


def _allowance_results(function: ast.FunctionDef) -> frozenset[str]:
    """The local names ``function`` assigns from a call of an allowance."""
    return frozenset(
        target.id
        for node in ast.walk(function)
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Name)
        and node.value.func.id in ALLOWANCES
        for target in node.targets
        if isinstance(target, ast.Name)
    )


def _condition_at(function: ast.FunctionDef, line: int) -> str | None:
    """The source of the ``if``/``while`` test on ``line``, if one starts there."""
    for node in ast.walk(function):
        if isinstance(node, (ast.If, ast.While)) and node.lineno == line:
            return ast.unparse(node.test)
    return None


def _called(function: ast.FunctionDef) -> set[str]:
    return {
        node.func.id for node in ast.walk(function) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }


@cache
def branches_of(family: str) -> tuple[Branch, ...]:
    """Every branch arc of ``family``'s step functions, from coverage.py's
    static analysis of the model file, without the ``# unreachable:`` ones."""
    from coverage.parser import PythonParser

    path = _MODEL_DIR / MODEL_FILES[family]
    source = path.read_text(encoding="utf-8")
    parser = PythonParser(text=source, filename=str(path))
    parser.parse_source()
    exits = parser.exit_counts()
    lines = source.splitlines()
    marked = {parser.first_line(number) for number, text in enumerate(lines, 1) if MARKER in text}
    tree = ast.parse(source)
    raises = {node.lineno for node in ast.walk(tree) if isinstance(node, ast.Raise)}
    functions = _functions(tree)
    by_name = {f.name: f for f in functions}
    scope: set[str] = set()
    todo = list(ENTRY_POINTS[family])
    while todo:
        name = todo.pop()
        if name in scope or name not in by_name:
            continue
        scope.add(name)
        todo.extend(_called(by_name[name]))
    found = []
    for source_line, target_line in sorted(parser.arcs()):
        if source_line < 0 or exits.get(source_line, 0) < 2:
            continue
        if source_line in marked or target_line in marked:
            continue
        function = _innermost(functions, source_line)
        if function is None or function.name not in scope or function.name in ALLOWANCES:
            continue
        guards = _guards(function, source_line)
        if target_line > 0:
            guards |= _guards(function, target_line) | _calls_at(function, target_line)
        if guards & _allowance_results(function):
            continue  # a branch on what an allowance gave (rule 4)
        condition = _condition_at(function, source_line)
        if condition is not None:
            guards |= {f"{function.name}: {condition}"}
            if target_line in raises:
                guards |= {f"{function.name}: {condition} -> raise"}
        found.append(Branch(f"model/{path.name}", source_line, target_line, function.name, guards))
    return tuple(found)


def required(family: str, traits: Traits) -> tuple[Branch, ...]:
    """The branches of ``family`` a machine with ``traits`` must reach (the rule
    in this module's docstring)."""

    def reachable(branch: Branch) -> bool:
        need = FUNCTION_NEEDS.get(branch.function)
        if need is not None and not need(traits):
            return False
        for name in branch.guards:
            if name in CONDITION_NEEDS and not CONDITION_NEEDS[name](traits):
                return False
            if name in FUNCTION_NEEDS and not FUNCTION_NEEDS[name](traits):
                return False
            if name in _OPERATION_KINDS:
                if name not in traits.operations:
                    return False
            elif name in VARIES and not VARIES[name](traits):
                return False
        return True

    if family not in MODEL_FILES:
        return ()
    return tuple(branch for branch in branches_of(family) if reachable(branch))


def _operations_constructed(function: Callable[..., Any], seen: set[str]) -> set[str]:
    """The operation kinds ``function`` (and the helpers of its module it calls)
    construct: read from its source, so a rule's scope follows its code."""
    name = getattr(function, "__name__", "")
    module = inspect.getmodule(function)
    if name in seen or module is None:
        return set()
    seen.add(name)
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError, SyntaxError):
        return set()
    kinds: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
            continue
        called = node.func.id
        if called in _OPERATION_KINDS:
            kinds.add(called)
        helper = getattr(module, called, None)
        if inspect.isfunction(helper) and helper.__module__ == module.__name__:
            kinds |= _operations_constructed(helper, seen)
    return kinds


#: Operation kinds a rule may construct only when the target has this capability
#: (by its value): the rule checks it itself, which its code read alone does not show.
_CONSTRUCTED_ONLY_WITH = {"AdoptCurrent": "adopt"}


def machine_traits(machine: type) -> Traits:
    """The traits of a built machine class: the operations its rules and
    initialize rules construct, and its journal kind."""
    kinds: set[str] = set()
    seen: set[str] = set()
    bad_arguments = False
    for klass in machine.__mro__:
        for value in vars(klass).values():
            if inspect.isfunction(value) and (
                hasattr(value, "hypothesis_stateful_rule") or hasattr(value, "hypothesis_stateful_initialize_rule")
            ):
                kinds |= _operations_constructed(value, seen)
                bad_arguments |= bool(getattr(value, "sends_bad_arguments", False))
    target = getattr(machine, "target", None)
    capabilities = {str(getattr(c, "value", c)) for c in getattr(target, "capabilities", ())}
    # Operations a rule constructs only for a target with their capability (R5's
    # reopen adopts first on a target that can adopt): not sent to one without it.
    kinds -= {kind for kind, needed in _CONSTRUCTED_ONLY_WITH.items() if target is not None and needed not in capabilities}
    bounded = getattr(machine, "bounded", "never") != "never"
    # A rollback or compaction with a bad argument goes only to a target that
    # declares it checks its arguments (Target.checks_arguments).
    bad_arguments &= bool(getattr(target, "checks_arguments", False))
    bound = getattr(target, "history_bound", None)
    policies = frozenset({bound.policy}) if bound is not None else Traits(frozenset()).policies
    return Traits(
        frozenset(kinds),
        bounded=bounded,
        durable=bool(getattr(machine, "durable", False)),
        policies=policies,
        bad_arguments=bad_arguments,
    )


# -- measuring ------------------------------------------------------------------------------


class Recorder:
    """The model calls of the judged steps, replayed under coverage.py in
    batches: every :data:`BATCH` calls (so that a round of wide buffers does
    not keep every state it met alive) and at :meth:`measure`."""

    def __init__(self, wanted: Iterable[str] = ()) -> None:
        self.calls: list[tuple[Callable[..., Any], tuple[Any, ...]]] = []
        self._seen: set[tuple[int, int]] = set()
        self._arcs: set[str] | None = set()
        #: The required arcs not reached yet. Once none is left the recorder
        #: notes nothing more: a certificate lists only required branches, so
        #: the rest of the run would be traced for nothing.
        self.wanted = set(wanted)
        self.complete = False
        #: The steps the target's declared findings set aside (never sent), and the arcs they reach.
        self.aside_calls: list[tuple[Callable[..., Any], tuple[Any, ...]]] = []
        self._aside_arcs: set[str] = set()

    def add(self, predict: Callable[..., Any], state: object, operation: object, *, aside: bool = False) -> None:
        if self.complete:
            return
        if aside:
            self.aside_calls.append((predict, (state, operation)))
            return
        key = (id(state), id(operation))  # both are kept alive in calls: ids stay unique
        if key not in self._seen:
            self._seen.add(key)
            self.calls.append((predict, (state, operation)))
            if len(self.calls) >= BATCH:
                self._replay()

    def measure(self) -> tuple[set[str] | None, set[str]]:
        """The arcs executed by the calls noted since the last measure, as
        ``file:source->target`` keys (``None`` if another coverage measurement
        was running in this process: it would have been disturbed), and the
        arcs the set-aside steps would have executed."""
        self._replay()
        arcs, self._arcs = self._arcs, set()
        aside, self._aside_arcs = self._aside_arcs, set()
        return arcs, aside

    def _replay(self) -> None:
        calls, self.calls, self._seen = self.calls, [], set()
        aside, self.aside_calls = self.aside_calls, []
        if self._arcs is None:
            return
        arcs, aside_arcs = _traced(calls), _traced(aside)
        if arcs is None or aside_arcs is None:
            self._arcs = None
            return
        self._arcs |= arcs
        self._aside_arcs |= aside_arcs
        self.wanted -= arcs | aside_arcs
        self.complete = not self.wanted


def _traced(calls: Sequence[tuple[Callable[..., Any], tuple[Any, ...]]]) -> set[str] | None:
    """The model arcs ``calls`` execute, under coverage.py; ``None`` if another
    coverage measurement is running in this process."""
    import coverage

    if not calls:
        return set()
    if coverage.Coverage.current() is not None:
        return None
    paths = [str(_MODEL_DIR / name) for name in MODEL_FILES.values()]
    measurer = coverage.Coverage(data_file=None, include=paths, branch=True, config_file=False)
    measurer.start()
    try:
        for predict, arguments in calls:
            with suppress(Exception):  # a refusal by ValueError is a prediction too
                predict(*arguments)
    finally:
        measurer.stop()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a model file no call entered is no news
        data = measurer.get_data()
    arcs: set[str] = set()
    for path in paths:
        for source_line, target_line in data.arcs(path) or ():
            arcs.add(f"model/{Path(path).name}:{source_line}->{'exit' if target_line < 0 else target_line}")
    return arcs


#: How many noted calls are replayed at once: the first batch of a round
#: usually reaches every required branch, and the recording stops there.
BATCH = 500


_ACTIVE: Recorder | None = None


def note(predict: Callable[..., Any], states: Iterable[object], operation: object) -> None:
    """The harness calls this for every judged step: ``predict(state, operation)``
    for each state the judge keeps. Nothing is kept unless a run is measuring."""
    if _ACTIVE is not None:
        for state in states:
            _ACTIVE.add(predict, state, operation)


def note_set_aside(predict: Callable[..., Any], states: Iterable[object], operation: object) -> None:
    """The harness calls this for a step the target's declared findings set aside
    (it is never sent): the branches only such steps reach are not required."""
    if _ACTIVE is not None:
        for state in states:
            _ACTIVE.add(predict, state, operation, aside=True)


def start_recording(wanted: Iterable[str] = ()) -> Recorder:
    """Record the judged model calls until :func:`stop_recording`; ``wanted``:
    the arcs whose reaching ends the recording (empty: record everything)."""
    global _ACTIVE
    _ACTIVE = Recorder(wanted)
    return _ACTIVE


def stop_recording() -> None:
    global _ACTIVE
    _ACTIVE = None


def key_of(branch: Branch) -> str:
    """The arc part of a branch's name (what :meth:`Recorder.measure` returns)."""
    return branch.name.rsplit(" (", 1)[0]


def summary(requirement: Sequence[Branch], reached: set[str] | None, aside: Set[str] = frozenset()) -> dict[str, Any]:
    """The certificate's record: every branch required for the machine and the
    target's capabilities, by name; those reached; and those only steps the
    target's declared findings set aside would reach (``set_aside``: listed,
    not required). ``measured`` False: another coverage run was active, nothing
    is claimed."""
    names = [b.name for b in requirement]
    if reached is None:
        return {"measured": False, "required": names, "reached": [], "set_aside": []}
    return {
        "measured": True,
        "required": names,
        "reached": [b.name for b in requirement if key_of(b) in reached],
        "set_aside": [b.name for b in requirement if key_of(b) not in reached and key_of(b) in aside],
    }


def unreached(record: dict[str, Any]) -> list[str]:
    """The required branches a record says were neither reached nor set aside."""
    if not record or not record.get("measured"):
        return []
    settled = set(record.get("reached", ())) | set(record.get("set_aside", ()))
    return [name for name in record.get("required", ()) if name not in settled]


def merged(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Several rounds' (or shards') records as one: the union of what they
    reached; set aside, what some set aside and none reached."""
    records = [r for r in records if r]
    if not records:
        return {}
    measured = all(r.get("measured") for r in records)
    required_names = list(records[0].get("required", ()))
    reached = {name for r in records for name in r.get("reached", ())}
    aside = {name for r in records for name in r.get("set_aside", ())} - reached
    return {
        "measured": measured,
        "required": required_names,
        "reached": [name for name in required_names if name in reached] if measured else [],
        "set_aside": [name for name in required_names if name in aside] if measured else [],
    }


class BranchRun:
    """One property's run: what it must reach, and what its rounds reached.
    A context manager around the rounds (it records the judged model calls);
    :meth:`round_ended` measures a round. ``family`` is the family's name: only
    the step families whose model is in :data:`MODEL_FILES` are measured."""

    def __init__(self, family: str, machine: type) -> None:
        self.requirement = required(family, machine_traits(machine)) if family in MODEL_FILES else ()
        self.measuring = family in MODEL_FILES
        self.reached: set[str] | None = set()
        self.aside: set[str] = set()
        self._recorder: Recorder | None = None

    def __enter__(self) -> BranchRun:
        if self.measuring:
            self._recorder = start_recording(key_of(branch) for branch in self.requirement)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._recorder is not None:
            self.round_ended()  # a round cut short by a finding still counts what it ran
            stop_recording()
            self._recorder = None

    def round_ended(self) -> None:
        if self._recorder is None:
            return
        arcs, aside = self._recorder.measure()
        self.aside |= aside
        if arcs is None or self.reached is None:
            self.reached = None
        else:
            self.reached |= arcs

    def unreached(self) -> list[str]:
        return unreached(self.record())

    def record(self) -> dict[str, Any]:
        if not self.measuring:
            return {}
        return summary(self.requirement, self.reached, self.aside)


def branches_phrase(record: object) -> str:
    """The certificate's short line: ``model branches 53 of 55 reached``, or ""
    for a run that measured none (R7). Certificates are untrusted input: a
    malformed record gives ""."""
    if not isinstance(record, dict) or not record:
        return ""
    if not record.get("measured"):
        return "model branches not measured (another coverage measurement was running)"
    required_names, reached, aside = record.get("required"), record.get("reached"), record.get("set_aside") or []
    if not isinstance(required_names, list) or not isinstance(reached, list) or not isinstance(aside, list):
        return ""
    phrase = f"model branches {len(reached)} of {len(required_names) - len(aside)} reached"
    return phrase + (f" ({len(aside)} only set-aside steps reach, not required)" if aside else "")
