"""A scope naming software versions is understood as a version range, never split at a
version's decimal point (issue 26.7: "CPython 3.13 and later" was "Not understood")."""

from __future__ import annotations

import pytest

from research.pipeline.claims.design import SourceProfile
from research.pipeline.claims.scope import VersionRange, parse_scope, preference


@pytest.mark.parametrize(
    ("text", "versions", "row"),
    [
        ("CPython 3.13 and later", [VersionRange("CPython", "3.13")], "CPython 3.13 and later"),
        ("Python 3.10 to 3.12", [VersionRange("Python", "3.10", "3.12")], "Python 3.10 to 3.12"),
        ("since Django 4.2", [VersionRange("Django", "4.2")], "Django 4.2 and later"),
        ("before NumPy 2.0", [VersionRange("NumPy", high="2.0", below=True)], "NumPy before 2.0"),
        ("up to Python 3.12", [VersionRange("Python", high="3.12")], "Python up to 3.12"),
        ("version 2.0.1 only", [VersionRange("", "2.0.1", "2.0.1")], "2.0.1"),
    ],
)
def test_it_understands_a_version_range(text, versions, row):
    scope = parse_scope(text)

    assert list(scope.versions) == versions
    assert scope.unparsed == ()
    assert scope.settings == ()
    assert scope.summary() == [("Versions", f"{row}: sources naming such a version first")]
    assert scope.to_json()["versions"] == [v.to_json() for v in versions]


def test_it_keeps_the_other_clauses_of_a_scope_with_a_version():
    scope = parse_scope("CPython 3.13 and later; randomized trials preferred. since 2021.")

    assert scope.versions == (VersionRange("CPython", "3.13"),)
    assert scope.year_from == 2021
    assert "Not understood" not in dict(scope.summary())


def test_it_ranks_sources_naming_a_version_in_range_first():
    scope = parse_scope("CPython 3.13 and later")
    profile = SourceProfile()

    assert preference(scope, profile, "Free threading in CPython 3.14 costs 10%") == 1.0
    assert preference(scope, profile, "CPython 3.12 keeps the GIL") == 0.0
    assert preference(scope, profile, "Figure 3.13 shows the Java heap") == 0.0  # not named
    assert VersionRange("NumPy", high="2.0", below=True).holds("1.26.4")
    assert not VersionRange("NumPy", high="2.0", below=True).holds("2.0")
