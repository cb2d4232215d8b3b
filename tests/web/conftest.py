"""Fixtures for the site's tests: isolated media/var folders, an in-memory
channel layer unless a test brings a real Redis, and registered networks."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from channels.layers import channel_layers

# A real game (Morphy vs Duke Karl / Count Isouard, Paris 1858) with one variation.
OPERA_GAME = """[Event "Paris"]
[Site "Paris FRA"]
[Date "1858.??.??"]
[White "Paul Morphy"]
[Black "Duke Karl / Count Isouard"]
[Result "1-0"]

1. e4 e5 2. Nf3 d6 3. d4 Bg4 (3... exd4 4. Nxd4) 4. dxe5 Bxf3 5. Qxf3 dxe5 6. Bc4 Nf6
7. Qb3 Qe7 8. Nc3 c6 9. Bg5 b5 10. Nxb5 cxb5 11. Bxb5+ Nbd7 12. O-O-O Rd8
13. Rxd7 Rxd7 14. Rd1 Qe6 15. Bxd7+ Nxd7 16. Qb8+ Nxb8 17. Rd8# 1-0
"""

SHORT_GAME = "1. e4 e5 2. Nf3 Nc6 (2... d6 3. d4) 3. Bb5 a6 *"


@pytest.fixture(autouse=True)
def _site_settings(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    settings.SIGHTLINE_BATCH_SIZE = 8
    channel_layers.backends = {}
    yield
    channel_layers.backends = {}


@pytest.fixture
def material_network(db):
    from webapp.networks.registry import ensure_material_network

    return ensure_material_network()


@pytest.fixture
def tiny_network(db, tiny_checkpoint):
    from webapp.networks.registry import register_checkpoint

    return register_checkpoint(Path(tiny_checkpoint), "cf-tiny-test", is_default=True)


@pytest.fixture
def broker_down(tmp_path):
    """The current Celery app (the one ``workers.dispatch`` sends with) pointed at a Redis
    socket nobody listens on: every send fails as it does while Redis is down."""
    from celery import Celery

    from workers.celery_app import app as site_app

    app = Celery("sightline-down", set_as_current=True)
    app.config_from_object("django.conf:settings", namespace="CELERY")
    app.conf.update(broker_url=f"redis+socket://{tmp_path}/nobody.sock")
    app.finalize()
    yield app
    site_app.set_current()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def orm_beside_playwright():
    """Playwright's sync API runs an event loop in this thread; the ORM calls of a browser test module
    (setup, the database's flush at teardown) are plain synchronous ones, so Django's guard is lifted
    meanwhile (``pytestmark = pytest.mark.usefixtures("orm_beside_playwright")``)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        yield
