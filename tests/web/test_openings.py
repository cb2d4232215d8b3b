"""The opening's name on the game page (issue 37): the longest line of lichess's opening tables that
the game's main line starts with; none for a set-up position or where the tables are absent."""

from __future__ import annotations

import pytest

from tests.conftest import require_shared_data

pytestmark = pytest.mark.django_db
IMMORTAL = "1. e4 e5 2. f4 exf4 3. Bc4 Qh4+ 4. Kf1 b5 5. Bxb5 Nf6 6. Nf3 Qh6 7. d3 Nh5 *"


def _page(client, material_network, pgn=None, fen=None) -> str:
    from webapp.jobs.gameinput import parse_fen, parse_pgn
    from webapp.jobs.jobs import create_job

    job = create_job(parse_pgn(pgn) if pgn else parse_fen(fen), material_network, "value", 1, dispatch=False)
    return client.get(f"/jobs/{job.id}/").content.decode()


def _opening(page: str) -> str | None:
    return page.split('id="opening"')[1].split(">", 1)[1].split("</p>")[0] if 'id="opening"' in page else None


def test_the_game_page_names_the_deepest_opening_of_lichesss_tables(client, material_network, settings):
    settings.SIGHTLINE_OPENINGS_DIR = require_shared_data("openings")
    assert _opening(_page(client, material_network, IMMORTAL)) == \
        "C33 King&#x27;s Gambit Accepted: Bishop&#x27;s Gambit, Bryan Countergambit"
    assert _opening(_page(client, material_network, fen="6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1")) is None


def test_the_longest_matching_line_wins_and_no_tables_name_nothing(client, material_network, settings, tmp_path):
    (tmp_path / "a.tsv").write_text("eco\tname\tpgn\nC20\tKing's Pawn Game\t1. e4 e5\n"
                                    "C40\tKing's Knight Opening\t1. e4 e5 2. Nf3\n"
                                    "C44\tKing's Pawn Game: Tayler Opening\t1. e4 e5 2. Nf3 Nc6 3. Be2\n")
    settings.SIGHTLINE_OPENINGS_DIR = tmp_path
    assert _opening(_page(client, material_network, "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 *")) == \
        "C40 King&#x27;s Knight Opening"
    assert _opening(_page(client, material_network, "1. d4 d5 *")) is None
    settings.SIGHTLINE_OPENINGS_DIR = tmp_path / "absent"
    assert _opening(_page(client, material_network, "1. e4 e5 *")) is None
