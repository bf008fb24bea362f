"""Target builders that fail with a ``BaseException`` that is not an ``Exception``,
as a native extension's panic does (pyo3's ``PanicException`` derives from
``BaseException``): rollcert must report it in one line, never a traceback."""

from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import Capability
from rollcert.targets.adapter import SystemUnderTest
from rollcert.targets.adapter import Target


class PanicException(BaseException):
    """Stands in for ``pyo3_runtime.PanicException``."""


def build_target() -> Target:
    raise PanicException("called `Option::unwrap()` on a `None` value")


def _panicking_factory(config: BufferConfig) -> SystemUnderTest:
    raise PanicException("thread '<unnamed>' panicked at src/buffer.rs:42:9")


#: Builds fine; every buffer it is asked for panics.
PANICKING_BUFFERS = Target(
    name="panicking-buffers",
    version="0",
    capabilities=frozenset({Capability.CORE}),
    factory=_panicking_factory,
)
