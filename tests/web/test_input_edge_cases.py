"""Odd inputs a user can send: each is analysed as written or refused with a message naming the problem."""

import codecs

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from webapp.jobs.gameinput import MAX_TAG_CHARS, MAX_TAGS, GameInputError, parse_fen, parse_pgn
from webapp.jobs.jobs import create_job
from webapp.jobs.models import AnalysisJob
from webapp.networks.model_cache import ModelCache
from webapp.jobs.run.runner import JobRun


@pytest.mark.parametrize("text, fragment", [
    # python-chess skips characters it cannot read: "nf3" would become the pawn move f3.
    ("1. e4 e5 2. nf3 Nc6 *", "Line 1: 'nf3' is not a move"),
    ("1. e4 e5 2. \u2658f3 Nc6 *", "Line 1: '\u2658f3' is not a move"),
    ("1. e4 e5 2. Nf3 Nc6 3. Bb5xx a6 *", "Line 1: 'xx' is not a move"),
    # The unreadable token is named, not the (then illegal) move after it.
    ('[Event "x"]\n\n1. e4 e5\n2. Zz9 Nc6 *', "Line 4: 'Zz9' is not a move"),
    ("1. e4 -- 2. d4 *", "Ply 2 (1... --): a null move"),
    ('[Variant "Crazyhouse"]\n\n1. e4 d5 2. exd5 Qxd5 3. Nc3 Qa5 4. P@d5 *', "Only standard chess"),
    ("1. e4 e5 (1... Z0 2. d4) *", "Ply 2 (1... Z0): a null move"),
    ("1. e4 e5\n\n2. Nf3 Nc6 *", "The text from line 3 on was not read ('2. Nf3 Nc6 *')"),
    ('[Event "a"]\n\n1. e4 e5\n[Event "b"]\n1. d4 d5 *', "Line 4: a tag pair inside the moves"),
    ('[White "a\x00b"]\n\n1. e4 *', "NUL bytes"),
    ('[Event "' + "A" * (MAX_TAG_CHARS + 1) + '"]\n\n1. e4 *', f"'Event' is {MAX_TAG_CHARS + 1:,} characters long"),
    ("".join(f'[T{i} "v"]\n' for i in range(MAX_TAGS)) + "\n1. e4 *", f"the limit is {MAX_TAGS}"),
])
def test_unreadable_pgn_is_refused_with_the_reason(text, fragment):
    with pytest.raises(GameInputError) as info:
        parse_pgn(text)
    assert fragment in str(info.value)


@pytest.mark.parametrize("text, sans", [
    ('[Event "x"]\n\n1. e4!! {good} $1 e5?! (1... c5 $2 {Sicilian; a comment}) 2. Nf3 +/- Nc6 \u00b1 *',
     ["e4", "e5", "Nf3", "Nc6", "c5"]),
    ('[Event "x"]\n; a comment line\n\n1.e4 e5 ; rest of line\n{a comment\nover two lines} 2.Nf3 Nc6 1/2-1/2',
     ["e4", "e5", "Nf3", "Nc6"]),
    ("1 e4 e5 2 Nf3 Nc6 3. Bb5 a6 4. Bxc6+ dxc6 5. O-O f6 6. d4 exd4 7. Nxd4 c5 8. Nb3 Qxd1 9. Rxd1 *",
     ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Bxc6", "dxc6", "O-O", "f6", "d4", "exd4", "Nxd4", "c5", "Nb3",
      "Qxd1", "Rxd1"]),
    ('[SetUp "1"]\n[FEN "8/P7/8/8/8/8/8/k1K5 w - - 0 1"]\n\n1. a8=Q# 1-0', ["a8=Q#"]),
    ("1. f3 e5 2. g4 Qh4# 0-1", ["f3", "e5", "g4", "Qh4#"]),
    # Pasted from a file saved with a byte-order mark: once refused as "'\ufeff[Event' is not a move".
    ('\ufeff[Event "x"]\n\n1. f3 e5 2. g4 Qh4# 0-1', ["f3", "e5", "g4", "Qh4#"]),
    ("\ufeff1. f3 e5 *", ["f3", "e5"]),
    ("\ufeff8/8/8/8/8/5k2/8/4K1Q1 w - - 0 1", []),
])
def test_annotated_and_set_up_games_are_read_as_written(text, sans):
    tree = parse_pgn(text)
    assert [n.san for n in tree.nodes[1:]] == sans


@pytest.mark.django_db
@pytest.mark.parametrize("fen, score", [
    ("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", 0.5),  # stalemate
    ("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1", 0.0),  # checkmate
])
def test_position_without_legal_moves_is_analysed(tiny_network, fen, score):
    job = create_job(parse_fen(fen), tiny_network, "mcts", 8, dispatch=False)
    finished = JobRun(job, ModelCache().get(tiny_network), lambda kind, payload: None).run()
    assert finished.status == "done", finished.error
    from webapp.jobs.results import job_results

    result = job_results(finished)[0]  # as stored: the side to move's view
    assert result["eval"]["policy"] == []
    assert result["search"]["bestmove"] is None and result["search"]["score"] == score


@pytest.mark.django_db
class TestUploads:
    @pytest.fixture(autouse=True)
    def _setup(self, material_network, monkeypatch):
        monkeypatch.setattr("workers.dispatch.send_task", lambda *a, **k: None)

    def upload(self, client, data: bytes, name="game.pgn"):
        return client.post("/", {"network": "material", "search": "value",
                                 "pgn_file": SimpleUploadedFile(name, data)})

    @pytest.mark.parametrize("data, fragment", [
        (bytes(range(256)) * 8, "This is not PGN"),
        (b'[White "a\x00b"]\n\n1. e4 *', "NUL bytes"),
        (__import__("pickle").dumps({"not": "a game"}), "This is not PGN"),
        (codecs.BOM_UTF16_LE + b"\x00\xd8", "not valid UTF-16"),
        (b"1. e4 e5 2. nf3 *", "&#x27;nf3&#x27; is not a move"),
    ])
    def test_bad_files_are_refused(self, client, data, fragment):
        response = self.upload(client, data)
        assert response.status_code == 400
        assert fragment in response.content.decode()
        assert AnalysisJob.objects.count() == 0

    @pytest.mark.parametrize("encoding", ["utf-16", "latin-1", "utf-8-sig"])
    def test_text_files_in_common_encodings_are_read(self, client, encoding):
        response = self.upload(client, '[White "M\u00fcller"]\n\n1. e4 e5 *'.encode(encoding))
        assert response.status_code == 302
        job = AnalysisJob.objects.get()
        assert job.headers["White"] == "M\u00fcller" and len(job.nodes) == 3

    def test_an_upload_name_cannot_escape(self, client, settings, tmp_path):
        response = self.upload(client, b"1. e4 *", name="../../../../tmp/evil.pgn")
        assert response.status_code == 302  # the file is read in memory, never stored under its name
        assert not (tmp_path / "evil.pgn").exists()

    def test_headers_are_escaped_on_every_page(self, client):
        evil = "<script>alert(1)</script>"
        response = client.post("/", {"network": "material", "search": "value",
                                     "pgn": f'[White "{evil}"]\n[Black "</script><img src=x>"]\n\n1. e4 *'})
        job = AnalysisJob.objects.get()
        for url in (response["Location"], "/", "/recent/"):
            body = client.get(url).content.decode()
            assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body or "\\u003Cscript\\u003E" in body
            assert evil not in body and "<img src=x>" not in body
        assert job.headers["White"] == evil  # stored as written, escaped when shown


@pytest.mark.django_db
def test_posts_need_the_csrf_token(material_network, monkeypatch):
    monkeypatch.setattr("workers.dispatch.send_task", lambda *a, **k: None)
    client = Client(enforce_csrf_checks=True)
    data = {"network": "material", "search": "value", "pgn": "1. e4 e5 *"}
    assert client.post("/", data).status_code == 403
    assert AnalysisJob.objects.count() == 0
    client.get("/")
    token = client.cookies["csrftoken"].value
    response = client.post("/", data, HTTP_X_CSRFTOKEN=token)
    assert response.status_code == 302
    job = AnalysisJob.objects.get()
    assert client.post(f"/jobs/{job.id}/cancel/").status_code == 403
    assert client.post(f"/jobs/{job.id}/cancel/", HTTP_X_CSRFTOKEN=token).status_code == 302


@pytest.mark.django_db
def test_a_body_over_the_upload_limit_gets_the_form_and_a_413(material_network, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000
    client = Client(enforce_csrf_checks=True)  # the CSRF middleware reads the body before the view
    client.get("/")
    response = client.post("/", {"network": "material", "search": "value", "pgn": "1. e4 " * 5_000,
                                 "csrfmiddlewaretoken": client.cookies["csrftoken"].value})
    assert response.status_code == 413
    assert "The request is larger than 10,000 bytes. A PGN, pasted or uploaded, may be up to 1 MB" \
        in response.content.decode() and 'id="analyse-panel"' in response.content.decode()
    assert AnalysisJob.objects.count() == 0


def test_static_paths_outside_the_static_folders_are_404():
    from asgiref.sync import async_to_sync
    from channels.testing import HttpCommunicator
    from django.core.asgi import get_asgi_application

    from webapp.site.static_serving import CachingStaticFilesHandler

    app = CachingStaticFilesHandler(get_asgi_application())

    async def status(path):
        communicator = HttpCommunicator(app, "GET", path)
        await communicator.send_input({"type": "http.request", "body": b""})
        start = await communicator.receive_output(timeout=10)
        await communicator.wait(timeout=10)
        return start["status"]

    assert async_to_sync(status)("/static/../webapp/settings.py") == 404
    assert async_to_sync(status)("/static/sightline/../../../../etc/passwd") == 404
    assert async_to_sync(status)("/static/sightline/pages/game.js") == 200


@pytest.mark.parametrize("path", ["/ws/nothing/", "/ws/jobs/", "/"])
def test_websocket_paths_without_a_route_are_refused(path):
    from asgiref.sync import async_to_sync
    from channels.routing import URLRouter
    from channels.testing import WebsocketCommunicator

    from webapp.jobs.live.routing import websocket_urlpatterns

    async def scenario():
        communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns), path)
        connected, _ = await communicator.connect()
        assert not connected

    async_to_sync(scenario)()
