"""The API's readable docs (issue 37, item 7): Swagger UI at /api/docs/ from the installed
drf-spectacular-sidecar package, linked from the site's header and the API index, over a schema that
lists the game page's reading endpoints (the review, the PGN export, a board picture)."""

from __future__ import annotations

import re

import pytest
from django.contrib.staticfiles import finders

from tests.web.conftest import SHORT_GAME

ASSET = re.compile(r'(?:src|href)="([^"]+)"')


def test_the_docs_page_loads_swagger_ui_from_our_own_static_files(client):
    response = client.get("/api/docs/")
    assert response.status_code == 200
    html = response.content.decode()
    assets = ASSET.findall(html)
    assert {a.rsplit("/", 1)[-1] for a in assets} >= {"swagger-ui.css", "swagger-ui-bundle.js"}
    for asset in assets:
        assert asset.startswith("/static/"), asset
        assert finders.find(asset.removeprefix("/static/")), f"{asset} is not one of the site's static files"
    assert not re.search(r"https?://", html.replace('"http"', "")), "the page names an address off the site"
    assert '"/api/schema/"' in html


def test_the_api_index_and_the_header_link_to_the_docs(client, db):
    assert client.get("/api/").json()["docs"] == "http://testserver/api/docs/"
    header = client.get("/networks/").content.decode().split("</header>")[0]
    assert 'href="/api/docs/"' in header


@pytest.mark.django_db
def test_the_schema_lists_the_game_pages_reading_endpoints(client, material_network):
    from webapp.jobs.gameinput import parse_pgn
    from webapp.jobs.jobs import create_job

    paths = client.get("/api/schema/?format=json").json()["paths"]
    for path in ("/api/jobs/{job_id}/review/", "/api/jobs/{job_id}/export.pgn",
                 "/api/jobs/{job_id}/nodes/{node_id}/board.svg"):
        assert "get" in paths[path], path
    assert "application/x-chess-pgn" in paths["/api/jobs/{job_id}/export.pgn"]["get"]["responses"]["200"]["content"]
    assert "image/svg+xml" in paths["/api/jobs/{job_id}/nodes/{node_id}/board.svg"]["get"]["responses"]["200"]["content"]
    job = create_job(parse_pgn(SHORT_GAME), material_network, "value", 1, dispatch=False)
    for page, api, accept in (
            (f"/jobs/{job.id}/review/", f"/api/jobs/{job.id}/review/", "application/json"),
            (f"/jobs/{job.id}/export.pgn", f"/api/jobs/{job.id}/export.pgn", "application/x-chess-pgn"),
            (f"/jobs/{job.id}/nodes/1/board.svg?flip=1", f"/api/jobs/{job.id}/nodes/1/board.svg?flip=1", "image/*")):
        shown, described = client.get(page), client.get(api, HTTP_ACCEPT=accept)
        assert described.status_code == shown.status_code == 200, api
        assert described["Content-Type"] == shown["Content-Type"] and described.content == shown.content
    refused = client.get(f"/api/jobs/{job.id}/nodes/99/board.svg")
    assert refused.status_code == 404 and refused.json()["error"] == "This analysis has no position 99."
    assert client.get(f"/api/jobs/{job.id}/nodes/1/board.svg?flip=2").status_code == 400
