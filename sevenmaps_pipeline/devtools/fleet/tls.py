"""A throwaway certificate authority for the fleet, made at start: the prober verifies TLS for real.

Names are served the way large hosts serve them: by SNI, each handshake getting a certificate that names
the host asked for. Names are bundled into certificates of at most `SANS_PER_CERTIFICATE` subject
alternative names (the limit a public CA such as Let's Encrypt sets), and a `*.parent` entry is a
wildcard certificate for every name one label under `parent` (a gateway's per-server subdomains). One
certificate naming every host stops working at a few thousand names: its handshake message outgrows
what TLS clients accept (OpenSSL's `EXCESSIVE_MESSAGE_SIZE`).
"""

from __future__ import annotations

import datetime as dt
import ssl
from dataclasses import dataclass, field
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

SANS_PER_CERTIFICATE = 100


@dataclass
class FleetTLS:
    ca_file: Path
    cert_file: Path  # the certificate a handshake without SNI (or with an unknown name) gets
    key_file: Path
    # server name (or "*.parent") -> the context holding the certificate that names it
    contexts: dict[str, ssl.SSLContext] = field(default_factory=dict)

    def context_for(self, server_name: str | None) -> ssl.SSLContext | None:
        if not server_name:
            return None
        name = server_name.lower().rstrip(".")
        found = self.contexts.get(name)
        if found is None and "." in name:
            found = self.contexts.get("*." + name.split(".", 1)[1])
        return found

    def select_certificate(self, ssl_object: ssl.SSLObject, server_name: str | None, _: ssl.SSLContext) -> None:
        """The SNI callback: hand the handshake the context whose certificate names the host asked for."""
        context = self.context_for(server_name)
        if context is not None:
            ssl_object.context = context

    def install(self, default: ssl.SSLContext) -> None:
        """Serve by SNI from `default` (the context uvicorn made from `cert_file`)."""
        default.sni_callback = self.select_certificate


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def make_tls(folder: Path, hostnames: list[str], sans_per_certificate: int = SANS_PER_CERTIFICATE) -> FleetTLS:
    """A CA, and server certificates naming every fleet hostname (at most `sans_per_certificate` each),
    written into `folder`; the first bundle is also the default certificate."""
    folder.mkdir(parents=True, exist_ok=True)
    now = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=5)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert = (
        x509.CertificateBuilder().subject_name(_name("sevenmaps fleet CA")).issuer_name(_name("sevenmaps fleet CA"))
        .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now).not_valid_after(now + dt.timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                     content_commitment=False, key_encipherment=False, data_encipherment=False,
                                     key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    # One key for every bundle: the fleet is a test double, and key generation is what would dominate.
    key = ec.generate_private_key(ec.SECP256R1())
    key_file = folder / "server-key.pem"
    key_file.write_bytes(_pem_key(key))
    key_file.chmod(0o600)
    tls = FleetTLS(folder / "ca.pem", folder / "server-0.pem", key_file)
    tls.ca_file.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    names = list(dict.fromkeys(h.lower() for h in hostnames))
    for index in range(0, max(len(names), 1), sans_per_certificate):
        bundle = names[index:index + sans_per_certificate] or ["localhost"]
        cert = (
            x509.CertificateBuilder().subject_name(_name(bundle[0])).issuer_name(ca_cert.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now).not_valid_after(now + dt.timedelta(days=2))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(h) for h in bundle]), critical=False)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .sign(ca_key, hashes.SHA256())
        )
        cert_file = folder / f"server-{index // sans_per_certificate}.pem"
        cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert_file, key_file)
        for name in bundle:
            tls.contexts[name] = context
    return tls
