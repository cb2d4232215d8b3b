"""Turn user input (PGN text or a FEN) into a game tree, or a clear error.

Pure python-chess, no Django: the form, the management command and the tests
all share it. Every rejection is a ``GameInputError`` whose message names what
is wrong (for an illegal move: the ply and the move).
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field

import chess
import chess.pgn

from analysis.positions import board_from_fen, check_start_position

MAX_INPUT_BYTES = 1_000_000
MAX_PLIES = 1_000
# Tags are shown on pages and sent with every snapshot: real PGN writers stay far below these.
MAX_TAGS = 100
MAX_TAG_CHARS = 1_000
# Standard chess spelled the ways PGN writers spell it.
STANDARD_VARIANTS = {"", "standard", "chess", "normal", "from position", "fromposition"}
_TAG_RE = re.compile(r'^\s*\[\s*[A-Za-z0-9_]+\s+"', re.MULTILINE)
# Everything python-chess's movetext reader understands, plus what it may skip harmlessly
# (check signs, move numbers, symbolic evaluations). python-chess silently drops any other
# character, so "nf3" would be read as the pawn move f3 and "♘f3" likewise: the scan below
# turns such text into an error that names it instead.
_MOVETEXT_TOKEN = re.compile(r"""
      \s+
    | \{[^}]*\}?                                # comment; may span lines, unterminated runs to the end
    | ;[^\n]*                                   # rest-of-line comment
    | ^%[^\n]*                                  # escape line
    | (?:1-0|0-1|1/2-1/2|\*)(?![\w-])           # result
    | (?:[NBKRQ]?[a-h]?[1-8]?[-x]?[a-h][1-8](?:=?[nbrqkNBRQK])?|[PNBRQK]?@[a-h][1-8]|O-O(?:-O)?|0-0(?:-0)?|--|Z0|0000|@@@@)
      (?:\+\+|[+#])?                            # a move, with its check or mate sign
    | \d+(?:\s*\.+|\s*…)?                        # move number
    | \$\d+                                     # NAG
    | [()]
    | [?!]{1,2}                                 # move assessment
    | \+/-|-/\+|\+/=|=/\+|\+-|-\+|\+=|=\+|[=∞±∓⩲⩱‼⁇⁉⁈□]  # symbolic evaluations some writers use
""", re.VERBOSE | re.MULTILINE)


# A blank line after the tag pairs starts the moves; python-chess reads a second blank line
# as the end of an empty game. PGN from some sites has several, so the extra ones become
# "%" escape lines, which PGN readers skip: the line numbers in error messages stay true.
# Blank lines before another tag block (a game with no moves) are left as they are.
_EXTRA_BLANKS_AFTER_TAGS = re.compile(r"(^[ \t]*\[[^\n]*\][ \t]*\r?\n[ \t]*\r?\n)((?:[ \t]*\r?\n)+)(?![ \t]*\[)", re.MULTILINE)


def _mark_extra_blank_lines(text: str) -> str:
    return _EXTRA_BLANKS_AFTER_TAGS.sub(lambda m: m.group(1) + "%\n" * m.group(2).count("\n"), text)


# Several tag pairs on one line (``[Event "x"] [Site "y"]``): PGN readers take one tag per line,
# and python-chess read such a line as one Event tag holding the rest. Each pair gets its own line.
_TAG_PAIR = r'\[\s*[A-Za-z0-9][A-Za-z0-9_+#=:-]*\s+"(?:[^"\\\n]|\\.)*"\s*\]'
_TAG_LINE = re.compile(rf"^[ \t]*(?:{_TAG_PAIR}[ \t]*){{2,}}(?=\r?$)", re.MULTILINE)
_ONE_TAG = re.compile(_TAG_PAIR)


def _split_tag_lines(text: str) -> tuple[str, list[int]]:
    """``text`` with one tag pair per line, and the offsets of the line breaks added (for line numbers)."""
    out, added, pos = [], [], 0
    for match in _TAG_LINE.finditer(text):
        out.append(text[pos:match.start()])
        length = sum(map(len, out))
        for i, tag in enumerate(_ONE_TAG.findall(match.group(0))):
            if i:
                added.append(length)
                out.append("\n")
                length += 1
            out.append(tag)
            length += len(tag)
        pos = match.end()
    out.append(text[pos:])
    return "".join(out), added


class GameInputError(ValueError):
    """Input that cannot be analysed; ``str(error)`` is shown to the user."""


@dataclass(frozen=True)
class GameSummary:
    """One game of a multi-game PGN, as listed for the user to pick from."""

    index: int
    white: str
    black: str
    event: str
    date: str
    result: str

    @property
    def label(self) -> str:
        parts = [f"{self.white} - {self.black}", self.result]
        if self.event and self.event != "?":
            parts.append(self.event)
        if self.date and not self.date.startswith("?"):
            parts.append(self.date)
        return ", ".join(p for p in parts if p)


class MultipleGames(GameInputError):
    """The PGN holds several games; the user must pick one by index."""

    def __init__(self, games: list[GameSummary]):
        super().__init__(f"This PGN holds {len(games)} games; pick the one to analyse.")
        self.games = games


@dataclass
class Node:
    """One position of the tree: the root (no move) or the position after ``san``."""

    id: int
    parent: int | None
    ply: int
    san: str | None
    uci: str | None
    fen: str
    children: list[int] = field(default_factory=list)
    mainline: bool = True
    # Set where the game is over on the board: {"result": "1-0", "termination": "checkmate"}.
    # The page shows the exact result there; a network's value of such a position is noise.
    outcome: dict | None = None
    # The PGN's own annotations, kept so the page shows them and the export writes them back:
    # the comment after the move (or the game's opening comment at the root), the comment before
    # a variation's first move, and the move's NAGs ($1 "!", $2 "?", ...).
    comment: str = ""
    starting_comment: str = ""
    nags: list[int] = field(default_factory=list)

    def as_dict(self) -> dict:
        out = {"id": self.id, "parent": self.parent, "ply": self.ply, "san": self.san, "uci": self.uci,
               "fen": self.fen, "children": list(self.children), "main": self.mainline, "outcome": self.outcome}
        for name in ("comment", "starting_comment", "nags"):  # only where the PGN has them: nodes travel in every snapshot
            if getattr(self, name):
                out[name] = getattr(self, name)
        return out


def board_outcome(board: chess.Board) -> dict | None:
    """The rules' verdict on ``board`` alone (no claims, no repetition: a FEN has no history)."""
    outcome = board.outcome(claim_draw=False)
    if outcome is None:
        return None
    return {"result": outcome.result(), "termination": outcome.termination.name.lower().replace("_", " ")}


@dataclass
class GameTree:
    """A game as analysed: its headers and every position, main line first."""

    headers: dict[str, str]
    start_fen: str
    nodes: list[Node]
    pgn: str = ""

    @property
    def mainline_plies(self) -> int:
        return sum(1 for n in self.nodes if n.mainline) - 1

    def as_dicts(self) -> list[dict]:
        return [n.as_dict() for n in self.nodes]


def board_for(nodes: list[dict], node_id: int) -> chess.Board:
    """The board at ``node_id`` of a job's nodes (``GameTree.as_dicts``) with its full move stack
    (encodings need the history): the node's line replayed from the root."""
    line = []
    current: int | None = node_id
    while current is not None:
        line.append(nodes[current])
        current = nodes[current]["parent"]
    board = chess.Board(line.pop()["fen"])
    for node in reversed(line):
        board.push(chess.Move.from_uci(node["uci"]))
    return board


def node_boards(nodes: list[dict]) -> list[chess.Board]:
    """``board_for`` of every node at once: a parent comes before its children, so each board is
    its parent's, copied with its stack, and the node's move."""
    boards: list[chess.Board] = []
    for node in nodes:
        if node["parent"] is None:
            boards.append(chess.Board(node["fen"]))
            continue
        board = boards[node["parent"]].copy(stack=True)
        board.push(chess.Move.from_uci(node["uci"]))
        boards.append(board)
    return boards


class _IllegalMove(GameInputError):
    def __init__(self, message: str, san: str):
        super().__init__(message)
        self.san = san


class _StrictBuilder(chess.pgn.GameBuilder):
    """Stops at the first bad move and says which ply and move it was."""

    def parse_san(self, board: chess.Board, san: str) -> chess.Move:
        number = board.fullmove_number
        dots = "." if board.turn == chess.WHITE else "..."
        try:
            move = super().parse_san(board, san)
        except ValueError as exc:
            kind = "ambiguous" if isinstance(exc, chess.AmbiguousMoveError) else "illegal"
            raise _IllegalMove(
                f"Ply {board.ply() + 1} ({number}{dots} {san}): {kind} move in this position "
                f"({board.fen()}).", san,
            ) from exc
        if not move:
            # A null move passes the turn; the networks never saw such positions (and after
            # one played in check the side to move could take the king).
            raise _IllegalMove(f"Ply {board.ply() + 1} ({number}{dots} {san}): a null move; only real moves "
                               f"can be analysed.", san)
        return move

    def handle_error(self, error: Exception) -> None:
        if isinstance(error, GameInputError):
            raise error
        if isinstance(error, ValueError) and "fen" in str(error).lower():
            raise GameInputError(f"The PGN's FEN tag is not a valid position: {error}.") from error
        raise GameInputError(f"The PGN could not be read: {error}.") from error


# A byte-order mark: Windows editors put it at the start of text they save, and it comes
# along when that text is copied. It is no part of the game.
BOM = "\ufeff"


def parse_fen(text: str) -> GameTree:
    fen = " ".join(text.removeprefix(BOM).split())
    try:
        board = board_from_fen(fen)
    except ValueError as exc:
        message = str(exc)
        raise GameInputError(message[0].upper() + message[1:] + ".") from exc
    root = Node(id=0, parent=None, ply=board.ply(), san=None, uci=None, fen=board.fen(), outcome=board_outcome(board))
    return GameTree(headers={"FEN": board.fen(), "SetUp": "1"}, start_fen=board.fen(), nodes=[root])


def looks_like_fen(text: str) -> bool:
    fields = text.strip().split()
    return 1 <= len(text.strip().splitlines()) <= 1 and 4 <= len(fields) <= 6 and fields[0].count("/") == 7


def list_games(text: str) -> list[GameSummary]:
    """Headers of every game in ``text`` (cheap: moves are skipped, not parsed)."""
    handle = io.StringIO(text)
    games = []
    while True:
        headers = chess.pgn.read_headers(handle)
        if headers is None:
            break
        games.append(GameSummary(
            index=len(games), white=headers.get("White", "?"), black=headers.get("Black", "?"),
            event=headers.get("Event", ""), date=headers.get("Date", ""), result=headers.get("Result", "*"),
        ))
    return games


def parse_pgn(text: str, game_index: int | None = None) -> GameTree:
    """The game at ``game_index`` (required when the text holds several games)."""
    text = text.removeprefix(BOM)
    if len(text.encode("utf-8")) > MAX_INPUT_BYTES:
        raise GameInputError(f"The PGN is larger than {MAX_INPUT_BYTES // 1_000_000} MB.")
    if not text.strip():
        raise GameInputError("The PGN is empty: paste a game, upload a .pgn file or enter a FEN.")
    if "\x00" in text:
        raise GameInputError("This is not PGN: the text contains NUL bytes (a binary file?).")
    if looks_like_fen(text):
        return parse_fen(text)
    text, added = _split_tag_lines(_mark_extra_blank_lines(text))
    games = list_games(text) if _TAG_RE.search(text) else []
    if len(games) > 1 and game_index is None:
        raise MultipleGames(games)
    if game_index is not None and not 0 <= game_index < max(len(games), 1):
        raise GameInputError(f"There is no game number {game_index + 1} in this PGN.")
    handle = io.StringIO(text)
    for _ in range(game_index or 0):
        chess.pgn.skip_game(handle)
    start = handle.tell()
    try:
        game = chess.pgn.read_game(handle, Visitor=_StrictBuilder)
    except _IllegalMove as exc:
        if not _TAG_RE.search(text) and _first_move_failed(str(exc)):
            first = text.split()[0][:40]
            raise GameInputError(f"This is not PGN: no tag pairs and no legal first move (found {first!r}).") from exc
        # Unreadable text before the failing move explains the failure better than the move does.
        failed_at = text.rfind(exc.san, start, handle.tell())
        _check_movetext(text, start, failed_at if failed_at >= 0 else handle.tell(), added)
        raise
    if game is None:
        raise GameInputError("This is not PGN: no game found in the text.")
    end = handle.tell()
    if not game.variations and not _TAG_RE.search(text):
        raise GameInputError("This is not PGN: no tag pairs and no moves found.")
    _check_movetext(text, start, end, added)
    rest = text[end:]
    if len(games) <= 1 and rest.strip():
        line = _line_of(text, end + len(rest) - len(rest.lstrip()), added)
        raise GameInputError(
            f"The text from line {line} on was not read ({' '.join(rest.split())[:40]!r}): in PGN a blank "
            f"line ends the game, so remove blank lines between moves.")
    return _tree_from_game(game, text)


def _line_of(text: str, offset: int, added: list[int]) -> int:
    """The line in the text as the user wrote it (``added``: line breaks that ``_split_tag_lines`` put in)."""
    return text.count("\n", 0, offset) + 1 - sum(1 for at in added if at < offset)


def _check_movetext(text: str, start: int, end: int, added: list[int]) -> None:
    """Reject characters python-chess would skip silently in the game's text[start:end]."""
    pos = start
    # Tag pairs, blank lines and escape/comment lines come before the moves.
    while pos < end:
        newline = text.find("\n", pos, end)
        line_end = end if newline < 0 else newline + 1
        line = text[pos:line_end].strip()
        if line and not line.startswith(("[", "%", ";")):
            break
        pos = line_end
    while pos < end:
        match = _MOVETEXT_TOKEN.match(text, pos, end)
        if match is None or match.end() == pos:
            token = text[pos:end].split(None, 1)[0][:40]
            line = _line_of(text, pos, added)
            if token.startswith("["):
                raise GameInputError(f"Line {line}: a tag pair inside the moves ({token!r}...); "
                                     f"separate games with a blank line.")
            raise GameInputError(f"Line {line}: {token!r} is not a move, move number, comment or result; "
                                 f"write moves in SAN (e4, Nf3, exd5, O-O, e8=Q).")
        pos = match.end()


def _first_move_failed(message: str) -> bool:
    return message.startswith("Ply 1 ")


def _tree_from_game(game: chess.pgn.Game, text: str) -> GameTree:
    headers = dict(game.headers)
    if len(headers) > MAX_TAGS:
        raise GameInputError(f"The game has {len(headers)} tag pairs; the limit is {MAX_TAGS}.")
    for name, value in headers.items():
        if len(value) > MAX_TAG_CHARS:
            raise GameInputError(f"The tag {name[:40]!r} is {len(value):,} characters long; "
                                 f"the limit is {MAX_TAG_CHARS:,}.")
    variant = headers.get("Variant", "").strip().lower()
    if variant not in STANDARD_VARIANTS:
        raise GameInputError(f"Only standard chess can be analysed; this game is {headers['Variant']!r}.")
    board = game.board()
    if board.status() != chess.STATUS_VALID:
        raise GameInputError(f"The PGN's starting position is not a legal chess position ({board.fen()}).")
    try:
        check_start_position(board, "the PGN's FEN tag")
    except ValueError as exc:
        raise GameInputError(f"{str(exc)[0].upper()}{str(exc)[1:]}.") from None
    total = sum(1 for _ in _walk(game)) - 1
    if total > MAX_PLIES:
        raise GameInputError(f"The game has {total} plies (variations included); the limit is {MAX_PLIES}.")
    nodes = [Node(id=0, parent=None, ply=board.ply(), san=None, uci=None, fen=board.fen(),
                  outcome=board_outcome(board), comment=game.comment)]
    pending: list[tuple[chess.pgn.GameNode, int, bool]] = []

    def add_line(start: chess.pgn.GameNode, parent_id: int, mainline: bool) -> None:
        """Follow the first child of ``start`` to the end; queue the alternatives."""
        node, parent = start, parent_id
        while node.variations:
            first, *others = node.variations
            for other in others:
                pending.append((other, parent, False))
            parent = _append(nodes, first, parent, mainline)
            node = first

    add_line(game, 0, True)
    while pending:
        child, parent, _ = pending.pop(0)
        child_id = _append(nodes, child, parent, False)
        add_line(child, child_id, False)
    return GameTree(headers=headers, start_fen=board.fen(), nodes=nodes, pgn=str(game))


def _append(nodes: list[Node], game_node: chess.pgn.ChildNode, parent_id: int, mainline: bool) -> int:
    parent = nodes[parent_id]
    board = chess.Board(parent.fen)
    san = board.san(game_node.move)
    board.push(game_node.move)
    node = Node(id=len(nodes), parent=parent_id, ply=parent.ply + 1, san=san, uci=game_node.move.uci(),
                fen=board.fen(), mainline=mainline, outcome=board_outcome(board), comment=game_node.comment,
                starting_comment=game_node.starting_comment, nags=sorted(game_node.nags))
    nodes.append(node)
    parent.children.append(node.id)
    return node.id


def _walk(node: chess.pgn.GameNode):
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(current.variations)
