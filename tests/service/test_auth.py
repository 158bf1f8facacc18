"""Access control (service/auth.py): token roles, wrong and missing tokens, websockets (header,
subprotocol, Origin), the exposure rule at start, the open_health/open_metrics settings, and
TLS. The role tests drive a real ``dcsm serve``."""

from __future__ import annotations

import asyncio
import hmac
import shutil
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from helpers import TRI, http_client, read_frames, spec, ws_connect
from websockets.exceptions import ConnectionClosed

from dcsm.loadgen.embedded import ServiceProcess
from dcsm.service import auth as auth_mod
from dcsm.service.auth import (
    Auth,
    Tokens,
    check_exposure,
    is_loopback,
    load_tokens,
    parse_token_file,
)
from dcsm.service.broker import free_port
from dcsm.service.errors import ConfigError

READ = "read-token-0123456789abcdef"
WRITE = "write-token-0123456789abcdef"
EDGE = [{"op": "insert", "u": 1, "v": 2}]


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


# -- units ------------------------------------------------------------------------------


def test_token_file_and_settings_tokens(tmp_path: Path) -> None:
    path = tmp_path / "tokens"
    path.write_text(f"# rotation: two write tokens\n\nread {READ}\nwrite {WRITE}\nwrite {WRITE}2\n")
    assert parse_token_file(str(path)) == [("read", READ), ("write", WRITE), ("write", WRITE + "2")]
    tokens = load_tokens("r" * 16, None, str(path))
    assert tokens.counts() == {"read": 2, "write": 2}
    assert tokens.role_of("r" * 16) == "read" and tokens.role_of(READ) == "read"
    assert tokens.role_of(WRITE) == "write" and tokens.role_of(WRITE + "2") == "write"
    assert tokens.role_of(WRITE[:-1]) is None and tokens.role_of("") is None
    assert not load_tokens(None, None, None).enabled

    path.write_text(f"read {READ}\nadmin {WRITE}\n")
    with pytest.raises(ConfigError, match=r"tokens:2: unknown role 'admin'"):
        parse_token_file(str(path))
    path.write_text(f"read {READ} extra\n")
    with pytest.raises(ConfigError, match=r"tokens:1: expected 'ROLE TOKEN'"):
        parse_token_file(str(path))
    with pytest.raises(ConfigError, match="cannot read token file"):
        parse_token_file(str(tmp_path / "missing"))
    with pytest.raises(ConfigError, match="at least 16"):
        load_tokens("short", None, None)


def test_every_token_is_compared_in_constant_time(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[int, int]] = []
    real = hmac.compare_digest

    def counting(a: bytes, b: bytes) -> bool:
        calls.append((len(a), len(b)))
        return real(a, b)

    monkeypatch.setattr(auth_mod.hmac, "compare_digest", counting)
    tokens = load_tokens(READ, WRITE, None)
    for presented in (READ, WRITE, "x", "y" * 500):
        calls.clear()
        tokens.role_of(presented)
        # All tokens, every time, on digests of one length (no early exit, no length leak).
        assert calls == [(32, 32), (32, 32)]


def test_exposure_rule() -> None:
    none, some = Tokens(), load_tokens(READ, WRITE, None)
    assert all(is_loopback(h) for h in ("127.0.0.1", "127.3.2.1", "::1", "[::1]", "localhost"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "::", "10.0.0.7", "example.org"))
    assert "loopback only, no tokens" in check_exposure("127.0.0.1", none, False, False)
    with pytest.raises(ConfigError, match="not a loopback address and no token"):
        check_exposure("0.0.0.0", none, False, False)
    assert "OPEN on 0.0.0.0" in check_exposure("0.0.0.0", none, True, False)
    line = check_exposure("0.0.0.0", some, False, False)
    assert "1 read, 1 write" in line and "in clear" in line
    assert "in clear" not in check_exposure("0.0.0.0", some, False, True)


def test_origin_rule() -> None:
    a = Auth(Tokens(), ["https://app.example", ""])
    assert a.origin_allowed(None, "svc:8000")  # not a browser
    assert a.origin_allowed("http://svc:8000", "svc:8000")  # its own origin
    assert a.origin_allowed("https://app.example/", "svc:8000")
    assert not a.origin_allowed("https://evil.example", "svc:8000")
    assert Auth(Tokens(), ["*"]).origin_allowed("https://evil.example", "svc:8000")


def test_serve_refuses_an_open_non_loopback_bind(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "dcsm.service", "serve", "--host", "0.0.0.0",
           "--port", str(free_port()), "--state-dir", str(tmp_path / "s")]  # fmt: skip
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "0.0.0.0 is not a loopback address" in lines[0], r.stderr
    assert "--insecure-open" in lines[0]


# -- a real service with tokens -----------------------------------------------------------


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    tmp = tmp_path_factory.mktemp("auth")
    tokens = tmp / "tokens"
    tokens.write_text(f"write {WRITE}\n")
    svc = ServiceProcess(
        "--token-file", str(tokens), "--allowed-origins", "https://app.example",
        workdir=tmp, env={"DCSM_TOKEN_READ": READ},
    )  # fmt: skip
    with svc:
        yield svc


async def test_roles_wrong_and_missing_tokens(secured: ServiceProcess) -> None:
    assert "bearer tokens (1 read, 1 write)" in secured.log(1 << 20)
    async with http_client(secured.base_url) as c:
        w, r = bearer(WRITE), bearer(READ)
        # write: register, ingest, read, delete
        assert (await c.post("/api/v1/queries", json=spec(TRI), headers=w)).status_code == 201
        assert (await c.post("/api/v1/updates", json=EDGE, headers=w)).status_code == 200
        assert (await c.get("/api/v1/status", headers=w)).status_code == 200
        # read: list, get, status, metrics; not register, delete or ingest
        assert (await c.get("/api/v1/queries", headers=r)).json()["items"][0]["name"] == "tri"
        assert (await c.get("/api/v1/queries/tri", headers=r)).status_code == 200
        assert (await c.get("/api/v1/status", headers=r)).status_code == 200
        assert (await c.get("/metrics", headers=r)).status_code == 200
        for resp in (
            await c.post("/api/v1/queries", json=spec(TRI, name="t2"), headers=r),
            await c.post("/api/v1/updates", json=EDGE, headers=r),
            await c.delete("/api/v1/queries/tri", headers=r),
        ):
            assert resp.status_code == 403, resp.text
            assert resp.json()["error"]["code"] == "permission_denied"
        # missing, wrong, malformed: 401 with a Bearer challenge, on every guarded route
        malformed = [{"Authorization": "Bearer"}, {"Authorization": WRITE}]
        for headers in [{}, bearer(WRITE + "x"), *malformed]:
            for resp in (
                await c.get("/api/v1/queries", headers=headers),
                await c.get("/api/v1/status", headers=headers),
                await c.get("/metrics", headers=headers),
                await c.post("/api/v1/updates", json=EDGE, headers=headers),
                await c.delete("/api/v1/queries/tri", headers=headers),
            ):
                assert resp.status_code == 401, (headers, resp.text)
                assert resp.headers["www-authenticate"] == "Bearer"
                assert resp.json()["error"]["code"] == "unauthenticated"
        # health stays open (open_health defaults to true)
        assert (await c.get("/healthz")).status_code == 200
        assert (await c.get("/readyz")).status_code == 200
        # nothing a refused call tried happened
        queries = (await c.get("/api/v1/queries", headers=r)).json()["items"]
        assert [q["name"] for q in queries] == ["tri"]
        assert (await c.get("/api/v1/status", headers=r)).json()["next_seq"] == 1  # the one update


async def closed_with(url: str, **kwargs: object) -> tuple[int, str]:
    async with ws_connect(url, **kwargs) as ws:
        with pytest.raises(ConnectionClosed) as info:
            await asyncio.wait_for(ws.recv(), 10)
    assert info.value.rcvd is not None
    return info.value.rcvd.code, info.value.rcvd.reason


async def test_websocket_tokens_and_origins(secured: ServiceProcess) -> None:
    async with http_client(secured.base_url) as c:
        r = await c.post("/api/v1/queries", json=spec(TRI, name="wsq"), headers=bearer(WRITE))
        assert r.status_code == 201
    url = secured.ws_url("wsq")
    # without a token, with a wrong one, from an origin not allowed: policy violation
    code, reason = await closed_with(url)
    assert code == 1008 and "missing bearer token" in reason
    code, reason = await closed_with(url, additional_headers=bearer(READ + "x"))
    assert code == 1008 and "unknown bearer token" in reason
    code, reason = await closed_with(
        url, additional_headers=bearer(READ), origin="https://evil.example"
    )
    assert code == 1008 and "origin" in reason
    # a read token in the header; a write token as a browser's subprotocol, from an allowed
    # origin; both see the same deltas
    async with (
        ws_connect(url, additional_headers=bearer(READ)) as by_header,
        ws_connect(
            url, subprotocols=["dcsm", f"bearer.{WRITE}"], origin="https://app.example"
        ) as by_protocol,
    ):
        assert by_protocol.subprotocol == "dcsm"
        async with http_client(secured.base_url) as c:
            rows = [{"op": "insert", "u": 10, "v": 11}, {"op": "insert", "u": 11, "v": 12},
                    {"op": "insert", "u": 10, "v": 12}]  # fmt: skip
            assert (await c.post("/api/v1/updates", json=rows, headers=bearer(WRITE))).is_success
        got = await asyncio.gather(read_frames(by_header, 6, 20), read_frames(by_protocol, 6, 20))
    assert len(got[0]) == len(got[1]) == 6  # a triangle: 6 embeddings, one update
    assert {f["match"][0] for f in got[0]} == {10, 11, 12}


# -- open_health / open_metrics, in process ------------------------------------------------


async def test_open_health_and_open_metrics_settings() -> None:
    from dcsm.service.api import create_app
    from dcsm.service.app import Service
    from dcsm.service.settings import Settings

    def app(**changes: object) -> httpx.AsyncClient:
        s = Settings(state_dir="", backend="cpu", **changes)  # type: ignore[arg-type]
        # No lifespan: the pipeline never starts, which these routes do not need.
        transport = httpx.ASGITransport(create_app(Service(s)))
        return httpx.AsyncClient(transport=transport, base_url="http://svc")

    async with app(token_read=READ) as c:  # defaults: health open, metrics needs a token
        assert (await c.get("/healthz")).status_code == 200
        assert (await c.get("/metrics")).status_code == 401
        assert (await c.get("/metrics", headers=bearer(READ))).status_code == 200
    async with app(token_read=READ, open_health=False, open_metrics=True) as c:
        assert (await c.get("/healthz")).status_code == 401
        assert (await c.get("/readyz")).status_code == 401
        assert (await c.get("/healthz", headers=bearer(READ))).status_code == 200
        assert (await c.get("/metrics")).status_code == 200
    async with app() as c:  # no tokens: open, as before
        assert (await c.get("/api/v1/queries")).status_code == 200
        assert (await c.get("/metrics")).status_code == 200


# -- TLS ----------------------------------------------------------------------------------


class TlsService(ServiceProcess):
    """``dcsm serve`` with --tls-cert/--tls-key; ``base_url`` is https."""

    def __init__(self, cert: Path, key: Path, workdir: Path) -> None:
        super().__init__("--tls-cert", str(cert), "--tls-key", str(key), workdir=workdir)
        self.cert = cert

    @property
    def base_url(self) -> str:
        return f"https://localhost:{self.port}"

    def start(self, timeout_s: float = 120.0) -> TlsService:
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            self.cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=self.env
        )
        log.close()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"dcsm serve exited with {self.proc.returncode}: {self.log()}")
            try:
                r = httpx.get(
                    self.base_url + "/readyz", verify=trusting(self.cert), trust_env=False
                )
                if r.status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.kill()
        raise TimeoutError(f"dcsm serve not ready in {timeout_s:.0f}s: {self.log()}")


def trusting(cert: Path) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(cert))


def self_signed(tmp: Path) -> tuple[Path, Path]:
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is not installed (needed to make a test certificate)")
    cert, key = tmp / "cert.pem", tmp / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-keyout", str(key), "-out", str(cert), "-subj", "/CN=localhost",
         "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


async def test_tls(tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)
    with TlsService(cert, key, tmp_path) as svc:
        log = svc.log(1 << 20)  # the start lines, however many polls came after
        assert "loopback only, no tokens" in log and "HTTPS" in log
        assert f"https://127.0.0.1:{svc.port}" in log
        async with httpx.AsyncClient(verify=trusting(cert), trust_env=False) as c:
            r = await c.get(svc.base_url + "/api/v1/status")
            assert r.status_code == 200 and "next_seq" in r.json()
        async with httpx.AsyncClient(trust_env=False) as c:  # the system CAs do not know it
            with pytest.raises(httpx.ConnectError):
                await c.get(svc.base_url + "/healthz")
        with pytest.raises(httpx.HTTPError):  # plain HTTP on the TLS port
            httpx.get(f"http://127.0.0.1:{svc.port}/healthz", trust_env=False, timeout=5)
    with pytest.raises(ConfigError, match="cannot load --tls-cert"):
        from dcsm.service.server import check_tls_files

        check_tls_files(str(key), str(key))
