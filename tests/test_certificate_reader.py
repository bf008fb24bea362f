"""The certificate reader on hostile files (SPEC §8): every malformed file is one
line and exit status 3 — no traceback, no hang, no memory out of proportion, no
code run — and a Hypothesis fuzz of structured mutations of real certificates
finds nothing else.

The real certificates are specimens certified in this process; the mutations
delete, replace, retype, nest and swap parts of them, the way a hand edit, a
truncated download or an attacker would."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from _helpers import OWN_PEAK_KIB
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from rollcert.command.cli import main
from rollcert.reports.certificate import render_junit
from rollcert.reports.certificate import render_markdown
from rollcert.reports.certificate import render_text
from rollcert.reports.certificate import to_json
from rollcert.reports.explain import ExplainError
from rollcert.reports.explain import render_text as render_walkthrough
from rollcert.reports.explain import stored_walkthrough
from rollcert.reports.html_certificate import HtmlCertificate
from rollcert.reports.html_certificate import render_html
from rollcert.reports.stored_certificate import CertificateFileError
from rollcert.reports.stored_certificate import certificate_checker
from rollcert.reports.stored_certificate import certificate_from_json
from rollcert.reports.stored_certificate import read_certificate_file
from rollcert.stateful_tests.certify import certify
from rollcert.targets.adapter import UsageError
from rollcert.targets.resolve import resolve_target

SCHEMA = json.loads((Path(__file__).parent.parent / "reports" / "certificate.schema.json").read_text(encoding="utf-8"))


#: The real certifications the files here start from (R3 first: the malformed
#: files are edits of its counterexample). Made on first use, each once per
#: process: at import, they cost every xdist worker 12 s of its collection.
REAL_RUNS = (
    ("specimen:fifo_replay", ("R3",)),
    ("specimen:write_set_only", ("S1",)),
    ("specimen:no_divergence_check", ("R4",)),
    ("bundled", ("R2",)),
)


@cache
def real_certificate(index: int) -> dict[str, Any]:
    name, only = REAL_RUNS[index]
    return json.loads(json.dumps(to_json(certify(resolve_target(name), profile="quick", seed=0, only=only))))


def real_certificates() -> tuple[dict[str, Any], ...]:
    return tuple(real_certificate(index) for index in range(len(REAL_RUNS)))


@pytest.mark.slow  # four certifications
def test_real_certificates_fit_the_schema_by_both_checkers() -> None:
    for record in real_certificates():
        Draft202012Validator(SCHEMA).validate(record)
        certificate_checker().check(record)


def test_the_shipped_schema_is_a_valid_json_schema() -> None:
    Draft202012Validator.check_schema(SCHEMA)


# -- hand-made files, one class each ---------------------------------------------------------------


def _r3() -> dict[str, Any]:
    return copy.deepcopy(real_certificate(0))


def _set(record: dict[str, Any], path: str, value: object) -> dict[str, Any]:
    *parents, last = path.split("/")
    here: Any = record
    for part in parents:
        here = here[int(part)] if isinstance(here, list) else here[part]
    if isinstance(here, list):
        here[int(last)] = value
    else:
        here[last] = value
    return record


def _without(record: dict[str, Any], path: str) -> dict[str, Any]:
    *parents, last = path.split("/")
    here: Any = record
    for part in parents:
        here = here[int(part)] if isinstance(here, list) else here[part]
    del here[last]
    return record


STEP = "properties/R3/counterexample/steps/0"
#: Each malformed file, made when its test runs: the real certificate they start
#: from is a certification (seconds), which module import (collection, once per
#: xdist worker) must not pay.
HAND_MADE: dict[str, Callable[[], object]] = {
    # what used to be a KeyError
    "no properties": lambda: _without(_r3(), "properties"),
    "no trace": lambda: _without(_r3(), "properties/R3/counterexample/trace"),
    "no target": lambda: _without(_r3(), "target"),
    # a ValueError
    "not base64": lambda: _set(_r3(), f"{STEP}/before", "***"),
    "unknown operation": lambda: _set(_r3(), f"{STEP}/operation", {"op": "teleport"}),
    "bad verdict": lambda: _set(_r3(), "properties/R3/verdict", "PASSED"),
    "unknown property": lambda: _set(_r3(), "properties/R9", {"verdict": "passed"}),
    # a TypeError
    "coverage not a count": lambda: _set(_r3(), "properties/R3/coverage", {"a": "b"}),
    "properties a list": lambda: _set(_r3(), "properties", []),
    "steps an object": lambda: _set(_r3(), "properties/R3/counterexample/steps", {}),
    "depth a boolean": lambda: _set(_r3(), f"{STEP}/expected/depth", True),
    # an AttributeError
    "target a string": lambda: _set(_r3(), "target", "bundled"),
    "result a list": lambda: _set(_r3(), "properties/R3", []),
    # a RecursionError
    "crash inside a crash": lambda: _set(
        _r3(), "properties/R3/counterexample/trace/operations/0",
        {"op": "crash_during", "operation": {"op": "crash_during", "operation": {"op": "splice"}}},
    ),
    "huge seed": lambda: _set(_r3(), "seed", 10**400),
    "empty steps": lambda: _set(_r3(), "properties/R3/counterexample/steps", []),
    "a list": lambda: [1, 2],
}
RAW: dict[str, str] = {
    "not JSON": "{",
    "deep nesting": "[" * 100_000,
    "deep under an unknown key": '{"schema":"rollcert-certificate/2","target":{"name":"x"},"properties":{},"x":'
    + "[" * 50_000 + "]" * 50_000 + "}",
    "not UTF-8": "",
}


def _write(tmp_path: Path, name: str, content: object) -> Path:
    path = tmp_path / "c.json"
    if name == "not UTF-8":
        path.write_bytes(b"\xff\xfe{")
    else:
        path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return path


@pytest.mark.parametrize("name", [*HAND_MADE, *RAW])
def test_a_malformed_certificate_is_one_line_and_exit_status_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    path = _write(tmp_path, name, HAND_MADE[name]() if name in HAND_MADE else RAW[name])
    for command in (
        ["html", str(path), str(tmp_path / "c.html")],
        ["explain", str(path)],
        ["replay", "bundled", "--certificate", str(path), "--property", "R3", "--in-process"],
    ):
        assert main(command) == 3, command
        said = capsys.readouterr()
        assert said.out == "" and len(said.err.strip().splitlines()) == 1, said
        assert said.err.startswith("rollcert: "), said.err
    assert not (tmp_path / "c.html").exists()


@pytest.mark.parametrize("command", ["html", "explain", "replay"])
def test_a_fifo_is_refused_not_waited_on(tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str) -> None:
    fifo = tmp_path / "c.json"
    os.mkfifo(fifo)
    arguments = {
        "html": ["html", str(fifo), str(tmp_path / "c.html")],
        "explain": ["explain", str(fifo)],
        "replay": ["replay", "bundled", "--certificate", str(fifo), "--property", "R3", "--in-process"],
    }[command]
    assert main(arguments) == 3  # a hang here is the bug: pytest's own timeout would end it
    assert "not a regular file" in capsys.readouterr().err


@pytest.mark.slow
def test_drawing_costs_memory_in_proportion_to_the_file(tmp_path: Path) -> None:
    """A file of about a megabyte — a 256 KiB initial buffer and 900 one-byte
    inserts (within what a trace may replay), each step recording a tiny buffer —
    would make the model walk through a gigabyte of buffers; it is refused once
    the walk passes its budget, in proportion to the file."""
    import base64

    record = _r3()
    counterexample = record["properties"]["R3"]["counterexample"]
    counterexample["trace"]["initial"] = base64.b64encode(b"a" * (1 << 18)).decode()
    splice = {"op": "splice", "offset": 0, "delete_length": 0, "insert": "YQ=="}
    counterexample["trace"]["operations"] = [splice] * 900
    counterexample["steps"] = [dict(counterexample["steps"][0], operation=splice, index=n + 1) for n in range(900)]
    path = tmp_path / "c.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    code = OWN_PEAK_KIB + (
        "from rollcert.command.cli import main\n"
        f"status = main(['html', {str(path)!r}, {str(tmp_path / 'c.html')!r}])\n"
        "peak = own_peak_kib() * 1024\n"
        "print(status, peak)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    status, peak = done.stdout.split()
    assert status == "3", done
    assert int(peak) < 40 * path.stat().st_size + (200 << 20), (peak, path.stat().st_size)
    assert "out of proportion to the file" in done.stderr


# -- the fuzz --------------------------------------------------------------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=8,
)
HOSTILE_TEXT = st.sampled_from([
    "", "\x1b[2J\x1b[HR0        passed", "1.0\n\n| R0 | **passed** |\n<!--", "<script>alert(1)</script>",
    "subprocess:sh -c 'touch RAN'", "planted:TARGET", "***", "YQ==", "\ud800", "x" * 5000,
])


def _places(value: Any, here: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into ``value`` (keys and list indexes), the root included."""
    found = [here]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _places(item, (*here, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _places(item, (*here, index))
    return found


def _at(document: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        document = document[part]
    return document


@st.composite
def mutated_certificates(draw: st.DrawFn) -> object:
    document: Any = copy.deepcopy(draw(st.sampled_from(real_certificates())))
    for _ in range(draw(st.integers(1, 3))):
        places = _places(document)
        path = draw(st.sampled_from(places))
        how = draw(st.sampled_from(["delete", "replace", "hostile", "retype", "wrap", "copy", "nest", "big"]))
        if how == "copy":
            new: object = copy.deepcopy(_at(document, draw(st.sampled_from(places))))
        elif how == "delete" and path:
            parent = _at(document, path[:-1])
            del parent[path[-1]]
            continue
        elif how == "replace" or how == "delete":
            new = draw(JSON_VALUES)
        elif how == "hostile":
            new = draw(HOSTILE_TEXT)
        elif how == "retype":
            old = _at(document, path)
            new = {str: 7, int: "7", bool: 1, list: {}, dict: [], type(None): False}.get(type(old))
        elif how == "wrap":
            new = [_at(document, path)]
        elif how == "nest":
            new = json.loads("[" * 40 + "1" + "]" * 40)
        else:
            new = draw(st.sampled_from([10**30, -(10**30), 1e300, 2**63, -1]))
        if not path:
            document = new
        else:
            _at(document, path[:-1])[path[-1]] = new
    return document


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(document=mutated_certificates())
def test_the_reader_refuses_in_one_line_or_renders_a_mutated_certificate(document: object) -> None:
    """Nothing but a :class:`UsageError` (one line, exit 3) or :class:`ExplainError`
    (nothing to draw) leaves the reader and the renderers; nothing resolves a target;
    and the reader's checker agrees with ``jsonschema`` on every document."""
    assert certificate_checker().fits(document) == Draft202012Validator(SCHEMA).is_valid(document)
    try:
        stored = certificate_from_json(document)
    except CertificateFileError as refused:
        assert "\n" not in str(refused)
        return
    certificate = stored.data
    render_text(certificate)
    render_markdown(certificate)
    render_junit(certificate)
    walks = []
    for property_id, result in certificate.results.items():
        if result.verdict != "violated":
            continue
        try:
            walk = stored_walkthrough(stored, property_id)
        except (UsageError, ExplainError) as refused:
            assert "\n" not in str(refused)
            continue
        render_walkthrough(walk)
        walks.append(walk)
    render_html(HtmlCertificate(certificate.target.name, certificate.target.version, certificate.profile,
                                certificate.seed, certificate.exit_status, (), tuple(walks)))


@pytest.fixture(autouse=True)
def nothing_resolves_a_target(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """While a certificate is read, rendered or drawn, no target is resolved (the
    replay test resolves the one its command line names, so it is left alone)."""
    if "replay" in request.node.name or "real" in request.node.name or "memory" in request.node.name:
        return
    real_certificates()  # made before the guard: certifying a specimen resolves it

    def refuse(text: str) -> object:
        raise AssertionError(f"a certificate made rollcert resolve the target {text!r}")

    monkeypatch.setattr("rollcert.targets.resolve.resolve_target", refuse)


def test_read_certificate_file_reads_what_certify_wrote(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text(json.dumps(real_certificates()[1]), encoding="utf-8")
    stored = read_certificate_file(path)
    assert stored.data.results["S1"].verdict == "violated" and stored.size == path.stat().st_size


def test_a_trace_too_large_to_replay_in_proportion_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    """Replaying it on a target the user chose still steps through every buffer:
    a megabyte buffer and a thousand edits used to cost 2 GB."""
    import base64

    trace = {
        "schema": "rollcert-trace/2", "family": "rollback", "initial": base64.b64encode(b"a" * (1 << 20)).decode(),
        "operations": [{"op": "splice", "offset": 0, "delete_length": 0, "insert": "YQ=="}] * 1000,
    }
    assert main(["replay", "bundled", "--trace", json.dumps(trace), "--in-process"]) == 3
    assert "no counterexample is that large" in capsys.readouterr().err
