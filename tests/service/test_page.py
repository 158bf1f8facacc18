"""The live page and ``/docs`` over HTTP from a real ``dcsm serve``: every file they load is
served by the service itself, and nothing they contain points at another host. (The page
running in a browser: ``tests/browser/test_live_page.py``.)"""

from __future__ import annotations

import re

from helpers import http_client

from dcsm.loadgen.embedded import ServiceProcess

URL = re.compile(r"""(?:https?|wss?)://[^\s"'`)<>]*""")
ASSET = re.compile(r"""(?:src|href)="([^"]+)\"""")
# Names, not fetches: the SVG namespace the page's script creates elements in.
NOT_FETCHED = {"http://www.w3.org/2000/svg"}


def _local_assets(html: str) -> list[str]:
    """The src/href targets of an HTML page, as absolute paths on this service."""
    out = []
    for ref in ASSET.findall(html):
        assert not ref.startswith(("http:", "https:", "//")), ref
        out.append(ref if ref.startswith("/") else "/" + ref)
    return out


async def test_live_page_and_assets_are_local(service: ServiceProcess) -> None:
    async with http_client(service.base_url) as c:
        r = await c.get("/")
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
        assert URL.findall(r.text) == []
        assets = _local_assets(r.text)
        assert {"/static/page.js", "/static/page.css", "/static/favicon.svg"} <= set(assets)
        for path in assets:
            a = await c.get(path)
            assert a.status_code == 200 and len(a.content) > 100, path
            assert set(URL.findall(a.text)) <= NOT_FETCHED, (path, URL.findall(a.text))
        # The script talks to the API with relative paths (it works behind a path prefix).
        js = (await c.get("/static/page.js")).text
        for call in ("api/v1/status", "api/v1/queries", "?encoding=batch"):
            assert call in js
        assert (await c.get("/static/nope.js")).status_code == 404


async def test_docs_are_served_offline(service: ServiceProcess) -> None:
    async with http_client(service.base_url) as c:
        r = await c.get("/docs")
        assert r.status_code == 200 and "SwaggerUIBundle" in r.text
        assert URL.findall(r.text) == []
        assets = _local_assets(r.text)
        js = [a for a in assets if a.endswith("swagger-ui-bundle.js")]
        css = [a for a in assets if a.endswith("swagger-ui.css")]
        assert js and css, assets
        for path in js + css:
            a = await c.get(path)
            assert a.status_code == 200 and len(a.content) > 50_000, path
        assert "'/openapi.json'" in r.text
        assert (await c.get("/openapi.json")).json()["openapi"].startswith("3.")
        # FastAPI's ReDoc page loads from a CDN: not served.
        assert (await c.get("/redoc")).status_code == 404
        paths = (await c.get("/openapi.json")).json()["paths"]
        assert "/" not in paths and "/docs" not in paths
