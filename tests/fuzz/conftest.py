"""Property-based fuzzing of every parser of untrusted input (hypothesis), bounded for CI.

Profiles (``HYPOTHESIS_PROFILE``): ``ci`` (default: derandomized, 60 examples per
property, the whole folder in well under a minute), ``dev`` (300 random examples) and
``thorough`` (3,000, for a long local hunt). No deadline per example: the machine is
shared and timing is not a property; quadratic blow-ups are caught by the regression
cases, each under a ``pytest.mark.timeout`` far above what a linear routine needs.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile("dev", max_examples=300, deadline=None)
settings.register_profile(
    "thorough", max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
