"""A library's message made a sentence for the user (``webapp.ondemand.refused.sentence``): a capital
and a full stop, but a move or a square that opens it is kept as written (issue 37: "G5f7 is not a
legal move")."""

from __future__ import annotations

import pytest

from webapp.ondemand.refused import sentence


@pytest.mark.parametrize("message, shown", [
    ("g5f7 is not a legal move", "g5f7 is not a legal move."),
    ("e7e8q is not a legal move here", "e7e8q is not a legal move here."),
    ("e4 is occupied", "e4 is occupied."),
    ("exd5 is not legal", "exd5 is not legal."),
    ("layer must be from 0 to 5", "Layer must be from 0 to 5."),
    ("bad move list.", "Bad move list."),
    ("a network without a lens", "A network without a lens."),
    ("", "."),
])
def test_a_sentence_capitalises_words_but_not_moves(message, shown):
    assert sentence(message) == shown
