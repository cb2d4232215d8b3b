"""One PGN limit however the form is sent, and a message for every unreadable body."""

from urllib.parse import urlencode

import pytest

from webapp.jobs.gameinput import MAX_INPUT_BYTES
from webapp.jobs.models import AnalysisJob

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _networks(material_network):
    return material_network


def pgn_of_bytes(size: int) -> str:
    """A legal game padded by a comment of two-byte characters (each six bytes url-encoded)."""
    head, tail = "1. e4 {", "} e5 *"
    room = size - len((head + tail).encode())
    return head + "é" * (room // 2) + "x" * (room % 2) + tail


def post_urlencoded(client, pgn: str):
    body = urlencode({"network": "material", "search": "value", "pgn": pgn})
    return client.post("/", body, content_type="application/x-www-form-urlencoded"), len(body)


def test_a_1_mb_pgn_url_encoded_is_accepted(client, monkeypatch, settings):
    monkeypatch.setattr("workers.dispatch.send_task", lambda *a, **k: None)
    pgn = pgn_of_bytes(MAX_INPUT_BYTES)
    assert len(pgn.encode()) == MAX_INPUT_BYTES
    response, body_bytes = post_urlencoded(client, pgn)
    assert body_bytes > 2 * MAX_INPUT_BYTES  # the encoding nearly triples it
    assert body_bytes <= settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    assert response.status_code == 302, response.content[:500]
    assert AnalysisJob.objects.count() == 1


def test_a_pgn_one_byte_over_gets_the_forms_message_not_a_bare_413(client):
    response, _ = post_urlencoded(client, pgn_of_bytes(MAX_INPUT_BYTES + 1))
    assert response.status_code == 413
    assert "The PGN is 1,000,001 bytes; the limit is 1 MB (1,000,000 bytes)." in response.content.decode()
    assert AnalysisJob.objects.count() == 0


def test_the_form_states_the_limits(client):
    body = client.get("/").content.decode()
    assert "A PGN, pasted or uploaded, may be up to 1 MB (1,000,000 bytes) and 1,000 plies" in body


def test_multipart_without_a_boundary_gets_a_message(client):
    response = client.post("/", b"network=material", content_type="multipart/form-data")
    assert response.status_code == 400
    body = response.content.decode()
    assert "The form data could not be read (Invalid boundary in multipart: None)" in body
    assert 'id="analyse-panel"' in body
    assert AnalysisJob.objects.count() == 0


def test_multipart_without_a_boundary_with_csrf_checks():
    from django.test import Client

    client = Client(enforce_csrf_checks=True)  # here the CSRF middleware is the first to read the body
    client.get("/")  # the CSRF cookie: the middleware then looks for the token in the body
    response = client.post("/", b"network=material", content_type="multipart/form-data")
    assert response.status_code == 400
    assert "Invalid boundary in multipart" in response.content.decode()

