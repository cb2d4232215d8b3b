// The game page's websocket: htmx's websocket extension holds the connection (job.html's
// ws-connect), this module gives it a reconnect back-off and hands every message to ONE
// dispatcher keyed by the message's kind. The kinds are the server's dataclasses in
// webapp/jobs/live/messages.py (a test holds this table to them); every value in them is White's.

// kind -> what the page does with it. `game` is the GamePage (game.js).
export const HANDLERS = {
  snapshot: (game, msg) => game.onSnapshot(msg),
  status: (game, msg) => game.onStatus(msg),
  ply: (game, msg) => game.onPlies([msg]),
  plies: (game, msg) => game.onPlies(msg.items),
  judgements: (game, msg) => game.onPlies(msg.items),
  engine: (game, msg) => game.onPlies(msg.items),
  progress: (game, msg) => game.onProgress(msg),
  nodes: (game, msg) => game.mergeNodes(msg.items),
  deep: (game, msg) => game.deeper.onMessage(msg),
  engine_deep: (game, msg) => game.engineDeeper.onMessage(msg),
  live: (game, msg) => game.onLiveLost(msg),
  error: (game, msg) => console.warn("the server refused a message:", msg.error),
};

export function dispatch(game, msg) {
  game.messages += 1;
  const handle = HANDLERS[msg.kind];
  if (handle) handle(game, msg);
  else console.warn("a message of unknown kind:", msg.kind);
}

// Reconnect back-off. htmx's websocket extension starts its own over whenever a socket opens,
// and while Redis is down every reconnect opens (snapshot, then 1013): every page came back
// every half second however long the outage. Here a reconnect doubles the delay (1 s, 2 s, ...
// 30 s, jittered) unless the connection it follows stayed up for LIVE_FOR_MS.
const LIVE_FOR_MS = 10000, MAX_DELAY_MS = 30000;

export function connect(game) {
  document.body.addEventListener("htmx:wsBeforeMessage", (ev) => {
    ev.preventDefault(); // JSON, not HTML: handled here
    try { dispatch(game, JSON.parse(ev.detail.message)); } catch (err) { console.error(err); }
  });
  let openedAt = 0, failures = 0;
  window.htmx.config.wsReconnectDelay = () => {
    failures = openedAt && Date.now() - openedAt >= LIVE_FOR_MS ? 1 : failures + 1;
    openedAt = 0;
    return Math.min(MAX_DELAY_MS, 1000 * 2 ** Math.min(failures - 1, 5)) * (0.5 + Math.random() / 2);
  };
  document.body.addEventListener("htmx:wsOpen", () => { openedAt = Date.now(); document.body.classList.remove("ws-down"); });
  document.body.addEventListener("htmx:wsClose", () => document.body.classList.add("ws-down"));
}
