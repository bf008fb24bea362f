"""Certification over ``rollcert-protocol/2`` (slow): the reference server gets
the same verdicts as the in-process ``bundled`` target on every property R0–R6
and S1–S3 — R5 through real SIGKILLs of the server process — a durable server
that acknowledges before it syncs is caught on R5 through those kills, and a
version 1 server certifies as before.

The runs use a small profile (40 examples of 20 steps per round, up to four
rounds until every situation is reached), the same for the in-process target,
so that the comparison is like for like and the file stays within a few minutes.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest

from rollcert.stateful_tests.certify import certify_property
from rollcert.stateful_tests.profiles import Profile
from rollcert.targets.adapters.bundled import TARGET as BUNDLED
from rollcert.targets.adapters.subprocess_client import subprocess_target

pytestmark = pytest.mark.slow

FAKES = Path(__file__).parent / "fake_servers"
REFERENCE = [sys.executable, "-m", "rollcert.targets.protocol_server"]
PROPERTIES = ("R0", "R1", "R2", "R3", "R4", "R5", "R6", "S1", "S2", "S3")
#: The bundled target in the world the reference server declares: the server does
#: not announce the buffer's 32 KiB chunk (the protocol has no word for it), so the
#: in-process run is not asked for buffers past it either; this small profile
#: would not reach them (R4 ended unknown on buffer_past_chunk alone), nor asked
#: for small chunks (the server builds its buffers with the bundled size), nor sent
#: the bad arguments the server does not declare it checks (Target.checks_arguments).
SAME_WORLD = replace(BUNDLED, chunk_bytes=None, sets_chunk_bytes=False, checks_arguments=False)
SMALL = Profile("protocol-small", max_examples=40, steps_per_example=20, rounds=12)


def fake(name: str) -> list[str]:
    return [sys.executable, str(FAKES / f"{name}.py")]


#: R5 over the wire restarts the server at every crash (~0.3 s of imports each): 5,580
#: steps in 202 examples took 200 s on an idle CI machine and 230-240 s beside other
#: work, past the suite's 240 s limit (pytest-timeout then ends the xdist worker:
#: "worker crashed"). Its own limit, until the server starts faster.
@pytest.mark.timeout(600)
@pytest.mark.parametrize("property_id", list(PROPERTIES))  # one item each: spread over workers, each timed
def test_the_reference_server_certifies_every_property_over_v2_as_in_process(property_id: str) -> None:
    over_the_wire = certify_property(subprocess_target(REFERENCE), property_id, SMALL, 0)
    in_process = certify_property(SAME_WORLD, property_id, SMALL, 0)
    assert over_the_wire.verdict == in_process.verdict == "passed", (property_id, over_the_wire.reason)
    assert over_the_wire.steps > 0 and all(count > 0 for count in over_the_wire.coverage.values())


def test_a_durable_server_that_acknowledges_before_it_syncs_is_caught_on_r5_by_real_kills() -> None:
    result = certify_property(subprocess_target(fake("durable_ack_before_sync")), "R5", SMALL, 0)
    assert result.verdict == "violated", result.reason
    assert result.counterexample is not None
    operations = [step.operation.describe() for step in result.counterexample.steps]
    assert any("crash" in text for text in operations), operations
    assert result.counterexample.durable


def test_a_version_1_server_certifies_as_before() -> None:
    target = subprocess_target(fake("v1_only"))
    assert target.notes["protocol"] == "rollcert-protocol/1"
    verdicts = {pid: certify_property(target, pid, SMALL, 0).verdict for pid in ("R0", "R3", "R5", "S1")}
    assert verdicts == {"R0": "passed", "R3": "passed", "R5": "not_assessed", "S1": "not_assessed"}
