"""The ASGI body limit (webapp.site.body_limit): oversized bodies are refused before they are read.

In-process tests drive the middleware with the real Django app; test_upload_server.py
sends real bodies to the running server.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from webapp.site.body_limit import BodyLimit, BodyLimitMiddleware, BodyLimits

LIMITS = BodyLimits(default=BodyLimit(r".*", 1_000, "a PGN may be at most 1 MB"),
                    by_path=(BodyLimit(r"/admin/networks/network/add/", 50_000, "a checkpoint upload"),))


class Client:
    """Feeds body chunks on demand and records what the app read and what it sent."""

    def __init__(self, chunks: list[bytes]):
        self.chunks = list(chunks)
        self.read = 0
        self.sent: list[dict] = []

    async def receive(self):
        if not self.chunks:
            await asyncio.sleep(3600)  # a client that sends nothing more
        chunk = self.chunks.pop(0)
        self.read += len(chunk)
        return {"type": "http.request", "body": chunk, "more_body": bool(self.chunks)}

    async def send(self, message):
        self.sent.append(message)

    @property
    def status(self) -> int:
        return self.sent[0]["status"]

    @property
    def body(self) -> str:
        return b"".join(m.get("body", b"") for m in self.sent[1:]).decode()


def http_scope(path: str, headers: dict[str, str], method: str = "POST") -> dict:
    return {"type": "http", "method": method, "path": path, "raw_path": path.encode(), "query_string": b"",
            "headers": [(k.encode(), v.encode()) for k, v in headers.items()], "scheme": "http",
            "server": ("127.0.0.1", 80), "client": ("127.0.0.1", 5000), "http_version": "1.1", "asgi": {"version": "3.0"}}


def run(app, scope, client: Client) -> Client:
    asyncio.run(asyncio.wait_for(app(scope, client.receive, client.send), 30))
    return client


@pytest.fixture
def django_app():
    from django.core.asgi import get_asgi_application

    return BodyLimitMiddleware(get_asgi_application(), LIMITS)


class NeverCalled:
    async def __call__(self, scope, receive, send):
        raise AssertionError("the app must not run for a refused body")


def test_declared_length_over_the_limit_is_refused_before_any_byte_is_read():
    client = run(BodyLimitMiddleware(NeverCalled(), LIMITS), http_scope("/", {"content-length": "200000000"}),
                 Client([b"x" * 65536] * 3))
    assert client.status == 413 and client.read == 0
    assert "The request body is 200,000,000 bytes; the limit here is 1,000 bytes (a PGN may be at most 1 MB)." \
        in client.body
    assert (b"connection", b"close") in client.sent[0]["headers"]


def test_the_path_picks_the_limit(django_app):
    client = run(BodyLimitMiddleware(NeverCalled(), LIMITS),
                 http_scope("/admin/networks/network/add/", {"content-length": "60000"}), Client([b"x"]))
    assert client.status == 413 and "the limit here is 50,000 bytes (a checkpoint upload)" in client.body
    # Under the path's limit the request reaches Django (here: the admin's login redirect).
    client = run(django_app, http_scope("/admin/networks/network/add/", {"content-length": "20000"}, "GET"),
                 Client([b"x" * 20000]))
    assert client.status == 302


def test_api_paths_get_json():
    client = run(BodyLimitMiddleware(NeverCalled(), LIMITS), http_scope("/api/jobs/x/", {"content-length": "5000"}),
                 Client([b"x"]))
    assert client.status == 413
    assert json.loads(client.body)["error"].startswith("The request body is 5,000 bytes")


@pytest.mark.django_db
def test_a_body_of_unknown_length_is_read_only_up_to_the_limit(django_app):
    chunks = [b"x" * 400] * 1000  # 400 kB announced by nobody (chunked)
    client = run(django_app, http_scope("/", {"content-type": "application/x-www-form-urlencoded"}), Client(chunks))
    assert client.status == 413
    assert "The request body is larger than the limit; the limit here is 1,000 bytes" in client.body
    assert client.read <= 1_200  # three chunks, then it stopped reading


@pytest.mark.django_db
def test_a_body_within_the_limit_reaches_django(django_app):
    client = run(django_app, http_scope("/", {"content-type": "application/x-www-form-urlencoded",
                                              "content-length": "22"}), Client([b"network=material&pgn=x"]))
    assert client.status == 403 and "CSRF" in client.body  # Django's CSRF check read the body


def test_a_content_length_that_is_not_a_number_is_a_400():
    client = run(BodyLimitMiddleware(NeverCalled(), LIMITS), http_scope("/", {"content-length": "12abc"}),
                 Client([b"x"]))
    assert client.status == 400 and "The Content-Length header is not a number." in client.body


def test_websockets_pass_through():
    seen = []

    async def app(scope, receive, send):
        seen.append(scope["type"])

    asyncio.run(BodyLimitMiddleware(app, LIMITS)({"type": "websocket", "path": "/ws/jobs/x/"}, None, None))
    assert seen == ["websocket"]


def test_settings_limits_cover_the_form_and_the_checkpoint_upload(settings):
    from webapp.jobs.gameinput import MAX_INPUT_BYTES

    limits = BodyLimits.from_settings()
    assert limits.for_path("/").max_bytes == settings.DATA_UPLOAD_MAX_MEMORY_SIZE >= 3 * MAX_INPUT_BYTES
    assert limits.for_path("/admin/networks/network/add/").max_bytes > settings.SIGHTLINE_MAX_CHECKPOINT_BYTES
    assert limits.for_path("/admin/networks/network/7/change/").max_bytes == settings.SIGHTLINE_MAX_UPLOAD_BYTES
    assert limits.for_path("/admin/auth/user/add/").max_bytes == settings.DATA_UPLOAD_MAX_MEMORY_SIZE


ADMIN_ADD = "/admin/networks/network/add/"
TWO_GIB = str(2 * 1024 ** 3)


class Recorded:
    """An app that answers 200 without reading the body, and says whether it ran."""

    def __init__(self):
        self.called = False

    async def __call__(self, scope, receive, send):
        self.called = True
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


def session_cookie(user) -> str:
    from django.test import Client

    client = Client()
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}; csrftoken=x"


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("who", ["anonymous", "forged session", "staff without permission", "active non-staff"])
def test_a_large_admin_upload_from_someone_who_may_not_upload_is_refused_before_it_is_read(who):
    from django.contrib.auth.models import User

    cookies = {"anonymous": "", "forged session": "sessionid=notasession"}.get(who)
    if cookies is None:
        user = User.objects.create_user("someone", password="pw", is_staff=who.startswith("staff"))
        cookies = session_cookie(user)
    client = run(BodyLimitMiddleware(NeverCalled()), http_scope(ADMIN_ADD, {"content-length": TWO_GIB,
                                                                             "cookie": cookies}),
                 Client([b"x" * 65536] * 3))
    assert client.status == 403 and client.read == 0
    assert (f"The request body is {2 * 1024 ** 3:,} bytes; only a signed-in staff user who may upload networks "
            f"can send more than") in client.body


@pytest.mark.django_db(transaction=True)
def test_a_large_upload_by_staff_who_may_upload_reaches_the_site():
    from django.contrib.auth.models import Permission, User

    uploader = User.objects.create_user("uploader", password="pw", is_staff=True)
    uploader.user_permissions.add(Permission.objects.get(codename="add_network"))
    app = Recorded()
    client = run(BodyLimitMiddleware(app), http_scope(ADMIN_ADD, {"content-length": TWO_GIB,
                                                                  "cookie": session_cookie(uploader)}), Client([b"x"]))
    assert app.called and client.status == 200
    # Changing a network needs change_network, which this user lacks.
    client = run(BodyLimitMiddleware(NeverCalled()), http_scope("/admin/networks/network/3/change/", {
        "content-length": TWO_GIB, "cookie": session_cookie(uploader)}), Client([b"x"]))
    assert client.status == 403
    superuser = User.objects.create_superuser("root", password="pw")
    app = Recorded()
    run(BodyLimitMiddleware(app), http_scope("/admin/networks/network/3/change/", {
        "content-length": TWO_GIB, "cookie": session_cookie(superuser)}), Client([b"x"]))
    assert app.called


@pytest.mark.django_db(transaction=True)
def test_an_anonymous_admin_upload_of_unknown_length_is_read_only_up_to_everyone_s_limit(settings):
    from django.core.asgi import get_asgi_application

    chunks = [b"x" * 65536] * 200  # 13 MB, chunked
    client = run(BodyLimitMiddleware(get_asgi_application()), http_scope(ADMIN_ADD, {}), Client(chunks))
    assert client.status == 413 and client.read <= settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 65536


@pytest.mark.django_db(transaction=True)
def test_a_small_anonymous_admin_post_still_gets_the_admin_s_own_answer():
    from django.core.asgi import get_asgi_application

    client = run(BodyLimitMiddleware(get_asgi_application()),
                 http_scope(ADMIN_ADD, {"content-length": "5", "content-type": "application/x-www-form-urlencoded"}),
                 Client([b"a=b&c"]))
    assert client.status in (302, 403) and client.read == 5  # the login redirect or Django's CSRF check
