"""The public helper API for diff appliers (capability ``DIFFS``).

The diff machine calls ``apply_diff(snapshot, mode, hunks, reads)`` with plain
data: ``hunks`` a sequence of ``(start, end, replacement)`` triples
(:data:`HunkTriples`) and ``reads`` a sequence of ``(start, end)`` pairs
(:data:`ReadPairs`), both in the snapshot's coordinates. An adapter of a diff
applier — a patch tool, a merge library, your own implementation — subclasses
:class:`DiffApplier`, which does the part every applier shares once:

1. it refuses a snapshot that is not an instance of ``snapshot_type`` (the
   class of the tokens the adapter's ``snapshot()`` hands out) with
   ``TypeError``;
2. it turns the triples into :class:`~rollcert.model.contract.Hunk` and the
   pairs into :class:`~rollcert.model.contract.Region` (:func:`as_hunks`,
   :func:`as_regions`);
3. it checks the diff with the model's authoring rule
   :func:`~rollcert.model.contract.check_diff` against ``base(snapshot)``
   (bad input raises ``ValueError``/``TypeError`` before the tool runs) — an
   adapter whose implementation checks the diff itself, as part of what is
   certified, overrides :meth:`DiffApplier.check` to do nothing;
4. it calls :meth:`DiffApplier.apply`, the adapter's own step, with the
   normalised arguments (a :class:`DiffRequest`); ``apply`` applies the diff to the live base and
   returns an opaque handle, or raises ``StaleBaseError``.

:func:`apply_hunks` builds B1, the snapshot with the hunks applied, for a tool
that is given the two versions rather than the hunks, and
:func:`applier_target` registers an applier that keeps no undo log (capability
``DIFFS`` alone, with notes on what its patches cannot carry). Everything else of the
adapter protocol (:mod:`rollcert.targets.adapter`) stays as in
:class:`~rollcert.targets.adapter.UnsupportedOperations`: ``read``,
``splice``, ``snapshot`` and whatever else the adapter declares are its own.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from typing import AnyStr
from typing import ClassVar

from rollcert.model.contract import Hunk
from rollcert.model.contract import Region
from rollcert.model.contract import check_diff
from rollcert.targets.adapter import Capability
from rollcert.targets.adapter import HunkTriples
from rollcert.targets.adapter import ReadPairs
from rollcert.targets.adapter import SutFactory
from rollcert.targets.adapter import Target
from rollcert.targets.adapter import UnsupportedOperations

__all__ = [
    "DiffApplier",
    "DiffRequest",
    "HunkTriples",
    "ReadPairs",
    "applier_target",
    "apply_hunks",
    "as_hunks",
    "as_regions",
]


def as_hunks(hunks: HunkTriples) -> tuple[Hunk, ...]:
    """The ``(start, end, replacement)`` triples as the contract's hunks (not checked yet)."""
    return tuple(Hunk(start, end, replacement) for start, end, replacement in hunks)


def as_regions(reads: ReadPairs) -> tuple[Region, ...]:
    """The ``(start, end)`` pairs as the contract's read regions (not checked yet)."""
    return tuple(Region(start, end) for start, end in reads)


def apply_hunks(base: AnyStr, hunks: Sequence[Hunk], text: Callable[[bytes], AnyStr]) -> AnyStr:
    """B1: ``base`` with each checked hunk's span replaced by ``text(replacement)``.

    The hunks are applied from the last to the first, so the offsets of the
    earlier ones stay valid; ``text`` turns a replacement into ``base``'s type
    (``bytes`` for bytes, a decoder for a ``str`` buffer; it may refuse with
    ``ValueError``).
    """
    result = base
    for hunk in reversed(hunks):
        result = result[: hunk.start] + text(hunk.replacement) + result[hunk.end :]
    return result


@dataclass(frozen=True)
class DiffRequest:
    """One ``apply_diff`` call, normalised: what :meth:`DiffApplier.check` and
    :meth:`DiffApplier.apply` receive."""

    #: The adapter's own snapshot token (an instance of ``snapshot_type``).
    snapshot: Any
    #: The anchor mode as given ("positional" or "content" once checked).
    mode: str
    hunks: tuple[Hunk, ...]
    reads: tuple[Region, ...]


class DiffApplier(UnsupportedOperations):
    """Base class of a diff applier's adapter: ``apply_diff`` done once, ``apply`` left to the tool.

    A subclass sets ``snapshot_type``, implements ``snapshot()``, :meth:`base`
    and :meth:`apply`, and everything its other capabilities need.
    """

    #: The class of the tokens ``snapshot()`` returns; ``apply_diff`` refuses others.
    snapshot_type: ClassVar[type[Any]] = object
    #: The word for what the snapshot is of, in the ``TypeError`` for a foreign one.
    snapshot_owner: ClassVar[str] = "adapter"

    def base(self, snapshot: Any) -> bytes | str:
        """B0, the content ``snapshot`` was taken of (its length bounds the diff)."""
        raise NotImplementedError(f"{type(self).__name__} must implement base()")

    def check(self, request: DiffRequest) -> None:
        """The authoring rule: ``check_diff`` against :meth:`base` (override to leave it to the SUT)."""
        check_diff(len(self.base(request.snapshot)), request.mode, request.hunks, request.reads)

    def apply(self, request: DiffRequest) -> object:
        """Apply the checked diff to the live base: a handle, or ``StaleBaseError``."""
        raise NotImplementedError(f"{type(self).__name__} must implement apply()")

    def apply_diff(self, snapshot: object, mode: str, hunks: HunkTriples, reads: ReadPairs) -> object:
        if not isinstance(snapshot, self.snapshot_type):
            raise TypeError(f"not a snapshot of this {self.snapshot_owner}: {type(snapshot).__name__}")
        request = DiffRequest(snapshot, mode, as_hunks(hunks), as_regions(reads))
        self.check(request)
        return self.apply(request)


def applier_target(
    name: str,
    version: str,
    factory: SutFactory,
    description: str,
    *,
    patch: str,
    judged: str,
    keeper: str,
    alphabet: bytes | None = None,
) -> Target:
    """The target of a diff applier without an undo log: capability ``DIFFS`` alone.

    Its notes say that ``mode`` and ``reads`` are not passed (a ``patch`` cannot
    carry them; how the tool ``judged`` staleness instead) and that capability
    ``core`` is not declared (``keeper`` keeps no undo log), so S2, S3 and the
    R properties are *not assessed*.
    """
    return Target(
        name=name,
        version=version,
        capabilities=frozenset({Capability.DIFFS}),
        factory=factory,
        description=description,
        notes={
            "mode and reads": f"not passed (a {patch} cannot carry them): {judged}",
            "core": f"not declared: {keeper} keeps no undo log (no rollback, no rollback_diff)",
        },
        alphabet=alphabet,
    )
