"""PGN and FEN parsing: the tree, and every rejection's message."""

import pytest

from tests.web.conftest import OPERA_GAME, SHORT_GAME
from webapp.jobs.gameinput import (MAX_PLIES, GameInputError, MultipleGames, board_for, list_games,
                                       parse_fen, parse_pgn)


def test_tree_main_line_first_then_variations():
    tree = parse_pgn(SHORT_GAME)
    sans = [(n.san, n.mainline) for n in tree.nodes]
    assert sans[:7] == [(None, True), ("e4", True), ("e5", True), ("Nf3", True), ("Nc6", True), ("Bb5", True),
                        ("a6", True)]
    assert sans[7:] == [("d6", False), ("d4", False)]
    assert tree.nodes[2].children == [3]  # e5 -> Nf3
    assert tree.nodes[3].children == [4, 7]  # Nf3 -> Nc6 (main), d6 (variation)
    assert tree.mainline_plies == 6


def test_board_for_replays_history():
    tree = parse_pgn(OPERA_GAME)
    nodes = tree.as_dicts()
    last = [n for n in nodes if n["main"]][-1]
    board = board_for(nodes, last["id"])
    assert board.is_checkmate()
    assert len(board.move_stack) == 33


@pytest.mark.parametrize("text, fragment", [
    ("", "empty"),
    ("   \n ", "empty"),
    ("hello world, this is not a game", "not PGN"),
    ("1. e4 e5 2. Ke3", "Ply 3 (2. Ke3): illegal move"),
    ('[Event "x"]\n\n1. e4 e5 2. Nf3 Nf6 3. Nxe5 Qxe5 *', "Ply 6 (3... Qxe5): illegal move"),
    ('[Variant "Atomic"]\n\n1. e4 *', "standard chess"),
    ('[Variant "Chess960"]\n[FEN "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9"]\n\n9. g3 *',
     "standard chess"),
    ('[SetUp "1"]\n[FEN "not a fen"]\n\n1. e4 *', "FEN tag is not a valid position"),
])
def test_rejections(text, fragment):
    with pytest.raises(GameInputError) as info:
        parse_pgn(text)
    assert fragment in str(info.value)
    assert not isinstance(info.value, MultipleGames)


def test_several_games_are_listed_then_picked():
    text = OPERA_GAME + "\n" + '[White "A"]\n[Black "B"]\n[Result "0-1"]\n\n1. f3 e5 2. g4 Qh4# 0-1\n'
    with pytest.raises(MultipleGames) as info:
        parse_pgn(text)
    games = info.value.games
    assert [g.white for g in games] == ["Paul Morphy", "A"]
    assert "Paul Morphy - Duke Karl / Count Isouard" in games[0].label
    picked = parse_pgn(text, game_index=1)
    assert [n.san for n in picked.nodes[1:]] == ["f3", "e5", "g4", "Qh4#"]
    with pytest.raises(GameInputError, match="no game number 3"):
        parse_pgn(text, game_index=2)
    assert len(list_games(text)) == 2


def test_too_many_plies():
    moves = " ".join(["Nf3 Nf6 Ng1 Ng8"] * (MAX_PLIES // 4 + 1))
    with pytest.raises(GameInputError, match=r"1004 plies .* limit is 1000"):
        parse_pgn(f'[Event "long"]\n\n{moves} *')


def test_too_large():
    with pytest.raises(GameInputError, match="larger than 1 MB"):
        parse_pgn('[Event "x"]\n{' + "a" * 1_000_001 + "} *")


def test_fen_input_and_errors():
    tree = parse_fen("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1")
    assert len(tree.nodes) == 1 and tree.start_fen.startswith("rnbqkbnr/pppppppp/8/8/4P3")
    with pytest.raises(GameInputError, match="Invalid FEN"):
        parse_fen("rnbqkbnr/pppppppp/8/8 w KQkq - 0 1")
    with pytest.raises(GameInputError, match="Illegal position in FEN .*no black king"):
        parse_fen("8/8/8/8/8/8/8/4K3 w - - 0 1")
    # A FEN pasted into the PGN box is recognised as a FEN.
    assert len(parse_pgn("8/8/8/8/8/5k2/8/4K1Q1 w - - 0 1").nodes) == 1


def test_extra_blank_lines_after_the_tags_do_not_split_the_game():
    # Some sites export two or more blank lines between the tag pairs and the moves.
    text = '[White "A"]\r\n[Black "B"]\r\n\r\n\r\n\r\n1. f3 e5 2. g4 Qh4# 0-1\r\n\r\n\r\n[White "C"]\n\n\n1. e4 *\n'
    with pytest.raises(MultipleGames) as info:
        parse_pgn(text)
    assert [g.white for g in info.value.games] == ["A", "C"]
    assert [n.san for n in parse_pgn(text, game_index=0).nodes[1:]] == ["f3", "e5", "g4", "Qh4#"]
    assert [n.san for n in parse_pgn(text, game_index=1).nodes[1:]] == ["e4"]
    # Line numbers in errors still count the user's lines.
    with pytest.raises(GameInputError, match="Line 5: 'Nf9'"):
        parse_pgn('[Event "x"]\n\n\n\n1. e4 e5 Nf9 *')
    # A game with tags and no moves before another game stays a game of its own.
    empty_first = '[Event "a"]\n\n\n[Event "b"]\n\n1. e4 *'
    assert [g.event for g in list_games(empty_first)] == ["a", "b"]
    with pytest.raises(MultipleGames):
        parse_pgn(empty_first)


def test_finished_positions_carry_the_rules_result():
    main = [n for n in parse_pgn(OPERA_GAME).as_dicts() if n["main"]]
    assert all(n["outcome"] is None for n in main[:-1])
    assert main[-1]["san"] == "Rd8#" and main[-1]["outcome"] == {"result": "1-0", "termination": "checkmate"}
    stalemate = parse_fen("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1").nodes[0]
    assert stalemate.as_dict()["outcome"] == {"result": "1/2-1/2", "termination": "stalemate"}
    bare_kings = parse_fen("8/8/4k3/8/8/3K4/8/8 w - - 0 1").nodes[0]
    assert bare_kings.outcome["termination"] == "insufficient material"


def test_tags_on_one_line_are_read():
    text = '[Event "Club] [Cup"] [Site "Here"] [White "Ann"] [Black "B"]\n[Result "*"]\n\n1. e4 e5 *\n'
    tree = parse_pgn(text)
    assert tree.headers["Event"] == "Club] [Cup" and tree.headers["Site"] == "Here"
    assert tree.headers["White"] == "Ann" and tree.headers["Black"] == "B"
    assert [n.san for n in tree.nodes[1:]] == ["e4", "e5"]


def test_tags_on_one_line_with_windows_line_ends():  # as a browser posts a textarea
    tree = parse_pgn('[Event "Club"] [White "Ann"] [Black "Bob"]\r\n\r\n1. e4 e5 *\r\n')
    assert (tree.headers["Event"], tree.headers["White"], tree.headers["Black"]) == ("Club", "Ann", "Bob")


def test_error_lines_count_the_lines_as_written_when_tags_share_a_line():
    with pytest.raises(GameInputError, match="^Line 4: 'nf3'"):
        parse_pgn('[Event "x"] [Site "y"] [Round "1"]\n\n1. e4 e5\n2. nf3 *')


def test_comments_and_nags_are_kept_with_the_nodes():
    tree = parse_pgn('{Opening remark} 1. e4! {Best by test} $1 e5 ( {Instead} 1... c5 $5 {Sicilian} ) 2. Nf3?? *')
    nodes = {n["san"]: n for n in tree.as_dicts()}
    assert nodes[None]["comment"] == "Opening remark"
    assert nodes["e4"]["comment"] == "Best by test" and nodes["e4"]["nags"] == [1]
    assert nodes["c5"]["starting_comment"] == "Instead" and nodes["c5"]["comment"] == "Sicilian"
    assert nodes["c5"]["nags"] == [5] and nodes["Nf3"]["nags"] == [4]
    assert "comment" not in nodes["e5"] and "nags" not in nodes["e5"]
