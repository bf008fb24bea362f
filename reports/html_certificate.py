"""The HTML certificate: one self-contained page that draws each counterexample.

A team lead reads a picture faster than a table of base64 traces. The page
holds the verdict table with the coverage each run reached, and for every
violation one drawn row per counterexample step: the buffer as a strip of byte
cells with the deleted, inserted, undone, restored and out-of-log spans
coloured, the journal the model keeps, and at the failing step the expected
buffer beside the actual one with the corrupted bytes marked — then the rule
that was broken and the replay command with a copy button.

One file, nothing fetched: the CSS and the few lines of script are inline, so
the page can be mailed, attached to a CI run or printed (``@media print``), and
it reflows to a phone's width. The drawings come from
:mod:`rollcert.reports.explain`, the same walkthrough the terminal
shows. Written by ``rollcert certify --html PATH`` or, from an existing JSON
certificate (drawn from the step outcomes it records, never by running its
target), ``rollcert html CERT.json PATH``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import replace
from pathlib import Path

from rollcert.reports.certificate import INTERRUPTED_MEANING
from rollcert.reports.certificate import PASSED_MEANING
from rollcert.reports.certificate import findings_of
from rollcert.reports.certificate import not_judged_phrase
from rollcert.reports.certificate import retry_phrase
from rollcert.reports.certificate import steps_phrase
from rollcert.reports.escape import html_text
from rollcert.reports.explain import DrawnStep
from rollcert.reports.explain import ExplainError
from rollcert.reports.explain import Span
from rollcert.reports.explain import Walkthrough
from rollcert.reports.explain import other_outcomes
from rollcert.reports.explain import property_title
from rollcert.reports.explain import stored_walkthrough
from rollcert.reports.explain import walkthrough
from rollcert.reports.glossary import Term
from rollcert.reports.glossary import lookup
from rollcert.reports.stored_certificate import read_certificate_file
from rollcert.stateful_tests.certify import CertificateData
from rollcert.stateful_tests.certify import PropertyResult
from rollcert.stateful_tests.family import shown_repr
from rollcert.stateful_tests.family import shown_window
from rollcert.stateful_tests.model_coverage import branches_phrase
from rollcert.stateful_tests.verdicts import ConcurrentHistory
from rollcert.stateful_tests.world import within_phrase
from rollcert.stateful_tests.world import world_phrase
from rollcert.targets.version import SUITE_VERSION


@dataclass(frozen=True)
class VerdictRow:
    property_id: str
    title: str
    verdict: str
    coverage: tuple[tuple[str, int], ...]
    detail: str
    #: The world the run reached (rollcert.stateful_tests.world.world_report), or nothing.
    world: tuple[tuple[str, str], ...] = ()
    #: Per coverage dimension its count.
    dimensions: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class HtmlCertificate:
    """Everything the page shows, from a run or from a JSON certificate."""

    target: str
    target_version: str
    profile: str
    seed: object
    exit_status: object
    rows: tuple[VerdictRow, ...]
    walkthroughs: tuple[Walkthrough, ...]
    #: What stopped the run before it finished (a signal's name), or ``""``.
    interrupted: str = ""


def _detail(
    verdict: str, reason: str, figures: dict[str, float], steps: int | None, calls: int | None = None,
    world: object = None,
) -> str:
    if verdict == "violated" and calls is not None:
        return f"a history of {calls} calls no order explains (drawn below)"
    if verdict == "violated" and steps is not None:
        return f"counterexample of {steps_phrase(steps)} (drawn below)"
    text = reason if verdict != "passed" else ""
    if verdict == "passed" and isinstance(world, dict) and world.get("narrowed"):
        try:
            text = f"passed {within_phrase(world)}"
        except (TypeError, ValueError, AttributeError, UnicodeError):
            text = "passed within a narrowed world"
    if "precision" in figures:
        text = (text + "; " if text else "") + f"precision {figures['precision']:.0%}"
    if verdict in ("passed", "unknown") and (not_judged := not_judged_phrase(figures)):
        text = (text + "; " if text else "") + not_judged
    if verdict in ("passed", "unknown") and (retries := retry_phrase(figures)):
        text = (text + "; " if text else "") + retries
    return text


def _world_fields(world: object) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, int], ...]]:
    """A world record (from a run or a JSON certificate, so untrusted) as the
    page's lines: its phrase, "passed within …" if narrowed, what was not
    exercised; and its dimensions' counts. Anything malformed is left out."""
    if not isinstance(world, dict) or not world:
        return (), ()
    lines: list[tuple[str, str]] = []
    try:
        lines.append(("world", world_phrase(world)))
        if world.get("narrowed"):
            lines.append(("within", within_phrase(world)))
        missing = world.get("not_exercised")
        if isinstance(missing, dict) and missing:
            lines.append(("not exercised", "; ".join(f"{k} ({v})" for k, v in missing.items())))
    except (TypeError, ValueError, AttributeError, UnicodeError):
        return (), ()
    dimensions = world.get("dimensions")
    counts: list[tuple[str, int]] = []
    if isinstance(dimensions, dict):
        for name, count in dimensions.items():
            if isinstance(count, int) and not isinstance(count, bool):
                counts.append((str(name), count))
    return tuple(lines), tuple(counts)


def _row(result: PropertyResult) -> VerdictRow:
    counterexample = result.counterexample
    steps = len(counterexample.steps) if counterexample is not None else None
    calls = len(counterexample.history.calls) if counterexample is not None and counterexample.history else None
    world, dimensions = _world_fields(result.world)
    if branches := branches_phrase(result.model_branches):
        world += (("reference model", branches),)
    return VerdictRow(
        result.property_id,
        result.title or property_title(result.property_id),
        result.verdict,
        tuple(result.coverage.items()),
        _detail(result.verdict, result.reason, result.figures, steps, calls, result.world),
        world,
        dimensions,
    )


def from_certificate_data(certificate: CertificateData) -> HtmlCertificate:
    """A run's certificate: the counterexamples are drawn from its step records."""
    walks = tuple(
        replace(walkthrough(found, pid), finding=position)
        for pid, result in certificate.results.items()
        if result.verdict == "violated"
        for position, found in enumerate(findings_of(result), 1)
    )
    return HtmlCertificate(
        certificate.target.name,
        certificate.target.version,
        certificate.profile,
        certificate.seed,
        certificate.exit_status,
        tuple(_row(r) for r in certificate.results.values()),
        walks,
        certificate.interrupted,
    )


def from_json_file(path: Path) -> HtmlCertificate:
    """A JSON certificate: each counterexample is drawn from the step outcomes the
    file records (SPEC §6a); nothing is replayed, imported or run."""
    stored = read_certificate_file(path)
    certificate = stored.data
    walks = tuple(
        replace(stored_walkthrough(stored, pid, found), finding=position)
        for pid, result in certificate.results.items()
        if result.verdict == "violated" and (result.counterexample is not None or pid in stored.unrecorded)
        for position, found in enumerate(findings_of(result) or [None], 1)
    )
    return HtmlCertificate(
        certificate.target.name,
        certificate.target.version,
        certificate.profile,
        certificate.seed,
        certificate.exit_status,  # from the verdicts, never the file's own claim
        tuple(_row(r) for r in certificate.results.values()),
        walks,
        certificate.interrupted,
    )


# -- drawing -------------------------------------------------------------------------------------

#: Every string the page shows goes through the HTML rule of :mod:`rollcert.reports.escape`.
_e = html_text


def _glyph(byte: int) -> str:
    if byte == 0x20:
        return "␠"
    if byte == 0x0A:
        return "↵"
    if 0x21 <= byte <= 0x7E:
        return chr(byte)
    return f"\\x{byte:02x}"


def strip(data: bytes, marks: Sequence[Span], label: str) -> str:
    """``data`` as a row of byte cells; each mark colours its cells, an empty
    mark is a thin bar at the place something was taken out or put in. A long
    buffer is drawn around its first mark (``family.shown_window``): a cell per
    byte of a megabyte buffer made pages of hundreds of megabytes."""
    cells = [f'<span class="label">{_e(label)}</span><span class="cells">']
    first, last = shown_window(len(data), min((span.start for span in marks), default=0))
    if first:  # a long buffer is drawn around its first mark, the rest counted
        cells.append(f'<span class="empty">…{first} bytes…</span>')
    for position in range(first, last + 1):
        for span in marks:
            if span.start == span.end == position:
                cells.append(f'<span class="gap {span.kind}" title="{span.kind} here (nothing)"></span>')
        if position < last:
            kinds = " ".join(s.kind for s in marks if s.start <= position < s.end)
            title = f"byte {position}" + (f": {kinds}" if kinds else "")
            glyph = _glyph(data[position])
            # Every cell is as wide as every other (an escape in a smaller font), and
            # an empty mark takes no width: two strips of equal length wrap at the same
            # byte, so expected and actual stay aligned at a phone's width.
            escape = " esc" if len(glyph) > 1 else ""
            cells.append(f'<span class="c {kinds}{escape}" title="{_e(title)}">{_e(glyph)}</span>')
    if last < len(data):
        cells.append(f'<span class="empty">…{len(data) - last} more bytes…</span>')
    if not data and not marks:
        cells.append('<span class="empty">(empty)</span>')
    cells.append("</span>")
    return f'<div class="strip">{"".join(cells)}</div>'



def _journal(drawn: DrawnStep) -> str:
    if not drawn.journal:
        return '<p class="journal">journal (model): empty</p>'
    rows = "".join(
        f"<tr><td>#{n}</td><td>{entry.offset}</td><td><code>{_e(repr(entry.removed))}</code></td>"
        f"<td><code>{_e(repr(entry.inserted))}</code></td></tr>"
        for n, entry in enumerate(drawn.journal, 1)
    )
    return (
        '<table class="journal"><caption>journal (model): live inverse records</caption>'
        "<tr><th>record</th><th>offset</th><th>removed</th><th>inserted</th></tr>"
        f"{rows}</table>"
    )


def _step(walk: Walkthrough, drawn: DrawnStep) -> str:
    record = drawn.record
    failing = not record.ok
    parts = [
        f'<li class="step{" failing" if failing else ""}" data-step="{record.index}">',
        f'<div class="op"><span class="n">{record.index}</span><code>{_e(record.operation.describe())}</code>'
        + ('<span class="tag">the failing step</span>' if failing else "")
        + "</div>",
    ]
    if drawn.context:
        parts.append('<pre class="context">' + _e("\n".join(drawn.context)) + "</pre>")
    parts.append(strip(record.before, drawn.before_marks, "before"))
    if not failing:
        parts.append(strip(drawn.after, drawn.after_marks, "after"))
        parts.append(f'<p class="status">model and implementation: {_e(record.expected.status())}</p>')
    else:
        parts.append(
            '<div class="pair">'
            f'<div class="side expected">{strip(record.expected.buffer, drawn.expected_marks, "expected")}'
            f'<p class="status">{_e(record.expected.status())}</p>'
            + "".join(
                f'{strip(other.buffer, (), "or")}<p class="status">{_e(other.status())}</p>'
                for other in other_outcomes(record)
            )
            + "</div>"
            f'<div class="side actual">{strip(record.actual.buffer, drawn.actual_marks, "actual")}'
            f'<p class="status">{_e(record.actual.status())}</p></div>'
            "</div>"
        )
        if record.sut_message:
            parts.append(f'<p class="said">the implementation said: {_e(record.sut_message)}</p>')
    parts.append(_journal(drawn))
    if failing:
        parts.append(
            f'<div class="verdict-box"><p><strong>Broken:</strong> {_e(walk.rule)}</p>'
            f"<p><strong>Why:</strong> {_e(walk.why)}</p>"
            + (f"<p><strong>Where to look:</strong> {_e(walk.look_here)}</p>" if walk.look_here else "")
            + "</div>"
        )
    parts.append("</li>")
    return "".join(parts)


def _lanes(history: ConcurrentHistory) -> str:
    """The history drawn as one lane per thread: each call a bar from its call to
    its return on the axis of events (``concurrency.lane_layout``: order, not
    duration), a grid whose columns shrink with the page, so it fits at any
    width, a phone's included; green if the longest order placed it, red if it
    could not be placed next, grey otherwise; hovering shows the call."""
    from rollcert.stateful_tests.concurrency import lane_layout

    layout, used = lane_layout(history.calls)
    position = {placed.call: n for n, placed in enumerate(history.order, 1)}
    stuck = {s.call for s in history.stuck}
    lanes = []
    for lane in layout:
        bars = []
        for call, first, last in lane.bars:
            kind = "stuck" if call.id in stuck else "placed" if call.id in position else "unplaced"
            open_end = " open" if call.returned is None else ""
            interval = f"{call.called:.1f}–" + (f"{call.returned:.1f} µs" if call.returned is not None else "? µs")
            title = f"#{call.id} {call.thread}: {call.action} {call.result} ({interval})"
            bars.append(
                f'<span class="call {kind}{open_end}" data-call="{call.id}" style="grid-column:{first + 1}/{last + 2}" '
                f'title="{_e(title)}">#{call.id}</span>'
            )
        lanes.append(
            f'<div class="lane"><span class="lane-name">{_e(lane.thread)}</span>'
            f'<div class="track" style="grid-template-columns:repeat({used},minmax(0,1fr))">{"".join(bars)}</div></div>'
        )
    return (
        f'<div class="lanes">{"".join(lanes)}'
        '<div class="axis"><span>first call</span><span>→ in the order things happened (times below)</span>'
        "<span>last</span></div></div>"
    )


def _history(walk: Walkthrough) -> str:
    """An R7 counterexample: the program, the history as lanes with a line per
    call, the linearisation attempt that went furthest, and why it stops — all
    from the recorded history (an interleaving does not repeat on demand)."""
    history = walk.history
    assert history is not None
    position = {placed.call: n for n, placed in enumerate(history.order, 1)}
    stuck = {s.call: s for s in history.stuck}

    def where(call_id: int) -> str:
        if call_id in stuck:
            return '<span class="tag">could not be placed next</span>'
        if call_id in position:
            return f'<span class="placed-tag">placed {position[call_id]}.</span>'
        return '<span class="unplaced-tag">not reached</span>'

    calls = "".join(
        f'<li data-call="{c.id}"><b>#{c.id}</b> <span class="thread">{_e(c.thread)}</span> '
        f"<code>{_e(c.action)}</code> {_e(c.result)} "
        f'<span class="t">{c.called:.1f}–' + (f"{c.returned:.1f} µs" if c.returned is not None else "? µs")
        + f"</span> {where(c.id)}</li>"
        for c in history.calls
    )
    names = {c.id: c for c in history.calls}
    order = "".join(
        f"<li><b>{_e(names[o.call].thread)} #{o.call}</b> <code>{_e(names[o.call].action)}</code> "
        f"{_e(names[o.call].result)} → <code>{_e(shown_repr(o.buffer))}</code>, depth {o.depth}, revision {o.revision}</li>"
        for o in history.order
    )
    blocked = "".join(
        f"<p><b>{_e(names[s.call].thread)} #{s.call}</b> <code>{_e(names[s.call].action)}</code> "
        f"{_e(names[s.call].result)}, but after the order above the model would {_e(s.allowed)}"
        + "".join(f"; {_e(other)}" for other in s.elsewhere)
        + ".</p>"
        for s in history.stuck
    )
    return (
        f'<p class="start">Starting from <code>{_e(shown_repr(walk.config.initial))}</code>; the program failed '
        f"{history.failed} of {history.runs} runs.</p>"
        '<h3>The program</h3><pre class="program">' + _e("\n".join(history.program)) + "</pre>"
        '<div class="timeline"><h3>The history, one lane per thread</h3>' + _lanes(history)
        + f'<ul class="calls">{calls}</ul></div>'
        f"<h3>The linearisation attempt</h3><p>The longest order that respects real time and in which every call "
        f"gives what was observed ({len(history.order)} of {len(history.calls)} calls):</p>"
        f'<ol class="order">{order}</ol>'
        f'<div class="verdict-box"><p><strong>Could not be placed next:</strong></p>{blocked}'
        f"<p><strong>Broken:</strong> {_e(walk.rule)}</p><p><strong>Why:</strong> {_e(walk.why)}</p></div>"
    )


def _violation(walk: Walkthrough) -> str:
    # A property's further findings (issue 43) get ids of their own: R0-finding-2.
    suffix = f"-finding-{walk.finding}" if walk.finding > 1 else ""
    anchor = f"replay-{walk.property_id}{suffix}"
    found = (
        f" (found while exploring {walk.machine_property})" if walk.machine_property != walk.property_id else ""
    ) + (f" — finding {walk.finding}" if walk.finding > 1 else "")
    if walk.history is not None:
        calls = len(walk.history.calls)
        return (
            f'<section class="violation" data-kind="history" id="{_e(walk.property_id + suffix)}" '
            f'data-property="{_e(walk.property_id)}" '
            f'data-steps="0" data-calls="{calls}">'
            f"<h2>{_e(walk.property_id)} {_e(walk.title)}: a history of {calls} calls{_e(found)}</h2>"
            + _history(walk)
            + f'<div class="replay"><span>Run again:</span><pre><code id="{anchor}">{_e(walk.replay)}</code></pre>'
            f'<button type="button" class="copy" data-copy="{anchor}">Copy</button></div>'
            "</section>"
        )
    steps = "".join(_step(walk, drawn) for drawn in walk.steps)
    return (
        f'<section class="violation" id="{_e(walk.property_id + suffix)}" data-property="{_e(walk.property_id)}" '
        f'data-steps="{len(walk.steps)}">'
        f"<h2>{_e(walk.property_id)} {_e(walk.title)}: {steps_phrase(len(walk.steps))}{_e(found)}</h2>"
        f'<p class="start">Starting from <code>{_e(shown_repr(walk.config.initial))}</code>'
        + (f", capacity {walk.config.capacity} ({_e(walk.config.policy)})" if walk.config.capacity is not None else "")
        + _e(walk.config.journal_phrase())
        + ".</p>"
        + (f'<p class="signature">Harm signature: {_e(walk.signature)}</p>' if walk.signature else "")
        + f'<ol class="steps">{steps}</ol>'
        + f'<div class="replay"><span>Replay:</span><pre><code id="{anchor}">{_e(walk.replay)}</code></pre>'
        f'<button type="button" class="copy" data-copy="{anchor}">Copy</button></div>'
        "</section>"
    )


#: The words every page shows (legend, headings, verdicts), defined in its terms section.
PAGE_TERMS: tuple[str, ...] = (
    "property", "situation", "passed", "violated", "unknown", "not_assessed", "error", "precision",
    "counterexample", "failing step", "expected", "journal", "deleted", "undone", "out-of-log write",
    "differs from the model", "where to look", "replay", "depth", "revision", "reading", "harm",
)


def _chip(name: str, count: int) -> str:
    term = lookup(name)
    title = f' title="{_e(term.definition)}"' if term is not None else ""
    label = f"{_e(name)} {count}"
    link = f'<a href="#term-{_e(term.anchor)}">{label}</a>' if term is not None else label
    return f'<span class="chip{" zero" if count == 0 else ""}"{title}>{link}</span>'


def page_terms(doc: HtmlCertificate) -> tuple[Term, ...]:
    """The glossary entries for what this page shows: its fixed words, each
    coverage chip, and the R7 words when it draws a history."""
    words = list(PAGE_TERMS)
    words += [name for row in doc.rows for name, _ in row.coverage]
    words += [name for row in doc.rows for name, _ in row.dimensions]
    if any(row.world for row in doc.rows):
        words.append("world")
    if any(walk.property_id == "R7" or walk.machine_property == "R7" for walk in doc.walkthroughs):
        words += ["program", "history", "lane", "linearizable", "longest order", "unknown outcome"]
    found: dict[str, Term] = {}
    for word in words:
        term = lookup(word)
        if term is not None:
            found.setdefault(term.name, term)
    return tuple(found.values())


def _inline(text: str) -> str:
    """A glossary sentence as HTML: escaped, then its Markdown code spans and
    emphasis (rollcert's own text, never a target's) drawn as such."""
    escaped = _e(text)
    escaped = re.sub(r"`([^`]+)`", r"<code>\1</code>", escaped)
    return re.sub(r"\*([^*\s][^*]*)\*", r"<em>\1</em>", escaped)


def _terms(doc: HtmlCertificate) -> str:
    entries = "".join(
        f'<dt id="term-{_e(term.anchor)}">{_e(term.name)}</dt><dd>{_inline(term.definition)}'
        f'<br><span class="ex">{_inline(term.example[0])} {_inline(term.example[1])}</span></dd>'
        for term in page_terms(doc)
    )
    return (
        '<details class="terms" id="terms" open><summary>Terms on this page</summary>'
        "<p>Each defined once, with an example, as in <code>docs/glossary.md</code> of rollcert.</p>"
        f"<dl>{entries}</dl></details>"
    )


def _verdicts(doc: HtmlCertificate) -> str:
    """One short row per property. The coverage chips are drawn after the
    counterexamples (:func:`_coverage`): above them, dozens of chips per row
    pushed the first counterexample 2400 px down the page (issue 43)."""
    rows = []
    for row in doc.rows:
        property_cell = (
            f'<a href="#{_e(row.property_id)}">{_e(row.property_id)}</a>' if row.verdict == "violated" else _e(row.property_id)
        )
        rows.append(
            f'<tr class="v-{_e(row.verdict)}"><td>{property_cell}</td><td>{_e(row.title)}</td>'
            f'<td class="verdict">{_e(row.verdict)}</td><td>{_e(row.detail)}</td></tr>'
        )
    return (
        '<table class="verdicts"><thead><tr><th>property</th><th>title</th><th>verdict</th>'
        f'<th>details</th></tr></thead><tbody>{"".join(rows)}</tbody></table>'
    )


def _coverage(doc: HtmlCertificate) -> str:
    """Per property, how often each situation was reached; then the world reached."""
    rows = "".join(
        f'<tr class="v-{_e(row.verdict)}"><td>{_e(row.property_id)}</td>'
        f'<td>{" ".join(_chip(name, count) for name, count in row.coverage)}</td></tr>'
        for row in doc.rows
        if row.coverage
    )
    table = (
        '<table class="verdicts coverage"><thead><tr><th>property</th><th>coverage reached</th></tr></thead>'
        f"<tbody>{rows}</tbody></table>"
    ) if rows else ""
    return f'<section id="coverage"><h2>Coverage reached</h2>{table}{_world(doc)}</section>'


def _world(doc: HtmlCertificate) -> str:
    """The world each run reached: its phrase (and "passed within …" if narrowed),
    then per coverage dimension its count, zeros marked."""
    explored = [row for row in doc.rows if row.world or row.dimensions]
    if not explored:
        return ""
    parts = ["<h2>World reached</h2>"]
    for row in explored:
        lines = "".join(f"<li><b>{_e(label)}</b>: {_e(text)}</li>" for label, text in row.world)
        chips = " ".join(_chip(name, count) for name, count in row.dimensions)
        parts.append(f'<div class="world"><h3>{_e(row.property_id)}</h3><ul>{lines}</ul><p>{chips}</p></div>')
    return "".join(parts)


_CSS = """
:root{--ins:#c8f0c8;--del:#f6c6c6;--undo:#ffd9a8;--res:#c6dcff;--tamp:#e4c8f4;--bad:#ffe14d;--ink:#1d1d1f}
*{box-sizing:border-box}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--ink);margin:0 auto;padding:16px;max-width:1100px}
h1{font-size:1.4em;margin:.2em 0;overflow-wrap:anywhere}h2{font-size:1.15em;margin:1.4em 0 .4em}
code,pre,.c{font-family:ui-monospace,"DejaVu Sans Mono",Menlo,monospace}
.meta{color:#555;margin:.2em 0 1em}
table.verdicts{border-collapse:collapse;width:100%;font-size:.92em}
table.verdicts th,table.verdicts td{border-bottom:1px solid #ddd;padding:4px 6px;text-align:left;vertical-align:top}
.v-passed .verdict{color:#17692b;font-weight:600}.v-violated .verdict{color:#b00020;font-weight:700}
.v-unknown .verdict,.v-error .verdict{color:#9a5b00;font-weight:600}.v-not_assessed .verdict{color:#777}
.chip{display:inline-block;background:#eef;border-radius:8px;padding:0 6px;margin:1px;font-size:.85em}
.lanes{margin:6px 0;border:1px solid #ddd;border-radius:6px;padding:6px}
.lane{display:flex;align-items:center;gap:6px;margin:3px 0}
.lane-name{flex:0 0 3.6em;font-size:.85em;color:#555;overflow:hidden;text-overflow:ellipsis}
.track{flex:1 1 auto;min-width:0;display:grid;gap:0 1px;background:#fafafa;border-radius:3px}
.call{grid-row:1;display:block;min-width:0;overflow:hidden;white-space:nowrap;font-size:.75em;line-height:1.7;padding:0 2px;border-radius:3px;border:1px solid #666;text-align:left;font-family:ui-monospace,monospace}
.call.placed{background:var(--ins)}.call.stuck{background:var(--bad);outline:2px solid #b00020;font-weight:700}
.call.unplaced{background:#e8e8e8}.call.open{border-right:3px dashed #666}
.axis{display:flex;justify-content:space-between;font-size:.75em;color:#666;margin-left:calc(3.6em + 6px)}
ul.calls{list-style:none;padding:0;margin:6px 0;font-size:.88em}ul.calls li{margin:2px 0;overflow-wrap:anywhere}
ul.calls .t{color:#666}.placed-tag{color:#17692b}.unplaced-tag{color:#777}
pre.program{background:#f4f4f4;padding:6px;white-space:pre-wrap;overflow-wrap:anywhere;font-size:.85em}
ol.order{font-size:.88em;padding-left:1.6em}ol.order li{overflow-wrap:anywhere}
.verdict-box p{overflow-wrap:anywhere}
.chip.zero{background:#fde2c5}.chip a{color:inherit;text-decoration:none}
details.terms{margin:1.5em 0;font-size:.9em}details.terms dt{font-weight:600;margin-top:.5em}
details.terms dd{margin:0 0 0 1em}details.terms .ex{color:#555;font-family:ui-monospace,monospace;font-size:.9em}
.legend span{display:inline-block;padding:0 6px;margin:2px;border-radius:3px}
ol.steps{list-style:none;padding:0;margin:0}
li.step{border:1px solid #ddd;border-radius:6px;padding:8px 10px;margin:8px 0;break-inside:avoid}
li.step.failing{border:2px solid #b00020;background:#fff8f8}
.op{display:flex;flex-wrap:wrap;gap:6px;align-items:center;margin-bottom:4px}
.op .n{background:var(--ink);color:#fff;border-radius:10px;padding:0 7px;font-size:.85em}
.tag{background:#b00020;color:#fff;border-radius:3px;padding:0 6px;font-size:.8em}
.strip{display:flex;align-items:flex-start;gap:6px;margin:3px 0}
.label{flex:0 0 5.4em;min-width:0;overflow:hidden;color:#555;font-size:.85em;padding-top:2px}
.cells{display:flex;flex-wrap:wrap;min-width:0}
.c{display:inline-block;box-sizing:border-box;width:1.45rem;overflow:hidden;padding:1px 0;margin:0 1px 2px 0;text-align:center;border:1px solid #ccc;border-radius:2px;background:#fafafa;font-size:.9em}
.c.esc{font-size:.55em;letter-spacing:-.5px;line-height:2.5}
.gap{display:inline-block;width:4px;margin-right:-4px;height:1.5em;border-radius:2px;position:relative;z-index:1}
.inserted{background:var(--ins)}.deleted{background:var(--del);text-decoration:line-through}
.undone{background:var(--undo);text-decoration:line-through}.restored{background:var(--res)}
.tampered{background:var(--tamp)}
.gap.inserted,.gap.restored,.gap.deleted,.gap.undone,.gap.tampered,.gap.corrupt{border:1px solid #666}
.corrupt{background:var(--bad);outline:2px solid #b00020;font-weight:700}
.empty{color:#888;font-style:italic}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:8px}
.side{border-left:3px solid #17692b;padding-left:6px}.side.actual{border-color:#b00020}
.status,.said{margin:2px 0;font-size:.88em;color:#333}
pre.context{background:#f4f4f4;padding:4px 6px;margin:4px 0;white-space:pre-wrap;font-size:.85em}
table.journal{border-collapse:collapse;font-size:.85em;margin:4px 0}
table.journal caption{text-align:left;color:#555}
table.journal td,table.journal th{border:1px solid #ddd;padding:1px 6px}
p.journal{font-size:.85em;color:#555;margin:4px 0}
.verdict-box{background:#fff0f0;border-left:4px solid #b00020;padding:4px 8px;margin-top:6px}
.verdict-box p{margin:3px 0}
.replay{display:flex;flex-wrap:wrap;gap:6px;align-items:flex-start;margin:8px 0}
.replay pre{flex:1 1 300px;margin:0;background:#f4f4f4;padding:6px;white-space:pre-wrap;word-break:break-all;font-size:.8em}
button.copy{font:inherit;padding:4px 10px;border-radius:4px;border:1px solid #888;background:#fff;cursor:pointer}
@media (max-width:640px){
 body{padding:8px;font-size:14px}
 .pair{grid-template-columns:1fr}
 table.verdicts thead{display:none}
 table.verdicts tr{display:block;border-bottom:1px solid #ccc;padding:4px 0}
 table.verdicts td{display:inline-block;border:0;padding:1px 4px}
 .label{flex-basis:5.4em}
}
@media print{
 *{-webkit-print-color-adjust:exact;print-color-adjust:exact}
 body{max-width:none;padding:0;font-size:11pt}
 button.copy{display:none}
 li.step,section.violation h2{break-inside:avoid}
 a{color:inherit;text-decoration:none}
}
"""

_SCRIPT = """
document.querySelectorAll('button.copy').forEach(function (button) {
  button.addEventListener('click', function () {
    var text = document.getElementById(button.dataset.copy).textContent;
    function done() { button.textContent = 'Copied'; setTimeout(function () { button.textContent = 'Copy'; }, 1500); }
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done);
    } else {
      var area = document.createElement('textarea');
      area.value = text; document.body.appendChild(area); area.select();
      document.execCommand('copy'); document.body.removeChild(area); done();
    }
  });
});
"""


def render_html(doc: HtmlCertificate) -> str:
    legend = (
        '<p class="legend">'
        '<span class="deleted">deleted</span><span class="inserted">inserted</span>'
        '<span class="undone">undone</span><span class="restored">restored</span>'
        '<span class="tampered">written behind the log</span><span class="corrupt">differs from the model</span>'
        '</p><p class="meta">An empty mark (a thin bar) is a place where nothing was taken out or put in; '
        "the journal is what the model says the log holds after each step.</p>"
    )
    violations = "".join(_violation(walk) for walk in doc.walkthroughs) or "<p>No violation: nothing to draw.</p>"
    interrupted = (
        f'<p class="meta"><strong>interrupted</strong> by {_e(doc.interrupted)}: {_e(INTERRUPTED_MEANING)}</p>'
    ) if doc.interrupted else ""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>rollcert certificate: {_e(doc.target)}</title><style>{_CSS}</style></head><body>"
        f"<h1>rollcert certificate: <code>{_e(doc.target)}</code></h1>"
        f'<p class="meta">target version {_e(doc.target_version)}; suite {_e(SUITE_VERSION)}; profile '
        f"{_e(str(doc.profile))}; seed {_e(str(doc.seed))}; exit status {_e(str(doc.exit_status))}</p>"
        f"{interrupted}"
        f'<p class="meta" id="passed-means"><strong>passed</strong> here means: {_e(PASSED_MEANING)}.</p>'
        '<p class="meta">Every term on this page — the coverage chips too — is defined under '
        '<a href="#terms">Terms on this page</a> at the end (the same words as rollcert\'s '
        "<code>docs/glossary.md</code>).</p>"
        f"{_verdicts(doc)}<section id=\"counterexamples\"><h2>Counterexamples</h2>{legend}{violations}</section>"
        f"{_coverage(doc)}{_terms(doc)}"
        f"<script>{_SCRIPT}</script></body></html>\n"
    )


def write_html(path: Path, doc: HtmlCertificate) -> None:
    path.write_text(render_html(doc), encoding="utf-8")


def html_main(certificate_path: Path, output: Path) -> int:
    """``rollcert html CERT.json PATH``: 0 written, 2 the certificate could not be drawn."""
    try:
        doc = from_json_file(certificate_path)
    except ExplainError as error:
        print(f"rollcert html: {error}")
        return 2
    write_html(output, doc)
    print(f"wrote {output} ({len(doc.walkthroughs)} counterexample(s) drawn)")
    return 0
