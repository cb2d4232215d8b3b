// A small SVG chess board: position from FEN, last-move highlight, arrows,
// a per-square heat layer and square clicks. Pieces are <use> references to
// the SVG defs the page embeds (python-chess's piece set).
const NS = "http://www.w3.org/2000/svg";
const S = 45; // one square in SVG units (the piece drawings are 45 x 45)
const NAMES = { p: "pawn", n: "knight", b: "bishop", r: "rook", q: "queen", k: "king" };
export const FILES = "abcdefgh";

export function squareName(sq) { return FILES[sq % 8] + (Math.floor(sq / 8) + 1); }
export function squareIndex(name) { return FILES.indexOf(name[0]) + 8 * (parseInt(name[1], 10) - 1); }

function el(tag, attrs = {}, parent = null) {
  const node = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (parent) parent.appendChild(node);
  return node;
}

export function parseFenBoard(fen) {
  const pieces = new Array(64).fill(null);
  const rows = fen.split(" ")[0].split("/");
  rows.forEach((row, i) => {
    const rank = 7 - i;
    let file = 0;
    for (const ch of row) {
      if (/\d/.test(ch)) file += parseInt(ch, 10);
      else { pieces[rank * 8 + file] = ch; file += 1; }
    }
  });
  return pieces;
}

// The piece array after a UCI move (castling moves the rook, en passant takes the pawn,
// promotions promote): enough to preview a line, the server checks legality.
export function applyUci(pieces, uci) {
  const out = pieces.slice(), from = squareIndex(uci.slice(0, 2)), to = squareIndex(uci.slice(2, 4));
  const piece = out[from];
  if (!piece) return out;
  const white = piece === piece.toUpperCase(), kind = piece.toLowerCase();
  if (kind === "k" && Math.abs(to - from) === 2) { // castling: the rook jumps over the king
    const rookFrom = to > from ? from + 3 : from - 4, rookTo = to > from ? from + 1 : from - 1;
    out[rookTo] = out[rookFrom]; out[rookFrom] = null;
  }
  if (kind === "p" && (to - from) % 8 !== 0 && !out[to]) out[to + (white ? -8 : 8)] = null; // en passant
  out[to] = uci.length > 4 ? (white ? uci[4].toUpperCase() : uci[4].toLowerCase()) : piece;
  out[from] = null;
  return out;
}

export class Board {
  constructor(container, { coordinates = true, onSquareClick = null, size = null } = {}) {
    this.flipped = false;
    this.pieces = new Array(64).fill(null);
    this.onSquareClick = onSquareClick;
    this.svg = el("svg", { viewBox: `0 0 ${8 * S} ${8 * S}`, class: "board-svg", role: "img" });
    if (size) { this.svg.setAttribute("width", size); this.svg.setAttribute("height", size); }
    this.squareLayer = el("g", {}, this.svg);
    this.heatLayer = el("g", { class: "heat" }, this.svg);
    this.markLayer = el("g", {}, this.svg);
    this.coordLayer = el("g", { class: "coords" }, this.svg);
    this.pieceLayer = el("g", {}, this.svg);
    this.arrowLayer = el("g", { class: "arrows" }, this.svg);
    this.squares = [];
    this.heat = [];
    for (let sq = 0; sq < 64; sq++) {
      const light = (Math.floor(sq / 8) + (sq % 8)) % 2 === 1;
      const rect = el("rect", { width: S, height: S, class: light ? "sq light" : "sq dark", "data-square": squareName(sq) }, this.squareLayer);
      this.squares.push(rect);
      this.heat.push(el("rect", { width: S, height: S, fill: "transparent", "pointer-events": "none" }, this.heatLayer));
    }
    this.coordinates = coordinates;
    this.svg.addEventListener("click", (ev) => {
      const target = ev.target.closest("[data-square]") || this._squareAt(ev);
      if (target && this.onSquareClick) this.onSquareClick(typeof target === "number" ? target : squareIndex(target.getAttribute("data-square")));
    });
    container.appendChild(this.svg);
    this._layout();
  }

  _squareAt(ev) {
    const r = this.svg.getBoundingClientRect();
    const fx = Math.floor(((ev.clientX - r.left) / r.width) * 8), fy = Math.floor(((ev.clientY - r.top) / r.height) * 8);
    if (fx < 0 || fx > 7 || fy < 0 || fy > 7) return null;
    return this.flipped ? (fy * 8 + (7 - fx)) : ((7 - fy) * 8 + fx);
  }

  xy(sq) {
    const f = sq % 8, r = Math.floor(sq / 8);
    return this.flipped ? [(7 - f) * S, r * S] : [f * S, (7 - r) * S];
  }

  _layout() {
    for (let sq = 0; sq < 64; sq++) {
      const [x, y] = this.xy(sq);
      for (const node of [this.squares[sq], this.heat[sq]]) { node.setAttribute("x", x); node.setAttribute("y", y); }
    }
    this.coordLayer.replaceChildren();
    if (this.coordinates) {
      for (let i = 0; i < 8; i++) {
        const file = this.flipped ? 7 - i : i, rank = this.flipped ? i + 1 : 8 - i;
        el("text", { x: i * S + S - 3, y: 8 * S - 3, "text-anchor": "end" }, this.coordLayer).textContent = FILES[file];
        el("text", { x: 2, y: i * S + 10 }, this.coordLayer).textContent = String(rank);
      }
    }
    this._drawPieces();
  }

  setFlipped(flipped) { this.flipped = flipped; this._layout(); this._drawSelection(); this.setArrows(this._arrows || []); this.setMarks(this._marks || {}); }

  setPosition(fen) { this.setPieces(parseFenBoard(fen)); }

  setPieces(pieces) { this.pieces = pieces; this._drawPieces(); }

  _drawPieces() {
    this.pieceLayer.replaceChildren();
    this.pieceEls = new Array(64).fill(null);
    this.pieces.forEach((p, sq) => {
      if (!p) return;
      const [x, y] = this.xy(sq);
      const colour = p === p.toUpperCase() ? "white" : "black";
      this.pieceEls[sq] = el("use", { href: `#${colour}-${NAMES[p.toLowerCase()]}`, x, y, "pointer-events": "none" }, this.pieceLayer);
    });
    this._drawSelection();
  }

  // ---- moves by drag or by two clicks --------------------------------------------
  // canMove(sq): may the piece there move now; targets(sq): squares to hint (may be empty);
  // onMove(from, to): a move was asked for (the caller asks for a promotion piece and sends it).
  enableMoves({ canMove, targets = () => [], onMove }) {
    this.moveInput = { canMove, targets, onMove };
    this.selected = null;
    this.selectLayer = el("g", { class: "selection" });
    this.svg.insertBefore(this.selectLayer, this.pieceLayer);
    this.svg.classList.add("playable");
    this.svg.addEventListener("pointerdown", (ev) => this._pointerDown(ev));
    this.svg.addEventListener("pointermove", (ev) => this._pointerMove(ev));
    this.svg.addEventListener("pointerup", (ev) => this._pointerUp(ev));
    this.svg.addEventListener("pointercancel", () => this._endDrag());
  }

  select(sq) { this.selected = sq; this._drawSelection(); }

  _drawSelection() {
    if (!this.selectLayer) return;
    this.selectLayer.replaceChildren();
    if (this.selected === null) return;
    const [x, y] = this.xy(this.selected);
    el("rect", { x, y, width: S, height: S, class: "selected", "pointer-events": "none" }, this.selectLayer);
    for (const to of this.moveInput.targets(this.selected)) {
      const [tx, ty] = this.xy(to);
      el("circle", { cx: tx + S / 2, cy: ty + S / 2, r: this.pieces[to] ? S / 2 - 2 : 6, class: this.pieces[to] ? "target capture" : "target",
                     "pointer-events": "none" }, this.selectLayer);
    }
  }

  _pointerDown(ev) {
    if (ev.button !== 0) return;
    const sq = this._squareAt(ev), input = this.moveInput;
    if (sq === null) return;
    if (this.selected !== null && sq !== this.selected && !input.canMove(sq)) { // the second click
      const from = this.selected;
      this.select(null);
      input.onMove(from, sq);
      return;
    }
    if (!input.canMove(sq)) { this.select(null); return; }
    ev.preventDefault();
    this.drag = { from: sq, wasSelected: this.selected === sq, moved: false };
    this.select(sq);
    this.svg.setPointerCapture?.(ev.pointerId);
  }

  _pointerMove(ev) {
    const piece = this.drag && this.pieceEls[this.drag.from];
    if (!piece) return;
    const r = this.svg.getBoundingClientRect();
    const x = ((ev.clientX - r.left) / r.width) * 8 * S - S / 2, y = ((ev.clientY - r.top) / r.height) * 8 * S - S / 2;
    this.drag.moved = true;
    piece.setAttribute("x", x.toFixed(1)); piece.setAttribute("y", y.toFixed(1));
    piece.classList.add("dragging");
    this.pieceLayer.appendChild(piece); // on top of the others
  }

  _pointerUp(ev) {
    const drag = this.drag;
    if (!drag) return;
    const to = this._squareAt(ev);
    this._endDrag();
    if (to !== null && to !== drag.from) { this.select(null); this.moveInput.onMove(drag.from, to); }
    else if (drag.wasSelected && !drag.moved) this.select(null); // a second click on the piece lets go
  }

  _endDrag() {
    if (!this.drag) return;
    this.drag = null;
    this._drawPieces();
  }

  // marks: {squareIndex: cssClass}
  setMarks(marks) {
    this._marks = marks;
    this.markLayer.replaceChildren();
    for (const [sq, cls] of Object.entries(marks)) {
      const [x, y] = this.xy(Number(sq));
      el("rect", { x, y, width: S, height: S, class: cls, "pointer-events": "none" }, this.markLayer);
    }
  }

  // values: 64 numbers in [0, 1] (or null to clear); colour: value -> css colour
  setHeat(values, colour, opacity = 0.85) {
    for (let sq = 0; sq < 64; sq++) {
      if (!values) { this.heat[sq].setAttribute("fill", "transparent"); continue; }
      this.heat[sq].setAttribute("fill", colour(values[sq]));
      this.heat[sq].setAttribute("fill-opacity", opacity);
    }
  }

  setPieceOpacity(opacity) { this.pieceLayer.setAttribute("opacity", opacity); }

  // arrows: [{from, to, width (0..1), colour, opacity, kind (a class: "engine")}]
  setArrows(arrows) {
    this._arrows = arrows;
    this.arrowLayer.replaceChildren();
    for (const a of arrows) {
      const [x1, y1] = this.xy(a.from).map((v) => v + S / 2);
      const [x2, y2] = this.xy(a.to).map((v) => v + S / 2);
      const dx = x2 - x1, dy = y2 - y1, len = Math.hypot(dx, dy);
      if (len < 1) continue;
      const ux = dx / len, uy = dy / len, px = -uy, py = ux;
      const w = 2 + 9 * Math.max(0, Math.min(1, a.width));
      const head = Math.min(len * 0.6, w * 1.6 + 8), hw = w * 1.2 + 5;
      const sx = x1 + ux * 8, sy = y1 + uy * 8, bx = x2 - ux * head, by = y2 - uy * head;
      const pts = [
        [sx + px * w / 2, sy + py * w / 2], [bx + px * w / 2, by + py * w / 2], [bx + px * hw, by + py * hw],
        [x2, y2], [bx - px * hw, by - py * hw], [bx - px * w / 2, by - py * w / 2], [sx - px * w / 2, sy - py * w / 2],
      ];
      el("polygon", { points: pts.map((p) => p.map((v) => v.toFixed(1)).join(",")).join(" "),
                      fill: a.colour || "#15781b", "fill-opacity": a.opacity ?? 0.75, class: a.kind ? `arrow ${a.kind}` : "arrow",
                      "data-move": squareName(a.from) + squareName(a.to) }, this.arrowLayer);
    }
  }
}
