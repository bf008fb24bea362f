"""``strategies.RunBoundaries`` is the plain definition of a run boundary, only
cheaper: the same length and the same items, so the same words draw the same
small-scope offsets as before it (every fixed-seed verdict stays as it was)."""

from __future__ import annotations

import random

import pytest

from rollcert.stateful_tests.strategies import RunBoundaries


def plain(buffer: bytes) -> tuple[int, ...]:
    return tuple(i for i in range(1, len(buffer)) if buffer[i - 1] != buffer[i])


SMALL = [b"", b"a", b"aa", b"ab", b"aab", b"abba", b"\x00", b"\x00\x00\x01", b"\n\n\x00\x00\xff\xff\xfe"]


@pytest.mark.parametrize("buffer", SMALL)
def test_small_buffers_agree(buffer: bytes) -> None:
    boundaries = RunBoundaries(buffer)
    assert len(boundaries) == len(plain(buffer))
    assert list(boundaries) == list(plain(buffer))
    assert bool(boundaries) == bool(plain(buffer))


def test_random_buffers_agree_item_by_item() -> None:
    rng = random.Random(23)
    for _ in range(2000):
        buffer = bytes(rng.choice(b"ab\n\x00\xff") for _ in range(rng.randrange(48)))
        expected = plain(buffer)
        boundaries = RunBoundaries(buffer)
        assert len(boundaries) == len(expected)
        assert [boundaries[i] for i in range(len(expected))] == list(expected)
        if expected:
            assert boundaries[-1] == expected[-1]


@pytest.mark.parametrize("kind", ["random", "tiled", "one byte", "leading zeros"])
def test_large_buffers_agree(kind: str) -> None:
    rng = random.Random(kind)
    buffer = {
        "random": bytes(rng.randrange(256) for _ in range(40_000)),
        "tiled": b"ab\r\n\xc3\xa9" * 7_000,
        "one byte": b"a" * 40_000,
        "leading zeros": b"\x00" * 5_000 + b"\x01" + b"\x00" * 5_000,
    }[kind]
    expected = plain(buffer)
    boundaries = RunBoundaries(buffer)
    assert len(boundaries) == len(expected)
    for index in rng.sample(range(len(expected)), min(400, len(expected))):
        assert boundaries[index] == expected[index]
    with pytest.raises(IndexError):
        boundaries[len(expected)]
