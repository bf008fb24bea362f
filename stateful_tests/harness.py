"""The Hypothesis machine every family's rules are attached to.

A family's machine is a :class:`FamilyMachine` subclass built by the family
(``PropertyFamily.build_machine``) with only the rules one property uses on one
target. Everything else is here, once: starting a :class:`~rollcert.stateful_tests.judge.Session`
per example, ``note()``-ing every configuration and step (so a failure Hypothesis
prints is a readable trace), skipping the steps a target sets aside as known
findings, judging each step, and counting the situations the property names, so
that a run that never reached them reports ``unknown`` instead of ``passed``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any
from typing import ClassVar

from hypothesis import note
from hypothesis import reject
from hypothesis.stateful import RuleBasedStateMachine

from rollcert.stateful_tests import strategies
from rollcert.stateful_tests.family import PropertyFamily
from rollcert.stateful_tests.family import Tracker
from rollcert.stateful_tests.family import Unjudgeable
from rollcert.stateful_tests.judge import Session
from rollcert.stateful_tests.judge import Violation
from rollcert.stateful_tests.model_coverage import note as note_model_calls
from rollcert.stateful_tests.model_coverage import note_set_aside
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import Target


class FamilyMachine(RuleBasedStateMachine):
    """Base of every generated machine; the family attaches rules and ``start``."""

    family: ClassVar[PropertyFamily[Any, Any, Any]]
    target: ClassVar[Target]
    tracker: ClassVar[Tracker]

    def __init__(self) -> None:
        super().__init__()
        self.session: Session[Any, Any, Any] | None = None
        #: Whether this example mixes wide draws in (set by the family's start).
        self.wide = False

    @property
    def live(self) -> Session[Any, Any, Any]:
        assert self.session is not None, "a rule ran before the machine started"
        return self.session

    def begin(self, config: BufferConfig, word: bytes = b"") -> None:
        """Start one example: a fresh SUT and a fresh model from ``config`` (a
        bounded one takes the policy of the target's own history bound, if any;
        a target that can start at a high revision is asked to now and then,
        read from the example's start ``word``: strategies.start_revision_from)."""
        self.tracker.check_limits()
        config = self.target.buffer_config(config)
        if self.target.starts_at_revision and word:
            config = replace(config, start_revision=strategies.start_revision_from(word))
        note(f"config: {config}")
        self.session = Session(self.family, self.target, config, self.tracker.tallies)
        self.tracker.examples += 1
        self.tracker.world.initial(config.initial, config.chunk_bytes)
        base = self.session.revision_base
        self.tracker.world.observed(len(config.initial), 0, None if base is None else base + config.start_revision)

    def run(self, operation: Any) -> None:
        """Judge one step and count the situations it reached."""
        if self.target.sets_aside(self.live.model, operation):
            note_set_aside(self.family.predict, self.live.readings, operation)  # model-branch coverage
            return  # a known finding the target sets aside; not taken
        self.tracker.check_limits()
        note(f"step {len(self.live.steps) + 1}: {operation.describe()}")
        before = self.live.model
        note_model_calls(self.family.predict, self.live.readings, operation)  # model-branch coverage
        try:
            self.live.execute(operation)
        except Violation as violation:
            if self.tracker.owns(violation.broken):
                if self.tracker.is_new(violation):
                    raise
                # The search for further findings (issue 43) already has this one:
                # not a failure; the example ends and the search goes on.
                note(f"a finding already known ({violation.coarse_signature()}); this example ends")
                reject()
            # Another rule's finding: recorded there ("found while exploring" this
            # property), and this example ends; the run goes on with the next one.
            self.tracker.found(violation.broken, violation)
            note(f"a finding of {', '.join(violation.broken)}, recorded there; this example ends")
            reject()
        except Unjudgeable as reason:
            # The judge had to leave readings out and none it kept fits: neither a
            # pass nor a violation. Counted, so a certificate says how often.
            self.tracker.tallies["steps_not_judged"] += 1
            note(f"not judged: {reason}; this example ends")
            reject()
        self.tracker.steps += 1
        prediction = self.live.last_prediction
        assert prediction is not None
        # The property's situations are counted on the small-scope examples only: a
        # wide one (kilobytes of tiled text) reaches "ambiguous context" and the like
        # without the short aliased history the anchor bugs need, and a run stops
        # once every situation was reached (rollcert.stateful_tests.strategies.WIDE_EXAMPLES).
        if not self.wide:
            for situation in self.tracker.property.situations:
                if situation.reached(before, operation, prediction.outcome):
                    self.tracker.reached[situation.name] += 1
        # The world's dimensions, on what was sent and what was seen (rollcert.stateful_tests.world).
        world = self.tracker.world
        for edit in self.family.sent_edits(before, operation):
            world.edit(*edit)
        actual = self.live.steps[-1].actual
        depth = actual.depth if actual.depth is not None else self.family.depth(self.live.model)
        base = self.live.revision_base
        world.observed(len(actual.buffer), depth, None if base is None or actual.revision is None else base + actual.revision)

    def teardown(self) -> None:
        if self.session is not None:
            self.session.close()
