// The job's status in the top bar: the status pill, the progress bar and its counts, the time
// left, the Cancel button and the error box.
import { fmtDuration, fmtNum } from "../lib/format.js";
import { fetchState } from "../lib/requests.js";

const FINISHED = ["done", "failed", "cancelled"];
const RATE_WINDOW_MS = 60000;
const WAIT_REFRESH_MS = 5000; // a queued job's "queued behind ..." is asked for again this often
const $ = (id) => document.getElementById(id);

export class JobStatus {
  constructor(game) {
    this.game = game;
    this.rate = []; // [time, positions searched] as the count grew, over the last RATE_WINDOW_MS
  }

  render() {
    const st = this.game.status, pill = $("job-status");
    pill.textContent = st.status;
    pill.className = `pill status-${st.status}`;
    const total = st.total || this.game.nodes.length, shown = progress(st, this.counts(st), total);
    $("progress-bar").style.width = `${(100 * Math.min(1, shown.frac)).toFixed(1)}%`;
    let text = shown.text;
    this.nps = searchRate(this.game.results.progress.values(), this.nps);
    if (this.nps && st.status === "running") text += ` · ${fmtNum(this.nps)} nodes/s`;
    $("progress-text").textContent = text;
    const left = ["queued", "running"].includes(st.status) ? this.secondsLeft(shown.done, total, Date.now(), shown.engine) : null;
    $("eta").textContent = st.status === "queued" && st.waiting ? st.waiting
      : left == null ? "" : left < 1 ? "almost done" : `about ${fmtDuration(left)} left`;
    $("cancel-btn").hidden = FINISHED.includes(st.status) || !this.game.page.can_cancel;
    const err = $("error-box");
    err.hidden = !st.error;
    err.textContent = st.error ? `Analysis failed: ${st.error}` : "";
    if (st.status === "queued") this.refreshWaitLater();
  }

  // Nothing is pushed while a job waits, so its wait (behind what, for about how long) is read again
  // (urls.wait: the wait alone) until the job starts; the websocket's status messages take over then.
  refreshWaitLater() {
    if (this.waitTimer) return;
    this.waitTimer = setTimeout(async () => {
      try {
        const wait = await fetchState(this.game.page.urls.wait);
        if (wait && this.game.status.status === "queued") this.game.status = { ...this.game.status, waiting: wait.waiting };
      } catch { /* the next refresh, or the websocket, brings it */ }
      this.waitTimer = null;
      this.render();
    }, WAIT_REFRESH_MS);
  }

  // Counts from the results merged so far (pushed plies arrive between status messages).
  counts(st) {
    let evaluated = 0, searched = 0, valued = 0;
    for (const r of this.game.results.values()) { if (r.eval) evaluated += 1; if (r.search) searched += 1; if (r.engine) valued += 1; }
    return [Math.max(evaluated, st.evaluated || 0), Math.max(searched, st.searched || 0), valued];
  }

  // Seconds until every position is searched: the rate of the last minute's finished searches,
  // else the site's measured cost per position (page.estimate: the network's alone, so not while
  // the engine lane runs, where it read "almost done" before Stockfish's first value); null when
  // neither is known.
  secondsLeft(searched, total, now = Date.now(), engine = false) {
    const last = this.rate[this.rate.length - 1];
    if (!last || last[1] !== searched) this.rate.push([now, searched]);
    while (this.rate.length > 2 && now - this.rate[0][0] > RATE_WINDOW_MS) this.rate.shift();
    const remaining = total - searched, [t0, s0] = this.rate[0];
    if (remaining <= 0) return 0;
    if (searched > s0 && now > t0) return (remaining * (now - t0)) / 1000 / (searched - s0);
    const per = engine ? null : this.game.page.estimate?.seconds_per_position;
    return per == null ? null : remaining * per;
  }
}

// The counts shown, the bar's fraction and the positions finished (for the time left): the engine
// lane counts where it runs (the job ends when it has valued every position too; without it the
// bar and "almost done" showed the network's part finished while the engine still worked).
export function progress(st, [evaluated, searched, valued], total) {
  const engine = !!st.engine_nodes && !st.engine_note;
  const text = `eval ${evaluated}/${total} · search ${searched}/${total}` + (engine ? ` · engine ${valued}/${total}` : "");
  const parts = engine ? [evaluated, searched, valued] : [evaluated, searched];
  const frac = total ? parts.reduce((a, b) => a + b, 0) / (parts.length * total) : 0;
  return { text, frac, done: engine ? Math.min(searched, valued) : searched, engine };
}

// The search rate to show: the newest progress message's, except between positions, where a new
// search's first message has no rate yet (0) and the last known one stands.
export function searchRate(progress, previous) {
  const live = [...progress].pop();
  return live && live.nps > 0 ? live.nps : previous || 0;
}

export const isFinished = (status) => FINISHED.includes(status);
