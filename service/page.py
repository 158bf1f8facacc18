"""The live page at ``/`` and the offline OpenAPI page at ``/docs``.

Everything the browser loads comes from this process, so both pages work with no network:

=========================  ===================================================================
``GET /``                  ``static/index.html``: the live page
``GET /static/...``        its script, style sheet and icon (``service/static/``)
``GET /docs``              Swagger UI for ``/openapi.json``
``GET /static/apidocs/``   Swagger UI's own files, from the ``fastapi-offline`` wheel (a
                           dependency used only for them: Swagger UI 5, which reads the
                           OpenAPI 3.1 that FastAPI writes)
=========================  ===================================================================

The live page is plain HTML, CSS and JavaScript (no build step). It reads only the public
API: it polls ``GET /api/v1/status`` and ``GET /api/v1/queries[/{name}]`` once a second (so
throughput, lag, delta rates and latency percentiles are the service's own figures, history
kept by the page from the moment it opened), subscribes to each query's websocket with
``?encoding=batch`` (one frame per engine batch; matches drawn on the pattern's shape, gap
frames shown where they come), and registers and deletes queries with POST and DELETE. It
never claims a query's pending frames unless its encoding is ``batch`` and nothing else has
subscribed yet, exactly like any other client.
"""

from __future__ import annotations

import importlib.resources
from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse
from fastapi.staticfiles import StaticFiles

STATIC_DIR = Path(__file__).with_name("static")
APIDOCS_PREFIX = "/static/apidocs"


def apidocs_dir() -> Path:
    """Where the installed ``fastapi-offline`` wheel keeps ``swagger-ui-bundle.js`` and
    ``swagger-ui.css``."""
    return Path(str(importlib.resources.files("fastapi_offline"))) / "static"


def install_page(app: FastAPI) -> None:
    """Add ``/``, ``/docs`` and their static files to ``app``. The app is created with
    ``docs_url=None`` (FastAPI's own ``/docs`` loads Swagger UI from a CDN, and would shadow
    this one) and ``redoc_url=None`` (ReDoc's bundle still fetches a logo from its CDN)."""
    # Mounts match by prefix in order: the API docs' files before the page's own /static.
    app.mount(APIDOCS_PREFIX, StaticFiles(directory=apidocs_dir()), name="apidocs")
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")

    @app.get("/", include_in_schema=False)
    async def live_page() -> FileResponse:
        return FileResponse(STATIC_DIR / "index.html", headers={"Cache-Control": "no-cache"})

    @app.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title=f"{app.title} - API",
            swagger_js_url=f"{APIDOCS_PREFIX}/swagger-ui-bundle.js",
            swagger_css_url=f"{APIDOCS_PREFIX}/swagger-ui.css",
            swagger_favicon_url="/static/favicon.svg",
            # The default validator badge calls validator.swagger.io.
            swagger_ui_parameters={"validatorUrl": None},
        )
