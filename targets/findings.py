"""Known findings as data: a TOML file that sets findings aside, for any target.

Why: once a package's first finding is known (say "undo with nothing left to
undo does nothing"), its one-step counterexample is every property's shortest,
and nothing behind it can show. Setting it aside used to take Python (a
``KnownFinding`` and a ``-focused`` target per package); a subprocess target
needed a Python wrapper just for that. A findings file is given to
``rollcert certify|smoke|explore|replay --set-aside FILE`` and works for every
kind of target::

    [[finding]]
    name = "undo_past_horizon_ignored"          # [a-z0-9_]+, unique in the file
    property = "R0"                             # the property its counterexample violates
    operation = "rollback"                      # the kind of step it is about
    when = "steps > depth"                      # optional; omitted = every such step
    reason = "undo with nothing left to undo does nothing and succeeds"

The machines do not take a step a finding covers (and shrinking never brings it
back); the certificate lists each finding with its reason. ``property`` says
where the finding was reported; the step is skipped in every property's run,
because the same step is every property's shortest counterexample.

``when`` is a conjunction (``and``) of clauses from a fixed vocabulary (nothing
is evaluated as Python): ``NAME OP NAME_OR_INT`` with OP one of ``== != < <= >
>=``, or a flag, optionally preceded by ``not``. The names each operation knows
are in :data:`VOCABULARY`; a splice (out-of-log write, tool write) finding covers
only *valid* calls, since invalid ones are the contract's and always asked.
``tool_write`` is the diff machines' other writer (a plain edit between a
snapshot and an apply, which a ``splice`` finding does not cover);
``rollback_to_foreign`` a rollback to another buffer's checkpoint token; a
``rollback_to`` finding may say ``current`` (a re-revert: the checkpoint is the
state the buffer is in), ``dead``, or compare its ``steps``.
"""

from __future__ import annotations

import importlib
import operator
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rollcert.model.contract import check_splice_arguments
from rollcert.model.properties import ALL_PROPERTY_IDS
from rollcert.model.reference import splice_bytes
from rollcert.targets.adapter import KnownFinding
from rollcert.targets.adapter import Target
from rollcert.targets.adapter import TargetError
from rollcert.targets.adapter import UsageError

#: Where the findings files of the registered ``-focused`` targets live: package data of
#: :mod:`rollcert.targets.known_findings`, installed with rollcert (not only in a checkout).
FINDINGS_DIR = Path(__file__).resolve().parent / "known_findings"

KEYS = ("name", "property", "operation", "when", "reason")
REQUIRED_KEYS = ("name", "property", "operation", "reason")

Number = Callable[[Any, Any], "int | None"]
Flag = Callable[[Any, Any], bool]


def _text(state: Any) -> bytes:
    """The live text of a rollback-family ``ModelState`` or a diff-family ``DiffModelState``."""
    content = getattr(state, "content", None)
    return content if isinstance(content, bytes) else state.current


def _valid_edit(state: Any, operation: Any) -> bool:
    try:
        check_splice_arguments(len(_text(state)), operation.offset, operation.delete_length, operation.insert)
    except (ValueError, TypeError):
        return False
    return True


def _unchanging(state: Any, operation: Any) -> bool:
    text = _text(state)
    return splice_bytes(text, operation.offset, operation.delete_length, bytes(operation.insert)) == text


def _int_field(name: str) -> Number:
    def read(state: Any, operation: Any) -> int | None:
        value = getattr(operation, name)
        return value if type(value) is int else None

    return read


def _depth(state: Any, operation: Any) -> int | None:
    return getattr(state, "depth", None)


def _length(state: Any, operation: Any) -> int | None:
    return len(_text(state))


def _base_moved(state: Any, operation: Any) -> bool:
    snapshots = getattr(state, "snapshots", ())
    index = operation.snapshot
    return type(index) is int and 0 <= index < len(snapshots) and snapshots[index].content != _text(state)


def _read_changed(state: Any, operation: Any) -> bool:
    """A declared read region of the snapshot is no longer found, unchanged, in the live base."""
    from rollcert.model.diffs import locate

    if not _base_moved(state, operation):
        return False
    base = state.snapshots[operation.snapshot].cells
    return any(
        0 <= r.start < r.end <= len(base) and locate(base[r.start : r.end], state.current) is None
        for r in operation.reads
    )


def _unterminated(state: Any, operation: Any) -> bool:
    """The live text, or the text the diff makes of its snapshot, is not empty and does
    not end in a line break (line-based tools often add one back)."""
    texts = [_text(state)]
    snapshots = getattr(state, "snapshots", ())
    index = operation.snapshot
    if type(index) is int and 0 <= index < len(snapshots):
        result = snapshots[index].content
        for hunk in sorted(operation.hunks, key=lambda hunk: hunk.start, reverse=True):
            if 0 <= hunk.start <= hunk.end <= len(result):
                result = result[: hunk.start] + bytes(hunk.replacement) + result[hunk.end :]
        texts.append(result)
    return any(text and not text.endswith(b"\n") for text in texts)


@dataclass(frozen=True)
class Words:
    """What a ``when`` may say about one operation kind."""

    numbers: dict[str, Number]
    flags: dict[str, Flag]
    #: Only valid calls of this kind can be set aside (splice-like operations).
    valid_only: bool = False


_EDIT = Words(
    numbers={
        "offset": _int_field("offset"),
        "delete_length": _int_field("delete_length"),
        "insert_length": lambda state, op: len(op.insert),
        "length": _length,
        "depth": _depth,
    },
    flags={"unchanging": _unchanging},
    valid_only=True,
)

def _checkpoint_position(state: Any, operation: Any) -> int | None:
    """Where the checkpoint's state is in the live history (``None``: dead, or no such checkpoint)."""
    checkpoints, serials = getattr(state, "checkpoints", ()), getattr(state, "serials", ())
    index = operation.checkpoint
    if type(index) is not int or not 0 <= index < len(checkpoints) or checkpoints[index][0] not in serials:
        return None
    return int(serials.index(checkpoints[index][0]))


def _revert_steps(state: Any, operation: Any) -> int | None:
    """How many records a rollback to the checkpoint undoes (``None`` for a dead one)."""
    position = _checkpoint_position(state, operation)
    depth = _depth(state, operation)
    return None if position is None or depth is None else depth - position


def _dead_checkpoint(state: Any, operation: Any) -> bool:
    index = operation.checkpoint
    return (
        type(index) is int
        and 0 <= index < len(getattr(state, "checkpoints", ()))
        and _checkpoint_position(state, operation) is None
    )


#: Operation kind (``Operation.kind``) -> the names its ``when`` may use.
VOCABULARY: dict[str, Words] = {
    "splice": _EDIT,
    "out_of_log_write": _EDIT,
    #: The diff machines' other writer (S1, S2): a plain edit between a snapshot and an apply.
    "tool_write": _EDIT,
    "rollback": Words(numbers={"steps": _int_field("steps"), "depth": _depth, "length": _length}, flags={}),
    #: ``current``: the checkpoint names the state the buffer is in, so the rollback
    #: undoes nothing (a re-revert: the same checkpoint again, right after rolling back
    #: to it); ``dead``: its state left the history (R3/S3 say it must be refused).
    "rollback_to": Words(
        numbers={"checkpoint": _int_field("checkpoint"), "depth": _depth, "steps": _revert_steps},
        flags={
            "current": lambda state, op: _revert_steps(state, op) == 0,
            "dead": _dead_checkpoint,
        },
    ),
    #: A checkpoint token of another buffer (it must be refused).
    "rollback_to_foreign": Words(numbers={"depth": _depth, "length": _length}, flags={}),
    "checkpoint": Words(numbers={"depth": _depth}, flags={}),
    "adopt_current": Words(numbers={"depth": _depth}, flags={}),
    "apply_diff": Words(
        numbers={
            "hunks": lambda state, op: len(op.hunks),
            "reads": lambda state, op: len(op.reads),
            "depth": _depth,
        },
        flags={
            "positional": lambda state, op: op.mode == "positional",
            "content": lambda state, op: op.mode == "content",
            "base_moved": _base_moved,
            "read_changed": _read_changed,
            "unterminated": _unterminated,
        },
    ),
    "rollback_diff": Words(numbers={"depth": _depth}, flags={}),
}

_COMPARISONS: dict[str, Callable[[int, int], bool]] = {
    "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
}
_TOKEN = re.compile(r"\s*(?:(?P<int>\d+)|(?P<word>[a-z_]+)|(?P<op>==|!=|<=|>=|<|>))")


class FindingsError(UsageError):
    """A findings file that cannot be read; the message names the file, line and key."""


def _tokens(text: str) -> list[str]:
    tokens, position = [], 0
    while position < len(text.rstrip()):
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            raise ValueError(f"cannot read {text[position:].strip()!r}")
        tokens.append(match.group(match.lastgroup or 0))
        position = match.end()
    return tokens


def parse_condition(kind: str, text: str) -> Callable[[Any, Any], bool]:
    """``when`` for operations of ``kind`` as a predicate; ``ValueError`` naming the bad word."""
    words = VOCABULARY[kind]

    def term(token: str) -> Number:
        if token.isdigit():
            constant = int(token)
            return lambda state, op: constant
        if token in words.numbers:
            return words.numbers[token]
        raise ValueError(f"unknown name {token!r} for {kind} (numbers: {', '.join(words.numbers) or 'none'})")

    clauses: list[Callable[[Any, Any], bool]] = []
    for clause_text in re.split(r"\band\b", text):
        tokens = _tokens(clause_text)
        negated = bool(tokens) and tokens[0] == "not"
        if negated:
            tokens = tokens[1:]
        if len(tokens) == 1 and tokens[0] in words.flags:
            flag = words.flags[tokens[0]]
            clauses.append((lambda f: lambda s, o: not f(s, o))(flag) if negated else flag)
        elif len(tokens) == 3 and tokens[1] in _COMPARISONS and not negated:
            left, compare, right = term(tokens[0]), _COMPARISONS[tokens[1]], term(tokens[2])
            clauses.append(_comparison(left, compare, right))
        else:
            raise ValueError(
                f"cannot read clause {clause_text.strip()!r} for {kind}: give 'NAME OP NAME_OR_NUMBER' "
                f"or a flag ({', '.join(words.flags) or 'none'}), joined by 'and'"
            )
    return lambda state, op: all(clause(state, op) for clause in clauses)


def _comparison(left: Number, compare: Callable[[int, int], bool], right: Number) -> Callable[[Any, Any], bool]:
    def holds(state: Any, op: Any) -> bool:
        a, b = left(state, op), right(state, op)
        return a is not None and b is not None and compare(a, b)

    return holds


def _finding(kind: str, condition: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
    valid_only = VOCABULARY[kind].valid_only

    def applies(state: Any, operation: Any) -> bool:
        if getattr(operation, "kind", None) != kind:
            return False
        if valid_only and not _valid_edit(state, operation):
            return False
        return condition(state, operation)

    return applies


def _line_of(text: str, index: int, key: str | None) -> int:
    """The line of the ``index``-th ``[[finding]]`` (or of its ``key``), for messages."""
    lines = text.splitlines()
    headers = [n for n, line in enumerate(lines) if re.match(r"\s*\[\[\s*finding\s*\]\]", line)]
    if index >= len(headers):
        return 1
    start = headers[index]
    end = headers[index + 1] if index + 1 < len(headers) else len(lines)
    if key is not None:
        for n in range(start, end):
            if re.match(rf"\s*{re.escape(key)}\s*=", lines[n]):
                return n + 1
    return start + 1


#: The largest findings file read: a few hundred findings fit in a tenth of it.
MAX_FINDINGS_BYTES = 1 << 20


def parse_findings(text: str, source: str = "<findings>") -> tuple[KnownFinding, ...]:
    """The findings of a findings file's text; :class:`FindingsError` naming line and key."""
    if len(text) > MAX_FINDINGS_BYTES:
        raise FindingsError(f"{source}: more than {MAX_FINDINGS_BYTES} characters: not a findings file")
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise FindingsError(f"{source}: not valid TOML: {error}") from None
    except RecursionError:  # tomllib recurses once per nested array or inline table
        raise FindingsError(f"{source}: arrays or tables nested too deeply to be a findings file") from None
    unknown_tables = sorted(set(document) - {"finding"})
    if unknown_tables:
        raise FindingsError(f"{source}: unknown key {unknown_tables[0]!r}: a findings file holds only [[finding]] tables")
    entries = document.get("finding", [])
    if not isinstance(entries, list) or not entries:
        raise FindingsError(f"{source}: no [[finding]] table; each finding is one [[finding]] with {', '.join(REQUIRED_KEYS)}")
    findings: list[KnownFinding] = []
    names: set[str] = set()
    for index, entry in enumerate(entries):

        def fail(key: str | None, message: str, index: int = index) -> FindingsError:
            where = f"line {_line_of(text, index, key)}" + (f", key {key!r}" if key else "")
            return FindingsError(f"{source}, {where}: {message}")

        extra = sorted(set(entry) - set(KEYS))
        if extra:
            raise fail(extra[0], f"unknown key; a finding has {', '.join(KEYS)}")
        for key in REQUIRED_KEYS:
            if key not in entry:
                raise fail(None, f"finding #{index + 1} has no {key!r}")
        for key in KEYS:
            if key in entry and not (isinstance(entry[key], str) and entry[key].strip()):
                raise fail(key, "must be a non-empty string")
        name, property_id, kind = entry["name"], entry["property"], entry["operation"]
        if not re.fullmatch(r"[a-z0-9_]+", name):
            raise fail("name", f"{name!r}: use lower-case letters, digits and '_'")
        if name in names:
            raise fail("name", f"{name!r} is named twice")
        names.add(name)
        if property_id not in ALL_PROPERTY_IDS:
            raise fail("property", f"{property_id!r} is not one of {', '.join(ALL_PROPERTY_IDS)}")
        if kind not in VOCABULARY:
            raise fail("operation", f"{kind!r} is not one of {', '.join(VOCABULARY)}")
        try:
            condition = parse_condition(kind, entry.get("when", "").strip()) if entry.get("when") else None
        except ValueError as error:
            raise fail("when", str(error)) from None
        predicate = _finding(kind, condition or (lambda state, op: True))
        findings.append(KnownFinding(name, entry["reason"].strip(), predicate))
    return tuple(findings)


def load_findings(path: Path) -> tuple[KnownFinding, ...]:
    """The findings of the file at ``path`` (``--set-aside PATH``)."""
    from rollcert.targets.input_files import InputFileError
    from rollcert.targets.input_files import read_input_text

    try:  # a regular file only (a FIFO used to hang the run), and no larger than a findings file can be
        text = read_input_text(path, "findings file", MAX_FINDINGS_BYTES)
    except InputFileError as error:
        raise FindingsError(str(error)) from None
    return parse_findings(text, str(path))


def with_findings(target: Target, path: Path | None) -> Target:
    """``target`` with the findings of ``path`` set aside too (``None``: unchanged)."""
    from dataclasses import replace

    if path is None:
        return target
    return replace(target, set_aside=(*target.set_aside, *load_findings(path)))


# -- the registered -focused targets (adapters.THIRD_PARTY_TARGETS: Focused) ------------------


def focused_from_file(plain: Target, file_name: str, also: tuple[str, ...] = ()) -> Target:
    """The registered target ``plain``, renamed ``-focused``, with ``FINDINGS_DIR/file_name``
    set aside, and the Python findings ``also`` names ("module:attribute")."""
    from rollcert.targets.adapters import focused

    path = FINDINGS_DIR / file_name
    if not path.is_file():  # only a damaged installation lacks it: it is package data
        raise TargetError(
            f"the {plain.name}-focused target reads {path}, which is missing from this installation; "
            f"reinstall rollcert, or certify {plain.name} with --set-aside FILE"
        )
    extra: list[KnownFinding] = []
    for location in also:
        module_name, _, attribute = location.partition(":")
        finding = getattr(importlib.import_module(module_name), attribute)
        if not isinstance(finding, KnownFinding):
            raise TargetError(f"{location} is not a KnownFinding")
        extra.append(finding)
    return focused(plain, *load_findings(path), *extra)
