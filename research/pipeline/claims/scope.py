"""A plan's scope, typed: the population, study designs, date range and settings it asks for.

:func:`parse_scope` reads the free text a researcher typed ("Randomized controlled trials
and meta-analyses preferred; adults over 60") clause by clause into a :class:`Scope`:

* **designs** — named designs are *preferred* (ranked first) by default or when the clause
  says "preferred", "ideally", "favour"; *required* when it says "only", "must",
  "restricted to"; *excluded* when it says "exclude", "no", "not", "except";
* **population** — an age range ("over 60", "aged 18–65", "60 years or older", "under
  18"), people in words ("adults", "older adults", "pregnant women"); a scope that
  names people leaves out animal and cell studies;
* **years** — "since 2010", "2005–2015", "before 2000", "published after 2012";
* **versions** — a software version or range ("Django 4.2 and later", "Python 3.10 to
  3.12", "before 2.0"): a preference, sources naming a version in it rank first; a
  version number is one token ("3.13" never splits a clause at its decimal point);
* **settings** — what is left of a population clause ("low-income", "rural schools",
  "primary care") is a preference: sources that mention it rank first.

Anything it cannot read is kept in ``unparsed`` and shown, never silently applied.
:func:`scope_exclusion` says why a source falls outside the scope (empty: it does not),
and :func:`preference` how well it fits the preferences (0–1).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from research.pipeline.claims.design import (
    ANIMAL,
    CASE_CONTROL,
    CASE_REPORT,
    COHORT,
    CROSS_SECTIONAL,
    DESIGN_LABELS,
    GUIDELINE,
    IN_VITRO,
    META_ANALYSIS,
    NARRATIVE_REVIEW,
    NON_HUMAN,
    RCT,
    SYSTEMATIC_REVIEW,
    SourceProfile,
)
from research.pipeline.language.cues import (
    CHILD_NOUNS,
    SCOPE_AGE_MAX,
    SCOPE_AGE_MIN,
    SCOPE_AGE_RANGE,
    SCOPE_EXCLUDED_CUE,
    SCOPE_FILLER,
    SCOPE_PEOPLE,
    SCOPE_REQUIRED_CUE,
    SCOPE_VERSION_FROM,
    SCOPE_VERSION_RANGE,
    SCOPE_VERSION_TO,
    SCOPE_YEAR_FROM,
    SCOPE_YEAR_ONWARDS,
    SCOPE_YEAR_RANGE,
    SCOPE_YEAR_TO,
    SCOPE_YEAR_WORDS,
    VERSION_RANGE_WORDS,
)
from research.pipeline.language.design import (
    ANIMAL_NAMED,
    CASE_CONTROL_NAMED,
    CASE_REPORT_NAMED,
    COHORT_NAMED,
    CROSS_SECTIONAL_NAMED,
    GUIDELINE_NAMED,
    IN_VITRO_NAMED,
    META_ANALYSIS_NAMED,
    NARRATIVE_REVIEW_NAMED,
    RCT_NAMED,
    SYSTEMATIC_REVIEW_NAMED,
)
from research.pipeline.language.quantities import VERSION, version_key

_DESIGN_WORDS: tuple[tuple[str, str], ...] = (
    (META_ANALYSIS, META_ANALYSIS_NAMED),
    (SYSTEMATIC_REVIEW, SYSTEMATIC_REVIEW_NAMED),
    (RCT, RCT_NAMED),
    (COHORT, COHORT_NAMED),
    (CASE_CONTROL, CASE_CONTROL_NAMED),
    (CROSS_SECTIONAL, CROSS_SECTIONAL_NAMED),
    (CASE_REPORT, CASE_REPORT_NAMED),
    (NARRATIVE_REVIEW, NARRATIVE_REVIEW_NAMED),
    (GUIDELINE, GUIDELINE_NAMED),
    (ANIMAL, ANIMAL_NAMED),
    (IN_VITRO, IN_VITRO_NAMED),
)


@dataclass(frozen=True)
class VersionRange:
    """Versions of a piece of software the scope asks about, both ends inclusive ('' for
    open): "Django 4.2 and later" is ("Django", "4.2", "")."""

    name: str
    low: str = ""
    high: str = ""
    below: bool = False  # "before 3.13": the high end itself is out

    def words(self) -> str:
        if self.low and self.low == self.high:
            span = self.low
        elif self.low and self.high:
            span = f"{self.low} to {self.high}"
        elif self.low:
            span = f"{self.low} and later"
        else:
            span = f"{'before' if self.below else 'up to'} {self.high}"
        return f"{self.name} {span}".strip()

    def holds(self, version: str) -> bool:
        key = version_key(version)
        if self.low and key < version_key(self.low):
            return False
        if not self.high:
            return True
        high = version_key(self.high)
        return key < high if self.below else key <= high

    def named_in(self, text: str) -> bool:
        """Whether the text names the software (when the scope does) and a version in range."""
        if self.name and self.name.casefold() not in text.casefold():
            return False
        return any(self.holds(m.group(0)) for m in VERSION.finditer(text))

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "low": self.low, "high": self.high, "below": self.below}


@dataclass(frozen=True)
class Scope:
    text: str = ""
    preferred_designs: tuple[str, ...] = ()
    required_designs: tuple[str, ...] = ()
    excluded_designs: tuple[str, ...] = ()
    age_min: float | None = None
    age_max: float | None = None
    people: tuple[str, ...] = ()  # population words ("adults", "pregnant women")
    year_from: int | None = None
    year_to: int | None = None
    settings: tuple[str, ...] = ()  # preferences in the scope's own words
    versions: tuple[VersionRange, ...] = ()  # preferences: sources naming one rank first
    unparsed: tuple[str, ...] = ()  # clauses it could not read (shown, not applied)

    @property
    def humans(self) -> bool:
        return bool(self.people) or self.age_min is not None or self.age_max is not None

    @property
    def empty(self) -> bool:
        return not (
            self.preferred_designs
            or self.required_designs
            or self.excluded_designs
            or self.humans
            or self.year_from
            or self.year_to
            or self.settings
            or self.versions
        )

    def population_words(self) -> str:
        ages = _age_words(self.age_min, self.age_max)
        who = ", ".join(self.people)
        return " ".join(p for p in (who, ages) if p)

    def summary(self) -> list[tuple[str, str]]:
        """(what, how it is applied) rows for the plan page and the run record."""
        rows: list[tuple[str, str]] = []

        def names(designs: tuple[str, ...]) -> str:
            return ", ".join(DESIGN_LABELS[d] for d in designs)

        if self.preferred_designs:
            rows.append(("Preferred designs", f"{names(self.preferred_designs)}: ranked first"))
        if self.required_designs:
            rows.append(("Required designs", f"{names(self.required_designs)}: others left out"))
        if self.excluded_designs:
            rows.append(("Excluded designs", f"{names(self.excluded_designs)}: left out"))
        if self.humans:
            rows.append(
                (
                    "Population",
                    f"{self.population_words()}: sources on other ages, animals or cells left out",
                )
            )
        if self.year_from or self.year_to:
            rows.append(
                (
                    "Years",
                    f"{self.year_from or '…'}–{self.year_to or '…'}: sources dated "
                    "outside left out (undated ones kept)",
                )
            )
        if self.versions:
            named = ", ".join(v.words() for v in self.versions)
            rows.append(("Versions", f"{named}: sources naming such a version first"))
        if self.settings:
            rows.append(("Setting", f"{', '.join(self.settings)}: sources mentioning it first"))
        if self.unparsed:
            rows.append(("Not understood", "; ".join(self.unparsed) + " (not applied)"))
        return rows

    def to_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "preferred_designs": list(self.preferred_designs),
            "required_designs": list(self.required_designs),
            "excluded_designs": list(self.excluded_designs),
            "age_min": self.age_min,
            "age_max": self.age_max,
            "people": list(self.people),
            "year_from": self.year_from,
            "year_to": self.year_to,
            "settings": list(self.settings),
            "versions": [v.to_json() for v in self.versions],
            "unparsed": list(self.unparsed),
        }


@dataclass
class _Parts:
    preferred: list[str] = field(default_factory=list)
    required: list[str] = field(default_factory=list)
    excluded: list[str] = field(default_factory=list)
    people: list[str] = field(default_factory=list)
    settings: list[str] = field(default_factory=list)
    versions: list[VersionRange] = field(default_factory=list)
    unparsed: list[str] = field(default_factory=list)
    age_min: float | None = None
    age_max: float | None = None
    year_from: int | None = None
    year_to: int | None = None


def _age_words(low: float | None, high: float | None) -> str:
    if low is not None and high is not None:
        return f"aged {low:g}–{high:g}"
    if low is not None:
        return f"aged {low:g} or over"
    if high is not None:
        return f"under {high:g}"
    return ""


def parse_scope(text: str) -> Scope:
    parts = _Parts()
    # a clause ends at ";", a line break, a full stop (not the point inside "3.13") or ", X"
    for clause in re.split(r"[;\n]+|(?<!\d)\.+|\.+(?!\d)|,\s+(?=[A-Za-z])", text or ""):
        clause = clause.strip()
        if clause:
            _clause(clause, parts)
    return Scope(
        text=(text or "").strip(),
        preferred_designs=tuple(dict.fromkeys(parts.preferred)),
        required_designs=tuple(dict.fromkeys(parts.required)),
        excluded_designs=tuple(dict.fromkeys(parts.excluded)),
        age_min=parts.age_min,
        age_max=parts.age_max,
        people=tuple(dict.fromkeys(parts.people)),
        year_from=parts.year_from,
        year_to=parts.year_to,
        settings=tuple(dict.fromkeys(parts.settings)),
        versions=tuple(dict.fromkeys(parts.versions)),
        unparsed=tuple(parts.unparsed),
    )


def _clause(clause: str, parts: _Parts) -> None:
    versions = _versions(clause, parts)
    if versions:
        clause = VERSION.sub(" ", VERSION_RANGE_WORDS.sub(" ", clause))
        clause = " ".join(w for w in clause.split() if w not in {v.name for v in parts.versions})
    understood = _designs(clause, parts) | _years(clause, parts) | versions
    understood |= _population(clause, parts)
    rest = " ".join(SCOPE_FILLER.sub(" ", _strip_known(clause)).split()).strip(" ,:()")
    if rest and understood:
        parts.settings.append(rest)
    elif rest and not understood:
        parts.unparsed.append(clause)


def _strip_known(clause: str) -> str:
    out = clause
    for _, pattern in _DESIGN_WORDS:
        out = re.sub(rf"\b(?:{pattern})\b", " ", out, flags=re.I)
    out = SCOPE_PEOPLE.sub(" ", out)
    return SCOPE_YEAR_WORDS.sub(" ", out)


def _designs(clause: str, parts: _Parts) -> bool:
    found = [d for d, p in _DESIGN_WORDS if re.search(rf"\b(?:{p})\b", clause, re.I)]
    found = [d for i, d in enumerate(found) if d not in found[:i]]
    if ANIMAL in found and not re.search(r"\banimal", clause, re.I):
        found.remove(ANIMAL)
    if not found:
        return False
    if SCOPE_EXCLUDED_CUE.search(clause):
        parts.excluded += found
    elif SCOPE_REQUIRED_CUE.search(clause):
        parts.required += found
    else:
        parts.preferred += found
    return True


def _years(clause: str, parts: _Parts) -> bool:
    if m := SCOPE_YEAR_RANGE.search(clause):
        parts.year_from, parts.year_to = int(m.group(1)), int(m.group(2))
        return True
    hit = False
    if m := (SCOPE_YEAR_FROM.search(clause) or SCOPE_YEAR_ONWARDS.search(clause)):
        parts.year_from, hit = int(m.group(1)), True
    if m := SCOPE_YEAR_TO.search(clause):
        parts.year_to, hit = int(m.group(1)), True
    return hit


def _versions(clause: str, parts: _Parts) -> bool:
    """A version or version range, with the software's name: the words before its first
    version number that are not range words ("Django 4.2 and later" -> "Django")."""
    first = VERSION.search(clause)
    if first is None:
        return False
    name = " ".join(VERSION_RANGE_WORDS.sub(" ", clause[: first.start()]).split())
    if m := SCOPE_VERSION_RANGE.search(clause):
        found = VersionRange(name, m.group(1), m.group(2))
    elif m := SCOPE_VERSION_FROM.search(clause):
        found = VersionRange(name, m.group(1) or m.group(2))
    elif m := SCOPE_VERSION_TO.search(clause):
        below = not re.match(r"up to|until|<=", m.group(0), re.I)
        found = VersionRange(name, high=m.group(1), below=below)
    else:
        found = VersionRange(name, first.group(0), first.group(0))
    parts.versions.append(found)
    return True


def _population(clause: str, parts: _Parts) -> bool:
    people = [m.group(1).lower() for m in SCOPE_PEOPLE.finditer(clause)]
    without_years = re.sub(r"\b(?:19|20)\d\d\b", " ", clause)
    hit = bool(people)
    if m := SCOPE_AGE_RANGE.search(without_years):
        low, high = float(m.group(1)), float(m.group(2))
        if low < high <= 120 and (people or re.search(r"\b(?:aged?|years?)\b", clause, re.I)):
            parts.age_min, parts.age_max, hit = low, high, True
    if parts.age_min is None and (m := SCOPE_AGE_MIN.search(without_years)):
        value = float(m.group(1) or m.group(2))
        if value <= 120 and (people or re.search(r"\b(?:aged?|years?|over|older)\b", clause)):
            parts.age_min, hit = value, True
    m = SCOPE_AGE_MAX.search(without_years)
    if m and float(m.group(1)) <= 120:
        parts.age_max, hit = float(m.group(1)), True
    heads = [p.split()[-1] for p in people]  # "school-age children" are children
    if "adults" in heads and parts.age_min is None and not any(h in CHILD_NOUNS for h in heads):
        parts.age_min = 18.0
    if any(h in CHILD_NOUNS for h in heads) and parts.age_max is None and "adults" not in heads:
        parts.age_max = 18.0
    parts.people += [p for p in people if p not in ("people", "persons", "individuals", "humans")]
    if not people and hit:
        parts.people.append("people")
    return hit


# --- applying it ---------------------------------------------------------------------------


def scope_exclusion(scope: Scope, profile: SourceProfile) -> str:
    """Why a source is outside the scope, in words ('' when it is inside or cannot tell)."""
    design = profile.design
    label = profile.design_label
    if scope.excluded_designs and design in scope.excluded_designs:
        return f"outside the scope: a {label}, which the scope excludes"
    if scope.required_designs and design and design not in scope.required_designs:
        wanted = " or ".join(DESIGN_LABELS[d] for d in scope.required_designs)
        return f"outside the scope: a {label}, the scope asks only for {wanted}"
    if scope.humans and design in NON_HUMAN and design not in scope.preferred_designs:
        return f"outside the scope: a {label}, the scope is about {scope.population_words()}"
    age = _age_outside(scope, profile)
    if age:
        return age
    year = profile.year
    if year is not None and scope.year_from is not None and year < scope.year_from:
        return f"outside the scope: published {year}, before {scope.year_from}"
    if year is not None and scope.year_to is not None and year > scope.year_to:
        return f"outside the scope: published {year}, after {scope.year_to}"
    return ""


def _age_outside(scope: Scope, profile: SourceProfile) -> str:
    if profile.age_min is None and profile.age_max is None:
        return ""
    low = profile.age_min if profile.age_min is not None else 0.0
    high = profile.age_max if profile.age_max is not None else 120.0
    too_young = scope.age_min is not None and high < scope.age_min
    too_old = scope.age_max is not None and low > scope.age_max
    if too_young or too_old:
        return (
            f"outside the scope: participants {profile.age_text or _age_words(low, high)}, "
            f"the scope is about {scope.population_words()}"
        )
    return ""


def preference(scope: Scope, profile: SourceProfile, text: str = "") -> float:
    """How well a source fits the scope's preferences: 1 for a preferred design, plus a
    half for each setting it mentions and each version range it names, scaled to 0–1."""
    if not scope.preferred_designs and not scope.settings and not scope.versions:
        return 0.0
    got = 0.0
    if profile.design and profile.design in scope.preferred_designs:
        got += 1.0
    lowered = text.lower()
    got += 0.5 * sum(1 for s in scope.settings if s.lower() in lowered)
    got += 0.5 * sum(1 for v in scope.versions if v.named_in(text))
    most = (1.0 if scope.preferred_designs else 0.0) + 0.5 * (
        len(scope.settings) + len(scope.versions)
    )
    return round(min(1.0, got / most), 4) if most else 0.0
