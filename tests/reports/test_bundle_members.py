"""verify_bundle refuses what a ZIP can hide: duplicate or unsafe member names, damaged
entries, JSON nested past any report's depth, and it stops reading at the first failure.

Found by an attack on loopback: a forged ``report/report.html`` placed before the genuine
one under the same name verified "ok" (``zipfile`` reads the last of two names, ``unzip``
shows the first); nested JSON and a damaged entry crashed with a traceback; a bundle
whose signature had failed was still read to its end.
"""

from __future__ import annotations

import io
import zipfile

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from reports.build import do_build_report
from reports.export import do_export_report
from reports.exports import verify
from reports.exports.bundle import MANIFEST
from reports.exports.verify import BundleUnreadable, verify_bundle
from reports.signing import signing_public_key
from tests.reports.bundles import bundle_problems, remanifest, write_zip, zip_text

pytestmark = pytest.mark.django_db


@pytest.fixture
def bundle(scene, run, author):
    report = do_build_report(run, author)
    return do_export_report(report, "zip", author).data


def _with_entry_before(data: bytes, name: str, text: str) -> bytes:
    """The bundle with a second entry ``name`` written before all the genuine ones."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(buffer, "w") as target:
        target.writestr(name, text)
        for info in source.infolist():
            target.writestr(info, source.read(info))
    return buffer.getvalue()


@pytest.mark.filterwarnings("ignore:Duplicate name:UserWarning")
def test_a_forged_member_under_a_genuine_name_refuses_the_bundle(bundle, tmp_path):
    path = tmp_path / "shadowed.zip"
    path.write_bytes(_with_entry_before(bundle, "report/report.html", "<p>All claims hold.</p>"))
    with pytest.raises(BundleUnreadable, match="two entries named report/report.html"):
        bundle_problems(path)
    with pytest.raises(CommandError, match="two entries named report/report.html"):
        call_command("verify_bundle", str(path))


def test_an_unsafe_member_name_refuses_the_bundle(bundle, tmp_path):
    path = tmp_path / "escape.zip"
    path.write_bytes(_with_entry_before(bundle, "../outside.txt", "planted"))
    with pytest.raises(BundleUnreadable, match=r"\.\./outside\.txt.*not a name a bundle uses"):
        bundle_problems(path)


def test_an_unlisted_member_fails_the_bundle(bundle, tmp_path):
    path = tmp_path / "extra.zip"
    path.write_bytes(_with_entry_before(bundle, "report/notes.html", "<p>Trust me.</p>"))
    assert bundle_problems(path) == ["report/notes.html: not listed in the manifest"]


@pytest.mark.parametrize("member", [MANIFEST, "claims.json", "report/report.json"])
def test_deeply_nested_json_is_a_one_line_refusal(bundle, tmp_path, member):
    files = zip_text(bundle)
    files[member] = "[" * 100_000 + "]" * 100_000
    path = tmp_path / "nested.zip"
    path.write_bytes(write_zip(files))
    with pytest.raises(BundleUnreadable, match=f"{member} is not valid JSON"):
        bundle_problems(path)


def test_a_manifest_that_is_not_an_object_is_refused(bundle, tmp_path):
    files = zip_text(bundle)
    files[MANIFEST] = "[1, 2, 3]"
    path = tmp_path / "list.zip"
    path.write_bytes(write_zip(files))
    with pytest.raises(BundleUnreadable, match="manifest.json is not a bundle manifest"):
        bundle_problems(path)


def test_a_damaged_entry_is_a_one_line_refusal(bundle, tmp_path):
    data = bytearray(bundle)
    with zipfile.ZipFile(io.BytesIO(bundle)) as archive:
        info = archive.getinfo("report/report.md")
    # Flip bytes inside the entry's data (past its local header): its CRC no longer holds.
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    for at in range(start, start + min(16, info.compress_size)):
        data[at] ^= 0xFF
    path = tmp_path / "damaged.zip"
    path.write_bytes(bytes(data))
    with pytest.raises(BundleUnreadable, match="damaged"):
        verify_bundle(path, signing_public_key(), keep_going=True)
    with pytest.raises(CommandError, match="damaged"):
        call_command("verify_bundle", str(path), "--all")


def test_it_stops_reading_at_the_first_failure(bundle, tmp_path, monkeypatch):
    files = zip_text(bundle)
    files["report/report.md"] += "x" * (4 << 20)
    path = tmp_path / "unsigned-large.zip"
    path.write_bytes(write_zip(remanifest(files)))  # rehashed by a forger, signature dropped
    streamed: list[str] = []
    stream = verify._stream

    def recording(archive, name, spans):
        streamed.append(name)
        return stream(archive, name, spans)

    monkeypatch.setattr(verify, "_stream", recording)
    problems = bundle_problems(path)
    assert len(problems) == 1 and "not signed" in problems[0]
    assert streamed == []  # no entry was read past the failed signature
    # Asked for everything (a diagnosis of a bundle one trusts anyway), it reads on.
    assert bundle_problems(path, keep_going=True)[0] == problems[0]
    assert "report/report.md" in streamed
