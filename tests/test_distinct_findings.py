"""Issue 43, findings: a run lists every distinct finding it met, not only its first.

Distinct means another rule broken or another harm signature (``family.HarmSignature``):
the harm class, the kind of step that failed, whether bytes were lost, added or
changed, and the classes of those bytes. The targets are in
``tests/findings_targets/two_bugs.py``: one drops CRs from inserts, one rolls a long
delete back short, and ``BOTH`` has both.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from rollcert.model.operations import Compact
from rollcert.model.operations import Flush
from rollcert.model.operations import Rollback
from rollcert.model.operations import Splice
from rollcert.reports.certificate import render_junit
from rollcert.reports.certificate import render_markdown
from rollcert.reports.certificate import render_text
from rollcert.reports.certificate import to_json
from rollcert.reports.explain import explain_main
from rollcert.reports.stored_certificate import certificate_from_json
from rollcert.specimens import load_all
from rollcert.stateful_tests.certify import _counterexample
from rollcert.stateful_tests.certify import assemble
from rollcert.stateful_tests.certify import certify
from rollcert.stateful_tests.families import family_named
from rollcert.stateful_tests.family import SIGNATURE_WINDOW
from rollcert.stateful_tests.family import HarmSignature
from rollcert.stateful_tests.family import Observed
from rollcert.stateful_tests.family import StepRecord
from rollcert.stateful_tests.family import harm_signature
from rollcert.stateful_tests.judge import Violation
from rollcert.stateful_tests.judge import replay
from rollcert.stateful_tests.shards import _result
from rollcert.stateful_tests.shards import _result_json
from rollcert.stateful_tests.traces import parse_trace
from rollcert.stateful_tests.verdicts import Counterexample
from rollcert.stateful_tests.verdicts import PropertyResult
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import Target

sys.path.insert(0, str(Path(__file__).parent / "findings_targets"))
import two_bugs

ROLLBACK = family_named("rollback")


def _failing(target: Target, operations: list[Any], initial: bytes = b"", machine: str = "R0") -> Counterexample:
    """The counterexample ``operations`` make on ``target`` (they must fail)."""
    with pytest.raises(Violation) as caught:
        replay(ROLLBACK, target, BufferConfig(initial), operations)
    return _counterexample(machine, target, caught.value, "rollback")


def _step(operation: Any, expected: bytes, actual: bytes, harm: str = "wrong bytes") -> StepRecord:
    return StepRecord(1, operation, b"", Observed(None, expected, 1, 1), Observed(None, actual, 1, 1), False, harm=harm)


def test_the_signature_names_the_step_the_direction_and_the_bytes() -> None:
    dropped_cr = _step(Splice(0, 0, b"a\r\nb"), b"a\r\nb", b"a\nb")
    assert str(harm_signature(dropped_cr)) == "wrong bytes on insert: lost CR"
    tabs_to_spaces = _step(Splice(0, 1, b"\tx"), b"\tx", b"    x")
    assert str(harm_signature(tabs_to_spaces)) == "wrong bytes on replace: added other+tab"
    short_undo = _step(Rollback(1), b"abcd", b"abc")
    assert str(harm_signature(short_undo)) == "wrong bytes on rollback: lost other"
    # One bug on other bytes: the same coarse signature, which minimising keeps.
    short_undo_of_a_line_break = _step(Rollback(1), b"ab\n", b"ab")
    assert harm_signature(short_undo_of_a_line_break).coarse() == harm_signature(short_undo).coarse()
    assert harm_signature(dropped_cr).coarse() != harm_signature(short_undo).coarse()


def test_the_byte_classes_are_read_from_a_window_and_the_coarse_part_needs_none() -> None:
    # A target's 20 MB wrong buffer: its classes are those of the first 64 KiB of
    # the difference (a CR past them is not named), and what tells findings apart
    # (the coarse part) is worked out from lengths alone.
    flood = _step(Splice(0, 0, b"a"), b"ab", b"a" + b"z" * SIGNATURE_WINDOW + b"\r" + b"b")
    assert str(harm_signature(flood)) == "wrong bytes on insert: added other"
    assert harm_signature(flood, classes=False) == HarmSignature("wrong bytes", "insert", "added")
    assert harm_signature(flood, classes=False).coarse() == harm_signature(flood).coarse()


def test_an_outcome_with_the_allowed_bytes_has_no_byte_part() -> None:
    # A refusal that went through with the right bytes: nothing lost or added to name.
    record = StepRecord(
        1, Rollback(1), b"a", Observed("UnreachableRollbackError", b"a", 0, 0), Observed(None, b"a", 0, 0), False,
        harm="refused operation went through",
    )
    assert str(harm_signature(record)) == "refused operation went through on rollback"


def test_two_independent_bugs_are_two_findings_each_replaying_on_its_own_bug() -> None:
    """The done-when of issue 43: both bugs listed, each Replay line failing on the
    target with only that bug and passing on the target with only the other. At
    the default profile (quick), seed 2: the first pass meets one bug, the search
    for further findings the other (0.3 s here, no longer ``slow``). Seeds 0-9
    list both on 8 (2026-12-06; tests/test_further_findings.py's SEED_WITH_BOTH)."""
    certificate = certify(two_bugs.BOTH, profile="quick", seed=2, only=("R0",), target_text="two_bugs:BOTH")
    r0 = to_json(certificate)["properties"]["R0"]
    assert r0["verdict"] == "violated"
    signatures = [found["signature"] for found in r0["findings"]]
    assert len(signatures) == len(set(signatures)) == 2, signatures
    failing_on: dict[str, set[str]] = {}
    for found in r0["findings"]:
        words = shlex.split(found["replay"])
        assert words[:3] == ["rollcert", "replay", "two_bugs:BOTH"]
        family, config, operations = parse_trace(words[words.index("--trace") + 1])
        for name in ("DROPS_CR", "SHORT_UNDO"):
            try:
                replay(family, getattr(two_bugs, name), config, operations)
            except Violation:
                failing_on.setdefault(found["signature"], set()).add(name)
    assert sorted(map(sorted, failing_on.values())) == [["DROPS_CR"], ["SHORT_UNDO"]], failing_on
    # Every human format lists both, each with its own Replay line.
    for rendered in (render_text(certificate), render_markdown(certificate), render_junit(certificate)):
        assert rendered.count("Replay: rollcert replay") == 2
        assert all(signature in rendered for signature in signatures)


def _two_violated_properties() -> tuple[Any, Counterexample, Counterexample]:
    """A certificate with R0 violated by the short undo and R3 by a FIFO replay
    (whose R3 finding R0 lists too), as ``assemble`` folds them."""
    short_undo = _failing(two_bugs.SHORT_UNDO, [Splice(0, 3, b""), Rollback(1)], b"abc")
    fifo = load_all()["fifo_replay"].target
    assert fifo is not None
    out_of_order = _failing(fifo, [Splice(0, 0, b"a"), Splice(0, 1, b"b"), Rollback(2)], machine="R3")
    assert out_of_order.broken == ("R3",)
    results = {
        "R0": PropertyResult("R0", "violated", counterexample=short_undo, findings=[short_undo]),
        "R3": PropertyResult("R3", "violated", counterexample=out_of_order, findings=[out_of_order]),
    }
    return assemble(fifo, "quick", 0, results, None), short_undo, out_of_order


def test_each_finding_is_listed_under_the_rule_it_breaks_and_r0_lists_every_one() -> None:
    certificate, short_undo, out_of_order = _two_violated_properties()
    assert [found.signature for found in certificate.results["R3"].findings] == [out_of_order.signature]
    assert [found.finding_key() for found in certificate.results["R0"].findings] == [
        short_undo.finding_key(), out_of_order.finding_key(),
    ]


def test_findings_survive_the_json_certificate_and_the_partial_of_a_shard() -> None:
    certificate, _, _ = _two_violated_properties()
    record = json.loads(json.dumps(to_json(certificate)))
    stored = certificate_from_json(record)
    read = stored.data.results["R0"].findings
    assert [found.finding_key() for found in read] == [
        found.finding_key() for found in certificate.results["R0"].findings
    ]
    travelled = _result(json.loads(json.dumps(_result_json(certificate.results["R0"]))))
    assert [found.finding_key() for found in travelled.findings] == [
        found.finding_key() for found in certificate.results["R0"].findings
    ]


def test_explain_walks_every_violated_property_by_default(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    certificate, short_undo, out_of_order = _two_violated_properties()
    path = tmp_path / "c.json"
    path.write_text(json.dumps(to_json(certificate)))
    assert explain_main(str(path), None, True) == 1
    shown = capsys.readouterr().out
    headings = [line for line in shown.splitlines() if line.startswith("=== Finding")]
    assert headings == [
        f"=== Finding 1 of 2 — R3: {out_of_order.signature} ===",
        f"=== Finding 2 of 2 — R0: {short_undo.signature} ===",
    ]
    assert shown.count("Replay: rollcert replay") == 2
    # --property narrows it to one property's findings.
    assert explain_main(str(path), "R3", True) == 1
    narrowed = capsys.readouterr().out
    assert "=== Finding" not in narrowed and narrowed.count("Replay: rollcert replay") == 1


def test_a_property_lists_at_most_eight_findings_and_says_how_many_it_left_out() -> None:
    def finding(operation: Any, expected: bytes, actual: bytes) -> Counterexample:
        record = _step(operation, expected, actual)
        return Counterexample("R0", "t", b"", None, "reject", (record,), "why", broken=("R0",), harm="wrong bytes")

    # Ten distinct findings: four kinds of step, each losing, adding or changing bytes.
    shapes = ((b"xy", b"x"), (b"x", b"xy"), (b"xy", b"xz"))
    steps = (Rollback(1), Flush(), Splice(0, 0, b"x"), Compact(1))  # rollback_to counts as rollback: one undo
    findings = [finding(step, expected, actual) for step in steps for expected, actual in shapes][:10]
    assert len({found.finding_key() for found in findings}) == 10
    result = PropertyResult("R0", "violated", "No silent corruption", counterexample=findings[0], findings=findings)
    certificate = assemble(two_bugs.BOTH, "quick", 0, {"R0": result}, None)
    listed = certificate.results["R0"].findings
    assert [found.finding_key() for found in listed] == [found.finding_key() for found in findings[:8]]
    assert certificate.results["R0"].figures["findings_not_kept"] == 2
    assert "8 distinct findings, 2 more met and not kept (at most 8 are)" in render_text(certificate)
