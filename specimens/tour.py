"""``rollcert docs``: the tour of the properties (``docs/tour.md``), generated.

One chapter per property of ``rollcert.model.properties.PROPERTIES`` (so a new
property gets a chapter the day it is stated): the failure as a story (the
docstring of the specimen that breaks it), the rule (the property's own
statement — the one place it is written), the minimal counterexample the suite
finds on that specimen (certified now, with a fixed seed), the function of the
bundled implementation that keeps the rule, and what the z3 obligations
(``rollcert.proofs.obligations``) prove about it.

Everything but the pointers into ``impl/`` is computed; the pointers are
resolved by import, so renaming a function fails the generation instead of
leaving a dead link. ``tests/test_tour.py`` fails when the committed tour
differs from what this writes.
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass

from rollcert.model.properties import PROPERTIES
from rollcert.reports.explain import render_text
from rollcert.reports.explain import rule_sentence
from rollcert.reports.explain import walkthrough
from rollcert.specimens import Specimen
from rollcert.specimens import load_all
from rollcert.stateful_tests.certify import certify

#: The certification that finds each chapter's counterexample.
TOUR_PROFILE = "quick"
TOUR_SEED = 0


@dataclass(frozen=True)
class Pointer:
    """Where the bundled implementation keeps a rule, and how, in one sentence."""

    module: str
    qualname: str
    how: str


#: The one hand-written part: which function keeps which rule.
POINTERS: dict[str, Pointer] = {
    "R0": Pointer(
        "rollcert.impl.journaled_buffer", "JournaledBuffer.splice",
        "checks every argument before anything happens, commits the record, and only then changes the bytes, "
        "so each operation either ends in the model's state or raises a documented error having changed nothing",
    ),
    "R1": Pointer(
        "rollcert.impl.journaled_buffer", "JournaledBuffer.splice",
        "appends the inverse record (offset, removed bytes, inserted length) to the journal first; if the append "
        "raises, the storage has not been touched and the JournalError reaches the caller",
    ),
    "R2": Pointer(
        "rollcert.impl.journaled_buffer", "JournaledBuffer._rollback_locked",
        "pops the records newest first and puts each one's removed bytes back at its recorded offset — the "
        "offset is right because the replay is strictly LIFO, and nothing is searched for",
    ),
    "R3": Pointer(
        "rollcert.impl.journaled_buffer", "JournaledBuffer.rollback_to",
        "refuses a token of another buffer or one whose serial is no longer at its depth (a dead checkpoint), "
        "then rolls back the difference in depth, one LIFO step at a time",
    ),
    "R4": Pointer(
        "rollcert.impl.journaled_buffer", "JournaledBuffer._note_out_of_log_write",
        "the storage's version moves on every write; a version the buffer did not expect puts a barrier at the "
        "current depth, and every rollback checks it before undoing anything (O(1), whatever the buffer size)",
    ),
    "R5": Pointer(
        "rollcert.impl.file_journal", "FileJournal.append",
        "frames the record (length, checksums) and writes and fsyncs it before the buffer is changed; recovery "
        "drops only a torn final record and refuses any other damage with RecoveryError",
    ),
    "R6": Pointer(
        "rollcert.impl.journaled_buffer", "JournaledBuffer._evict_oldest",
        "a full journal with the evict policy drops its oldest record and moves the horizon with it; with the "
        "reject policy splice raises JournalError before anything is written",
    ),
    "S1": Pointer(
        "rollcert.impl.diffs", "DiffableBuffer._place",
        "applies at the original positions only if the base is unchanged, refuses a positional diff on a moved "
        "base, and otherwise traces every effective read region through the edits since the snapshot, raising "
        "StaleBaseError with the first region that changed",
    ),
    "S2": Pointer(
        "rollcert.impl.diffs", "DiffableBuffer.rollback_diff",
        "an applied diff is one journal record, so rolling it back is an ordinary LIFO rollback to the live "
        "base it was applied to, never a copy of the author's snapshot",
    ),
    "S3": Pointer(
        "rollcert.impl.diffs", "DiffableBuffer._base_unchanged",
        "a snapshot counts as current only if it names the same state (its node in the history) or has the "
        "same content; a revision number is never compared, and revisions only ever grow",
    ),
    "R7": Pointer(
        "rollcert.impl.journaled_buffer", "JournaledBuffer.rollback",
        "takes the buffer's one lock once for the whole rollback — every step, then the depth and the revision — "
        "and every other method, the observations included, takes the same lock, so no caller ever sees the "
        "buffer between two steps of another caller's operation",
    ),
}


def _source_path(module_name: str) -> str:
    """``rollcert.impl.diffs`` -> ``impl/diffs.py`` (the folders sit at the root)."""
    return "/".join(module_name.split(".")[1:]) + ".py"


def resolve(pointer: Pointer) -> str:
    """The function's docstring's first line; ``LookupError`` if it is gone."""
    found: object = importlib.import_module(pointer.module)
    for part in pointer.qualname.split("."):
        if not hasattr(found, part):
            raise LookupError(f"{pointer.module}.{pointer.qualname} does not exist: update POINTERS in tour.py")
        found = getattr(found, part)
    doc = inspect.getdoc(found) or ""
    return " ".join(doc.split("\n\n")[0].split())


#: The specimen whose story a chapter tells, where it is not simply the first by
#: name: R2's is the anchor scan the incident's write-up proposed (the
#: introduction tells it), not a specimen whose name happens to sort before it.
CHAPTER_SPECIMENS: dict[str, str] = {"R2": "first_match_scan", "S3": "revision_reuse"}


def breakers(property_id: str, registry: dict[str, Specimen]) -> list[Specimen]:
    """The specimens that must break ``property_id`` — as the kill matrix reads
    them (``SpecimenRow.must_kill``: a specimen's ``breaks``, plus R0, which
    every bug breaks) — the chapter's own first, then by name."""
    chosen = CHAPTER_SPECIMENS.get(property_id)
    names = sorted(registry, key=lambda name: (name != chosen, name))
    return [registry[name] for name in names if property_id in registry[name].breaks | {"R0"}]


#: Properties whose counterexamples depend on how threads were scheduled: the
#: same seed draws the same program, but which interleaving exposes the bug
#: differs from run to run, so the tour cannot print one and stay reproducible.
SCHEDULE_DEPENDENT = frozenset({"R7"})


def _counterexample_section(property_id: str, registry: dict[str, Specimen]) -> tuple[Specimen | None, list[str]]:
    if property_id in SCHEDULE_DEPENDENT:
        specimen = next(iter(breakers(property_id, registry)), None)
        name = specimen.name if specimen is not None else "NAME"
        return specimen, [
            "A concurrency counterexample is a [history](glossary.md#history) of overlapping calls, and which "
            "interleaving shows the bug depends on the threads' scheduling, so it differs from run to run and is "
            f"not printed here. `rollcert certify specimen:{name} --only R7 --json c.json` finds one and keeps it "
            "whole in the certificate; `rollcert explain c.json --property R7` (or `rollcert html c.json c.html`) "
            "then draws it without running anything again: the program, one [lane](glossary.md#lane) per thread "
            "with each call a bar from its call to its return, the [longest order](glossary.md#longest-order) of "
            "the calls that fits the model, and the call that cannot come next with what the model would answer "
            "there and wherever else real time allows it (`docs/concurrency.md` shows one)."
        ]
    for specimen in breakers(property_id, registry):
        assert specimen.target is not None
        result = certify(specimen.target, profile=TOUR_PROFILE, seed=TOUR_SEED, only=(property_id,)).results[property_id]
        if result.verdict == "violated" and result.counterexample is not None:
            text = render_text(walkthrough(result.counterexample, property_id))
            command = (
                f"rollcert explain specimen:{specimen.name} --property {property_id} --all "
                f"--profile {TOUR_PROFILE} --seed {TOUR_SEED}"
            )
            return specimen, [
                f"The {property_id} machine on `specimen:{specimen.name}` (profile {TOUR_PROFILE}, seed {TOUR_SEED}), "
                f"minimised; `{command}` prints it again:",
                "",
                "```text",
                text,
                "```",
            ]
    return None, ["No specimen breaks it with this profile and seed yet: the suite has no counterexample to show."]


def chapter(property_id: str, registry: dict[str, Specimen]) -> list[str]:
    from rollcert.proofs.obligations import REGISTRY

    prop = PROPERTIES[property_id]
    statement = " ".join(prop.statement.split())
    first = rule_sentence(property_id)
    specimen, counterexample = _counterexample_section(property_id, registry)
    lines = [f"## {property_id} — {prop.title}", "", "### The failure", ""]
    if specimen is not None:
        others = [s.name for s in breakers(property_id, registry) if s.name != specimen.name]
        more = ""
        if others and property_id != "R0":
            more = f" The same rule also catches: {', '.join(f'`{n}`' for n in others)}."
        elif property_id == "R0":
            more = " Every specimen breaks R0 (each machine makes the R0 comparison after every step); this is the first by name."
        lines += [f"*`{specimen.name}`* (`specimens/{specimen.name}.py`): {specimen.story}{more}"]
    else:
        lines += ["No specimen tells this failure yet."]
    lines += ["", "### The rule", "", f"**{first}**"]
    rest = statement[len(first) :].strip()
    if rest:
        lines += ["", rest]
    lines += ["", f"(Stated once, in `model/properties.py`, as `{property_id}`.)"]
    lines += ["", "### What a run must reach", ""]
    lines += [
        f"A run that never reached one of these is `unknown`, not `passed` "
        f"([situations](glossary.md#{situation_anchor()})); each is a coverage chip on the HTML certificate:",
        "",
    ]
    for situation in prop.situations:
        lines.append(f"- [`{situation.name}`](glossary.md#{situation.name}): {situation.description}")
    lines += ["", "### The minimal counterexample", ""]
    lines += counterexample
    lines += ["", "### How the bundled implementation obeys it", ""]
    pointer = POINTERS.get(property_id)
    if pointer is None:
        raise LookupError(f"no pointer into impl/ for {property_id}: add one to POINTERS in specimens/tour.py")
    else:
        doc = resolve(pointer)
        lines += [
            f"`{pointer.qualname}` in [`{_source_path(pointer.module)}`](../{_source_path(pointer.module)}): {pointer.how}."
            + (f" Its docstring: “{doc}”" if doc else "")
        ]
    lines += ["", "### What z3 proves", ""]
    obligations = [o for o in REGISTRY if property_id in o.properties]
    if not obligations:
        lines += [
            f"No z3 obligation in `proofs/obligations.py` is about {property_id}: it is checked by the state "
            "machines (and the bounded exhaustive search), not proved."
        ]
    for obligation in obligations:
        verb = "proved (unsat)" if obligation.kind == "theorem" else "refuted (sat, with a decoded counterexample)"
        lines.append(f"- **`{obligation.name}`** — {obligation.kind}, {obligation.scope}, {verb}: {obligation.description}")
    return lines


#: The story the tour starts from, told once (the README tells it shorter).
INCIDENT: tuple[str, ...] = (
    "## The incident",
    "",
    "An agent kept its working text in one buffer and rewrote it in place with splices, logging an",
    "[inverse record](glossary.md#inverse-record) for each so that it could roll back. One rewrite",
    "changed a parameter's type from `int` to `list[int]`. A second rewrite overlapped it; the",
    "[journal](glossary.md#journal) was bounded and short of memory, refused that record, and the",
    "buffer applied the edit anyway. Later `rollback(2)` undid the first record at its old offset —",
    "which the unlogged edit had shifted — and overwrote an unrelated sentence. Nothing crashed: the",
    "text still parsed, had as many lines as before, and described a function signature that had",
    "never existed; the agent went on reasoning over it. The fix proposed at the time found each edit",
    "again by hashes of the bytes around it ([anchors](glossary.md#anchor)): slower, and just as",
    "wrong wherever text repeats. Each chapter below is one way a buffer and its log drift apart,",
    "and the rule that keeps them together.",
)


def situation_anchor() -> str:
    """The glossary's anchor for the word "situation" (``reports/glossary.py``)."""
    from rollcert.reports.glossary import lookup

    term = lookup("situation")
    assert term is not None
    return term.anchor


def write_tour() -> str:
    """The whole tour, deterministic: fixed seed, properties in table order."""
    registry = load_all()
    lines = [
        "# A tour of the invariants",
        "",
        "One chapter per property of `model/properties.py`: how the failure happens, the rule that",
        "prevents it, what a run must reach before a pass means anything, the smallest counterexample",
        "the suite finds on a specimen that breaks it, where the bundled implementation keeps the rule,",
        "and what the z3 proofs say about it. Every term is defined once, with an example, in",
        "[the glossary](glossary.md).",
        "",
        *INCIDENT,
        "",
        f"Generated by `rollcert docs` (profile {TOUR_PROFILE}, seed {TOUR_SEED}); do not edit by hand —",
        "`tests/test_tour.py` fails when this file differs from what the command writes.",
        "",
        "In the walkthroughs, `[-…-]` marks bytes deleted or undone, `{+…+}` bytes inserted or",
        "restored (an empty pair marks the place), `<!…!>` a write behind the log's back, and `⟦…⟧` the",
        "bytes where the implementation differs from the model. The journal is what the model says the",
        "log holds after each step.",
        "",
        "Chapters: " + ", ".join(f"[{pid}](#{_anchor(pid)})" for pid in PROPERTIES),
    ]
    for property_id in PROPERTIES:
        lines += ["", *chapter(property_id, registry)]
    return "\n".join(lines) + "\n"


def _anchor(property_id: str) -> str:
    """GitHub's heading anchor for ``## ID — Title``."""
    heading = f"{property_id} — {PROPERTIES[property_id].title}".lower()
    kept = "".join(ch for ch in heading if ch.isalnum() or ch in " -_")
    return kept.replace(" ", "-")
