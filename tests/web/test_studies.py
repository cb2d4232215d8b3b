"""Studies in the site (issue 38): a submission's every refusal (nothing saved), a study end to end
through its task with a small real method (``forgotten`` on two puzzles with an untrained cf-tiny),
the same result on a rerun with the same seed, cancel, resume after a worker's death from the stored
items, the exports, and the live progress over the websocket."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User
from django.utils import timezone
from rest_framework.authtoken.models import Token

from tests.conftest import ROOT, require_shared_data, require_stockfish
from webapp.networks.models import Network
from webapp.studies import runner
from webapp.studies.models import Study, StudyItem
from webapp.studies.tasks import run_study

CSV = """PuzzleId,FEN,Moves,Rating,Themes
tewjc,r5k1/pp3p1p/2b2qp1/3pr3/8/4P2P/R1PN1PP1/Q3K2R w K - 0 19,a2a7 e5e3 f2e3 f6a1 a7a1 a8a1,1493,crushing long
0kDWS,1r6/1PN5/3p4/4kpp1/1R6/P3n3/K1P5/8 b - - 0 49,e3d5 b4b5 b8b7 b5b7,1947,advantage short
n4Mb1,6k1/5ppp/8/8/8/8/5PPP/R5K1 b - - 0 1,g8f8 a1a8,600,mate mateIn1
"""


@pytest.fixture
def token(db):
    return Token.objects.create(user=User.objects.create_user("scientist", password="pw")).key


@pytest.fixture
def sent(monkeypatch):
    tasks = []
    monkeypatch.setattr("workers.dispatch.send_task", lambda name, args, queue, task_id=None: tasks.append(
        (name, args, queue)))
    return tasks


def body(network="cf-tiny-test", **change) -> dict:
    data = {"network": network, "method": "forgotten", "positions": {"kind": "csv", "text": CSV},
            "settings": {"nodes": 1000}, "seed": 3, "limit": 3}
    data.update(change)
    return data


def submit(client, data, token, content_type="application/json"):
    return client.post("/api/studies/", json.dumps(data) if content_type == "application/json" else data,
                       content_type=content_type, HTTP_AUTHORIZATION=f"Token {token}")


@pytest.mark.parametrize("change, status, words", [
    ({"positions": {"kind": "epd", "text": "x"}}, 400, "kind"),
    ({"positions": {"kind": "csv"}}, 422, "need a text"),
    ({"positions": {"kind": "csv", "text": "  "}}, 422, "need a text"),
    ({"positions": {"kind": "csv", "text": ""}}, 400, "positions.text"),
    ({"positions": {"kind": "puzzles"}}, 422, "need the shipped set's name"),
    ({"seed": -1}, 400, "seed"),
    ({"seed": "one"}, 400, "seed"),
    ({"limit": 0}, 400, "limit"),
    ({"settings": [1]}, 400, "settings"),
    ({"network": None}, 400, "network"),
    ({"network": "no-such-net"}, 422, "Unknown network 'no-such-net'"),
    ({"method": "astrology"}, 422, "Unknown method 'astrology'"),
    ({"settings": {"depth": 3}}, 422, "no setting 'depth'"),
    ({"settings": {"nodes": "many"}}, 422, "'nodes' must be int"),
    ({"positions": {"kind": "fens", "text": "not a fen\n"}}, 422, ""),
    ({"positions": {"kind": "puzzles", "name": "no_such_set"}}, 422, "Unknown puzzle set"),
    ({"sparring": "no-such-net"}, 422, "Unknown sparring network"),
    ({"settings": {"sparring": "/etc/passwd"}}, 422, "by its name in the sparring field"),
    ({"method": "lookahead"}, 422, "The lookahead method needs a sparring network"),
])
def test_each_bad_submission_is_one_4xx_and_saves_nothing(client, token, tiny_network, sent, change, status, words):
    answer = submit(client, body(**change), token)
    assert answer.status_code == status, answer.content
    assert words in answer.json()["error"] and "\n" not in answer.json()["error"]
    assert not Study.objects.exists() and sent == []


def test_a_body_that_is_not_an_object_or_not_json_is_400_or_415(client, token, tiny_network, sent):
    assert submit(client, [1, 2], token).status_code == 400
    assert submit(client, "{", token).status_code == 400
    assert client.post("/api/studies/", {"network": "x"}, HTTP_AUTHORIZATION=f"Token {token}").status_code == 415
    assert client.post("/api/studies/", json.dumps(body()), content_type="application/json").status_code == 401
    assert not Study.objects.exists()


def test_a_method_that_does_not_apply_says_why(client, token, material_network, sent):
    answer = submit(client, body(network=material_network.name), token)
    assert answer.status_code == 422 and "material has no checkpoint" in answer.json()["error"]


def test_a_method_that_does_not_apply_to_the_network_s_family_says_the_family_s_reason(client, token, tiny_network,
                                                                                     sent):
    Network.objects.filter(pk=tiny_network.pk).update(lens_description={"unavailable": {"policy": "it has no policy head"}})
    answer = submit(client, body(), token)
    assert answer.status_code == 422 and answer.json()["error"] == (
        "Forgotten does not apply to cf-tiny-test: it has no policy head.")
    assert "it has no policy head" in client.get("/studies/").content.decode()


def test_a_withdrawn_network_is_410(client, token, tiny_network, sent):
    Network.objects.filter(pk=tiny_network.pk).update(active=False)
    answer = submit(client, body(), token)
    assert answer.status_code == 410 and "withdrawn" in answer.json()["error"] and not Study.objects.exists()


def test_one_study_at_a_time_per_client_and_a_site_cap(client, token, tiny_network, sent, settings):
    assert submit(client, body(), token).status_code == 201
    again = submit(client, body(), token)
    assert again.status_code == 429 and again["Retry-After"] and "each visitor may run 1" in again.json()["error"]
    settings.SIGHTLINE_STUDIES_PER_CLIENT, settings.SIGHTLINE_STUDIES_PER_SITE = 5, 1
    assert "as many as it takes" in submit(client, body(), token).json()["error"]
    assert Study.objects.count() == 1 and len(sent) == 1


def test_while_the_queue_is_down_503_and_nothing_saved(client, token, tiny_network, broker_down):
    answer = submit(client, body(), token)
    assert answer.status_code == 503 and answer["Retry-After"] and not Study.objects.exists()


def test_unknown_studies_are_404(client, db):
    for url in ("/api/studies/0b5d1c3e-8d9e-4a55-9b1e-000000000000/", "/api/studies/not-a-uuid/",
                "/studies/not-a-uuid/", "/api/studies/not-a-uuid/items/", "/studies/not-a-uuid/export.csv"):
        assert client.get(url).status_code == 404, url


def _run(client, token, sent, **change) -> Study:
    answer = submit(client, body(**change), token)
    assert answer.status_code == 201, answer.content
    name, args, queue = sent[-1]
    assert (name, queue) == ("sightline.run_study", "studies")
    assert run_study(*args) == "done", Study.objects.get(pk=args[0]).error
    return Study.objects.get(pk=args[0])


def _result(client, study: Study) -> dict:
    result = json.loads(client.get(f"/api/studies/{study.pk}/export.json").content)
    return {key: value for key, value in result.items()}


@pytest.fixture
def stockfish():
    require_stockfish()


def test_a_study_runs_end_to_end_and_again_the_same_under_its_seed(client, token, tiny_network, sent, stockfish,
                                                                   settings):
    settings.SIGHTLINE_STUDIES_PER_CLIENT = 5
    study = _run(client, token, sent)
    assert (study.done, study.total, study.status) == (3, 3, "done") and study.code_version
    assert StudyItem.objects.filter(study=study).count() == 3
    state = client.get(f"/api/studies/{study.pk}/").json()
    assert state["status"] == "done" and state["summary"]["table"] and state["page"].endswith(f"/studies/{study.pk}/")
    items = client.get(f"/api/studies/{study.pk}/items/").json()["items"]
    assert [i["index"] for i in items] == [0, 1, 2] and items[1]["id"] == "0kDWS" and items[1]["fen"].startswith("1r6/")
    again = _run(client, token, sent)
    assert _result(client, again) == _result(client, study)
    page = client.get(f"/studies/{study.pk}/").content.decode()
    assert 'id="results-table"' in page and "<svg" in page and 'name="fen"' in page


def test_positions_mined_from_the_master_games_are_read_in_the_worker(client, token, sent, stockfish, settings):
    """The ``games`` source: nothing to paste, nothing counted at submission; the worker mines the
    network's own confident lines from the master games, and the drill-down shows each mined position."""
    from webapp.networks.registry import register_checkpoint

    require_shared_data("pgn")
    register_checkpoint(ROOT / "weights" / "maia-1100.safetensors", "maia-1100-test")
    study = _run(client, token, sent, network="maia-1100-test", positions={"kind": "games"}, limit=2)
    assert study.positions == [] and study.source_label == "positions mined from the master games"
    assert (study.done, study.total) == (2, 2)
    items = client.get(f"/api/studies/{study.pk}/items/").json()["items"]
    assert len(items) == 2 and all(item["fen"] and item["id"] for item in items)
    page = client.get(f"/studies/{study.pk}/").content.decode()
    assert items[0]["fen"] in page


def test_lookahead_runs_with_its_sparring_net_named_by_the_site(client, token, tiny_network, sent):
    """The look-ahead study from the site: the sparring net is a registered network, passed to the
    library as its checkpoint; an untrained cf-tiny keeps no puzzle, and the study says so (a null result)."""
    study = _run(client, token, sent, method="lookahead", settings={}, sparring="cf-tiny-test")
    assert study.settings["sparring"] == str(tiny_network.path) and study.sparring == tiny_network
    items = client.get(f"/api/studies/{study.pk}/items/").json()["items"]
    assert len(items) == 3 and all("kept" in item["result"] for item in items)
    assert study.result["summary"]["table"]


def test_exports_have_their_types_and_content(client, token, tiny_network, sent, stockfish):
    study = _run(client, token, sent)
    as_json = client.get(f"/studies/{study.pk}/export.json")
    assert as_json["Content-Type"] == "application/json"
    result = json.loads(as_json.content)
    assert len(result["items"]) == 3 and result["summary"] == study.result["summary"]
    as_csv = client.get(f"/api/studies/{study.pk}/export.csv")
    assert as_csv["Content-Type"].startswith("text/csv") and len(as_csv.content.decode().strip().splitlines()) == 4
    name = study.result["summary"]["figures"][0]["name"]
    png = client.get(f"/studies/{study.pk}/figures/{name}.png")
    assert png["Content-Type"] == "image/png" and png.content[:8] == b"\x89PNG\r\n\x1a\n"
    svg = client.get(f"/api/studies/{study.pk}/figures/{name}.svg")
    assert svg["Content-Type"] == "image/svg+xml" and b"<svg" in svg.content
    assert "attachment" in svg["Content-Disposition"]
    assert client.get(f"/studies/{study.pk}/figures/no-such-figure.svg").status_code == 404


def test_exports_wait_for_the_study_to_be_done(client, token, tiny_network, sent):
    submit(client, body(), token)
    study = Study.objects.get()
    assert client.get(f"/studies/{study.pk}/export.json").status_code == 409
    assert client.get(f"/studies/{study.pk}/state/").status_code == 202


def test_cancel_stops_between_positions_and_keeps_what_was_measured(client, token, tiny_network, sent, stockfish,
                                                                    monkeypatch):
    submit(client, body(), token)
    study = Study.objects.get()
    publish = runner.publish

    def cancel_after_the_first(found):
        publish(found)
        if found.done == 1 and found.status == "running":
            assert client.post(f"/api/studies/{study.pk}/cancel/", HTTP_AUTHORIZATION=f"Token {token}").status_code == 200

    monkeypatch.setattr(runner, "publish", cancel_after_the_first)
    assert run_study(str(study.pk)) == "cancelled"
    study.refresh_from_db()
    assert study.status == "cancelled" and study.lease_owner == "" and StudyItem.objects.filter(study=study).count() == 1
    assert client.post(f"/api/studies/{study.pk}/cancel/", HTTP_AUTHORIZATION=f"Token {token}").status_code == 409
    assert client.get(f"/studies/{study.pk}/state/").json()["status"] == "cancelled"


def test_only_who_started_a_study_may_cancel_it(client, token, tiny_network, sent):
    submit(client, body(), token)
    study = Study.objects.get()
    other = Token.objects.create(user=User.objects.create_user("other", password="pw")).key
    from django.test import Client

    stranger = Client(REMOTE_ADDR="10.0.0.9")
    assert stranger.post(f"/api/studies/{study.pk}/cancel/", HTTP_AUTHORIZATION=f"Token {other}").status_code == 403
    assert Study.objects.get().status == "queued"


class WorkerDied(BaseException):
    """What a killed worker leaves: nothing after the point of death runs (no except Exception)."""


def test_a_dead_worker_s_study_resumes_from_its_items_to_the_same_result(client, token, tiny_network, sent,
                                                                         stockfish, monkeypatch, settings):
    settings.SIGHTLINE_STUDIES_PER_CLIENT = 5
    whole = _run(client, token, sent)
    submit(client, body(), token)
    study = Study.objects.exclude(pk=whole.pk).get()
    publish = runner.publish

    def die_after_the_second(found):
        publish(found)
        if found.done == 2:
            raise WorkerDied()

    monkeypatch.setattr(runner, "publish", die_after_the_second)
    with pytest.raises(WorkerDied):
        run_study(str(study.pk))
    monkeypatch.setattr(runner, "publish", publish)
    study.refresh_from_db()
    assert study.status == "running" and StudyItem.objects.filter(study=study).count() == 2
    kept = list(StudyItem.objects.filter(study=study).values_list("pk", flat=True))
    # A redelivery while the lease is live does nothing; once it runs out a read queues it again.
    assert run_study(str(study.pk)) == "claimed"
    sent.clear()
    Study.objects.filter(pk=study.pk).update(lease_until=timezone.now() - timedelta(seconds=1))
    assert client.get(f"/studies/{study.pk}/state/").status_code == 202
    assert [name for name, *_ in sent] == ["sightline.run_study"]
    measured = []
    monkeypatch.setattr(runner, "publish", lambda found: measured.append(found.done))
    assert run_study(str(study.pk)) == "done"
    assert measured[:2] == [2, 2]  # started from the two stored items, then measured the third only
    assert set(kept) <= set(StudyItem.objects.filter(study=study).values_list("pk", flat=True))
    assert _result(client, Study.objects.get(pk=study.pk)) == _result(client, whole)


def test_a_lost_queued_study_is_sent_again_once(client, token, tiny_network, sent, settings):
    submit(client, body(), token)
    study = Study.objects.get()
    Study.objects.filter(pk=study.pk).update(queued_at=timezone.now() - timedelta(
        seconds=settings.SIGHTLINE_VISIBILITY_TIMEOUT_S + 1))
    client.get(f"/api/studies/{study.pk}/")
    client.get(f"/api/studies/{study.pk}/")
    assert len(sent) == 2  # the submission's and one more


@pytest.mark.django_db(transaction=True)
def test_the_page_s_socket_gets_the_state_then_each_progress(tiny_network, sent):
    from webapp.asgi import application
    from webapp.studies.live import publish

    study = Study.objects.create(network=tiny_network, method="forgotten", source_kind="fens", total=4)

    async def talk():
        socket = WebsocketCommunicator(application, f"/ws/studies/{study.pk}/", headers=[(b"origin", b"http://testserver")])
        connected, _ = await socket.connect()
        assert connected
        first = json.loads(await socket.receive_from())
        return socket, first

    async def session():
        socket, first = await talk()
        assert (first["status"], first["done"], first["total"]) == ("queued", 0, 4)
        study.done, study.status = 2, "running"
        from channels.db import database_sync_to_async

        await database_sync_to_async(publish)(study)
        second = json.loads(await socket.receive_from())
        await socket.disconnect()
        missing = WebsocketCommunicator(application, "/ws/studies/not-a-study/", headers=[(b"origin", b"http://testserver")])
        await missing.connect()
        closed = await missing.receive_output()
        return second, closed

    second, closed = async_to_sync(session)()
    assert (second["status"], second["done"]) == ("running", 2)
    assert closed.get("code") == 4404


def test_serve_runs_the_studies_on_a_lane_of_their_own():
    from webapp.site.management.commands.serve import STUDIES_NICE, studies_worker_command, worker_command

    command = studies_worker_command()
    users = worker_command({"queues": "gpu,cpu,studies", "pool": "threads", "concurrency": 2})
    assert command[command.index("-Q") + 1] == "studies" and command[command.index("--concurrency") + 1] == "1"
    assert "studies" not in users[users.index("-Q") + 1].split(",") and STUDIES_NICE > 0


def test_the_studies_page_lists_only_the_visitor_s_own(client, token, tiny_network, sent):
    submit(client, body(), token)
    study = Study.objects.get()
    assert str(study.pk) not in client.get("/studies/").content.decode()  # another client's
    from django.test import Client

    owner = Client()
    owner.force_login(User.objects.get(username="scientist"))
    assert str(study.pk) in owner.get("/studies/").content.decode()


def test_a_failure_in_the_worker_is_stored_with_its_sentence(client, token, tiny_network, sent, monkeypatch):
    submit(client, body(), token)
    study = Study.objects.get()

    def broken(*args, **kwargs):
        raise RuntimeError("the network went away")

    monkeypatch.setattr("webapp.studies.library.run", broken)
    assert run_study(str(study.pk)) == "failed"
    study.refresh_from_db()
    assert study.error == "RuntimeError: the network went away" and study.lease_owner == ""
    assert client.get(f"/studies/{study.pk}/state/").json()["error"] == study.error
    assert "the network went away" in client.get(f"/studies/{study.pk}/").content.decode()
    assert run_study(str(study.pk)) == "failed"  # a redelivery of a finished study does nothing
