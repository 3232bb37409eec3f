"""The instance's bundle signing key: generated on first use, outside the repository."""

from __future__ import annotations

import stat

import pytest
from django.urls import reverse

from reports import signing


@pytest.fixture
def key_file(tmp_path, settings):
    settings.BUNDLE_SIGNING_KEY = tmp_path / "keys" / "bundle.pem"
    return settings.BUNDLE_SIGNING_KEY


def test_it_generates_the_key_on_first_use_private_to_its_owner(key_file):
    assert signing.instance_public_key() is None  # verify never creates one
    key = signing.signing_public_key()
    assert key_file.exists()
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(key_file.parent.stat().st_mode) == 0o700
    assert signing.key_id(signing.signing_public_key()) == signing.key_id(key)  # same key
    signature = signing.sign(b"manifest")
    assert signing.signature_valid(key, signature, b"manifest")
    assert not signing.signature_valid(key, signature, b"manifest!")


def test_it_keeps_the_first_key_when_two_processes_create_one(key_file):
    signing._create_key(key_file)
    first = key_file.read_bytes()
    signing._create_key(key_file)  # the second creator loses the race
    assert key_file.read_bytes() == first
    assert [p.name for p in key_file.parent.iterdir()] == ["bundle.pem"]


def test_it_reads_public_keys_as_pem_files_or_base64(key_file, tmp_path):
    key = signing.signing_public_key()
    pem = tmp_path / "key.pem"
    pem.write_text(signing.public_key_pem(key))
    for value in (str(pem), signing.public_key_b64(key)):
        assert signing.key_id(signing.load_public_key(value)) == signing.key_id(key)
    for bad in ("", "abc", str(key_file)):  # the private key file is not a public key
        with pytest.raises(signing.KeyUnreadable):
            signing.load_public_key(bad)


def test_it_refuses_a_key_file_that_is_not_a_key(key_file):
    key_file.parent.mkdir(parents=True)
    key_file.write_text("not a key")
    with pytest.raises(signing.KeyUnreadable, match="not a readable PEM private key"):
        signing.signing_public_key()


@pytest.mark.django_db
def test_it_shows_the_public_key_on_the_about_page(client, researcher, key_file):
    client.force_login(researcher)
    page = client.get(reverse("review-show-about")).content.decode()
    key = signing.public_key_b64(signing.signing_public_key())
    assert key in page and signing.key_id(signing.signing_public_key()) in page
    assert "PRIVATE" not in page
    download = client.get(reverse("review-download-public-key"))
    assert download.content.decode().startswith("-----BEGIN PUBLIC KEY-----")
