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

A corpus can also live in a Hypothesis example database (issue 45): a CI team
with twenty machines, or a campaign spread over several, needs one live memory
that every run reads and writes as it goes, which a directory copied between
jobs is not. ``--corpus`` takes a directory (the layout above, unchanged), a
``redis://`` URL (Hypothesis's ``RedisExampleDatabase``) or ``module:attr``
naming any ``ExampleDatabase`` — ``ReadOnlyDatabase``, ``MultiplexedDatabase``
and ``GitHubArtifactDatabase`` compose as Hypothesis documents them, and
:class:`TraceDirectoryDatabase` puts the directory layout above into such a
composition. One key per target and property (:func:`corpus_key`), one value
per trace (its JSON bytes). A database save is a set add, so writers on many
machines lose nothing; a value is as untrusted as a file (bounded, checked field
by field, replayed under its own deadline), whoever wrote it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
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
from typing import TypeAlias

from hypothesis.database import ExampleDatabase

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


#: A URL's scheme that names a Redis server (``redis://host:port/db``; TLS, a Unix socket).
REDIS_SCHEMES = ("redis://", "rediss://", "unix://")
#: ``module:attr`` (dotted on both sides): a Python object that is an ``ExampleDatabase``.
_OBJECT_NAME = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")
#: The prefix of every key rollcert writes in a shared database (beside Hypothesis's own).
KEY_PREFIX = b"rollcert-corpus/1:"
#: How long a Redis corpus keeps a key nobody read or wrote: a corpus is every
#: counterexample ever found, so far longer than Hypothesis's default of 8 days.
REDIS_EXPIRY_DAYS = 3650


class CorpusUnavailable(ValueError):
    """A corpus that cannot be opened or reached (a bad URL, no server, no
    ``redis`` package, a ``module:attr`` that is not a database): one line."""


@dataclass(frozen=True)
class DatabaseCorpus:
    """A corpus kept in a Hypothesis ``ExampleDatabase``, named by text so that it
    travels to worker processes (a database object holds a connection, which
    does not pickle): a Redis URL or ``module:attr``."""

    spec: str

    def open(self) -> ExampleDatabase:
        return open_database(self.spec)

    def __str__(self) -> str:
        return shown_spec(self.spec)


#: Where a corpus lives: a directory of trace files, or a database.
Corpus: TypeAlias = "Path | DatabaseCorpus"


def corpus_location(text: str) -> Path | DatabaseCorpus:
    """``--corpus TEXT``: a Redis URL or ``module:attr`` is a database (an
    existing path wins over ``module:attr``: write ``./a:b`` for a folder of
    that name), anything else a directory."""
    if text.startswith(REDIS_SCHEMES) or (_OBJECT_NAME.match(text) and not os.path.exists(text)):
        return DatabaseCorpus(text)
    return Path(text)


def shown_spec(spec: str) -> str:
    """``spec`` as logs and certificates show it: a URL's password left out."""
    from urllib.parse import urlsplit

    if not spec.startswith(REDIS_SCHEMES):
        return spec
    try:
        parts = urlsplit(spec)
        if parts.password is None:
            return spec
        host = parts.hostname or ""
        shown = f"{parts.username}:***@{host}" if parts.username else f":***@{host}"
        return parts._replace(netloc=shown + (f":{parts.port}" if parts.port else "")).geturl()
    except ValueError:
        return spec.split("://", 1)[0] + "://…"


_OPENED: dict[str, ExampleDatabase] = {}


def open_database(spec: str) -> ExampleDatabase:
    """The database ``spec`` names (opened once per process); :class:`CorpusUnavailable` otherwise."""
    if spec in _OPENED:
        return _OPENED[spec]
    if spec.startswith(REDIS_SCHEMES):
        try:
            import redis
            from hypothesis.extra.redis import RedisExampleDatabase
        except ImportError:
            raise CorpusUnavailable(
                f"--corpus {shown_spec(spec)}: the redis package is not installed (pip install 'rollcert[redis]')"
            ) from None
        from datetime import timedelta

        try:
            client = redis.Redis.from_url(spec, socket_timeout=30, socket_connect_timeout=10)
        except ValueError as error:
            raise CorpusUnavailable(f"--corpus {shown_spec(spec)}: not a Redis URL ({error})") from None
        database: ExampleDatabase = RedisExampleDatabase(
            client, expire_after=timedelta(days=REDIS_EXPIRY_DAYS), key_prefix=b"", listener_channel="rollcert-corpus"
        )
    else:
        import importlib

        module_name, _, attribute = spec.partition(":")
        try:
            found: Any = importlib.import_module(module_name)
            for part in attribute.split("."):
                found = getattr(found, part)
        except (ImportError, AttributeError) as error:
            raise CorpusUnavailable(f"--corpus {spec}: cannot import it ({type(error).__name__}: {error})") from None
        if callable(found) and not isinstance(found, ExampleDatabase):
            found = found()  # a factory: a database per process (a connection does not survive a fork)
        if not isinstance(found, ExampleDatabase):
            raise CorpusUnavailable(
                f"--corpus {spec}: not a hypothesis.database.ExampleDatabase (got {type(found).__name__})"
            )
        database = found
    _OPENED[spec] = database
    return database


def check_corpus(corpus: DatabaseCorpus) -> None:
    """Open ``corpus`` and read one key, so that a server that is not there is
    one line before the run, not an error after it (:class:`CorpusUnavailable`)."""
    database = corpus.open()
    try:
        list(database.fetch(KEY_PREFIX + b"probe"))
    except Exception as error:  # a connection refused, a timeout, an authentication error
        raise CorpusUnavailable(f"--corpus {corpus}: cannot read it ({describe_exception(error)})") from None


def corpus_key(target_name: str, property_id: str) -> bytes:
    """The key of ``target_name``'s traces for ``property_id`` in a database: a
    digest of the target as certificates name it (no absolute path of one
    machine, :func:`~rollcert.targets.portable.portable_target`) and the property,
    so that every machine running the same TARGET reads and writes one key."""
    digest = hashlib.sha256(f"{portable_target(target_name)}\0{property_id}".encode()).hexdigest()[:NAME_DIGITS]
    return KEY_PREFIX + digest.encode("ascii")


class TraceDirectoryDatabase(ExampleDatabase):
    """The directory layout of a ``--corpus DIR`` (one file per trace, named by
    its content's hash) as an ``ExampleDatabase``, so that it composes with
    Hypothesis's ``MultiplexedDatabase`` and ``ReadOnlyDatabase`` (a local
    directory plus a shared store). ``fetch`` reads every file, as a directory
    replay does, with the same checks (regular files only, bounded, parsed
    field by field) and yields the traces of the target and property ``key``
    names; a file that cannot be read is left out here (a directory given to
    ``--corpus`` itself names it in a warning)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__()
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"TraceDirectoryDatabase({str(self.path)!r})"

    def fetch(self, key: bytes) -> Iterable[bytes]:
        names, _ = list_corpus(self.path)
        for name in names:
            try:
                entry = _read_entry(self.path / name)
            except (OSError, ValueError, TypeError, UnicodeDecodeError):
                continue
            if corpus_key(entry.target, entry.property_id) == key:
                yield entry.trace.encode("utf-8")

    def save(self, key: bytes, value: bytes) -> None:
        """Write ``value`` as a trace file; a value that is not a trace of the
        target and property ``key`` names is not written (the file carries its
        key in its own fields)."""
        try:
            entry = _entry_of("", value)
        except (ValueError, TypeError, UnicodeDecodeError):
            return
        if corpus_key(entry.target, entry.property_id) == key:
            _write_file(self.path, entry.trace)

    def delete(self, key: bytes, value: bytes) -> None:
        """Traces are never deleted: a passing trace is the regression test for its bug."""


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
#: worker process: rollcert.command.cli), or here: ``(corpus, property_ids) -> replay``.
CorpusRunner = Callable[[Any, Sequence[str]], CorpusReplay]


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
    corpus: Corpus, counterexample: Counterexample, target_name: str, property_id: str | None = None
) -> bool:
    """Write ``counterexample`` into the corpus (under ``property_id``, default its
    machine's); whether it was new. In a directory the write goes to a temporary
    file renamed into place, so a reader (another shard copying files in) never
    sees half a trace; in a database it is a set add under the target's and
    property's key (:func:`corpus_key`), so two writers lose nothing, and it
    counts as new only if the database holds it now and did not before (a
    read-only database holds nothing new)."""
    text = entry_text(counterexample, target_name, property_id)
    if text is None:
        return False
    if isinstance(corpus, DatabaseCorpus):
        record = json.loads(text)
        key, value = corpus_key(target_name, record["property"]), text.encode("utf-8")
        database = corpus.open()
        if value in set(database.fetch(key)):
            return False
        database.save(key, value)
        return value in set(database.fetch(key))
    return _write_file(corpus, text)


def _write_file(directory: Path, text: str) -> bool:
    """One trace file in ``directory``, named by its content; whether it was new."""
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
    corpus: Corpus, results: Mapping[str, PropertyResult], target_name: str, *, skip: Container[str] = ()
) -> int:
    """Write into the corpus the counterexample each property's verdict shows,
    saved under that property, for the properties not in ``skip`` (those the
    corpus itself decided); how many were new. Under the property, not the
    machine that met it: a corpus trace counts for the property whose clause it
    breaks (SPEC §6a), so R3's violation found while exploring R4 is saved as
    R3's, and is a violation again when the corpus is next replayed."""
    return sum(
        add_counterexample(corpus, found, target_name, property_id)
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
    return _entry_of(path.name, data)


def _entry_of(name: str, data: bytes) -> CorpusEntry:
    """A trace's bytes (a file's or a database value's), checked before they are
    trusted: bounded, a trace of a known family and property, naming a target."""
    if not isinstance(data, bytes | bytearray | memoryview):
        raise TypeError(f"a corpus value must be bytes, got {type(data).__name__}")
    if len(data) > MAX_FILE_BYTES:
        raise ValueError(f"larger than {MAX_FILE_BYTES} bytes")
    text = bytes(data).decode("utf-8")
    family, _config, operations = parse_trace(text)
    record = json.loads(text)  # parse_trace accepted it: a JSON object
    property_id, target = record.get("property"), record.get("target")
    if not isinstance(property_id, str) or property_id not in family.property_ids:
        raise ValueError(f"field 'property' must name a property of the {family.name} family, got {property_id!r}")
    if not isinstance(target, str):
        raise TypeError("field 'target' must be the target's name")
    return CorpusEntry(name or file_name(text), property_id, target, text, len(operations))


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
    target: Target, corpus: Corpus, property_ids: Sequence[str], *, after: str = "",
    starting: Callable[[str, str], None] | None = None, done: Container[str] = (),
) -> Iterator[EntryOutcome]:
    """Replay, one entry at a time, the traces of ``corpus`` that belong to
    ``target`` and to one of ``property_ids``: in a directory, the files named
    after ``after``; anywhere, none named in ``done``.

    Streamed: an entry is read, parsed, replayed and let go before the next is
    read, so memory does not grow with the corpus. ``starting(name,
    property_id)`` is told before each trace runs: a supervisor that loses the
    process running it (a crash, a hang killed at its deadline) then knows the
    one entry to blame, and resumes without it (``after``, ``done``)."""
    if isinstance(corpus, DatabaseCorpus):
        yield from _replay_database(target, corpus, property_ids, starting, done)
        return
    names, warnings = list_corpus(corpus)
    for warning in warnings:
        yield EntryOutcome("", skipped=warning)
    for name in names:
        if name <= after or name in done:
            continue
        try:
            entry = _read_entry(corpus / name)
        except (OSError, ValueError, TypeError, UnicodeDecodeError) as error:
            yield EntryOutcome(name, skipped=f"skipped the corpus file {name}: {error}")
            continue
        if entry.target != target.name or entry.property_id not in property_ids:
            continue
        yield _replayed(target, entry, starting)


def _replayed(
    target: Target, entry: CorpusEntry, starting: Callable[[str, str], None] | None, kind: str = "file"
) -> EntryOutcome:
    if starting is not None:
        starting(entry.name, entry.property_id)
    outcome = _replay_entry(target, entry)
    if isinstance(outcome, str):
        return EntryOutcome(
            entry.name, entry.property_id, entry.length, skipped=f"skipped the corpus {kind} {entry.name}: {outcome}"
        )
    return EntryOutcome(entry.name, entry.property_id, entry.length, result=outcome)


def _replay_database(
    target: Target, corpus: DatabaseCorpus, property_ids: Sequence[str],
    starting: Callable[[str, str], None] | None, done: Container[str],
) -> Iterator[EntryOutcome]:
    """The database's values under ``target``'s key of each property, each
    checked as a file is (:func:`_entry_of`) and named by its content's hash: a
    value that is not a trace of that target and property (a writer that put
    it under another key) is skipped with a warning, as are the values past
    :data:`MAX_FILES`. A database that cannot be read is every property's
    ``error`` (never an empty corpus, never a pass)."""
    seen: set[str] = set()
    try:
        database = corpus.open()
    except CorpusUnavailable as error:
        for property_id in property_ids:
            yield EntryOutcome("", property_id, result=_unreadable(property_id, str(error)))
        return
    for property_id in property_ids:
        try:
            values = database.fetch(corpus_key(target.name, property_id))
            for value in values:
                if len(seen) >= MAX_FILES:
                    yield EntryOutcome("", skipped=f"the corpus {corpus} holds more than {MAX_FILES} traces; the rest are left out")
                    return
                name = file_name(bytes(value).decode("utf-8", "replace")) if isinstance(value, bytes) else "?"
                if name in seen:
                    continue
                seen.add(name)
                if name in done:
                    continue
                try:
                    entry = _entry_of(name, value)
                except (ValueError, TypeError, UnicodeDecodeError) as error:
                    yield EntryOutcome(name, property_id, skipped=f"skipped the corpus entry {name}: {error}")
                    continue
                if portable_target(entry.target) != portable_target(target.name) or entry.property_id != property_id:
                    yield EntryOutcome(name, property_id, skipped=(
                        f"skipped the corpus entry {name}: stored under the key of {property_id} of this target, "
                        f"it is a trace of {entry.property_id} of {entry.target!r}"
                    ))
                    continue
                yield _replayed(target, entry, starting, "entry")
        except Exception as error:  # the server went away, a timeout: no pass for what was not read
            why = f"the corpus {corpus} could not be read: {describe_exception(error)}"
            yield EntryOutcome("", property_id, result=_unreadable(property_id, why))


def _unreadable(property_id: str, why: str) -> PropertyResult:
    prop = PROPERTIES.get(property_id)
    return PropertyResult(property_id, "error", prop.title if prop is not None else "", reason=why)


class CorpusTally:
    """A corpus replay summed up as its outcomes arrive (from a generator here,
    or one by one from a worker process): per property, the traces run, those
    that did not pass, and the result that stands for them — the shortest trace
    that still fails (``violated``) if any, else the first that could not be
    judged (``error``, then ``unknown``). Holds that one result per property,
    never the traces that passed."""

    def __init__(self, corpus: Corpus) -> None:
        self.directory = corpus
        self._counts: dict[str, list[int]] = {}
        self._chosen: dict[str, tuple[tuple[int, int, str], PropertyResult]] = {}
        self.warnings: list[str] = []
        self._unreadable = 0

    def add(self, outcome: EntryOutcome) -> None:
        if outcome.skipped:
            self.warnings.append(outcome.skipped)
            self._unreadable += not outcome.property_id
            return
        if not outcome.name and outcome.result is not None:  # the corpus itself could not be read
            self.lose(outcome.property_id, outcome.result)
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


def fold_outcomes(directory: Corpus, outcomes: Iterable[EntryOutcome]) -> CorpusReplay:
    """The corpus replay of ``outcomes`` (:class:`CorpusTally`)."""
    tally = CorpusTally(directory)
    for outcome in outcomes:
        tally.add(outcome)
    return tally.replay()


#: Which corpus result stands for a property when several traces did not pass.
_VERDICT_RANK = {"violated": 0, "error": 1, "unknown": 2}


def _steps(result: PropertyResult, length: int) -> int:
    return len(result.counterexample.steps) if result.counterexample is not None else length


def replay_corpus(target: Target, directory: Corpus, property_ids: Sequence[str]) -> CorpusReplay:
    """Replay the traces of ``directory`` that belong to ``target`` and to one of
    ``property_ids``, here: per property, the counts and the result of the traces
    that did not pass (:func:`fold_outcomes`). A trace this target cannot run
    (it lacks the capability, a step it could never be given) is skipped with a
    warning; one whose replay raised, timed out or could not be judged is not
    (:func:`_replay_entry`). A crash of this process is its caller's to
    supervise (``rollcert.command.cli.corpus_replayer``)."""
    return fold_outcomes(directory, replay_entries(target, directory, property_ids))


def entry_lost(directory: Corpus, name: str, property_id: str, why: str, target_text: str = "") -> PropertyResult:
    """The result of a corpus trace whose replay took its process down or ran
    past its deadline (``why``): ``error`` — SPEC §6 scores a crash or a hang of
    the SUT's process as ``error``, never ``violated`` — naming the file, and how
    to replay it; never a pass, and never dropped."""
    prop = PROPERTIES.get(property_id)
    how = ""
    if target_text and isinstance(directory, Path):
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
