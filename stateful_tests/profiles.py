"""Hypothesis settings profiles: ``quick`` (the test suite), ``ci`` and ``thorough``.

Certification runs never use the example database, so a certificate depends
only on the target, the profile and the seed.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import HealthCheck, settings


@dataclass(frozen=True)
class Profile:
    name: str
    max_examples: int
    steps_per_example: int

    def hypothesis_settings(self) -> settings:
        return settings(
            max_examples=self.max_examples,
            stateful_step_count=self.steps_per_example,
            deadline=None,
            database=None,
            print_blob=False,
            report_multiple_bugs=False,
            suppress_health_check=list(HealthCheck),
        )


PROFILES: dict[str, Profile] = {
    "quick": Profile("quick", max_examples=100, steps_per_example=20),
    "ci": Profile("ci", max_examples=300, steps_per_example=30),
    "thorough": Profile("thorough", max_examples=2000, steps_per_example=50),
}

for _profile in PROFILES.values():
    settings.register_profile(f"rollcert-{_profile.name}", _profile.hypothesis_settings())
