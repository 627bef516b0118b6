"""The harness's HTTP transport, end to end through a real harness process and a loopback server.

Keep-alive: every round of a run reuses one connection. TLS: the system's
trust store as OpenSSL reads it, so SSL_CERT_FILE adds a CA. Proxies: the standard
HTTP_PROXY / HTTPS_PROXY variables route the request through the named proxy;
the provider host (`.invalid`, which never resolves) is only ever named to the
proxy, so nothing leaves the loopback interface.
"""

from __future__ import annotations

import ssl
import subprocess
from pathlib import Path

import pytest

from tests.agents_real.fake_provider import ScriptedProvider, error, final
from tests.agents_real.harness_run import (
    DISTINCTIVE_KEY,
    HarnessFiles,
    harness_env,
    run_harness,
)
from tests.agents_real.test_provider_failures import NO_GUEST

_PROXY_NAMES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


def _proxied_env(directory: Path, base_url: str, proxy_name: str, proxy_url: str, **extra: str) -> dict[str, str]:
    env = harness_env(directory, base_url, NO_GUEST, **extra)
    for name in _PROXY_NAMES:
        env.pop(name, None)
        env.pop(name.lower(), None)
    env[proxy_name] = proxy_url
    return env


async def test_rounds_of_one_run_share_one_kept_alive_connection(tmp_path: Path) -> None:
    script = [error(429, "slow down", retry_after="0"), error(503, "busy"), final("All done.")]
    async with ScriptedProvider(script, keep_alive=True) as provider:
        await run_harness(harness_env(tmp_path, provider.base_url, NO_GUEST), timeout=30)
    assert HarnessFiles(tmp_path).result()["status"] == "completed"
    assert len(provider.requests) == 3
    assert provider.connections == 1, "each request opened its own connection"


async def test_http_proxy_carries_the_request_to_the_provider(tmp_path: Path) -> None:
    async with ScriptedProvider([final("Via the proxy.")]) as proxy:
        env = _proxied_env(tmp_path, "http://provider.invalid/v1", "HTTP_PROXY", proxy.base_url.removesuffix("/v1"))
        await run_harness(env, timeout=30)
    result = HarnessFiles(tmp_path).result()
    assert (result["status"], result["summary"]) == ("completed", "Via the proxy.")
    assert [request.path for request in proxy.requests] == ["http://provider.invalid/v1/chat/completions"]


async def test_https_proxy_gets_a_tunnel_request_without_the_key(tmp_path: Path) -> None:
    """The key travels inside the TLS tunnel only; this proxy cannot open one, so the run ends unavailable."""
    async with ScriptedProvider([final("never read")]) as proxy:
        env = _proxied_env(
            tmp_path,
            "https://provider.invalid/v1",
            "HTTPS_PROXY",
            proxy.base_url.removesuffix("/v1"),
            AOE_OPENAI_MAX_ATTEMPTS="1",
        )
        await run_harness(env, timeout=30)
    assert [request.path for request in proxy.requests] == ["provider.invalid:443"]
    assert DISTINCTIVE_KEY not in repr(proxy.requests[0].headers)
    assert HarnessFiles(tmp_path).result()["status"] == "unavailable"


@pytest.fixture
def loopback_certificate(tmp_path: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (its own CA) and its key."""
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


async def test_tls_trusts_a_ca_named_by_ssl_cert_file_and_refuses_it_otherwise(
    tmp_path: Path, loopback_certificate: tuple[Path, Path]
) -> None:
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(*loopback_certificate)
    async with ScriptedProvider([final("Over TLS.")], tls=tls) as provider:
        trusted = harness_env(
            tmp_path / "trusted", provider.base_url, NO_GUEST, SSL_CERT_FILE=str(loopback_certificate[0])
        )
        await run_harness(trusted, timeout=30)
        untrusted = harness_env(tmp_path / "untrusted", provider.base_url, NO_GUEST, AOE_OPENAI_MAX_ATTEMPTS="1")
        untrusted.pop("SSL_CERT_FILE", None)
        await run_harness(untrusted, timeout=30)
    assert HarnessFiles(tmp_path / "trusted").result()["summary"] == "Over TLS."
    refused = HarnessFiles(tmp_path / "untrusted").result()
    assert refused["status"] == "unavailable" and "CERTIFICATE_VERIFY_FAILED" in refused["summary"]
    assert len(provider.requests) == 1
