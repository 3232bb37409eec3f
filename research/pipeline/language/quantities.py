"""Numbers with their units, years and version numbers, as a text writes them.

:func:`quantities` reads numbers and their :data:`UNITS` (canonical units: "percent" is
"%", "-fold" is "fold"), :func:`years` the years a text names, :data:`VERSION` a version
number as one token ("3.13", "v1.2") and :func:`version_key` orders versions. Pure and
deterministic.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

# A version number is one token everywhere a question or a scope is read: "3.13", "2.0.1",
# "v1.2", never "3" and "13".
VERSION = re.compile(r"\b[vV]?\d+(?:\.\d+)+\b")


def version_key(version: str) -> tuple[int, ...]:
    """A version's parts as numbers, for ordering: "v3.13" -> (3, 13); "3.9" < "3.13"."""
    return tuple(int(part) for part in version.lstrip("vV").split(".") if part.isdigit())


UNITS = (
    "%",
    "percent",
    "per cent",
    "mg/kg",
    "mg/day",
    "mg/dl",
    "mg/l",
    "mmol/l",
    "µg",
    "μg",
    "ug",
    "mg",
    "kg",
    "g",
    "ng",
    "ml",
    "l",
    "mm",
    "cm",
    "km",
    "m",
    "nm",
    "µm",
    "ms",
    "s",
    "sec",
    "seconds",
    "min",
    "minutes",
    "h",
    "hours",
    "days",
    "day",
    "weeks",
    "week",
    "months",
    "month",
    "years",
    "year",
    "fold",
    "-fold",
    "x",
    "times",
    "patients",
    "participants",
    "subjects",
    "people",
    "cases",
    "deaths",
    "mice",
    "rats",
    "cells",
    "gb",
    "mb",
    "kb",
    "tb",
    "ghz",
    "mhz",
    "hz",
    "kw",
    "w",
    "v",
    "usd",
    "$",
    "€",
    "°c",
    "k",
    "million",
    "billion",
    "thousand",
    "tokens",
    "parameters",
)
_UNIT_ALT = "|".join(re.escape(u) for u in sorted(UNITS, key=len, reverse=True))
_NUMBER_RE = re.compile(
    r"(?<![A-Za-z0-9\-])(?P<cur>[$€])?(?P<num>\d+(?:,\d{3})*(?:\.\d+)?|\.\d+)"
    r"(?:\s*(?P<unit>" + _UNIT_ALT + r")(?![A-Za-z]))?",
    re.IGNORECASE,
)
_YEAR_RE = re.compile(r"\b(1[6-9]\d\d|20\d\d)\b")


@dataclass(frozen=True)
class Quantity:
    """A number as written, its value, and its unit (lower-cased; empty when none)."""

    text: str
    value: float
    unit: str

    def as_dict(self) -> dict[str, object]:
        return {"text": self.text, "value": self.value, "unit": self.unit}


def _canonical_unit(unit: str) -> str:
    u = unit.lower().strip()
    if u in {"percent", "per cent"}:
        return "%"
    if u in {"-fold", "times", "x"}:
        return "fold"
    if u in {"sec", "seconds"}:
        return "s"
    if u in {"minutes"}:
        return "min"
    if u in {"hours"}:
        return "h"
    return {"μg": "µg", "ug": "µg", "day": "days", "week": "weeks", "month": "months"}.get(
        u, {"year": "years"}.get(u, u)
    )


def quantities(text: str) -> list[Quantity]:
    """Numbers with their units; years are left to :func:`years`."""
    found: list[Quantity] = []
    for m in _NUMBER_RE.finditer(text):
        raw = m.group("num")
        unit = m.group("unit") or m.group("cur") or ""
        if not unit and _YEAR_RE.fullmatch(raw):
            continue
        try:
            value = float(raw.replace(",", ""))
        except ValueError:
            continue
        if not math.isfinite(value):  # "1" * 310 overflows: no quantity, never Infinity
            continue
        found.append(Quantity(m.group(0).strip(), value, _canonical_unit(unit)))
    return found


def years(text: str) -> list[int]:
    return sorted({int(y) for y in _YEAR_RE.findall(text)})
