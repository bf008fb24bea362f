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
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Callable
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
from rollcert.targets.adapter import Target
from rollcert.targets.adapter import describe_exception

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


def entry_text(counterexample: Counterexample, target_name: str) -> str | None:
    """The corpus file for ``counterexample`` (canonical JSON, so that equal
    counterexamples are equal bytes), or ``None`` for one that is not a step
    trace (R7's concurrent programs replay as programs, not as traces)."""
    if counterexample.family not in {f.name for f in STEP_FAMILIES} or counterexample.property_id not in PROPERTIES:
        return None
    if counterexample.property_id in _program_properties():
        return None
    record: dict[str, Any] = trace_json(
        family_named(counterexample.family), counterexample.config(), [step.operation for step in counterexample.steps]
    )
    record["property"] = counterexample.property_id
    record["target"] = target_name
    return json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n"


def _program_properties() -> frozenset[str]:
    from rollcert.stateful_tests.families import FAMILIES

    return frozenset(pid for family in FAMILIES if family not in STEP_FAMILIES for pid in family.property_ids)


def file_name(text: str) -> str:
    """The name a corpus file has: the first hex digits of its content's SHA-256."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:NAME_DIGITS] + ".json"


def add_counterexample(directory: Path, counterexample: Counterexample, target_name: str) -> bool:
    """Write ``counterexample`` into the corpus; whether it was new. The write goes
    to a temporary file renamed into place, so a reader (another shard copying
    files in) never sees half a trace."""
    text = entry_text(counterexample, target_name)
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


def read_corpus(directory: Path, target_name: str) -> tuple[list[CorpusEntry], list[str]]:
    """The entries of ``directory`` that belong to ``target_name``, in name order,
    and a warning per file skipped. A missing directory is an empty corpus (the
    first run of a gate)."""
    warnings: list[str] = []
    try:
        names = sorted(n for n in os.listdir(directory) if n.endswith(".json") and not n.startswith("."))
    except FileNotFoundError:
        return [], []
    except OSError as error:
        return [], [f"cannot list the corpus {directory}: {error.strerror}"]
    if len(names) > MAX_FILES:
        warnings.append(f"the corpus {directory} holds {len(names)} traces; only the first {MAX_FILES} are read")
        names = names[:MAX_FILES]
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


def replay_corpus(target: Target, directory: Path, property_ids: Sequence[str]) -> CorpusReplay:
    """Replay the traces of ``directory`` that belong to ``target`` and to one of
    ``property_ids``: per property, the counts and the shortest trace that still
    fails as a ``violated`` result "from the corpus". A trace this target cannot
    run (it lacks the capability, a step it could never be given) is skipped
    with a warning; so is one whose replay broke the adapter — the machines,
    which run next, judge the adapter."""
    entries, warnings = read_corpus(directory, target.name)
    chosen = [entry for entry in entries if entry.property_id in property_ids]
    replays: dict[str, PropertyReplay] = {}
    for property_id in property_ids:
        mine = [entry for entry in chosen if entry.property_id == property_id]
        if not mine:
            continue
        replayed, failures = 0, []
        for entry in mine:
            outcome = _replay_entry(target, entry)
            if isinstance(outcome, str):
                warnings.append(f"skipped the corpus file {entry.name}: {outcome}")
                continue
            replayed += 1
            if outcome is not None:
                failures.append((len(outcome.counterexample.steps) if outcome.counterexample else 0, entry.name, outcome))
        shortest = min(failures, key=lambda f: (f[0], f[1]))[2] if failures else None
        replays[property_id] = PropertyReplay(replayed, len(failures), shortest)
    return CorpusReplay(str(directory), replays, tuple(warnings))


def _replay_entry(target: Target, entry: CorpusEntry) -> PropertyResult | str | None:
    """``None``: the trace passes; a result: it fails; text: why it could not run."""
    family, config, operations = parse_trace(entry.trace)
    prop = PROPERTIES[entry.property_id]
    missing = family.required_capabilities(entry.property_id) - target.capabilities
    if missing:
        return f"the target lacks the capability: {', '.join(sorted(c.value for c in missing))}"
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
    except Unjudgeable as reason:
        return f"the judge could not decide it: {reason}"
    except NotGenerable as error:
        return f"not a trace this target can run: {error}"
    except KeyboardInterrupt:
        if interrupted_by_user():
            raise
        return "the replay was interrupted by the target"
    except Exception as error:  # the adapter broke on it; the machines judge the adapter next
        return f"the replay broke: {describe_exception(error)}"
    return None


def summary(replayed: CorpusReplay, added: int) -> CorpusSummary:
    return CorpusSummary(
        replayed.directory,
        sum(p.replayed for p in replayed.properties.values()),
        sum(p.failed for p in replayed.properties.values()),
        len(replayed.warnings),
        added,
    )
