"""Targets whose ``splice`` raises, whenever the insert is two bytes or longer,
something no rule allows: each must be judged ``violated`` (an undocumented
outcome), never end the run or become ``error``.

- ``KeyboardInterrupt`` raised by the target, not by Ctrl-C: it used to stop the
  whole run as if the user had pressed Ctrl-C (exit status 130, no certificate);
- ``SystemExit``, ``GeneratorExit``, a custom ``BaseException``, ``RecursionError``
  (a real one), ``MemoryError``;
- an exception whose ``__str__`` and ``__repr__`` raise: it used to turn into
  ``error`` ("the adapter raised RuntimeError"), hiding the violation;
- an exception with a 10 MB message: it used to be copied whole into the step
  record, the certificate and every output format;
- rollcert's own ``DivergenceError``, a documented error raised where the rules
  allow none: a violation like any other.
"""

from __future__ import annotations

from collections.abc import Callable

from _honest import HonestAdapter
from _honest import target

from rollcert.model.errors import DivergenceError
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import SystemUnderTest
from rollcert.targets.adapter import Target


class NativePanic(BaseException):
    """Stands in for a native extension's panic (pyo3's derives from BaseException)."""


class UnprintableError(Exception):
    def __str__(self) -> str:
        raise RuntimeError("__str__ exploded")

    def __repr__(self) -> str:
        raise RuntimeError("__repr__ exploded")


class VerboseError(Exception):
    def __str__(self) -> str:
        return "spam " * 2_000_000  # 10 MB


def _recurse(depth: int) -> int:
    return _recurse(depth + 1) + 1


def _raising(name: str, raise_it: Callable[[], object]) -> Target:
    class Raising(HonestAdapter):
        def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
            if len(insert) >= 2:
                raise_it()
            super().splice(offset, delete_length, insert)

    def build(config: BufferConfig) -> SystemUnderTest:
        return Raising(config)

    return target(f"raises-{name}", build)


def _throw(error: BaseException) -> Callable[[], object]:
    def throw() -> object:
        raise error

    return throw


KEYBOARD_INTERRUPT = _raising("keyboard-interrupt", _throw(KeyboardInterrupt()))
SYSTEM_EXIT = _raising("system-exit", _throw(SystemExit(4)))
GENERATOR_EXIT = _raising("generator-exit", _throw(GeneratorExit()))
NATIVE_PANIC = _raising("native-panic", _throw(NativePanic("thread panicked")))
RECURSION = _raising("recursion", lambda: _recurse(0))
MEMORY = _raising("memory", _throw(MemoryError()))
UNPRINTABLE = _raising("unprintable", _throw(UnprintableError()))
VERBOSE = _raising("verbose", _throw(VerboseError()))
FAKE_DIVERGENCE = _raising("fake-divergence", _throw(DivergenceError("an out-of-log write, says the target")))


def unbuildable() -> Target:
    """A target builder whose exception cannot even be printed: a usage error in one line."""
    raise UnprintableError()
