"""What the Docker image installs (``pip install .``, no extras) is enough for every export.

The image's dependency set is computed the way pip resolves it: the project's own
``Requires-Dist`` without extras, then each requirement's ``Requires-Dist`` with the extras
it asks for, markers evaluated for this interpreter, against the installed versions (the
pins in constraints.txt). A child Python then runs with every other installed distribution
made unimportable (the dev extras: pytest, ruff, mypy, …), imports every export path and
prints a real PDF through Playwright and Chromium, and signs and verifies a manifest.
"""

from __future__ import annotations

import re
import subprocess
import sys
from importlib import metadata

import pytest
from packaging.requirements import Requirement

from tests.processes import BASE_DIR, child_env

PROJECT = "evidence-bureau"
EXPORT_PATHS = [
    "reports.access",
    "reports.build",
    "reports.integrity",
    "reports.export",
    "reports.exports.pdf",
    "reports.exports.html",
    "reports.exports.markdown",
    "reports.exports.citations",
    "reports.exports.bundle",
    "reports.exports.verify",
    "reports.signing",
    "reports.management.commands.exportreport",
    "reports.management.commands.verify_bundle",
    "research.stages.synthesize",
]

# Run in the child: block every top-level module that only a distribution outside ALLOWED
# provides, then import the export paths and use them.
CHILD = r"""
import importlib.abc, importlib.metadata, os, re, sys

ALLOWED = set(sys.argv[1].split(","))
OWNERS = importlib.metadata.packages_distributions()
OURS = {"config", "research", "ledger", "review", "tests"}


class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        if top in OURS or top in sys.stdlib_module_names:
            return None
        owners = {re.sub(r"[-_.]+", "-", d).lower() for d in OWNERS.get(top, [])}
        if owners and not owners & ALLOWED:
            raise ImportError(f"{top} comes from {sorted(owners)}, not a runtime dependency")
        return None


sys.meta_path.insert(0, Blocker())
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
import django

django.setup()
for module in sys.argv[2].split(","):
    __import__(module)

from datetime import datetime, timezone
from reports.exports.pdf import render_pdf
from reports import signing

day = datetime(2026, 1, 1, tzinfo=timezone.utc)
pdf = render_pdf("<h1>Runtime</h1><p>dependencies</p>", dated=day)
assert pdf.startswith(b"%PDF-"), pdf[:20]
key = signing.signing_public_key()
assert signing.signature_valid(key, signing.sign(b"m"), b"m")
print("ok", len(pdf))
"""


def _name(dist: str) -> str:
    return re.sub(r"[-_.]+", "-", dist).lower()


def runtime_closure(roots: list[Requirement]) -> set[str]:
    """Distribution names pip installs for ``roots`` (extras followed, markers evaluated)."""
    found: set[str] = set()
    todo = [(req, frozenset(req.extras)) for req in roots]
    while todo:
        req, extras = todo.pop()
        name = _name(req.name)
        key = name + "[" + ",".join(sorted(extras)) + "]"
        if key in found:
            continue
        found.add(key)
        found.add(name)
        for line in metadata.requires(req.name) or []:
            dep = Requirement(line)
            wanted = dep.marker is None or any(
                dep.marker.evaluate({"extra": extra}) for extra in (extras or {""})
            )
            if wanted:
                todo.append((dep, frozenset(dep.extras)))
    return {name for name in found if "[" not in name}


def project_requirements() -> list[Requirement]:
    """The project's Requires-Dist as installed, without its extras (the Docker image)."""
    reqs = [Requirement(line) for line in metadata.requires(PROJECT) or []]
    return [r for r in reqs if r.marker is None or r.marker.evaluate({"extra": ""})]


def import_with_only(allowed: set[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", CHILD, ",".join(sorted(allowed)), ",".join(EXPORT_PATHS)],
        cwd=BASE_DIR,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_it_builds_the_image_from_the_project_without_extras():
    dockerfile = (BASE_DIR / "Dockerfile").read_text()
    installs = [
        line for line in dockerfile.splitlines() if "pip install" in line and " -e " in line
    ]
    assert installs == ["RUN pip install -c constraints.txt -e ."], installs


@pytest.mark.slow
def test_it_exports_every_format_with_only_the_runtime_dependencies():
    closure = runtime_closure(project_requirements())
    assert {"playwright", "cryptography", "django"} <= closure
    assert not {"pytest", "ruff", "mypy"} & closure  # dev extras stay out of the image
    result = import_with_only(closure | {_name(PROJECT)})
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.startswith("ok "), result.stdout


@pytest.mark.slow
def test_it_would_fail_if_playwright_were_only_a_dev_extra():
    """The check can fail: without Playwright in the set, the PDF export path cannot import."""
    closure = runtime_closure(project_requirements()) - {"playwright"}
    result = import_with_only(closure | {_name(PROJECT)})
    assert result.returncode != 0
    assert "playwright comes from ['playwright'], not a runtime dependency" in result.stderr
