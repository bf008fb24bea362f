"""The diff appliers (diff-match-patch, GNU patch, git apply), held to their pages.

Each page of docs/certifications/ for a diff applier embeds the certificates of
its targets (quick profile, seed 0). The first tests re-run them against the
installed package or tool and fail, naming the page, when a verdict changes; the
others pin down *what* each finding is, so a verdict that stays ``violated``
for another reason is caught too. The atomicity findings are also replayed on
hand-written traces (a failed multi-hunk apply), run through the real tools.

GNU patch and git run as real subprocesses in temporary directories;
diff-match-patch is the installed package (the ``dev`` extra).
"""

from __future__ import annotations

import pytest
from _helpers import REGENERATE
from _helpers import documented_certificates

from benchmarks.thirdparty_targets import DIFF_APPLIER_NEEDS as NEEDS
from benchmarks.thirdparty_targets import applier as _applier
from benchmarks.thirdparty_targets import require_applier as _require
from rollcert.model.contract import Hunk
from rollcert.model.operations import ApplyDiff
from rollcert.model.operations import DiffOperation
from rollcert.model.operations import TakeSnapshot
from rollcert.model.operations import ToolWrite
from rollcert.model.properties import ALL_PROPERTY_IDS
from rollcert.reports.certificate import show_bytes
from rollcert.stateful_tests.diff_machine import DIFFS
from rollcert.stateful_tests.judge import StepRecord
from rollcert.stateful_tests.judge import Violation
from rollcert.stateful_tests.judge import replay
from rollcert.stateful_tests.traces import parse_trace
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import CapabilityMissing
from rollcert.targets.adapter import Target
from rollcert.targets.adapters import THIRD_PARTY_TARGETS
from rollcert.targets.resolve import TargetError
from rollcert.targets.resolve import resolve_target

DOCUMENTED = documented_certificates(lambda target: _applier(target) in NEEDS)










def _snapshot_base(step: StepRecord) -> str:
    """The snapshot B0 an apply_diff step was authored on, as the step's context shows it."""
    return dict(step.context)["base B0"]


def test_every_registered_diff_applier_is_documented() -> None:
    registered = {name for name in THIRD_PARTY_TARGETS if _applier(name) in NEEDS}
    assert {d.target for d in DOCUMENTED} == registered, (
        "every diff applier in rollcert.targets.adapters.THIRD_PARTY_TARGETS needs a certificate in docs/certifications/"
    )
    for documented in DOCUMENTED:
        assert set(documented.verdicts) == set(ALL_PROPERTY_IDS), f"{documented.page}: run {REGENERATE}"




# -- what each finding is ------------------------------------------------------------------


def _accepted_what_the_rule_rejects(step: StepRecord) -> bool:
    return step.expected.error == "StaleBaseError" and step.actual.error is None


#: The documented traces of the positional diff on a moved base
#: (docs/certifications/gnu_patch.md, diff_match_patch.md), replayed directly: the
#: S1 search, which now also draws wide bytes and long runs, may first find another
#: of the tools' findings.
POSITIONAL_TRACES = {
    "gnu-patch": '{"schema":"rollcert-trace/2","family":"diffs","initial":"YmEKCgo=","capacity":null,'
    '"policy":"reject","operations":[{"op":"snapshot"},{"op":"splice","offset":0,"delete_length":0,"insert":"Cg=="},'
    '{"op":"apply_diff","snapshot":0,"mode":"positional","hunks":[[3,5,""]],"reads":[]}]}',
    "diff-match-patch": '{"schema":"rollcert-trace/2","family":"diffs","initial":"YWFhYmJi","capacity":null,'
    '"policy":"reject","operations":[{"op":"splice","offset":0,"delete_length":0,"insert":"YQ=="},{"op":"snapshot"},'
    '{"op":"splice","offset":0,"delete_length":1,"insert":""},'
    '{"op":"apply_diff","snapshot":0,"mode":"positional","hunks":[[7,7,"WQ=="]],"reads":[]}]}',
}


@pytest.mark.parametrize("target", ["gnu-patch", "diff-match-patch"])
def test_a_positional_diff_is_applied_on_a_moved_base(target: str) -> None:
    """A patch cannot say it is positional: the tool places it by its context."""
    _require(target)
    family, config, operations = parse_trace(POSITIONAL_TRACES[target])
    with pytest.raises(Violation) as raised:
        replay(family, resolve_target(target), config, operations)
    last = raised.value.steps[-1]
    assert isinstance(last.operation, ApplyDiff) and last.operation.mode == "positional"
    assert not _snapshot_base(last).startswith(show_bytes(last.before) + " ") and _accepted_what_the_rule_rejects(last), (
        f"{target}: S1 changed"
    )


#: A content diff whose declared read (the first line) was rewritten, with the hunk's
#: own context (three lines each side) intact: replayed directly, since the S1 search
#: may first find the positional diff on a moved base (the other finding).
GIT_APPLY_CHANGED_READ_TRACE = (
    '{"schema":"rollcert-trace/2","family":"diffs","initial":"YQpiCmIKYQpiCmEKYgpiCg==","capacity":null,'
    '"policy":"reject","operations":[{"op":"snapshot"},{"op":"tool_write","offset":0,"delete_length":1,'
    '"insert":"Yg=="},{"op":"apply_diff","snapshot":0,"mode":"content","hunks":[[14,15,"YQ=="]],"reads":[[0,1]]}]}'
)


@pytest.mark.slow
def test_git_apply_ignores_a_changed_declared_read() -> None:
    _require("git-apply")
    family, config, operations = parse_trace(GIT_APPLY_CHANGED_READ_TRACE)
    with pytest.raises(Violation) as raised:
        replay(family, resolve_target("git-apply"), config, operations)
    last = raised.value.steps[-1]
    assert isinstance(last.operation, ApplyDiff) and last.operation.reads
    assert "region" in dict(last.context)["rule"] and _accepted_what_the_rule_rejects(last), "git-apply: S1 changed"






#: The documented trace of GNU patch's "another copy" finding (docs/certifications/gnu_patch.md).
ANOTHER_COPY_TRACE = (
    '{"schema":"rollcert-trace/2","family":"diffs","initial":"Cgo=","capacity":null,"policy":"reject",'
    '"operations":[{"op":"snapshot"},{"op":"splice","offset":0,"delete_length":0,"insert":"YQ=="},'
    '{"op":"apply_diff","snapshot":0,"mode":"content","hunks":[[0,0,"WA=="]],"reads":[]}]}'
)


def test_gnu_patch_puts_a_hunk_on_another_copy_of_its_text() -> None:
    """With mode and reads set aside: a content diff the rule accepts lands
    elsewhere (offset/fuzz on repeated text), giving a buffer that never existed.
    Replayed from the page, so the finding stands whatever a search meets first
    (with wide draws it may meet another real finding: a stale diff applied)."""
    _require("gnu-patch-focused")
    family, config, operations = parse_trace(ANOTHER_COPY_TRACE)
    with pytest.raises(Violation) as raised:
        replay(family, resolve_target("gnu-patch-focused"), config, operations)
    last = raised.value.steps[-1]
    assert isinstance(last.operation, ApplyDiff) and last.operation.mode == "content"
    assert last.expected.error is None and last.actual.error is None
    assert (last.expected.buffer, last.actual.buffer) == (b"aX\n\n", b"a\nX\n"), "gnu-patch-focused: S1 changed"


#: diff-match-patch's fuzzy match (docs/certifications/diff_match_patch.md), on a second
#: writer's deletion that can be aligned one way only ('cd' off 'aaaabcd'). The page's
#: trace deleted 'bb' off 'aaaabbb', which a content-only tool cannot tell from deleting
#: the 'bb' one byte earlier; under that reading the tool's result is what the rule
#: accepts, so the judge (SPEC §6a, readings) no longer blames it there.
FUZZY_MATCH_TRACE = (
    '{"schema":"rollcert-trace/2","family":"diffs","initial":"YWFhYmNk","capacity":null,"policy":"reject",'
    '"operations":[{"op":"splice","offset":0,"delete_length":0,"insert":"YQ=="},{"op":"snapshot"},'
    '{"op":"splice","offset":5,"delete_length":2,"insert":""},'
    '{"op":"apply_diff","snapshot":0,"mode":"content","hunks":[[7,7,"WQ=="]],"reads":[]}]}'
)


def test_diff_match_patch_applies_a_content_diff_by_fuzzy_match() -> None:
    _require("diff-match-patch-focused")
    family, config, operations = parse_trace(FUZZY_MATCH_TRACE)
    with pytest.raises(Violation) as raised:
        replay(family, resolve_target("diff-match-patch-focused"), config, operations)
    last = raised.value.steps[-1]
    assert (
        isinstance(last.operation, ApplyDiff)
        and last.operation.mode == "content"
        and not last.operation.reads
    )
    assert _accepted_what_the_rule_rejects(last), "diff-match-patch-focused: S1 changed"


#: The documented traces of git apply --3way's finding (docs/certifications/git_apply.md),
#: replayed directly, so the finding stands whatever trace a search finds first.
THREE_WAY_TRACES = {
    "git-apply-3way": '{"schema":"rollcert-diff-trace/1","initial":"YmEKCgo=","operations":[{"op":"snapshot"},'
    '{"op":"apply_diff","snapshot":0,"mode":"content","hunks":[[4,4,"Cg=="]],"reads":[]},'
    '{"op":"apply_diff","snapshot":0,"mode":"positional","hunks":[[3,5,""]],"reads":[]}]}',
    "git-apply-3way-focused": '{"schema":"rollcert-diff-trace/1","initial":"YWJhCgoK","operations":[{"op":"snapshot"},'
    '{"op":"apply_diff","snapshot":0,"mode":"content","hunks":[[4,4,"Cg=="]],"reads":[]},'
    '{"op":"apply_diff","snapshot":0,"mode":"content","hunks":[[4,6,""]],"reads":[]}]}',
}


@pytest.mark.parametrize("target", sorted(THREE_WAY_TRACES))
@pytest.mark.slow
def test_git_apply_3way_refuses_but_leaves_conflict_markers(target: str) -> None:
    """A failed apply must change nothing; --3way leaves the merge conflict in the file."""
    _require(target)
    family, config, operations = parse_trace(THREE_WAY_TRACES[target])
    with pytest.raises(Violation) as raised:
        replay(family, resolve_target(target), config, operations)
    last = raised.value.steps[-1]
    assert (last.expected.error, last.actual.error) == ("StaleBaseError", "StaleBaseError")
    assert b"<<<<<<<" in last.actual.buffer and last.expected.buffer == last.before


#: The documented trace of git apply's final-line-break loss (docs/certifications/git_apply.md).
FINAL_LINE_BREAK_TRACE = (
    '{"schema":"rollcert-trace/2","family":"diffs","initial":"YWFhYWFhCmFh","capacity":null,"policy":"reject",'
    '"operations":[{"op":"snapshot"},{"op":"splice","offset":9,"delete_length":0,"insert":"Cg=="},'
    '{"op":"apply_diff","snapshot":0,"mode":"content","hunks":[[4,5,""]],"reads":[]}]}'
)


def test_git_apply_drops_a_final_line_break_a_second_writer_added() -> None:
    """Without the two set-aside findings git apply still breaks S1: B0 has no final line
    break, a second writer adds one, and a content diff the rule accepts is applied with
    the line break taken away — git's 'no newline at end of file' marker applied to a
    base that has one now (docs/certifications/git_apply.md). The search found it at
    seed 0 on 2026-12-01; since the diff machines rewrite lines in place it meets other
    findings first (the test below), so the trace is replayed here."""
    _require("git-apply-focused")
    family, config, operations = parse_trace(FINAL_LINE_BREAK_TRACE)
    with pytest.raises(Violation) as raised:
        replay(family, resolve_target("git-apply-focused"), config, operations)
    last = raised.value.steps[-1]
    assert isinstance(last.operation, ApplyDiff) and last.operation.mode == "content"
    assert last.expected.error is None and last.actual.error is None
    assert last.expected.buffer.endswith(b"\n") and last.actual.buffer == last.expected.buffer[:-1]




# -- atomicity: a failed multi-hunk apply -------------------------------------------------








# Replayed through the real tools: the tool rewrites line 2; the diff changes line 2
# and line 12 (two separate hunks in the patch). S1: reject, changing nothing.

LINES = b"a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\n"
TWO_HUNKS: list[DiffOperation] = [
    TakeSnapshot(),
    ToolWrite(2, 1, b"1"),
    ApplyDiff(0, "content", (Hunk(2, 3, b"X"), Hunk(22, 23, b"Y"))),
]


def _replay(name: str, initial: bytes, operations: list[DiffOperation]) -> list[StepRecord]:
    _require(name)
    return replay(DIFFS, resolve_target(name), BufferConfig(initial), operations)


def test_gnu_patch_leaves_the_hunks_that_applied() -> None:
    with pytest.raises(Violation) as raised:
        _replay("gnu-patch", LINES, TWO_HUNKS)
    last = raised.value.steps[-1]
    assert (last.expected.error, last.actual.error) == ("StaleBaseError", "StaleBaseError")
    assert last.actual.buffer == b"a\n1\nc\nd\ne\nf\ng\nh\ni\nj\nk\nY\n", (
        "patch no longer applies hunk 2 alone"
    )
    assert "1 out of 2 hunks FAILED" in last.sut_message


def test_git_apply_refuses_all_or_nothing() -> None:
    steps = _replay("git-apply", LINES, TWO_HUNKS)
    assert steps[-1].actual.error == "StaleBaseError" and steps[-1].actual.buffer == steps[-1].before


def test_git_apply_3way_conflict_plus_the_other_hunk() -> None:
    with pytest.raises(Violation) as raised:
        _replay("git-apply-3way", LINES, TWO_HUNKS)
    actual = raised.value.steps[-1].actual.buffer
    assert b"<<<<<<<" in actual and actual.endswith(b"k\nY\n")


# -- the adapters' own input handling ----------------------------------------------------------


@pytest.mark.parametrize("name", list(NEEDS))
def test_bad_diffs_are_refused_before_the_tool_runs(name: str) -> None:
    _require(name)
    sut = resolve_target(name).factory(BufferConfig(b"a\nb\n"))
    try:
        snapshot = sut.snapshot()
        with pytest.raises(ValueError, match="outside"):
            sut.apply_diff(snapshot, "content", [(0, 9, b"X")], [])
        with pytest.raises(ValueError, match="anchor mode"):
            sut.apply_diff(snapshot, "fuzzy", [(0, 1, b"X")], [])
        with pytest.raises(TypeError, match="snapshot"):
            sut.apply_diff(b"a\nb\n", "content", [(0, 1, b"X")], [])
        with pytest.raises(CapabilityMissing):
            sut.rollback(1)
        assert sut.read() == b"a\nb\n"
    finally:
        sut.close()


def test_diff_match_patch_refuses_multibyte_text() -> None:
    _require("diff-match-patch")
    sut = resolve_target("diff-match-patch").factory(BufferConfig(b"ab"))
    with pytest.raises(ValueError, match="ASCII"):
        sut.splice(0, 0, "é".encode())
    assert sut.read() == b"ab"


def test_line_tools_generate_line_breaks() -> None:
    """Their targets name an alphabet with \\n, or every diff would replace the one line."""
    for name in ("gnu-patch", "git-apply", "git-apply-3way"):
        _require(name)
        target: Target = resolve_target(name)
        assert target.alphabet is not None and b"\n" in target.alphabet


def test_a_missing_tool_says_what_to_install() -> None:
    from rollcert.targets.adapters.gnu_patch import require_tool

    with pytest.raises(TargetError, match="not installed"):
        require_tool("rollcert-no-such-tool")
