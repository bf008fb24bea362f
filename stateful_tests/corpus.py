"""The corpus: every counterexample a gate ever found, replayed first on the next run.

A certification run is seeded and uses no example database, on purpose: its
certificate depends only on the target, the profile and the seed. That makes a
fixed seed a fixed test set, and a regression the seed does not reach passes
every run. The corpus is the memory a CI gate needs without giving that up
(SPEC §7): a directory of trace files, one per counterexample, which a run
replays before its machines generate anything (as Hypothesis replays its
database, ``Phase.reuse``). A trace that still fails is the property's
violation at once, said to come from the corpus; one that passes stays, for the
regression that brings it back.

The files are ``rollcert-trace`` JSON (``rollcert replay --trace "$(cat F)"``
runs one) with two more fields, the property and the target's name, and each is
named by the hash of its content, so two runs that found the same
counterexample write one file and the corpora of many runs (CI jobs, shards,
machines) merge by copying files into one directory.

A corpus is untrusted input: an artifact downloaded from another job, a
directory anyone could write to. Only regular files (no symbolic links, no
devices) of at most :data:`MAX_FILE_BYTES` are read, at most :data:`MAX_FILES`
of them, each checked field by field by :func:`~rollcert.stateful_tests.traces.parse_trace`;
nothing in one is ever executed or imported. A file that cannot be read — another
release's schema, a truncated download, a hand edit — is skipped with a warning,
never a crash and never a verdict.

The replay fails closed: a trace that fails, crashes, hangs or cannot be judged
is never a pass. One whose replay raised, timed out or broke the adapter is
``error``; one the judge's bounds left undecided is ``unknown``; each names its
file. The entries are streamed, one file read, replayed and let go at a time
(:func:`replay_entries`), each outcome handed on as it is known, so that a
supervisor (``rollcert.command.cli.corpus_replayer``) gives every entry a
deadline of its own and, when one takes its worker process down, makes that
entry ``error`` (:func:`entry_lost`) and replays the rest in a fresh worker.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import stat
from collections.abc import Callable
from collections.abc import Container
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

from rollcert.model.properties import PROPERTIES
from rollcert.stateful_tests.families import STEP_FAMILIES
from rollcert.stateful_tests.families import family_named
from rollcert.stateful_tests.family import NotGenerable
from rollcert.stateful_tests.family import Unjudgeable
from rollcert.stateful_tests.judge import Violation
from rollcert.stateful_tests.judge import interrupted_by_user
from rollcert.stateful_tests.judge import replay
from rollcert.stateful_tests.traces import parse_trace
from rollcert.stateful_tests.traces import trace_json
from rollcert.stateful_tests.verdicts import Counterexample
from rollcert.stateful_tests.verdicts import PropertyResult
from rollcert.targets.adapter import HarnessError
from rollcert.targets.adapter import Target
from rollcert.targets.adapter import describe_exception
from rollcert.targets.adapter import exception_message
from rollcert.targets.portable import portable_path
from rollcert.targets.portable import portable_target

#: A corpus file larger than this is not a counterexample (the trace bounds allow
#: 10 000 operations; real ones have a handful).
MAX_FILE_BYTES = 4 << 20
#: Files read from one corpus at most; the rest are skipped, with a warning.
MAX_FILES = 10_000
#: How much of a file's content hash names it (hex digits of SHA-256).
NAME_DIGITS = 32
#: Where the pytest plugin keeps its corpus, relative to the rootdir.
DEFAULT_PLUGIN_CORPUS = Path(".rollcert") / "corpus"


@dataclass(frozen=True)
class CorpusEntry:
    """One readable corpus file: whose counterexample it was, and its trace (JSON text)."""

    name: str
    property_id: str
    target: str
    trace: str
    length: int


@dataclass(frozen=True)
class PropertyReplay:
    """What replaying one property's traces gave: how many ran and failed, and the
    violation to report (the shortest failing trace), if any."""

    replayed: int = 0
    failed: int = 0
    result: PropertyResult | None = None


@dataclass(frozen=True)
class CorpusReplay:
    """A corpus replayed for one target: per property, and the files skipped (with why)."""

    directory: str
    properties: dict[str, PropertyReplay] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    #: Of the warnings, the files no target could read (the same for every shard of a run).
    unreadable: int = 0


@dataclass(frozen=True)
class CorpusSummary:
    """The corpus lines of a certificate: traces replayed, failed, skipped, and added."""

    directory: str
    replayed: int
    failed: int
    skipped: int
    added: int


#: Replays the corpus of ``directory`` for ``property_ids`` somewhere (a supervised
#: worker process: rollcert.command.cli), or here: ``(directory, property_ids) -> replay``.
CorpusRunner = Callable[[Path, Sequence[str]], CorpusReplay]


def entry_text(counterexample: Counterexample, target_name: str, property_id: str | None = None) -> str | None:
    """The corpus file for ``counterexample`` (canonical JSON, so that equal
    counterexamples are equal bytes), saved under ``property_id`` (default: the
    machine that found it), or ``None`` for one that is not a step trace (R7's
    concurrent programs replay as programs, not as traces) or that its family's
    replay could not judge under that property."""
    property_id = counterexample.property_id if property_id is None else property_id
    families = {f.name: f for f in STEP_FAMILIES}
    if counterexample.family not in families or property_id not in PROPERTIES:
        return None
    if property_id in _program_properties() or property_id not in families[counterexample.family].property_ids:
        return None
    record: dict[str, Any] = trace_json(
        family_named(counterexample.family), counterexample.config(), [step.operation for step in counterexample.steps]
    )
    record["property"] = property_id
    record["target"] = target_name
    return json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n"


def _program_properties() -> frozenset[str]:
    from rollcert.stateful_tests.families import FAMILIES

    return frozenset(pid for family in FAMILIES if family not in STEP_FAMILIES for pid in family.property_ids)


def file_name(text: str) -> str:
    """The name a corpus file has: the first hex digits of its content's SHA-256."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:NAME_DIGITS] + ".json"


def add_counterexample(
    directory: Path, counterexample: Counterexample, target_name: str, property_id: str | None = None
) -> bool:
    """Write ``counterexample`` into the corpus (under ``property_id``, default its
    machine's); whether it was new. The write goes to a temporary file renamed
    into place, so a reader (another shard copying files in) never sees half a
    trace."""
    text = entry_text(counterexample, target_name, property_id)
    if text is None:
        return False
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / file_name(text)
    if path.exists():
        return False
    temporary = directory / f".{path.name}.{os.getpid()}.tmp"
    with suppress(FileNotFoundError):
        temporary.unlink()  # left by a run that died here; never written through (it may be a link)
    # O_EXCL: created here, so not a link someone planted where the file goes.
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        file.write(text)
    os.replace(temporary, path)
    return True


def add_counterexamples(
    directory: Path, results: Mapping[str, PropertyResult], target_name: str, *, skip: Container[str] = ()
) -> int:
    """Write into the corpus the counterexample each property's verdict shows,
    saved under that property, for the properties not in ``skip`` (those the
    corpus itself decided); how many were new. Under the property, not the
    machine that met it: a corpus trace counts for the property whose clause it
    breaks (SPEC §6a), so R3's violation found while exploring R4 is saved as
    R3's, and is a violation again when the corpus is next replayed."""
    return sum(
        add_counterexample(directory, found, target_name, property_id)
        for property_id, result in results.items()
        if property_id not in skip
        # every distinct finding (issue 43), the counterexample first
        for found in (result.findings or ([result.counterexample] if result.counterexample is not None else []))
    )


def list_corpus(directory: Path) -> tuple[list[str], list[str]]:
    """The names of the trace files of ``directory``, in name order (the order
    every replay follows, so that a replay lost part-way resumes after the
    entry it lost), at most :data:`MAX_FILES`, and a warning per thing left
    out. A missing directory is an empty corpus (the first run of a gate).
    Only names: a file is opened when its turn comes."""
    try:
        names = sorted(n for n in os.listdir(directory) if n.endswith(".json") and not n.startswith("."))
    except FileNotFoundError:
        return [], []
    except OSError as error:
        return [], [f"cannot list the corpus {directory}: {error.strerror}"]
    if len(names) > MAX_FILES:
        left_out = len(names) - MAX_FILES
        return names[:MAX_FILES], [
            f"the corpus {directory} holds {len(names)} traces; only the first {MAX_FILES} are read, "
            f"{left_out} left out (from {names[MAX_FILES]})"
        ]
    return names, []


def read_corpus(directory: Path, target_name: str) -> tuple[list[CorpusEntry], list[str]]:
    """The entries of ``directory`` that belong to ``target_name``, in name order,
    and a warning per file skipped. Every trace is held at once: for tools and
    tests; a replay streams them (:func:`replay_entries`)."""
    names, warnings = list_corpus(directory)
    entries = []
    for name in names:
        try:
            entry = _read_entry(directory / name)
        except (OSError, ValueError, TypeError, UnicodeDecodeError) as error:
            warnings.append(f"skipped the corpus file {name}: {error}")
            continue
        if entry.target == target_name:
            entries.append(entry)
    return entries, warnings


def _read_entry(path: Path) -> CorpusEntry:
    """One file, checked before its content is trusted: a regular file (not
    followed through a link), bounded, a trace of a known family and property."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        descriptor = os.open(path, flags)
    except OSError as error:
        raise OSError(f"cannot open it ({error.strerror}; symbolic links are not followed)") from None
    with os.fdopen(descriptor, "rb") as file:
        status = os.fstat(file.fileno())
        if not stat.S_ISREG(status.st_mode):
            raise ValueError("not a regular file")
        if status.st_size > MAX_FILE_BYTES:
            raise ValueError(f"larger than {MAX_FILE_BYTES} bytes")
        data = file.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise ValueError(f"larger than {MAX_FILE_BYTES} bytes")
    text = data.decode("utf-8")
    family, _config, operations = parse_trace(text)
    record = json.loads(text)  # parse_trace accepted it: a JSON object
    property_id, target = record.get("property"), record.get("target")
    if not isinstance(property_id, str) or property_id not in family.property_ids:
        raise ValueError(f"field 'property' must name a property of the {family.name} family, got {property_id!r}")
    if not isinstance(target, str):
        raise TypeError("field 'target' must be the target's name")
    return CorpusEntry(path.name, property_id, target, text, len(operations))


@dataclass(frozen=True)
class EntryOutcome:
    """What one corpus file gave, small enough to send from a worker process.

    ``result`` is set when the trace did not pass: ``violated`` (it still
    fails), ``error`` (its replay crashed, hung or broke the adapter) or
    ``unknown`` (the judge's budget ran out on it) — never a pass, never
    dropped. ``skipped`` says why a file is no test of this target (unreadable,
    another target's, a capability it lacks): a warning, not a verdict. A file
    of another target, or of a property not asked for, gives no outcome."""

    name: str
    property_id: str = ""
    length: int = 0
    result: PropertyResult | None = None
    skipped: str = ""


def replay_entries(
    target: Target, directory: Path, property_ids: Sequence[str], *, after: str = "",
    starting: Callable[[str, str], None] | None = None,
) -> Iterator[EntryOutcome]:
    """Replay, one file at a time, the traces of ``directory`` named after
    ``after`` that belong to ``target`` and to one of ``property_ids``.

    Streamed: a file is read, parsed, replayed and let go before the next is
    opened, so memory does not grow with the corpus. ``starting(name,
    property_id)`` is told before each trace runs: a supervisor that loses the
    process running it (a crash, a hang killed at its deadline) then knows the
    one entry to blame, and resumes after it (``after``)."""
    names, warnings = list_corpus(directory)
    for warning in warnings:
        yield EntryOutcome("", skipped=warning)
    for name in names:
        if name <= after:
            continue
        try:
            entry = _read_entry(directory / name)
        except (OSError, ValueError, TypeError, UnicodeDecodeError) as error:
            yield EntryOutcome(name, skipped=f"skipped the corpus file {name}: {error}")
            continue
        if entry.target != target.name or entry.property_id not in property_ids:
            continue
        if starting is not None:
            starting(entry.name, entry.property_id)
        outcome = _replay_entry(target, entry)
        if isinstance(outcome, str):
            yield EntryOutcome(name, entry.property_id, entry.length, skipped=f"skipped the corpus file {name}: {outcome}")
        else:
            yield EntryOutcome(name, entry.property_id, entry.length, result=outcome)


class CorpusTally:
    """A corpus replay summed up as its outcomes arrive (from a generator here,
    or one by one from a worker process): per property, the traces run, those
    that did not pass, and the result that stands for them — the shortest trace
    that still fails (``violated``) if any, else the first that could not be
    judged (``error``, then ``unknown``). Holds that one result per property,
    never the traces that passed."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._counts: dict[str, list[int]] = {}
        self._chosen: dict[str, tuple[tuple[int, int, str], PropertyResult]] = {}
        self.warnings: list[str] = []
        self._unreadable = 0

    def add(self, outcome: EntryOutcome) -> None:
        if outcome.skipped:
            self.warnings.append(outcome.skipped)
            self._unreadable += not outcome.property_id
            return
        tally = self._counts.setdefault(outcome.property_id, [0, 0])
        tally[0] += 1
        if outcome.result is None:
            return
        tally[1] += 1
        result = outcome.result
        rank = (_VERDICT_RANK.get(result.verdict, len(_VERDICT_RANK)), _steps(result, outcome.length), outcome.name)
        held = self._chosen.get(outcome.property_id)
        if held is None or rank < held[0]:
            self._chosen[outcome.property_id] = (rank, result)

    def decided(self, property_id: str) -> bool:
        return property_id in self._chosen

    def replay(self) -> CorpusReplay:
        replays = {
            pid: PropertyReplay(replayed, failed, self._chosen[pid][1] if pid in self._chosen else None)
            for pid, (replayed, failed) in self._counts.items()
        }
        for pid, (_, result) in self._chosen.items():  # decided with no trace run: the whole replay was lost
            replays.setdefault(pid, PropertyReplay(0, 0, result))
        return CorpusReplay(str(self.directory), replays, tuple(self.warnings), self._unreadable)

    def lose(self, property_id: str, result: PropertyResult) -> None:
        """``result`` stands for ``property_id``, whose traces could not all be run."""
        if property_id not in self._chosen:
            self._chosen[property_id] = ((len(_VERDICT_RANK), 0, ""), result)


def fold_outcomes(directory: Path, outcomes: Iterable[EntryOutcome]) -> CorpusReplay:
    """The corpus replay of ``outcomes`` (:class:`CorpusTally`)."""
    tally = CorpusTally(directory)
    for outcome in outcomes:
        tally.add(outcome)
    return tally.replay()


#: Which corpus result stands for a property when several traces did not pass.
_VERDICT_RANK = {"violated": 0, "error": 1, "unknown": 2}


def _steps(result: PropertyResult, length: int) -> int:
    return len(result.counterexample.steps) if result.counterexample is not None else length


def replay_corpus(target: Target, directory: Path, property_ids: Sequence[str]) -> CorpusReplay:
    """Replay the traces of ``directory`` that belong to ``target`` and to one of
    ``property_ids``, here: per property, the counts and the result of the traces
    that did not pass (:func:`fold_outcomes`). A trace this target cannot run
    (it lacks the capability, a step it could never be given) is skipped with a
    warning; one whose replay raised, timed out or could not be judged is not
    (:func:`_replay_entry`). A crash of this process is its caller's to
    supervise (``rollcert.command.cli.corpus_replayer``)."""
    return fold_outcomes(directory, replay_entries(target, directory, property_ids))


def entry_lost(directory: Path, name: str, property_id: str, why: str, target_text: str = "") -> PropertyResult:
    """The result of a corpus trace whose replay took its process down or ran
    past its deadline (``why``): ``error`` — SPEC §6 scores a crash or a hang of
    the SUT's process as ``error``, never ``violated`` — naming the file, and how
    to replay it; never a pass, and never dropped."""
    prop = PROPERTIES.get(property_id)
    how = ""
    if target_text:
        trace = f"$(cat {shlex.quote(os.path.join(portable_path(directory, 'corpus'), name))})"
        how = f'; replay it: rollcert replay {shlex.quote(portable_target(target_text))} --trace "{trace}"'
    return PropertyResult(
        property_id, "error", prop.title if prop is not None else "",
        reason=f"from the corpus ({name}): its replay did not finish: {why}{how}",
    )


def _replay_entry(target: Target, entry: CorpusEntry) -> PropertyResult | str | None:
    """``None``: the trace passes; a result: it did not (``violated``, ``error``,
    ``unknown``); text: why it is no test of this target (a warning)."""
    family, config, operations = parse_trace(entry.trace)
    prop = PROPERTIES[entry.property_id]
    missing = family.required_capabilities(entry.property_id) - target.capabilities
    if missing:
        return f"the target lacks the capability: {', '.join(sorted(c.value for c in missing))}"

    def undecided(verdict: str, why: str) -> PropertyResult:
        return PropertyResult(entry.property_id, verdict, prop.title, reason=f"from the corpus ({entry.name}): {why}")

    try:
        replay(family, target, config, operations)
    except Violation as violation:
        if entry.property_id != "R0" and entry.property_id not in violation.broken:
            return None  # it fails, but another rule's clause broke (SPEC §6a): the machines judge this one
        counterexample = Counterexample(
            entry.property_id, target.name, violation.config.initial, violation.config.capacity,
            violation.config.policy, tuple(violation.steps), violation.explanation, violation.config.durable,
            family.name, violation.config.durability, broken=violation.broken, harm=violation.harm,
        )
        return PropertyResult(
            entry.property_id, "violated", prop.title, counterexample=counterexample,
            reason=f"from the corpus ({entry.name}): {violation.explanation}",
        )
    except Unjudgeable as reason:  # the judge's budget ran out on it: SPEC §6's unknown
        return undecided("unknown", f"the judge could not decide it: {reason}")
    except NotGenerable as error:
        return f"not a trace this target can run: {error}"
    except KeyboardInterrupt:
        if interrupted_by_user():
            raise
        return undecided("error", "the replay was interrupted by the target")
    except HarnessError as error:  # a call that timed out, a server that died or broke the protocol
        return undecided("error", f"the adapter or the SUT broke: {exception_message(error)}")
    except BaseException as error:  # the adapter raised; as the machines judge it, an error
        return undecided("error", f"the adapter raised {describe_exception(error)}")
    return None


def summary(replayed: CorpusReplay, added: int) -> CorpusSummary:
    return CorpusSummary(
        replayed.directory,
        sum(p.replayed for p in replayed.properties.values()),
        sum(p.failed for p in replayed.properties.values()),
        len(replayed.warnings),
        added,
    )
