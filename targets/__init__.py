"""Everything an adapter author needs, in one place.

An adapter connects a system under test to rollcert: it says what the target can
do (:class:`Capability`), how a buffer is made (:class:`BufferConfig`) and which
world the target lives in (:class:`SizeLimits`, :class:`HistoryBound`,
``Target.alphabet``), and answers each operation or raises one of
:mod:`rollcert.model.errors`. A complete adapter imports from here and from
``rollcert.model.errors`` only (see the README's example)::

    from rollcert.model.errors import JournalError
    from rollcert.targets import BufferConfig, Capability, CheckedAdapter, Target

The room behind this module (``rollcert.targets``) holds everything that reaches a
system under test: the adapter protocol (:mod:`~rollcert.targets.adapter`), the
adapters (:mod:`~rollcert.targets.adapters`), the subprocess protocol with its
client, reference server and JSON Schemas, the tool environments and tool
servers, the findings files, and target resolution with its plugins. It imports
only ``impl`` and ``model``; the engine (``rollcert.stateful_tests``) imports it.
"""

from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import Capability
from rollcert.targets.adapter import HistoryBound
from rollcert.targets.adapter import KnownFinding
from rollcert.targets.adapter import SizeLimits
from rollcert.targets.adapter import Target
from rollcert.targets.adapters.checked import CheckedAdapter
from rollcert.targets.adapters.diff_applier import DiffApplier

__all__ = [
    "BufferConfig",
    "Capability",
    "CheckedAdapter",
    "DiffApplier",
    "HistoryBound",
    "KnownFinding",
    "SizeLimits",
    "Target",
]
