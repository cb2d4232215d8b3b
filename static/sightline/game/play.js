// Playing on the game page's board: a piece of the side to move goes where the policy allows
// (drag or two clicks, a promotion asks for its piece); policy, PV and root moves in the panel
// preview where they lead on hover and add that line on a click. The server checks every line
// and the worker analyses it.
import { applyUci, squareIndex, squareName } from "../lib/board.js";
import { whiteToMove } from "../lib/format.js";
import { postHeaders } from "../lib/requests.js";

const PROMOTIONS = [["q", "queen"], ["r", "rook"], ["b", "bishop"], ["n", "knight"]];

export class MovePlayer {
  constructor(game) {
    this.game = game;
    game.board.enableMoves({ canMove: (sq) => this.canMove(sq), targets: (sq) => this.targets(sq),
                             onMove: (from, to) => this.playMove(from, to) });
    this.wireLines(document.getElementById("ply-panel"));
  }

  // Policy moves, PV moves and root moves carry data-line (UCI moves from the current position).
  wireLines(panel) {
    const lineOf = (ev) => ev.target.closest("[data-line]")?.dataset.line.split(" ");
    panel.addEventListener("mouseover", (ev) => { const line = lineOf(ev); if (line) this.preview(line); });
    panel.addEventListener("mouseout", (ev) => { if (lineOf(ev) && !ev.relatedTarget?.closest?.("[data-line]")) this.endPreview(); });
    panel.addEventListener("click", (ev) => { const line = lineOf(ev); if (line) { this.endPreview(); this.addLine(this.game.current, line); } });
  }

  // A piece of the side to move, in a position where the game goes on.
  canMove(sq) {
    const node = this.game.nodes[this.game.current], piece = this.game.board.pieces[sq];
    if (!piece || node.outcome) return false;
    return (piece === piece.toUpperCase()) === whiteToMove(node);
  }

  // Where the piece on `sq` may go, from the network's policy (all legal moves) once it is known.
  targets(sq) {
    const policy = this.game.results.get(this.game.current)?.eval?.policy || [], from = squareName(sq);
    return [...new Set(policy.filter(([uci]) => uci.startsWith(from)).map(([uci]) => squareIndex(uci.slice(2, 4))))];
  }

  async playMove(from, to) {
    const node = this.game.nodes[this.game.current], piece = this.game.board.pieces[from];
    let uci = squareName(from) + squareName(to);
    const lastRank = whiteToMove(node) ? 7 : 0;
    if (piece && piece.toLowerCase() === "p" && Math.floor(to / 8) === lastRank && Math.abs((to % 8) - (from % 8)) <= 1) {
      const promo = await this.askPromotion(whiteToMove(node));
      if (!promo) return;
      uci += promo;
    }
    await this.addLine(this.game.current, [uci]);
  }

  // The promotion piece, from four buttons over the board (Escape or a click elsewhere: none).
  askPromotion(white) {
    const box = document.getElementById("promotion");
    box.replaceChildren();
    return new Promise((resolve) => {
      const done = (piece) => { box.hidden = true; document.removeEventListener("keydown", onKey, true); resolve(piece); };
      const onKey = (ev) => { if (ev.key === "Escape") { ev.stopPropagation(); done(null); } };
      for (const [letter, name] of PROMOTIONS) {
        const button = document.createElement("button");
        button.type = "button";
        button.dataset.piece = letter;
        button.title = `promote to a ${name}`;
        button.innerHTML = `<svg viewBox="0 0 45 45" width="40" height="40"><use href="#${white ? "white" : "black"}-${name}"/></svg>`;
        button.addEventListener("click", () => done(letter));
        box.appendChild(button);
      }
      const cancel = document.createElement("button");
      cancel.type = "button"; cancel.className = "small"; cancel.textContent = "cancel";
      cancel.addEventListener("click", () => done(null));
      box.appendChild(cancel);
      box.hidden = false;
      document.addEventListener("keydown", onKey, true);
      box.querySelector("button").focus();
    });
  }

  // The node a line (UCI moves from `parent`) reaches in the tree already, or undefined.
  known(parent, moves) {
    const nodes = this.game.nodes;
    let id = parent;
    for (const uci of moves) {
      id = nodes[id].children.find((c) => nodes[c].uci === uci);
      if (id === undefined) return undefined;
    }
    return id;
  }

  // Add a line (UCI moves from node `parent`) to the job; a line already in the tree is just shown.
  async addLine(parent, moves) {
    const status = document.getElementById("move-status"), game = this.game, known = this.known(parent, moves);
    if (known !== undefined) { status.textContent = ""; game.go(known); return; }
    if (!game.page.can_add_moves) {  // a viewer: the line stays on the board until the next move shown
      this.preview(moves);
      this.pinned = moves.join(" ");
      status.textContent = "The line is shown on the board, not added: only the browser session that started this " +
        "analysis can add moves to it; “Explore in my own copy” makes one that is yours.";
      return;
    }
    status.textContent = "adding…";
    let res, body;
    try {
      res = await fetch(game.page.urls.moves, { method: "POST", headers: postHeaders(), body: JSON.stringify({ parent, moves }) });
      body = await res.json();
    } catch (err) { status.textContent = "The move could not be sent (the server did not answer); try again."; return; }
    if (!res.ok) { status.textContent = body.error || `The move was refused (${res.status}).`; return; }
    status.textContent = body.nodes.length ? `added ${body.nodes.map((n) => n.san).join(" ")}: analysing` : "";
    this.analysing = body.nodes.map((n) => n.id);
    game.mergeNodes(body.nodes);
    game.go(body.node);
    this.settle();
  }

  // "added Nf3: analysing" lasts until the added positions have their results (or the job ends).
  settle() {
    if (!this.analysing?.length) return;
    const game = this.game, done = this.analysing.every((id) => game.results.get(id)?.eval && game.results.get(id)?.search);
    if (!done && !["failed", "cancelled"].includes(game.status.status)) return;  // "done" may be the old status
    this.analysing = [];
    document.getElementById("move-status").textContent = "";
  }

  // Show where a line (UCI moves from the current position) leads, until the pointer leaves it.
  preview(moves) {
    const board = this.game.board;
    if (this.pinned === moves.join(" ")) return; // the line a viewer clicked stays as it is
    this.pinned = null;
    let pieces = board.pieces.slice();
    for (const uci of moves) pieces = applyUci(pieces, uci);
    board.setPieces(pieces);
    const last = moves[moves.length - 1];
    board.setMarks({ [squareIndex(last.slice(0, 2))]: "lastmove preview", [squareIndex(last.slice(2, 4))]: "lastmove preview" });
    board.setArrows([]);
    document.getElementById("board").classList.add("previewing");
  }

  endPreview() {
    if (this.pinned || !document.getElementById("board").classList.contains("previewing")) return;
    document.getElementById("board").classList.remove("previewing");
    this.game.renderPly();
  }
}
