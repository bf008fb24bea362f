"""Causes, not symptoms: why a run ended ``unknown``, or why a violation is what it is (issue 43).

"The run never reached: a rollback of a record made after an earlier
length-changing edit" names a symptom. When no rollback ever succeeded (a tool
whose undo refuses everything, a target whose every splice is over its limits),
the cause is that one line: "rollback never succeeded: 0 of 812 calls". And a
world dimension out of reach says nothing to a reader who does not know why a
delete past 4096 bytes matters to divergence detection; each one here carries a
line saying what bug it is there to show, for the property that requires it.

The counts are kept in one place: :func:`count_call`, called by the judge's
session on every step it judges, into the run's tallies (which shards add up).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from collections.abc import Sequence

from rollcert.stateful_tests.world import DIMENSIONS
from rollcert.stateful_tests.world import SIZE_THRESHOLDS

#: Operation kinds whose every call may rightly be refused (a checkpoint of
#: another buffer, a corrupt journal's recovery): their refusals are no cause.
REFUSED_BY_DESIGN = frozenset({"rollback_to_foreign", "corrupt_record"})

_CALLS, _ACCEPTED, _ALLOWED = "calls:", "accepted:", "allowed:"


def count_call(tallies: Counter[str], kind: str, target_accepted: bool, rules_allow: bool) -> None:
    """Count one judged call of ``kind``: whether the target accepted it, and
    whether the model's own outcome was a success."""
    tallies[_CALLS + kind] += 1
    if target_accepted:
        tallies[_ACCEPTED + kind] += 1
    if rules_allow:
        tallies[_ALLOWED + kind] += 1


def never_succeeded(tallies: Mapping[str, int], kind: str) -> str:
    """``"rollback never succeeded: 0 of 812 calls (the rules allowed 640 of them)"``,
    or ``""`` if the target accepted a call of ``kind`` (or was never asked one)."""
    calls = tallies.get(_CALLS + kind, 0)
    if not calls or tallies.get(_ACCEPTED + kind, 0):
        return ""
    allowed = tallies.get(_ALLOWED + kind, 0)
    rules = f"the rules allowed {allowed} of them" if allowed else "the rules refused every one too"
    return f"{kind} never succeeded: 0 of {calls} call{'s' if calls != 1 else ''} ({rules})"


def operations_never_succeeded(tallies: Mapping[str, int]) -> list[str]:
    """:func:`never_succeeded` for every kind the run called, those the rules
    allowed first (the target's doing), in a stable order."""
    kinds = sorted(key[len(_CALLS):] for key in tallies if key.startswith(_CALLS))
    kinds = [kind for kind in kinds if kind not in REFUSED_BY_DESIGN]
    kinds.sort(key=lambda kind: not tallies.get(_ALLOWED + kind, 0))
    return [phrase for phrase in (never_succeeded(tallies, kind) for kind in kinds) if phrase]


_STATED_CAUSE = re.compile(r"^(\w+) never succeeded: 0 of \d+ calls? \([^)]*\)\. ")


def restated(text: str, tallies: Mapping[str, int]) -> str:
    """``text`` (a reason or explanation) with the cause it starts with, if any,
    counted again on ``tallies``: a merge of shards counts the calls of every
    round it keeps, as the serial run did, not those of the last round alone."""
    stated = _STATED_CAUSE.match(text)
    if stated is None:
        return text
    fresh = never_succeeded(tallies, stated.group(1))
    return f"{fresh}. {text[stated.end():]}" if fresh else text


# -- why each world dimension matters ---------------------------------------------------------

_SIZE_WHY = {
    "removed": "a record that keeps removed bytes in a fixed or length-prefixed field cuts or wraps them past",
    "inserted": "a record that keeps inserted bytes or their length in a small field cuts or wraps them past",
    "buffer": "a buffer that changes representation (chunks, pages, a rope) past a size goes wrong only past",
}

#: Per property, where its rule makes a dimension matter in its own way (by
#: dimension name, or by the size family ``removed``/``inserted``/``buffer``).
_BY_PROPERTY: dict[str, dict[str, str]] = {
    "R1": {
        "removed": "a write-ahead record too large for the journal's frame must be refused, not written in part",
        "inserted": "a write-ahead record too large for the journal's frame must be refused, not written in part",
    },
    "R2": {
        "removed": "an inverse restores its bytes where they were removed; a record that cuts long removals restores"
        " only their start",
        "multibyte_utf8": "an inverse placed by character offset instead of byte offset lands beside its place",
        "splits_character": "an inverse placed by character offset instead of byte offset lands beside its place",
    },
    "R4": {
        "removed": "a divergence check that hashes or samples only a prefix or window of a large region misses an"
        " out-of-log write past it",
        "inserted": "a divergence check that hashes or samples only a prefix or window of a large region misses an"
        " out-of-log write past it",
        "buffer": "a whole-buffer digest kept on a sample or a prefix misses an out-of-log write far from the start",
        "buffer_past_chunk": "a digest kept per chunk must see a write in any chunk, not only the first",
    },
    "R5": {
        "removed": "a journal frame that splits or truncates large records is exercised only past",
        "inserted": "a journal frame that splits or truncates large records is exercised only past",
        "high_byte": "a journal that stores records as text (decoded) changes bytes 0x80-0xFF on recovery",
        "invalid_utf8": "a journal that stores records as text cannot hold these bytes and recovers others",
    },
    "R7": {
        "removed": "a long edit or rollback keeps its critical section open longer, so another thread can see it"
        " half done only past",
        "inserted": "a long edit or rollback keeps its critical section open longer, so another thread can see it"
        " half done only past",
        "buffer": "a buffer that changes representation past a size has critical sections of its own, raced only"
        " past",
    },
    "R6": {
        "depth_past_16": "a bounded log that evicts from the wrong end shows it only once it is full and deep",
        "depth_past_64": "a bounded log that evicts from the wrong end shows it only once it is full and deep",
    },
}

_GENERAL: dict[str, str] = {
    "line_break": "code that splits, normalises or counts lines goes wrong only where a line break is edited",
    "crlf": "a tool that normalises line endings turns \\r\\n into \\n on the way back",
    "nul": "C strings and some decoders stop or choke at a NUL byte",
    "high_byte": "a log kept as decoded text changes bytes 0x80-0xFF",
    "invalid_utf8": "a log kept as decoded text cannot hold these bytes and replaces them",
    "multibyte_utf8": "offsets counted in characters instead of bytes drift by each character's extra bytes",
    "splits_character": "an edit inside a character is where byte and character offsets disagree",
    "character_boundary": "an off-by-one between byte and character offsets shows next to a multi-byte character",
    "buffer_past_chunk": "code that crosses from one chunk to the next runs only in buffers longer than a chunk",
    "depth_past_16": "a log that caps, compacts or indexes records with a small counter goes wrong only in deep histories",
    "depth_past_64": "a log that caps, compacts or indexes records with a small counter goes wrong only in deep histories",
}


def why_it_matters(property_id: str, dimension: str) -> str:
    """One line: what bug ``dimension`` is there to show, for ``property_id``'s rule."""
    family, _, size = dimension.partition("_past_")
    sized = size.isdigit() and int(size) in SIZE_THRESHOLDS and family in _SIZE_WHY
    own = _BY_PROPERTY.get(property_id, {})
    text = own.get(dimension) or (own.get(family) if sized else None)
    if text is None:
        text = _GENERAL.get(dimension) or (_SIZE_WHY[family] if sized else "")
    if sized and text.endswith(" past"):
        text += f" {size} bytes"
    return text


_DESCRIPTIONS = {d.name: d.description for d in DIMENSIONS}


def unreached_dimensions(world: Mapping[str, object]) -> list[tuple[str, str]]:
    """The dimensions a world record (``world.world_report``) requires and never
    reached, as ``(name, description)``: what :func:`unknown_reason` takes."""
    counts = world.get("dimensions") or {}
    assert isinstance(counts, Mapping)
    return [(str(name), _DESCRIPTIONS.get(str(name), str(name))) for name, count in counts.items() if not count]


def unknown_reason(
    property_id: str, situations: Sequence[str], dimensions: Sequence[tuple[str, str]], tallies: Mapping[str, int]
) -> str:
    """The one-line reason of an ``unknown`` verdict: first the operations that
    never succeeded (the likely cause), then what the run never reached, each
    dimension (``(name, description)``) with why it matters to ``property_id``."""
    missing = list(situations)
    for name, description in dimensions:
        why = why_it_matters(property_id, name) if name in _DESCRIPTIONS else ""
        missing.append(f"{description} ({name})" + (f" — {property_id}: {why}" if why else ""))
    reason = "the run never reached: " + "; ".join(missing)
    causes = operations_never_succeeded(tallies)
    return "; ".join(causes) + "; so " + reason if causes else reason
