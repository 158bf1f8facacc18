"""Who may call what: bearer tokens with two roles, the websocket Origin check, and the
start-time exposure rule.

Roles
-----
``read``   list and get queries, ``/api/v1/status``, subscribe to websockets (and
           ``/metrics``, ``/healthz``, ``/readyz`` unless ``open_metrics``/``open_health``);
``write``  everything ``read`` may, plus register and delete queries and ingest updates.

A request presents ``Authorization: Bearer <token>``. A browser websocket cannot set that
header, so a websocket may instead offer the subprotocol ``bearer.<token>`` (with ``dcsm``
beside it, which the service then selects). A missing or unknown token is 401 (websocket:
accepted, then closed with 1008, policy violation); a known token without the role is 403
(websocket: 1008 too).

Tokens are compared in constant time: the presented token's SHA-256 digest is compared with
the digest of every configured token by :func:`hmac.compare_digest`, all of them every time,
so neither the position of the first differing byte nor which token matched shows in the
timing (and digests have one length, so neither does the token's).

With no token configured everything is open, which the start only allows on a loopback
address (:func:`check_exposure`); anywhere else it refuses to start unless ``insecure_open``.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlsplit

from fastapi import Request, WebSocket
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from .errors import ConfigError, PermissionDenied, Unauthenticated

if TYPE_CHECKING:
    from .settings import Settings

log = logging.getLogger("dcsm.service.auth")

Role = Literal["read", "write"]
ROLES: tuple[Role, ...] = ("read", "write")
# What each role may do: a role grants itself and everything below it.
_GRANTS: dict[str, frozenset[str]] = {"read": frozenset({"read"}), "write": frozenset(ROLES)}

WS_CLOSE_POLICY = 1008  # RFC 6455 policy violation: unauthorised, or an origin not allowed
WS_SUBPROTOCOL = "dcsm"
WS_TOKEN_PREFIX = "bearer."


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8")).digest()


@dataclass(frozen=True)
class Tokens:
    """The configured tokens, as (SHA-256 digest, role) pairs; the tokens themselves are not
    kept."""

    entries: tuple[tuple[bytes, Role], ...] = ()

    @property
    def enabled(self) -> bool:
        return bool(self.entries)

    def role_of(self, presented: str) -> Role | None:
        """The role of ``presented``, or None; the same work whatever matches."""
        got = _digest(presented)
        role: Role | None = None
        for digest, r in self.entries:
            if hmac.compare_digest(got, digest) and role != "write":
                role = r
        return role

    def counts(self) -> dict[str, int]:
        return {r: sum(1 for _, x in self.entries if x == r) for r in ROLES}


def parse_token_file(path: str) -> list[tuple[Role, str]]:
    """``ROLE TOKEN`` lines; blank lines and ``#`` comments are skipped. ConfigError naming
    the file and line for anything else."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read token file {path}: {exc.strerror or exc}") from None
    out: list[tuple[Role, str]] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 2:
            raise ConfigError(f"{path}:{number}: expected 'ROLE TOKEN' (roles: read, write)")
        role, token = parts
        if role not in ROLES:
            raise ConfigError(f"{path}:{number}: unknown role {role!r}; roles: read, write")
        out.append((role, token))  # type: ignore[arg-type]
    return out


def load_tokens(token_read: str | None, token_write: str | None, token_file: str | None) -> Tokens:
    """Tokens from the two settings and the token file (all of them count)."""
    pairs: list[tuple[Role, str]] = []
    if token_read:
        pairs.append(("read", token_read))
    if token_write:
        pairs.append(("write", token_write))
    if token_file:
        pairs.extend(parse_token_file(token_file))
    for role, token in pairs:
        if len(token) < 16:
            raise ConfigError(
                f"a {role} token is {len(token)} characters; use at least 16 "
                "(e.g. python -c 'import secrets; print(secrets.token_urlsafe(32))')"
            )
    return Tokens(tuple((_digest(t), r) for r, t in pairs))


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` only accepts connections from this machine."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to anything


def check_exposure(host: str, tokens: Tokens, insecure_open: bool, tls: bool) -> str:
    """The start-time rule: ConfigError (one line) for a non-loopback ``host`` without tokens
    unless ``insecure_open``; otherwise the line the start logs about access."""
    scheme = "HTTPS" if tls else "plain HTTP"
    if tokens.enabled:
        n = tokens.counts()
        note = "" if tls or is_loopback(host) else "; tokens travel in clear without --tls-cert"
        return f"auth: bearer tokens ({n['read']} read, {n['write']} write), {scheme}{note}"
    if is_loopback(host):
        return f"auth: loopback only, no tokens ({host}, {scheme}): every local user may write"
    if not insecure_open:
        raise ConfigError(
            f"--host {host} is not a loopback address and no token is set: set --token-write/"
            "--token-read or --token-file (or DCSM_TOKEN_*), or pass --insecure-open to serve "
            "it open"
        )
    return f"auth: OPEN on {host} (--insecure-open, {scheme}): anyone who reaches it may write"


class Auth:
    """The API's access rules: :meth:`require` for HTTP routes, :meth:`websocket` for
    websockets."""

    def __init__(
        self,
        tokens: Tokens,
        allowed_origins: Iterable[str] = (),
        open_health: bool = True,
        open_metrics: bool = False,
    ) -> None:
        self.tokens = tokens
        self.allowed_origins = frozenset(o.strip().rstrip("/") for o in allowed_origins if o)
        self.open_health = open_health
        self.open_metrics = open_metrics
        self._bearer = HTTPBearer(auto_error=False, description="a read or write token")

    def check(self, token: str | None, need: Role) -> None:
        """Raise Unauthenticated (no or unknown token) or PermissionDenied (wrong role)."""
        if not self.tokens.enabled:
            return
        if token is None:
            raise Unauthenticated("missing bearer token: send 'Authorization: Bearer <token>'")
        role = self.tokens.role_of(token)
        if role is None:
            raise Unauthenticated("unknown bearer token")
        if need not in _GRANTS[role]:
            raise PermissionDenied(f"a {role} token may not do this; it needs a {need} token")

    def require(self, need: Role, open_if: bool = False) -> Callable[..., Awaitable[None]]:
        """A FastAPI dependency admitting requests with a token of role ``need`` (or better);
        ``open_if``: everyone."""
        bearer = self._bearer

        async def dependency(request: Request) -> None:
            if open_if or not self.tokens.enabled:
                return
            creds: HTTPAuthorizationCredentials | None = await bearer(request)
            self.check(creds.credentials if creds else None, need)

        return dependency

    def origin_allowed(self, origin: str | None, host: str | None) -> bool:
        """No Origin (not a browser), an allowed one, or the service's own origin."""
        if origin is None or "*" in self.allowed_origins:
            return True
        origin = origin.rstrip("/")
        if origin in self.allowed_origins:
            return True
        return host is not None and urlsplit(origin).netloc.lower() == host.lower()

    async def websocket(self, ws: WebSocket, need: Role = "read") -> bool:
        """Admit ``ws`` (accepting it) or refuse it: accept, then close with 1008 and the
        reason, so that clients see why. True when admitted."""
        offered = [p.strip() for p in ws.headers.get("sec-websocket-protocol", "").split(",")]
        reason = None
        if not self.origin_allowed(ws.headers.get("origin"), ws.headers.get("host")):
            reason = f"origin {ws.headers.get('origin')!r} is not allowed"
        else:
            token = None
            auth = ws.headers.get("authorization", "")
            scheme, _, value = auth.partition(" ")
            if scheme.lower() == "bearer" and value.strip():
                token = value.strip()
            else:
                for p in offered:
                    if p.startswith(WS_TOKEN_PREFIX):
                        token = p[len(WS_TOKEN_PREFIX) :]
            try:
                self.check(token, need)
            except (Unauthenticated, PermissionDenied) as exc:
                reason = exc.message
        if reason is not None:
            await ws.accept()
            await ws.close(WS_CLOSE_POLICY, reason[:120])
            return False
        await ws.accept(WS_SUBPROTOCOL if WS_SUBPROTOCOL in offered else None)
        return True


def auth_from_settings(settings: Settings) -> Auth:
    """The access rules the settings describe (reads the token file)."""
    s = settings
    return Auth(
        load_tokens(s.token_read, s.token_write, s.token_file),
        s.allowed_origins.split(","),
        s.open_health,
        s.open_metrics,
    )
