"""Concept probes in the site (issue 39): the concept atlas through its task on a tiny untrained
network (fast settings, a seeded pool of random-game positions) and its stored shape; the API's
paths with each refusal; the Concepts panel's scores equal to the library's probe applied directly."""

from __future__ import annotations

import dataclasses
import random

import chess
import numpy as np
import pytest

from webapp.networks.models import Network
from webapp.ondemand.limits import PendingLimit
from webapp.probes import api, tasks
from webapp.probes.atlas import atlas_settings, request_atlas
from webapp.probes.models import ConceptAtlas, ConceptScores

LIST = ("piece_on_square", "material", "mobility", "any_opp_en_prise", "mate_in_one")


def random_fens(n: int, seed: int = 0) -> list[str]:
    """Positions of seeded random games (each with a legal move)."""
    rng, out = random.Random(seed), []
    while len(out) < n:
        board = chess.Board()
        for _ in range(rng.randrange(4, 60)):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
            if any(board.legal_moves):
                out.append(board.fen())
    return out[:n]


@pytest.fixture
def small(settings):
    settings.SIGHTLINE_CONCEPT_POSITIONS = 60
    settings.SIGHTLINE_CONCEPT_COMPONENTS = 16
    settings.SIGHTLINE_CONCEPT_BOOTSTRAP = 20
    settings.SIGHTLINE_CONCEPT_LIST = LIST
    settings.SIGHTLINE_CONCEPT_FENS = random_fens(600)
    return settings


@pytest.fixture
def sent(monkeypatch):
    out = []
    monkeypatch.setattr("workers.dispatch.send_task", lambda name, args, queue, task_id=None: out.append(
        (name, args, queue)))
    return out


@pytest.fixture
def atlas_network(tiny_network, small, sent, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        request_atlas(tiny_network)
    assert sent[-1] == ("sightline.compute_concept_atlas", [tiny_network.pk], "background")
    assert tasks.compute_concept_atlas.run(tiny_network.pk) == ConceptAtlas.Status.READY
    return tiny_network


def test_the_atlas_task_stores_every_concept_at_every_point(atlas_network):
    row = ConceptAtlas.objects.get(network=atlas_network)
    points, concepts = row.data["points"], row.data["concepts"]
    assert row.done == row.total > 0 and row.data["version"] >= 1 and len(points) > 1
    assert set(concepts) == set(LIST)
    for name in LIST:
        entry = concepts[name]
        if "why" in entry and "trained" not in entry:  # a concept the pool cannot balance says why
            assert "too few" in entry["why"] and name not in row.data["probes"]
            continue
        assert len(entry["trained"]) == len(entry["untrained"]) == len(row.data["probes"][name]) == len(points)
        assert entry["best_point"] in points and {"score", "low", "high"} <= entry["selectivity"]["untrained"].keys()
        if entry["kind"] == "binary":
            assert entry["balance"] == 0.5  # a balanced test set
    assert concepts["piece_on_square"]["trained"][0]["score"] >= 0.99  # in the input: any net reads it
    # the redelivered message finds it done
    assert tasks.compute_concept_atlas.run(atlas_network.pk) == ConceptAtlas.Status.READY


def test_the_atlas_api_and_page(client, atlas_network):
    body = client.get(f"/api/networks/{atlas_network.name}/concepts/").json()
    assert body["points"] and "probes" not in body and body["concepts"]["material"]["metric"] == "r2"
    page = client.get(f"/networks/{atlas_network.name}/concepts/").content.decode()
    assert 'id="concepts-table"' in page and page.count("<tr data-concept=") == len(LIST)


def test_the_atlas_api_refusals(client, tiny_network, material_network, sent, small, django_capture_on_commit_callbacks):
    url = f"/api/networks/{tiny_network.name}/concepts/"
    assert client.get("/api/networks/nope/concepts/").status_code == 404
    assert client.get("/api/networks/material/concepts/").status_code == 422
    assert client.post("/api/networks/material/concepts/").status_code == 422
    assert client.get(url).status_code == 409 and not ConceptAtlas.objects.exists()
    with django_capture_on_commit_callbacks(execute=True):
        answer = client.post(url)
    assert answer.status_code == 202 and answer.json()["status"] == "queued" and len(sent) == 1
    assert client.get(url).status_code == 202
    Network.objects.filter(pk=tiny_network.pk).update(active=False)
    ConceptAtlas.objects.all().delete()
    assert client.post(url).status_code == 410 and not ConceptAtlas.objects.exists()


def test_position_scores_refusals(client, tiny_network, material_network, small):
    url = f"/api/networks/{tiny_network.name}/concepts/position/"
    assert client.get(url).status_code == 400
    assert client.get(url, {"fen": "x" * 101}).status_code == 400
    assert client.post(url, {"fen": " "}, content_type="application/json").status_code == 400
    assert client.post(url, ["x"], content_type="application/json").status_code == 400
    assert client.get("/api/networks/nope/concepts/position/", {"fen": chess.STARTING_FEN}).status_code == 404
    assert client.get("/api/networks/material/concepts/position/", {"fen": chess.STARTING_FEN}).status_code == 422
    assert client.get(url, {"fen": "not a fen"}).status_code == 422
    assert client.get(url, {"fen": "7k/5QQ1/8/8/8/8/8/K7 b - - 0 1"}).status_code == 422  # mated: no move
    missing = client.get(url, {"fen": chess.STARTING_FEN})
    assert missing.status_code == 409 and missing.json()["atlas"] == "missing"
    assert not ConceptScores.objects.exists()


def test_position_scores_withdrawn_and_over_the_limit(client, atlas_network, sent, monkeypatch):
    url = f"/api/networks/{atlas_network.name}/concepts/position/"
    tight = dataclasses.replace(api.SCORES, limit=PendingLimit("concept scores", "position", 1.0, 1.5, 10.0, 600))
    monkeypatch.setattr(api, "SCORES", tight)
    assert client.get(url, {"fen": chess.STARTING_FEN}).status_code == 202
    over = client.post(url, {"fen": "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"},
                       content_type="application/json")
    assert over.status_code == 429 and over["Retry-After"]
    assert ConceptScores.objects.count() == 1
    Network.objects.filter(pk=atlas_network.pk).update(active=False)
    assert client.get(url, {"fen": "8/8/8/8/8/5k2/8/5K1R b - - 0 1"}).status_code == 410


def test_panel_scores_equal_the_library_probe(client, atlas_network, sent, small):
    """The stored linear maps give what the library's fitted probes (with their PCA) give directly."""
    from analysis.checkpoint import load_evaluator
    from analysis.lens import lens_for
    from analysis.probes.activations import collect, untrained_copy
    from analysis.probes.fit import FitConfig, predict
    from analysis.probes.run import RunConfig, features, probe_network
    from webapp.probes.concepts import balanced_data

    fen = "r1bqkbnr/pppp1ppp/2n5/4p3/3PP3/5N2/PPP2PPP/RNBQKB1R b KQkq - 0 3"  # Black to move
    url = f"/api/networks/{atlas_network.name}/concepts/position/"
    assert client.get(url, {"fen": fen}).status_code == 202
    entry = ConceptScores.objects.get()
    assert sent[-1][0] == "sightline.compute_concept_scores" and sent[-1][2] == "ondemand"
    assert tasks.compute_concept_scores.run(*sent[-1][1]) == ConceptScores.Status.READY
    answer = client.get(url, {"fen": fen}).json()
    assert ConceptScores.objects.get().pk == entry.pk  # answered from the cache

    config = atlas_settings()
    evaluator = load_evaluator(atlas_network.path, "cpu", name=atlas_network.name)
    adapter = lens_for(evaluator.model, evaluator.encoding)
    untrained = lens_for(untrained_copy(evaluator.model, config.seed), evaluator.encoding)
    data, _ = balanced_data(config.concepts, config)
    run = RunConfig(components=config.components, fit=FitConfig(bootstrap=config.bootstrap, seed=config.seed))
    _, trained, acts = probe_network(adapter, untrained, data, run, config.seed, keep=True)
    one = collect(adapter, [chess.Board(fen)], batch=1)
    rows = {c["name"]: c for c in answer["concepts"]}
    compared = 0
    for name, probes in trained.items():
        kind = data.sets[name].concept.kind
        for k, probe in enumerate(probes):
            if kind == "square":
                logits = predict(probe.model, one.point(k)[0])
                got = np.array([np.nan if v is None else v for v in rows[name]["squares"][k]], dtype=float)
                want = 1 / (1 + np.exp(-logits))
                mask = np.isfinite(got)
                assert mask.any() and np.allclose(got[mask], want[mask], atol=2e-3)
                continue
            pca = features(acts.point(k), run, config.seed)[1]
            flat = one.point(k).reshape(1, -1)
            value = predict(probe.model, flat if pca is None else pca.transform(flat))[0]
            want = float(value if kind == "regression" else 1 / (1 + np.exp(-value)))
            assert rows[name]["strip"][k] == pytest.approx(want, abs=2e-3 + 1e-3 * abs(want))
            compared += 1
    assert compared >= 2 * len(acts.points)


def test_the_page_lines_up_other_networks_atlases(client, atlas_network):
    """A second network's ready atlas (a copy of the first under another network: the lining-up is
    what is tested) appears as a column, with the plain reading of the knowing side."""
    row = ConceptAtlas.objects.get(network=atlas_network)
    other = Network.objects.get(pk=atlas_network.pk)
    other.pk, other.name, other.checksum, other.is_default = None, "cf-tiny-copy", "0" * 64, False
    other.save()
    ConceptAtlas.objects.create(network=other, status=ConceptAtlas.Status.READY, data=row.data)
    page = client.get(f"/networks/{atlas_network.name}/concepts/", {"compare": "cf-tiny-copy"}).content.decode()
    assert 'id="concepts-compare"' in page and "<th>cf-tiny-copy</th>" in page
    assert 'id="concepts-reading"' in page and "knowing is flat" in page  # the same atlas twice: every interval overlaps
