"""HTTPS through the guard: the vetted IP is dialled, the host name is verified (SNI)."""

from __future__ import annotations

import datetime
import ipaddress
import socket
import ssl
import threading
from http.server import ThreadingHTTPServer

import pytest

from research.providers.base import ProviderError
from research.providers.fetcher import FetchOptions, fetch_url_sync
from tests.providers.conftest import PAGE_HTML, _Handler


def _self_signed(tmp_path, name):
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return str(cert_path), str(key_path)


@pytest.fixture
def tls_server(tmp_path):
    cert, key = _self_signed(tmp_path, "tls.test")
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    yield httpd.server_address[1], cert
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def tls_dns(monkeypatch):
    real = socket.getaddrinfo
    asked = []

    def fake(host, port, *args, **kwargs):
        try:
            ipaddress.ip_address(host)
        except ValueError:
            asked.append(host)
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", fake)
    return asked


def test_it_verifies_the_certificate_for_the_host_name_while_dialling_the_ip(tls_server, tls_dns):
    port, cert = tls_server
    options = FetchOptions(timeout_s=2.0, allowed_hosts=("127.0.0.1",), ca_bundle=cert)
    result = fetch_url_sync(f"https://tls.test:{port}/page.html", options=options)
    assert result.status == 200
    assert result.body == PAGE_HTML
    assert tls_dns == ["tls.test"]


def test_it_fails_when_the_certificate_names_another_host(tls_server, tls_dns):
    port, cert = tls_server
    options = FetchOptions(timeout_s=2.0, allowed_hosts=("127.0.0.1",), ca_bundle=cert)
    with pytest.raises(ProviderError) as info:
        fetch_url_sync(f"https://other.test:{port}/page.html", options=options)
    assert "CERTIFICATE_VERIFY_FAILED" in str(info.value)
    assert info.value.permanent is True
