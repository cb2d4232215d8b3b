"""The head atlas on the site: computed by a worker task or the command, its page, the jump into
the explorer, "show me", and the bad inputs of each (a message and a 4xx)."""

from __future__ import annotations

import json

import chess
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from webapp.networks.models import HeadAtlas, Network
from webapp.networks import tasks


@pytest.fixture
def atlas_network(tiny_network):
    call_command("head_atlas", tiny_network.name, "--positions", "8", stdout=open("/dev/null", "w"))
    return tiny_network


def test_the_command_stores_an_atlas_with_a_label_for_every_head(atlas_network):
    row = HeadAtlas.objects.get(network=atlas_network)
    assert row.status == HeadAtlas.Status.READY and (row.done, row.total) == (16, 16)  # patterns, then causal
    assert len(row.data["labels"]) == 2 and len(row.data["labels"][0]) == 4 and row.data["positions"] == 8


def test_the_command_refuses_what_has_no_atlas(material_network, db):
    with pytest.raises(CommandError, match="has no attention maps"):
        call_command("head_atlas", "material")
    with pytest.raises(CommandError, match="unknown network"):
        call_command("head_atlas", "nope")
    with pytest.raises(CommandError, match="--positions"):
        call_command("head_atlas", "material", "--positions", "0")


def test_a_checked_upload_queues_its_atlas_and_the_task_computes_it(
        tiny_network, monkeypatch, django_capture_on_commit_callbacks, settings):
    sent = []
    monkeypatch.setattr("workers.dispatch.send_task", lambda name, args, queue: sent.append((args[0], queue)))
    Network.objects.filter(pk=tiny_network.pk).update(status=Network.Status.CHECKING)
    with django_capture_on_commit_callbacks(execute=True):
        assert tasks.check_network.run(tiny_network.pk) == Network.Status.READY
    assert sent == [(tiny_network.pk, "background")]  # the background lane, not the network's queue
    assert HeadAtlas.objects.get(network=tiny_network).status == HeadAtlas.Status.QUEUED
    settings.SIGHTLINE_ATLAS_POSITIONS = 4
    assert tasks.compute_head_atlas.run(tiny_network.pk) == HeadAtlas.Status.READY
    assert HeadAtlas.objects.get(network=tiny_network).data["positions"] == 4
    assert tasks.compute_head_atlas.run(10 ** 6) == "missing"


def test_a_redelivered_atlas_task_does_not_compute_it_again(atlas_network, monkeypatch, django_capture_on_commit_callbacks):
    """An atlas that ran past the broker's visibility timeout is delivered again when it ends: the
    copy finds it ready and stops (computing again ran past the timeout again: a loop that held a
    worker slot while the analyses waited). Asked for again, it is computed again."""
    computed = []
    monkeypatch.setattr(tasks, "compute_and_store", lambda network, *a, **k: computed.append(network.pk) or
                        HeadAtlas.objects.get(network=network))
    assert tasks.compute_head_atlas.run(atlas_network.pk) == HeadAtlas.Status.READY and computed == []
    monkeypatch.setattr("workers.dispatch.send_task", lambda *a, **k: None)
    from webapp.networks.atlas import request_atlas
    with django_capture_on_commit_callbacks(execute=True):
        request_atlas(atlas_network, again=True)
    tasks.compute_head_atlas.run(atlas_network.pk)
    assert computed == [atlas_network.pk]


@pytest.mark.django_db(transaction=True)  # a worker runs in autocommit: the atlas is sent at once
def test_a_broker_that_is_down_leaves_no_atlas_queued(tiny_network, broker_down):
    """A checked network's atlas, asked for while Redis is down, is not left "queued" with no task:
    the row goes again (the atlas page offers to compute it), and the check itself still finishes."""
    Network.objects.filter(pk=tiny_network.pk).update(status=Network.Status.CHECKING)
    assert tasks.check_network.run(tiny_network.pk) == Network.Status.READY
    assert not HeadAtlas.objects.exists()


def test_the_atlas_page_shows_the_grid_filters_and_chart(client, atlas_network):
    page = client.get(f"/networks/{atlas_network.name}/heads/").content.decode()
    assert page.count('class="atlas-cell') == 8 and 'id="atlas-filter"' in page and "vendor/plotly.min.js" in page
    data = json.loads(page.split('id="atlas-data" type="application/json">')[1].split("</script>")[0])
    assert data["layers"] == 2 and sum(sum(c) for c in data["counts"].values()) == 8
    assert len(data["thumbnails"][1][3]) == 64
    assert "head atlas" in client.get(f"/networks/{atlas_network.name}/").content.decode()


def test_the_atlas_page_shows_progress_until_ready(client, tiny_network):
    assert "No head atlas yet" in client.get(f"/networks/{tiny_network.name}/heads/").content.decode()
    HeadAtlas.objects.create(network=tiny_network, status=HeadAtlas.Status.RUNNING, done=64, total=256)
    page = client.get(f"/networks/{tiny_network.name}/heads/").content.decode()
    assert "64 of 256 steps" in page and 'value="25"' in page and 'hx-trigger="every 2s"' in page
    HeadAtlas.objects.filter(network=tiny_network).update(status=HeadAtlas.Status.FAILED, error="boom")
    assert "failed: boom" in client.get(f"/networks/{tiny_network.name}/heads/").content.decode()


def test_polling_a_finished_atlas_reloads_the_page(client, atlas_network):
    response = client.get(f"/networks/{atlas_network.name}/heads/", HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and response["HX-Refresh"] == "true"


def test_atlas_pages_of_other_networks(client, material_network):
    assert "has no attention maps" in client.get("/networks/material/heads/").content.decode()
    assert client.get("/networks/nope/heads/").status_code == 404


def test_an_atlas_cell_opens_the_explorer_on_its_head(client, atlas_network, monkeypatch,
                                                      django_capture_on_commit_callbacks):
    monkeypatch.setattr("workers.dispatch.send_task", lambda *a, **k: None)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/networks/{atlas_network.name}/heads/explore/", {"head": "1.2"})
    assert response.status_code == 302 and response["Location"].endswith("?layer=1&head=2&showme=1")
    page = client.get(response["Location"]).content.decode()
    data = json.loads(page.split('id="page-data" type="application/json">')[1].split("</script>")[0])
    assert data["network"]["head_labels"] == HeadAtlas.objects.get(network=atlas_network).data["labels"]
    assert data["urls"]["heads_show"] == f"/networks/{atlas_network.name}/heads/show/"


@pytest.mark.parametrize("head, message", [("", "as numbers"), ("1", "as numbers"), ("x.y", "as numbers"),
                                           ("2.0", "layers 0 to 1 and heads 0 to 3"), ("0.-1", "heads 0 to 3")])
def test_explore_refuses_a_bad_head(client, atlas_network, head, message):
    response = client.post(f"/networks/{atlas_network.name}/heads/explore/", {"head": head})
    assert response.status_code == 400 and message in response.content.decode()


def test_explore_refuses_a_network_without_attention_and_a_get(client, material_network, atlas_network):
    assert client.post("/networks/material/heads/explore/", {"head": "0.0"}).status_code == 400
    assert client.get(f"/networks/{atlas_network.name}/heads/explore/").status_code == 405


def test_show_me_answers_the_label_query_and_squares(client, atlas_network):
    row = HeadAtlas.objects.get(network=atlas_network)
    row.data["labels"][0][1] = "knight-moves"
    row.save()
    fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 3 3"
    body = client.get(f"/networks/{atlas_network.name}/heads/show/", {"layer": 0, "head": 1, "fen": fen}).json()
    assert body["label"] == "knight-moves" and len(body["squares"]) == 8
    assert body["query"] in (chess.D5, chess.E5, chess.D4, chess.E4, chess.C6)


@pytest.mark.parametrize("params, status, message", [
    ({"layer": 0, "head": 0, "fen": "not a fen"}, 400, ""),
    ({"layer": 9, "head": 0, "fen": chess.STARTING_FEN}, 400, "layers 0 to 1"),
    ({"head": 0, "fen": chess.STARTING_FEN}, 400, "as numbers"),
])
def test_show_me_refuses_bad_input(client, atlas_network, params, status, message):
    response = client.get(f"/networks/{atlas_network.name}/heads/show/", params)
    assert response.status_code == status and message in response.json()["error"]


def test_show_me_names_a_head_that_follows_no_pattern_from_0(client, atlas_network):
    row = HeadAtlas.objects.get(network=atlas_network)
    row.data["labels"][1][2] = "unlabelled"
    row.save()
    body = client.get(f"/networks/{atlas_network.name}/heads/show/", {"layer": 1, "head": 2, "fen": chess.STARTING_FEN}).json()
    assert body["query"] is None and body["note"] == "L1 H2 follows none of the patterns"


def test_show_me_before_the_atlas_is_ready(client, tiny_network):
    response = client.get(f"/networks/{tiny_network.name}/heads/show/", {"layer": 0, "head": 0, "fen": chess.STARTING_FEN})
    assert response.status_code == 409 and "not ready" in response.json()["error"]


def test_the_atlas_page_button_queues_an_atlas(client, tiny_network, material_network, monkeypatch,
                                              django_capture_on_commit_callbacks):
    sent = []
    monkeypatch.setattr("workers.dispatch.send_task", lambda name, args, queue: sent.append(args[0]))
    assert 'id="atlas-compute"' in client.get(f"/networks/{tiny_network.name}/heads/").content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/networks/{tiny_network.name}/heads/compute/")
    assert response.status_code == 302 and sent == [tiny_network.pk]
    page = client.get(response["Location"]).content.decode()
    assert "queued" in page and 'id="atlas-compute"' not in page
    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/networks/{tiny_network.name}/heads/compute/")
    assert sent == [tiny_network.pk]  # once: it is on its way
    refused = client.post("/networks/material/heads/compute/")
    assert refused.status_code == 400 and "no attention maps" in refused.content.decode()
    assert client.get(f"/networks/{tiny_network.name}/heads/compute/").status_code == 405


def test_an_atlas_scored_by_an_older_rule_is_computed_again(client, atlas_network, monkeypatch,
                                                            django_capture_on_commit_callbacks):
    """Version 1 atlases scored graph and ChessBench heads against a 64-square uniform head; the
    page does not show one as current, and serve, the button and a check queue it again."""
    from webapp.networks.atlas import ready_atlas, request_atlas

    row = HeadAtlas.objects.get(network=atlas_network)
    row.data["version"] = 1
    row.save()
    assert ready_atlas(atlas_network) is None
    page = client.get(f"/networks/{atlas_network.name}/heads/").content.decode()
    assert "older rule" in page and 'id="atlas-compute"' in page and 'class="atlas-cell' not in page
    sent = []
    monkeypatch.setattr("workers.dispatch.send_task", lambda name, args, queue: sent.append(args[0]))
    with django_capture_on_commit_callbacks(execute=True):
        assert request_atlas(atlas_network).status == HeadAtlas.Status.QUEUED
    assert sent == [atlas_network.pk]
    assert tasks.compute_head_atlas.run(atlas_network.pk) == HeadAtlas.Status.READY
    assert ready_atlas(atlas_network) is not None
    with django_capture_on_commit_callbacks(execute=True):
        request_atlas(atlas_network)  # current again: nothing queued
    assert sent == [atlas_network.pk]


def test_show_me_gives_every_query_squares_pattern(client, atlas_network):
    """The explorer picks the query where the head shows its label most: it needs each query's pattern."""
    from analysis.heads import show_me

    row = HeadAtlas.objects.get(network=atlas_network)
    row.data["labels"][0][1] = "knight-moves"
    row.save()
    fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 3 3"
    body = client.get(f"/networks/{atlas_network.name}/heads/show/", {"layer": 0, "head": 1, "fen": fen}).json()
    assert len(body["patterns"]) == 64 and body["patterns"][body["query"]] == body["squares"]
    board = chess.Board(fen)
    assert body["patterns"][chess.A1] == sorted(chess.SquareSet(chess.BB_KNIGHT_ATTACKS[chess.A1]))
    assert show_me(board, "knight-moves").squares == body["squares"]


def test_the_explorer_shows_me_the_query_where_the_head_shows_its_label_most():
    """A head that looks at g6's knight moves from g6 only: "show me" answers g6, not the centre."""
    import shutil
    import subprocess

    from tests.conftest import ROOT, _missing

    node = shutil.which("node") or _missing("node is not installed (apt-get install nodejs)")
    patterns = [sorted(chess.SquareSet(chess.BB_KNIGHT_ATTACKS[q])) for q in range(64)]
    script = (f"import {{ strongestQuery }} from '{(ROOT / 'static/sightline/lens/explorer.js').as_uri()}';"
              "const heads = 2, maps = new Float32Array(heads * 4096);"
              "for (let q = 0; q < 64; q++) for (let k = 0; k < 64; k++) maps[4096 + q * 64 + k] = 1 / 64;"
              f"const patterns = {json.dumps(patterns)}, g6 = {chess.G6};"
              "for (let k = 0; k < 64; k++) maps[4096 + g6 * 64 + k] = patterns[g6].includes(k) ? 1 / patterns[g6].length : 0;"
              "console.log(JSON.stringify([strongestQuery(maps, 1, patterns), strongestQuery(maps, 0, patterns)]));")
    out = subprocess.run([node, "--input-type=module", "-e", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    best, none = json.loads(out.stdout)
    assert best["query"] == chess.G6 and abs(best["share"] - 1) < 1e-6 and none is None  # head 0: no pick


def test_atlas_clicks_reuse_one_explorer_analysis(client, atlas_network, monkeypatch, django_capture_on_commit_callbacks):
    """Each click on a head opens the same analysis of the explorer's position (this browser's), with that head."""
    from django.test import Client

    from webapp.jobs.models import AnalysisJob

    sent = []
    monkeypatch.setattr("workers.dispatch.send_task", lambda *a, **k: sent.append(a))
    with django_capture_on_commit_callbacks(execute=True):
        first = client.post(f"/networks/{atlas_network.name}/heads/explore/", {"head": "0.1"})
        second = client.post(f"/networks/{atlas_network.name}/heads/explore/", {"head": "1.3"})
    assert first["Location"].split("?")[0] == second["Location"].split("?")[0]
    assert second["Location"].endswith("?layer=1&head=3&showme=1")
    assert AnalysisJob.objects.count() == 1 and len(sent) == 1
    AnalysisJob.objects.update(status=AnalysisJob.Status.FAILED)  # a failed one is not reused
    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/networks/{atlas_network.name}/heads/explore/", {"head": "0.1"})
        Client().post(f"/networks/{atlas_network.name}/heads/explore/", {"head": "0.1"})  # another browser: its own
    assert AnalysisJob.objects.count() == 3
