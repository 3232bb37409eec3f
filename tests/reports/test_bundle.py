"""The signed reproducibility bundle and its offline verifier (forgeries included)."""

from __future__ import annotations

import json

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.core.management import call_command
from django.core.management.base import CommandError

from reports.build import do_build_report
from reports.export import do_export_report
from reports.exports.bundle import MANIFEST, SIGNATURE, sha256_bytes
from reports.exports.verify import verify_bundle
from reports.signing import public_key_b64, public_key_pem, signing_public_key
from research.pipeline.text import claim_fingerprint
from tests.reports.bundles import bundle_problems, remanifest, rewrite_zip, write_zip, zip_text
from tests.reports.conftest import APPROVED

FORGED = "Aspirin prevents every heart attack in adults."


@pytest.fixture
def report(scene, run, author):
    return do_build_report(run, author)


@pytest.fixture
def bundle(report, author):
    return do_export_report(report, "zip", author).data


def forge_text(files, old, new, *, fingerprint=True):
    """Rewrite an approved claim's text where the report states it (and its fingerprint)."""
    files = dict(files)
    fp_old, fp_new = claim_fingerprint(old), claim_fingerprint(new) if fingerprint else None
    document, claims = json.loads(files["report/report.json"]), json.loads(files["claims.json"])
    for row in [*document["claims"], *claims["approved"]]:
        if row["text"] == old:
            row["text"] = new
            row["fingerprint"] = fp_new or row["fingerprint"]
    for section in document["sections"]:
        for sentence in section["sentences"]:
            sentence["text"] = sentence["text"].replace(old, new)
    evidence = json.loads(files["evidence.json"])
    for rows in (document["appendix_b"], evidence):
        for row in rows:
            if fp_new and row["claim_fingerprint"] == fp_old:
                row["claim_fingerprint"] = fp_new
    files["report/report.json"] = json.dumps(document, indent=2, sort_keys=True)
    files["claims.json"] = json.dumps(claims, indent=2, sort_keys=True)
    files["evidence.json"] = json.dumps(evidence, indent=2, sort_keys=True)
    for name in ("report/report.md", "report/report.html"):
        files[name] = files[name].replace(old, new)
    return files


@pytest.mark.django_db
def test_it_exports_a_signed_bundle_that_verifies(bundle, report, tmp_path, capsys):
    files = zip_text(bundle)
    manifest = json.loads(files[MANIFEST])
    assert set(manifest["files"]) == set(files) - {MANIFEST, SIGNATURE}
    assert manifest["report"]["content_hash"] == report.content_hash
    assert manifest["signing"]["public_key"] == public_key_b64(signing_public_key())
    claims = json.loads(files["claims.json"])
    assert [c["text"] for c in claims["approved"]] == APPROVED
    assert all("text" not in c for c in claims["excluded"])
    path = tmp_path / "bundle.zip"
    path.write_bytes(bundle)
    assert bundle_problems(path) == []
    call_command("verify_bundle", str(path))
    assert "ok" in capsys.readouterr().out
    pem = tmp_path / "key.pub"
    pem.write_text(public_key_pem(signing_public_key()))
    call_command("verify_bundle", str(path), "--public-key", str(pem))


@pytest.mark.django_db
@pytest.mark.parametrize("signer", ["unsigned", "another key"])
def test_it_fails_a_forged_claim_text_with_a_regenerated_manifest(bundle, tmp_path, signer):
    """Acceptance: text rewritten, fingerprints and manifest regenerated consistently."""
    other = Ed25519PrivateKey.generate() if signer == "another key" else None
    files = remanifest(forge_text(zip_text(bundle), APPROVED[0], FORGED), sign=other)
    path = tmp_path / "forged.zip"
    path.write_bytes(write_zip(files))
    problems = bundle_problems(path)
    expected = "not signed" if other is None else "signed with another key"
    assert len(problems) == 1 and expected in problems[0], problems
    with pytest.raises(CommandError):
        call_command("verify_bundle", str(path))
    # The forger's own key vouches only for the forger: with it, everything else checks out.
    if other is not None:
        assert verify_bundle(path, other.public_key()) == []


@pytest.mark.django_db
def test_it_fails_a_claim_text_that_does_not_match_its_fingerprint(bundle, scene, tmp_path):
    files = remanifest(forge_text(zip_text(bundle), APPROVED[0], FORGED, fingerprint=False))
    path = tmp_path / "forged.zip"
    path.write_bytes(write_zip(files))
    problems = bundle_problems(path, keep_going=True)  # every check, past the signature
    code = scene["approved"][0].code
    assert any("not signed" in p for p in problems)
    assert f"claim C1 ({code}): text in report/report.json does not match its fingerprint" in (
        problems
    )
    assert f"claim C1 ({code}): text in claims.json does not match its fingerprint" in problems


@pytest.mark.django_db
def test_it_fails_a_manifest_changed_after_signing(bundle, tmp_path):
    files = zip_text(bundle)
    manifest = json.loads(files[MANIFEST])
    manifest["report"]["synthesizer"] = "human"
    files[MANIFEST] = json.dumps(manifest, indent=2, sort_keys=True) + "\n"
    path = tmp_path / "edited.zip"
    path.write_bytes(write_zip(files))
    assert bundle_problems(path) == [
        f"{SIGNATURE} does not match {MANIFEST}: the manifest was changed after signing"
    ]


@pytest.mark.django_db
def test_it_says_so_when_there_is_no_trusted_key(bundle, tmp_path):
    path = tmp_path / "bundle.zip"
    path.write_bytes(bundle)
    problems = verify_bundle(path, None)
    assert len(problems) == 1 and "no trusted public key" in problems[0]
    with pytest.raises(CommandError, match="not an Ed25519 public key"):
        call_command("verify_bundle", str(path), "--public-key", "not-a-key")


@pytest.mark.django_db
def test_it_fails_verify_bundle_naming_the_claim_when_a_snapshot_file_is_tampered(
    bundle, scene, tmp_path
):
    claim = scene["approved"][1]
    sha = claim.evidence.get().snapshot.text_sha256
    name = f"snapshots/{sha}.txt"
    tampered = zip_text(bundle)[name].replace("may lower", "will lower")
    path = tmp_path / "tampered.zip"
    path.write_bytes(rewrite_zip(bundle, {name: tampered}))
    problems = bundle_problems(path)
    assert any(name in p and "manifest" in p for p in problems)
    assert any(str(claim.code) in p and "quote E2" in p for p in problems)
    with pytest.raises(CommandError):
        call_command("verify_bundle", str(path))


@pytest.mark.django_db
def test_it_fails_verify_bundle_even_when_the_tamperer_rehashes_everything(bundle, scene, tmp_path):
    files = zip_text(bundle)
    claim = scene["approved"][1]
    old_sha = claim.evidence.get().snapshot.text_sha256
    text = files.pop(f"snapshots/{old_sha}.txt").replace("may lower", "will lower")
    new_sha = sha256_bytes(text.encode())
    for name in ("report/report.json", "evidence.json"):
        files[name] = files[name].replace(old_sha, new_sha)
    files[f"snapshots/{new_sha}.txt"] = text
    path = tmp_path / "rehashed.zip"
    path.write_bytes(write_zip(remanifest(files)))
    problems = bundle_problems(path, keep_going=True)  # every check, past the signature
    assert any("not signed" in p for p in problems)
    assert all(str(claim.code) in p for p in problems if "quote" in p)
    assert any(f"claim C2 ({claim.code})" in p and "does not match snapshot" in p for p in problems)


@pytest.mark.django_db
def test_it_fails_verify_bundle_when_a_cited_claim_is_not_approved(bundle, tmp_path):
    files = zip_text(bundle)
    claims = json.loads(files["claims.json"])
    claims["approved"][0]["last_action"] = "reject"
    files["claims.json"] = json.dumps(claims)
    path = tmp_path / "unapproved.zip"
    path.write_bytes(write_zip(remanifest(files)))
    problems = bundle_problems(path, keep_going=True)  # every check, past the signature
    assert problems[1:] == [
        f"claim C1 ({claims['approved'][0]['code']}): cited by the report but its latest "
        "decision is not approval"
    ]


@pytest.mark.django_db
def test_it_refuses_an_unreadable_bundle_with_a_clear_error(tmp_path):
    path = tmp_path / "not.zip"
    path.write_bytes(b"PK\x03\x04 this is not a zip")
    with pytest.raises(CommandError, match="not a readable ZIP"):
        call_command("verify_bundle", str(path))
    path.write_bytes(write_zip({"README.txt": "hello"}))
    with pytest.raises(CommandError, match="manifest.json is missing"):
        call_command("verify_bundle", str(path))
