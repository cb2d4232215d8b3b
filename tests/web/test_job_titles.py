"""What the recent list says of a set-up position (issue 37): a FEN job's title tells it apart from
other FEN jobs (move, side to move, material), and one position is "1 position", not "1 positions"."""

from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_broker(monkeypatch, material_network):
    monkeypatch.setattr("workers.dispatch.send_task", lambda *a, **k: None)


def test_two_fen_jobs_are_told_apart_and_one_position_is_singular():
    visitor = Client()
    for fen in ("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 3 3",
                "6k1/5ppp/8/8/8/8/8/R5K1 b - - 0 40"):
        assert visitor.post("/", {"fen": fen, "network": "material", "search": "value"}).status_code == 302
    listed = visitor.get("/recent/").content.decode()
    assert "Position, move 3, Black to move, material even" in listed
    assert "Position, move 40, Black to move, White up 2" in listed
    assert listed.count("· 1 position ·") == 2 and "1 positions" not in listed


def test_a_one_position_budget_refusal_says_one_position():
    response = Client().post("/", {"fen": "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", "network": "material",
                                   "search": "alphabeta", "budget": "6"})
    page = response.content.decode()
    assert response.status_code == 400 and "(1 position x 2,500,000)" in page and "1 positions" not in page
