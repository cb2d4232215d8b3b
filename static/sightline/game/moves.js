// The move list: the game's main line with its variations in parentheses, PGN comments and NAGs,
// each move marked with its judgement ("?!", "?", "??") once the worker has made it: the reference
// engine's by default, the network's own with the "network's opinion" toggle (game.marksView).
import { commentText, moveLabel, nagText, whiteToMove } from "../lib/format.js";

const BOUND_WORDS = { upper: " at most", lower: " at least" };

function commentSpan(text, extra = "") {
  const span = document.createElement("span");
  span.className = `comment ${extra}`.trim();
  span.textContent = text;
  return span;
}

// A mark's words. lichess's ("blunder") only for the engine's mark; the network's mark is its opinion.
export function markWords(j, networkName) {
  if (!j?.glyph) return "";
  return j.source === "engine" ? `${j.glyph} ${j.name}` : `${j.glyph} ${networkName}'s opinion`;
}

// The line under the moves (and its tooltip) for the marks' view. In the engine's view a move the
// engine has not valued yet (a live job, an engine that stopped) keeps the network's mark, in
// italics: the line says so instead of calling every mark the engine's.
export function marksLegend(words, view, hasEngine, networkMarksShown, networkName) {
  if (view !== "engine" || !hasEngine) return [words.networkShort, words.networkLong];
  const mixed = networkMarksShown ? ` Marks in italics are ${networkName}'s opinion: the engine has not valued those moves.` : "";
  return [words.engineShort + mixed, words.engineLong + mixed];
}

// The tooltip of a judged move. Both scores are White's, valued in the position before the move.
export function judgementTitle(j, node, searchName, networkName = "the network") {
  if (!j) return "not judged yet";
  if (j.source === "engine") {
    const verdict = j.glyph ? `${j.glyph} ${j.name[0].toUpperCase()}${j.name.slice(1)}. ${j.reason ? `${j.reason}. ` : ""}` : "";
    const before = (100 * j.best_score).toFixed(1), after = (100 * j.played_score).toFixed(1);
    // The mover's loss in White's win %: none where the played move did as well (a deeper look after
    // it found more than the engine's own choice: 11...Na4!!), so the engine's move was not "best".
    const loss = whiteToMove(node) ? j.played_score - j.best_score : j.best_score - j.played_score;
    return verdict + (j.played === j.best || !j.best_san ? `${node.san}: the engine's best move or as good`
      : !j.glyph && loss <= 0 ? `${node.san}: as good as ${j.best_san}, the engine's choice, or better (${before}% before, ${after}% after ${node.san}, White's win %)`
      : `${j.best_san} was best (${before}% vs ${after}% after ${node.san}, White's win %)`) +
      "; the reference engine's values, lichess's thresholds";
  }
  const by = j.source === "search" ? `${searchName}'s root statistics` : "the network (both successors in one batch)";
  const played = `${node.san} ${(100 * j.played_score).toFixed(1)}%${BOUND_WORDS[j.bound] || ""}`;
  return (j.glyph ? `${j.glyph} ${networkName}'s opinion: ` : "") + (j.played === j.best ? `${node.san} is the best move`
    : `${played} vs ${j.best_san} ${(100 * j.best_score).toFixed(1)}% (best), expected scores for White`) +
    `; valued by ${by} before the move`;
}

export class MoveList {
  constructor(game) {
    this.game = game;
    this.box = document.getElementById("moves");
    this.box.addEventListener("click", (ev) => {
      const m = ev.target.closest(".move");
      if (m) game.go(Number(m.dataset.node));
    });
  }

  render() {
    const box = this.box, root = this.game.nodes[0];
    box.replaceChildren();
    if (commentText(root.comment)) box.appendChild(commentSpan(commentText(root.comment), "game-comment"));
    if (!root.children.length) { box.insertAdjacentHTML("beforeend", '<p class="muted">A single position (no moves).</p>'); return; }
    box.appendChild(this.line(root.children[0], true, true));
    this.markAll();
  }

  // A line follows first children from `id`; alternatives to each move follow that move in parentheses.
  line(id, main, forceNumber) {
    const nodes = this.game.nodes, line = document.createElement("div");
    line.className = main ? "line main" : "line variation";
    let force = forceNumber;
    for (let cur = id; cur !== undefined; cur = nodes[cur].children[0]) {
      const node = nodes[cur];
      if (commentText(node.starting_comment)) line.appendChild(commentSpan(commentText(node.starting_comment)));
      line.appendChild(this.moveSpan(node, force));
      force = false;
      if (commentText(node.comment)) { line.appendChild(commentSpan(commentText(node.comment))); force = true; }
      const siblings = node.parent === null ? [] : nodes[node.parent].children;
      if (siblings[0] === cur && siblings.length > 1) {
        for (const alt of siblings.slice(1)) line.appendChild(this.line(alt, false, true));
        force = true;
      }
    }
    return line;
  }

  moveSpan(node, forceNumber) {
    const span = document.createElement("span");
    span.className = "move";
    span.dataset.node = node.id;
    span.innerHTML = `<span class="num">${moveLabel(node, forceNumber)}</span><span class="san">${node.san}</span><span class="nag"></span><span class="glyph"></span>`;
    span.querySelector(".nag").textContent = nagText(node.nags);
    return span;
  }

  markAll() { for (const n of this.game.nodes) if (n.parent !== null) this.mark(n.id); }

  mark(id) {
    const el = this.box.querySelector(`.move[data-node="${id}"]`);
    if (!el) return;
    const game = this.game, results = game.results, view = game.marksView, j = results.judgement(id, view);
    el.classList.remove("blunder", "mistake", "inaccuracy", "by-engine", "by-network");
    el.querySelector(".glyph").textContent = j ? j.glyph : "";
    el.title = judgementTitle(results.judgementData(id, view), game.nodes[id], game.page.search.name, game.page.network.name);
    if (j) el.classList.add(j.source === "engine" ? "by-engine" : "by-network");
    if (j) el.classList.add(j.name);
    el.classList.toggle("pending", !results.has(id));
  }

  // Scroll the move list only, never the page (scrollIntoView would move the window too).
  markCurrent(id) {
    this.box.querySelectorAll(".move.current").forEach((m) => m.classList.remove("current"));
    const el = this.box.querySelector(`.move[data-node="${id}"]`);
    if (!el) return;
    el.classList.add("current");
    const r = el.getBoundingClientRect(), b = this.box.getBoundingClientRect();
    if (r.top < b.top) this.box.scrollTop -= b.top - r.top;
    else if (r.bottom > b.bottom) this.box.scrollTop += r.bottom - b.bottom;
  }
}
