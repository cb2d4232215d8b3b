// The game review under the game, as lichess shows it: each player's accuracy %, average
// centipawn loss and counts of inaccuracies, mistakes and blunders, all from the reference engine
// (webapp/jobs/review.py computes them with lichess's formulas); the network's own marks are
// counted beside them as its opinion. The figures come with the job's snapshot and state; while
// the engine's values arrive the page fetches the state again now and then (and once at the end).
import { escapeHtml } from "../lib/html.js";
import { fetchState } from "../lib/requests.js";

const REFRESH_MS = 3000;
const $ = (id) => document.getElementById(id);
const COUNTS = [["inaccuracies", "Inaccuracies", "?!"], ["mistakes", "Mistakes", "?"], ["blunders", "Blunders", "??"]];

// [label, White's, Black's] rows of the engine's review ({white, black} figures per player).
export function reviewRows(engine) {
  const pick = (key, fmt = String) => ["white", "black"].map((c) => (engine[c][key] == null ? "–" : fmt(engine[c][key])));
  return [["Accuracy", ...pick("accuracy", (v) => `${v}%`)], ["Average centipawn loss", ...pick("acpl")],
    ...COUNTS.map(([key, label]) => [label, ...pick(key)])];
}

// The network's marks per player in its own terms: "?! 3 · ? 1 · ?? 0".
export function networkCounts(marks) {
  return COUNTS.map(([key, , glyph]) => `${glyph} ${marks[key] ?? 0}`).join(" · ");
}

export class GameReview {
  constructor(game) {
    this.game = game;
    this.review = null; // {engine: figures per player or null, network_marks}
    this.swing = null; // the network's side-to-move bias (webapp/jobs/review.py network_swing)
    this.arrivals = 0; // engine values and judgements received, and how many the figures shown include
    this.included = 0;
    this.timer = null;
  }

  // Values came after the figures shown were made.
  get stale() { return this.arrivals > this.included; }

  // The review parts of a snapshot or of the job's state; ``arrivals``: the engine values received
  // when it was asked for (a state fetched before the last value does not include it).
  update(snap, arrivals = this.arrivals) {
    if ("review" in snap) { this.review = snap.review; this.included = Math.max(this.included, arrivals); }
    if ("network_swing" in snap) this.swing = snap.network_swing;
    if ("disagreements" in snap) this.game.disagreements.update(snap.disagreements || []);
    this.render();
  }

  // A node's new results: an engine value or a judgement puts the figures shown behind (the engine's,
  // and the network's marks counted beside them: with the engine off these stayed at 0 after a job
  // watched live); fetch them again soon (not per value), and once more at the end (``stale``).
  arrived(item) {
    if (!(item.engine || item.judgement || item.network_judgement)) return;
    this.arrivals += 1;
    if (this.timer) return;
    this.timer = setTimeout(async () => {
      this.timer = null;
      const asked = this.arrivals, review = await fetchState(this.game.page.urls.review);
      if (review) this.update(review, asked);
    }, REFRESH_MS);
  }

  render() {
    const engine = this.review?.engine, note = this.game.engineNote(), headers = this.game.page.headers || {};
    const table = $("review-table"), caption = $("review-caption");
    const names = [headers.White, headers.Black].map((n, i) => (n && n !== "?" ? n : ["White", "Black"][i]));
    const single = this.game.nodes[0].children.length === 0;
    if (!engine) {
      table.innerHTML = "";
      caption.textContent = single ? "A single position: no moves to review." : note || waitingWords(this.game.status);
    } else {
      table.innerHTML = `<tr><th></th><th class="white-player">○ ${escapeHtml(names[0])}</th><th class="black-player">● ${escapeHtml(names[1])}</th></tr>` +
        reviewRows(engine).map(([label, w, b]) => `<tr><th scope="row">${label}</th><td>${w}</td><td>${b}</td></tr>`).join("");
      const nodes = engine.nodes ? ` at ${engine.nodes.toLocaleString("en")} nodes a position` : "";
      caption.textContent = `From ${engine.engine || "the engine"}${nodes}, lichess's formulas, over ` +
        `${engine.complete ? "the whole main line" : `its first ${engine.plies} plies so far`}.` + (note ? ` ${note}` : "");
      caption.title = engine.source || "";
    }
    const marks = this.review?.network_marks, own = $("review-network");
    own.hidden = !marks || single;
    if (marks) own.textContent = `${this.game.page.network.name}'s opinion, its own marks: ${names[0]} ${networkCounts(marks.white)}; ` +
      `${names[1]} ${networkCounts(marks.black)}.`;
  }
}

// Why a game's review is not shown yet: the engine is on its way, or the job ended before it valued
// two positions of the main line (a single position's job said "Waiting" for ever).
export function waitingWords(status) {
  if (!status.engine_nodes) return "";
  return ["done", "failed", "cancelled"].includes(status.status)
    ? "No review: the analysis ended before the engine valued the game's moves." : "Waiting for the engine's values…";
}
