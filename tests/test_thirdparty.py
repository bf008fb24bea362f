"""The third-party packages, certified, held to the verdicts their pages document.

Each page of docs/certifications/ embeds the certificates of its package's
targets (with the profile and seed they were made with); the first test re-runs
each of them against the installed package and fails, naming the page, when a
verdict differs, so a release that changes behaviour shows up here. The other
tests pin down *what* each finding is, so a verdict that stays ``violated`` for
a different reason is caught too.

CI installs the packages (the ``dev`` extra); ``importorskip`` only guards a
bare checkout without them.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from _helpers import REGENERATE
from _helpers import Documented
from _helpers import documented_certificates

from benchmarks.thirdparty_targets import BUFFER_PACKAGES as PACKAGE_OF
from benchmarks.thirdparty_targets import is_buffer_package as _is_buffer_package
from benchmarks.thirdparty_targets import package_of as _package
from rollcert.model.operations import OutOfLogWrite
from rollcert.model.operations import Rollback
from rollcert.model.properties import ALL_PROPERTY_IDS
from rollcert.stateful_tests.judge import Violation
from rollcert.stateful_tests.judge import replay
from rollcert.stateful_tests.traces import parse_trace
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import Target
from rollcert.targets.adapters import THIRD_PARTY_TARGETS
from rollcert.targets.adapters import require_package
from rollcert.targets.resolve import TargetError
from rollcert.targets.resolve import resolve_target

DOCUMENTED = documented_certificates(_is_buffer_package)


def _documented(target: str) -> Documented:
    return next(d for d in DOCUMENTED if d.target == target)










def test_every_registered_target_is_documented() -> None:
    assert {d.target for d in DOCUMENTED} == set(filter(_is_buffer_package, THIRD_PARTY_TARGETS)), (
        "every name in rollcert.targets.adapters.THIRD_PARTY_TARGETS needs a certificate in docs/certifications/"
    )
    for documented in DOCUMENTED:
        assert set(documented.verdicts) == set(ALL_PROPERTY_IDS), (
            f"docs/certifications/{documented.page}: the {documented.target} certificate does not list every "
            f"property; run {REGENERATE}"
        )




# -- what each finding is -------------------------------------------------------------








#: The documented trace of pycrdt's LIFO-undo bug (docs/certifications/pycrdt.md, finding
#: 4, shape 4a: part of a re-created insertion left): replayed directly, so the finding
#: stands whatever trace a search finds first.
PYCRDT_LIFO_TRACE = (
    '{"schema":"rollcert-trace/2","family":"rollback","initial":"YWFhYWFh","capacity":null,"policy":"reject",'
    '"operations":[{"op":"splice","offset":6,"delete_length":0,"insert":"YWE="},'
    '{"op":"splice","offset":0,"delete_length":8,"insert":""},{"op":"rollback","steps":1},'
    '{"op":"splice","offset":7,"delete_length":0,"insert":"YQ=="},{"op":"rollback","steps":1},'
    '{"op":"rollback","steps":1}]}'
)


def test_pycrdt_undo_of_an_insert_restored_by_undo_leaves_part_of_it() -> None:
    """A bug, not a design choice: no out-of-log write is involved, only splices and undos."""
    pytest.importorskip(_package("pycrdt-focused"))
    family, config, operations = parse_trace(PYCRDT_LIFO_TRACE)
    with pytest.raises(Violation) as raised:
        replay(family, resolve_target("pycrdt-focused"), config, operations)
    steps = raised.value.steps
    last = steps[-1]
    assert len(steps) == len(operations), "pycrdt: the documented trace fails earlier now; see pycrdt.md"
    assert isinstance(last.operation, Rollback) and last.expected.error is None and last.actual.error is None
    assert (last.expected.buffer, last.actual.buffer) == (b"aaaaaa", b"aaaaaaa"), "pycrdt: finding 4 changed; see pycrdt.md"


#: The same bug one place off (pycrdt.md, finding 4, shape 4c): the R2 counterexample of
#: ``pycrdt`` and ``pycrdt-untagged`` at ci seed 0. The undo of the insertion of 'aaac'
#: removes the four characters one place left of it, so the 'c' stays.
PYCRDT_ONE_PLACE_OFF_TRACE = (
    '{"schema":"rollcert-trace/2","family":"rollback","initial":"YWFhYWE=","capacity":null,"policy":"reject",'
    '"operations":[{"op":"splice","offset":0,"delete_length":0,"insert":"YQ=="},'
    '{"op":"splice","offset":6,"delete_length":0,"insert":"YQ=="},'
    '{"op":"splice","offset":7,"delete_length":0,"insert":"YWFhYw=="},'
    '{"op":"splice","offset":3,"delete_length":8,"insert":""},{"op":"rollback","steps":1},'
    '{"op":"splice","offset":0,"delete_length":10,"insert":""},{"op":"rollback","steps":1},'
    '{"op":"rollback","steps":1}]}'
)


@pytest.mark.parametrize("target", ["pycrdt", "pycrdt-untagged", "pycrdt-focused"])
def test_pycrdt_undo_of_a_re_created_insert_can_remove_it_one_place_off(target: str) -> None:
    """R2's clause: the inverse of an insertion applied one place left of where it was made."""
    pytest.importorskip(_package(target))
    family, config, operations = parse_trace(PYCRDT_ONE_PLACE_OFF_TRACE)
    with pytest.raises(Violation) as raised:
        replay(family, resolve_target(target), config, operations)
    steps = raised.value.steps
    last = steps[-1]
    assert len(steps) == len(operations), f"{target}: the documented trace fails earlier now; see pycrdt.md"
    assert isinstance(last.operation, Rollback) and last.expected.error is None and last.actual.error is None
    assert (last.expected.buffer, last.actual.buffer) == (b"aaaaaaa", b"aaaaaac"), f"{target}: see pycrdt.md"
    assert "R2" in raised.value.broken




@pytest.mark.slow
def test_the_pycrdt_pages_reproduction_prints_what_the_page_says(tmp_path: Path) -> None:
    """Finding 4's script on pycrdt.md (three shapes, distinct letters), run against the
    installed package, prints the output the page pastes."""
    pytest.importorskip("pycrdt")
    page = (Path(__file__).resolve().parent.parent / "docs" / "certifications" / "pycrdt.md").read_text(encoding="utf-8")
    script = re.search(r"```python\n(.*?)```", page, re.DOTALL)
    output = re.search(r"Its output[^\n]*\n\n( *)```\n(.*?)```", page, re.DOTALL)
    assert script is not None and output is not None, "pycrdt.md: the reproduction script or its output is gone"
    (tmp_path / "repro.py").write_text(textwrap.dedent(script[1]), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "repro.py"], cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == textwrap.dedent(output[2]), f"pycrdt.md: the reproduction now prints\n{done.stdout}"


#: An untagged remote edit (an out-of-log write with no transaction origin) on pycrdt:
#: replayed directly, since the R4 search may first find the one-step empty edit.
PYCRDT_UNTAGGED_TRACE = (
    '{"schema":"rollcert-trace/2","family":"rollback","initial":"YWFh","capacity":null,"policy":"reject",'
    '"operations":[{"op":"out_of_log_write","offset":1,"delete_length":0,"insert":"Yg=="}]}'
)


def test_pycrdt_untagged_remote_edit_becomes_a_local_undo_record() -> None:
    pytest.importorskip(_package("pycrdt-untagged"))
    family, config, operations = parse_trace(PYCRDT_UNTAGGED_TRACE)
    with pytest.raises(Violation) as raised:
        replay(family, resolve_target("pycrdt-untagged"), config, operations)
    (last,) = raised.value.steps
    assert isinstance(last.operation, OutOfLogWrite)
    assert last.expected.depth is not None and last.actual.depth == last.expected.depth + 1
    # ... and the tagged adapter keeps the remote edit out of the local undo history.
    replay(family, resolve_target("pycrdt"), config, operations)














# -- the adapters' own input handling --------------------------------------------------


def _plain(name: str) -> Target:
    pytest.importorskip(PACKAGE_OF[name])
    return resolve_target(name)


def test_textual_refuses_the_line_separators_it_would_rewrite() -> None:
    sut = _plain("textual").factory(BufferConfig(b"ab"))
    with pytest.raises(ValueError, match="rewrites"):
        sut.splice(1, 0, b"\r")
    assert sut.read() == b"ab"


@pytest.mark.parametrize("name", ["prompt_toolkit", "pycrdt"])
def test_adapters_refuse_multibyte_text(name: str) -> None:
    sut = _plain(name).factory(BufferConfig(b"ab"))
    with pytest.raises(ValueError, match="ASCII"):
        sut.splice(0, 0, "é".encode())
    assert sut.read() == b"ab"


def test_a_missing_package_says_how_to_install_it() -> None:
    with pytest.raises(TargetError, match=re.escape("pip install 'rollcert[thirdparty]'")):
        require_package("rollcert-no-such-package", "rollcert_no_such_module")


def test_an_unknown_third_party_name_lists_the_registered_ones() -> None:
    with pytest.raises(TargetError, match="textual"):
        resolve_target("thirdparty:emacs")
