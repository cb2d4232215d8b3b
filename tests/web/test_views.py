"""Every bad input from the issue: a clear message, a 4xx status, nothing saved."""

import uuid

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from analysis.positions import MAX_FULLMOVE_NUMBER, MAX_HALFMOVE_CLOCK
from tests.web.conftest import OPERA_GAME, SHORT_GAME
from webapp.jobs.models import AnalysisJob

pytestmark = pytest.mark.django_db


def post(client, **data):
    payload = {"network": "material", "search": "value"}
    payload.update(data)
    return client.post("/", payload)


@pytest.fixture(autouse=True)
def _networks(material_network):
    return material_network


def assert_rejected(response, status, fragment):
    assert response.status_code == status, response.content[:500]
    assert fragment in response.content.decode()
    assert AnalysisJob.objects.count() == 0


def test_home_page_lists_networks_and_searches(client):
    response = client.get("/")
    assert response.status_code == 200
    body = response.content.decode()
    for name in ("policy", "value", "mcts", "gumbel", "probability", "alphabeta"):
        assert f'value="{name}"' in body
    assert 'value="material"' in body


def test_nothing_given(client):
    assert_rejected(post(client), 400, "Paste a PGN, upload a .pgn file or enter a FEN.")


def test_not_pgn(client):
    assert_rejected(post(client, pgn="hello there, this is no chess game"), 400, "This is not PGN")


def test_illegal_move_names_ply_and_move(client):
    assert_rejected(post(client, pgn="1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ke3"), 400,
                    "Ply 7 (4. Ke3): illegal move")


def test_several_games_are_listed_and_one_can_be_picked(client, django_capture_on_commit_callbacks, monkeypatch):
    text = OPERA_GAME + '\n[White "Anna"]\n[Black "Bob"]\n[Result "0-1"]\n\n1. f3 e5 2. g4 Qh4# 0-1\n'
    response = post(client, pgn=text)
    assert_rejected(response, 400, "This PGN holds 2 games; pick the one to analyse.")
    body = response.content.decode()
    assert "Paul Morphy - Duke Karl / Count Isouard" in body and "Anna - Bob" in body
    assert 'name="game_index" value="1"' in body
    sent = []
    monkeypatch.setattr("workers.dispatch.send_task", lambda *a, **k: sent.append(k))
    with django_capture_on_commit_callbacks(execute=True):
        response = post(client, pgn=text, game_index="1")
    assert response.status_code == 302
    job = AnalysisJob.objects.get()
    assert job.headers["White"] == "Anna" and len(job.nodes) == 5
    assert sent and sent[0]["queue"] == "cpu" and sent[0]["task_id"] == str(job.id)


def test_text_over_one_megabyte(client):
    assert_rejected(post(client, pgn='[Event "x"]\n{' + "x" * 1_000_100 + "} *"), 413, "the limit is 1 MB")


def test_file_over_one_megabyte(client):
    big = SimpleUploadedFile("big.pgn", b'[Event "x"]\n{' + b"x" * 1_000_100 + b"} *")
    response = client.post("/", {"network": "material", "search": "value", "pgn_file": big})
    assert_rejected(response, 413, "the limit is 1 MB")


def test_uploaded_file_is_parsed(client, monkeypatch):
    monkeypatch.setattr("workers.dispatch.send_task", lambda *a, **k: None)
    upload = SimpleUploadedFile("g.pgn", OPERA_GAME.encode("latin-1"))
    response = client.post("/", {"network": "material", "search": "value", "pgn_file": upload})
    assert response.status_code == 302
    assert AnalysisJob.objects.get().headers["White"] == "Paul Morphy"


def test_over_a_thousand_plies(client):
    moves = " ".join(["Nf3 Nf6 Ng1 Ng8"] * 251)
    assert_rejected(post(client, pgn=f'[Event "long"]\n\n{moves} *'), 400, "the limit is 1000")


def test_invalid_fen(client):
    assert_rejected(post(client, fen="rnbqkbnr/pppppppp/8 w KQkq - 0 1"), 400, "Invalid FEN")
    assert_rejected(post(client, fen="8/8/8/8/8/8/8/4K3 w - - 0 1"), 400, "no black king")


def test_half_move_clock_beyond_any_game_is_refused(client):
    # 65,536 once passed the form and failed in the worker (OverflowError in the encoder).
    assert_rejected(post(client, fen="4k3/8/8/8/8/8/4P3/4K3 w - - 65536 1"), 400,
                    "The half-move clock 65536 in FEN")
    tagged = '[SetUp "1"]\n[FEN "4k3/8/8/8/8/8/4P3/4K3 w - - 65536 1"]\n\n1. e4 *'
    assert_rejected(post(client, pgn=tagged), 400, "The half-move clock 65536 in the PGN&#x27;s FEN tag is over 150")


EDGE = "4k3/8/8/8/8/8/4P3/4K3 w - - {clock} {move}"


@pytest.mark.parametrize("clock, move", [(MAX_HALFMOVE_CLOCK, 1), (0, MAX_FULLMOVE_NUMBER), (0, 1)])
def test_a_fen_at_the_position_rules_edges_is_analysed(client, monkeypatch, clock, move):
    monkeypatch.setattr("workers.dispatch.send_task", lambda *a, **k: None)
    assert post(client, fen=EDGE.format(clock=clock, move=move)).status_code == 302
    assert AnalysisJob.objects.get().start_fen == EDGE.format(clock=clock, move=move)


@pytest.mark.parametrize("clock, move, fragment", [
    (MAX_HALFMOVE_CLOCK + 1, 1, "The half-move clock 151 in FEN"),
    (0, MAX_FULLMOVE_NUMBER + 1, "The move number 10,001 in FEN"),
    (0, 10 ** 30, "The move number of 31 digits in FEN"),
    (0, 0, "The move number 0 in FEN"),
])
def test_a_fen_just_past_the_position_rules_is_refused(client, clock, move, fragment):
    assert_rejected(post(client, fen=EDGE.format(clock=clock, move=move)), 400, fragment)


def test_a_pgn_fen_tag_past_the_move_bound_is_refused(client):
    tagged = f'[SetUp "1"]\n[FEN "{EDGE.format(clock=0, move=MAX_FULLMOVE_NUMBER + 1)}"]\n\n1. e4 *'
    assert_rejected(post(client, pgn=tagged), 400, "The move number 10,001 in the PGN&#x27;s FEN tag is over 10,000")


def test_variant(client):
    assert_rejected(post(client, pgn='[Variant "Crazyhouse"]\n\n1. e4 e5 *'), 400,
                    "Only standard chess can be analysed; this game is &#x27;Crazyhouse&#x27;.")


def test_unknown_network(client):
    assert_rejected(post(client, pgn=SHORT_GAME, network="no-such-net"), 400, "Unknown network &#x27;no-such-net&#x27;.")


def test_unknown_search(client):
    assert_rejected(post(client, pgn=SHORT_GAME, search="minimax"), 400, "Unknown search &#x27;minimax&#x27;")


@pytest.mark.parametrize("search, budget, fragment", [
    ("alphabeta", "0", "Budget 0 is out of range for alphabeta: 1 to 6 depth."),
    ("alphabeta", "99", "Budget 99 is out of range for alphabeta: 1 to 6 depth."),
    ("value", "abc", "Enter a whole number."),
    ("alphabeta", "9" * 4000, "Budget of 4,000 digits is out of range for alphabeta: 1 to 6 depth."),
])
def test_budget_out_of_range(client, tiny_network, search, budget, fragment):
    answer = post(client, pgn=SHORT_GAME, network=tiny_network.name, search=search, budget=budget)
    assert_rejected(answer, 400, fragment)
    assert not any("9" * 20 in error for error in field_errors(answer))  # the message does not echo it


def test_a_huge_engine_budget_is_not_echoed_back(client, tiny_network):
    answer = post(client, pgn=SHORT_GAME, network=tiny_network.name, search="policy", engine_nodes="9" * 4000)
    assert_rejected(answer, 400, "Stockfish&#x27;s budget of 4,000 digits is out of range")
    assert not any("9" * 20 in error for error in field_errors(answer))


def field_errors(answer) -> list[str]:
    """The messages shown beside the form's fields (the inputs keep what was typed, as forms do)."""
    import re

    return re.findall(r'<p class="error field-error" role="alert">(.*?)</p>', answer.content.decode(), re.S)


def test_search_needing_a_policy_head(client):
    assert_rejected(post(client, pgn=SHORT_GAME, search="mcts", budget="10"), 400,
                    "The mcts search needs a policy head; material has none.")


def test_two_inputs_at_once(client):
    assert_rejected(post(client, pgn=SHORT_GAME, fen="8/8/8/8/8/5k2/8/4K1Q1 w - - 0 1"), 400, "Give one game only")


def test_htmx_submit_redirects_with_header(client, monkeypatch):
    monkeypatch.setattr("workers.dispatch.send_task", lambda *a, **k: None)
    response = client.post("/", {"network": "material", "search": "value", "pgn": SHORT_GAME}, HTTP_HX_REQUEST="true")
    job = AnalysisJob.objects.get()
    assert response.status_code == 204 and response["HX-Redirect"] == f"/jobs/{job.id}/"


def test_htmx_error_is_a_4xx_page_fragment(client):
    response = client.post("/", {"network": "material", "search": "value", "pgn": "1. e4 e5 2. Ke3"},
                           HTTP_HX_REQUEST="true")
    assert response.status_code == 400 and 'id="analyse-panel"' in response.content.decode()


@pytest.mark.parametrize("path", [
    "/jobs/{id}/", "/api/jobs/{id}/", "/api/jobs/{id}/nodes/0/attention/",
])
@pytest.mark.parametrize("job_id", [str(uuid.uuid4()), "not-a-uuid"])
def test_missing_job(client, path, job_id):
    response = client.get(path.format(id=job_id))
    assert response.status_code == 404
    assert f"No analysis has the id &#x27;{job_id}&#x27;." in response.content.decode() or \
        response.json()["error"] == f"No analysis has the id {job_id!r}."


def test_cancel_missing_job(client):
    response = client.post(f"/jobs/{uuid.uuid4()}/cancel/")
    assert response.status_code == 404


def test_job_page_renders_stored_state(client, material_network):
    from webapp.jobs.gameinput import parse_pgn
    from webapp.jobs.jobs import create_job

    job = create_job(parse_pgn(OPERA_GAME), material_network, "value", 1, dispatch=False)
    response = client.get(f"/jobs/{job.id}/")
    body = response.content.decode()
    assert response.status_code == 200
    assert "Paul Morphy - Duke Karl / Count Isouard" in body
    assert f'ws-connect="/ws/jobs/{job.id}/"' in body and 'id="page-data"' in body
    assert 'id="white-knight"' in body  # piece drawings for the board
    state = client.get(f"/api/jobs/{job.id}/").json()
    assert state["job"]["status"] == "queued" and len(state["nodes"]) == 36


def test_cancel_then_cancel_again(client, material_network):
    from webapp.jobs.gameinput import parse_pgn
    from webapp.jobs.jobs import create_job

    job = create_job(parse_pgn(SHORT_GAME), material_network, "value", 1, dispatch=False)
    session = client.session
    session["owned_jobs"] = [str(job.id)]  # as if this browser had started it
    session.save()
    response = client.post(f"/jobs/{job.id}/cancel/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200 and response.json() == {"status": "cancelled"}
    again = client.post(f"/jobs/{job.id}/cancel/", HTTP_ACCEPT="application/json")
    assert again.status_code == 409 and "already cancelled" in again.json()["error"]


def test_only_the_session_that_started_a_job_may_cancel_it(client, material_network, monkeypatch):
    from django.contrib.auth.models import User
    from django.test import Client

    from webapp.jobs.models import AnalysisJob

    monkeypatch.setattr("workers.dispatch.send_task", lambda *a, **k: None)
    assert client.post("/", {"network": "material", "search": "value", "pgn": SHORT_GAME}).status_code == 302
    job = AnalysisJob.objects.get()
    assert '"can_cancel": true' in client.get(f"/jobs/{job.id}/").content.decode()

    stranger = Client()
    page = stranger.get(f"/jobs/{job.id}/").content.decode()
    assert '"can_cancel": false' in page and 'id="cancel-btn"' in page
    refused = stranger.post(f"/jobs/{job.id}/cancel/", HTTP_ACCEPT="application/json")
    assert refused.status_code == 403 and "started this analysis" in refused.json()["error"]
    job.refresh_from_db()
    assert job.status == "queued"  # nothing changed

    admin = Client()
    admin.force_login(User.objects.create_user("staff", password="x", is_staff=True))
    assert admin.post(f"/jobs/{job.id}/cancel/", HTTP_ACCEPT="application/json").json() == {"status": "cancelled"}


def test_untrained_network_is_labelled(client, tiny_network):
    body = client.get("/").content.decode()
    assert "cf-tiny-test" in body and "[untrained]" in body
    panel = client.get(f"/networks/{tiny_network.name}/").content.decode()
    assert "untrained" in panel and tiny_network.checksum in panel


def test_static_assets_come_from_packages():
    from django.contrib.staticfiles import finders

    plotly = finders.find("vendor/plotly.min.js")
    htmx = finders.find("django_htmx/htmx-2.min.js")
    ws = finders.find("django_htmx/ext/hx-ws-2.min.js")
    assert plotly and "site-packages/plotly" in plotly
    assert htmx and ws
    assert finders.find("vendor/datasets/iris.csv.gz") is None


def test_production_settings_have_debug_off_unless_asked():
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "SIGHTLINE_DEBUG"}
    code = "import webapp.settings as s; print(s.DEBUG)"
    assert subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          check=True).stdout.strip() == "False"


@pytest.mark.parametrize("path", ["/no-such-page/", "/api/no-such-thing/", "/jobs/"])
def test_unknown_addresses_do_not_list_the_routes(client, settings, path):
    settings.DEBUG = False  # what a deployment runs with (see the test above)
    response = client.get(path)
    body = response.content.decode()
    assert response.status_code == 404
    assert "There is nothing at this address." in body
    for leak in ("tried", "URLPattern", "URLResolver", "admin/", "attention"):
        assert leak not in body


def test_pasted_pgn_with_a_byte_order_mark_is_analysed(client, monkeypatch):
    monkeypatch.setattr("workers.dispatch.send_task", lambda *a, **k: None)
    response = post(client, pgn="\ufeff" + OPERA_GAME)
    assert response.status_code == 302, response.content[:300]
    assert AnalysisJob.objects.get().headers["White"] == "Paul Morphy"
    assert post(client, fen="\ufeff8/8/8/8/8/5k2/8/4K1Q1 w - - 0 1").status_code == 302


def test_a_multi_game_upload_keeps_its_games_for_the_pick(client, django_capture_on_commit_callbacks, monkeypatch):
    """The picker's page cannot keep the file input (browsers clear it): the file's text comes back in
    the PGN box, so picking a game and submitting again analyses it; the prompt is no error."""
    import html
    import re

    text = OPERA_GAME + '\n[White "Anna"]\n[Black "Bob"]\n[Result "0-1"]\n\n1. f3 e5 2. g4 Qh4# 0-1\n'
    upload = SimpleUploadedFile("two.pgn", text.encode())
    response = client.post("/", {"network": "material", "search": "value", "pgn_file": upload})
    body = response.content.decode()
    assert response.status_code == 400 and "Anna - Bob" in body
    box = html.unescape(re.search(r'<textarea name="pgn"[^>]*>(.*?)</textarea>', body, re.S).group(1))
    assert box.strip() == text.strip()
    assert 'id="form-errors"' not in body  # the prompt is in the picker, not an error box
    assert re.search(r'<legend[^>]*>[^<]*2 games', body)
    sent = []
    monkeypatch.setattr("workers.dispatch.send_task", lambda *a, **k: sent.append(k))
    with django_capture_on_commit_callbacks(execute=True):
        response = post(client, pgn=box, game_index="1")  # what the browser sends back: no file now
    assert response.status_code == 302
    assert AnalysisJob.objects.get().headers["White"] == "Anna"
