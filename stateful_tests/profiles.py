"""Hypothesis settings profiles: ``quick`` (the test suite), ``ci`` and ``thorough``.

Certification runs never use the example database, so a certificate depends
only on the target, the profile and the seed.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import HealthCheck
from hypothesis import Phase
from hypothesis import settings


@dataclass(frozen=True)
class Profile:
    """``max_examples`` per round; up to ``rounds`` rounds, each with a fresh seed
    derived from the run's seed, until every situation of the property has been
    reached. Hypothesis mutates earlier examples and switches rules off at random
    (swarm testing), which finds bugs well but can circle one region for a whole
    round; a fresh seed starts elsewhere."""

    name: str
    max_examples: int
    steps_per_example: int
    rounds: int

    def hypothesis_settings(self) -> settings:
        return settings(
            max_examples=self.max_examples,
            stateful_step_count=self.steps_per_example,
            deadline=None,
            database=None,
            print_blob=False,
            report_multiple_bugs=False,
            suppress_health_check=list(HealthCheck),
            derandomize=False,
            # No shrink phase: Hypothesis's shrinker spends tens of seconds on a
            # state machine whose draws depend on the state. Our own pass
            # (rollcert.stateful_tests.shrink) minimises the first failing trace by replay
            # in milliseconds, down to a 1-minimal trace.
            phases=[Phase.explicit, Phase.reuse, Phase.generate],
        )


PROFILES: dict[str, Profile] = {
    "quick": Profile("quick", max_examples=100, steps_per_example=20, rounds=4),
    "ci": Profile("ci", max_examples=300, steps_per_example=30, rounds=4),
    "thorough": Profile("thorough", max_examples=2000, steps_per_example=50, rounds=4),
}

for _profile in PROFILES.values():
    settings.register_profile(f"rollcert-{_profile.name}", _profile.hypothesis_settings())
