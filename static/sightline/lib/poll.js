// The one way the page waits for a computation a worker makes on demand and the site keeps per
// position (attention maps, the split, lens answers, neurons and where-else scans, the lc0
// comparison). One policy for every panel, as the API documents it:
//   202: pending: ask again after Retry-After (or a second);
//   429: busy (too many computations queued): wait Retry-After and keep asking; never a failure;
//   any other 4xx/5xx: a failure, with the server's sentence;
//   past the deadline: give up with the caller's sentence (or a plain one).

import { getJsonResponse } from "./requests.js";

const DEFAULT_WAIT_MS = 1000; // when the server names no Retry-After
const DEFAULT_DEADLINE_MS = 300_000;

// A refused request: the server's sentence, its status and its answer (for a panel's own words).
export class PollFailed extends Error {
  constructor(message, status, body) {
    super(message);
    this.name = "PollFailed";
    this.status = status;
    this.body = body;
  }
}

// No answer before the deadline.
export class PollTimedOut extends Error {
  constructor(message) {
    super(message);
    this.name = "PollTimedOut";
  }
}

// The wait the server asks for (Retry-After in seconds), else the default.
export function retryAfterMs(res) {
  const seconds = Number(res.headers.get("Retry-After"));
  return Number.isFinite(seconds) && seconds > 0 ? 1000 * seconds : DEFAULT_WAIT_MS;
}

const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

// A refusal may come without JSON (a proxy's page): then it has no sentence of its own.
async function bodyOf(res) {
  if (res.ok) return res.json();
  try { return await res.json(); } catch { return {}; }
}

// The answer's JSON once ready; null when `current()` turns false (the user moved on).
// `ask`: a URL to GET, or (pendingBody) => a fetch's promise (pendingBody is undefined the first
// time, then the last 202/429 answer: a caller may follow its `poll` address or drop a first-time
// parameter). `onPending(body)` / `onBusy(body)` run before each wait.
// Throws PollFailed (refused) or PollTimedOut (deadline); a network error propagates.
export async function pollJson(ask, {
  current = () => true, onPending = () => {}, onBusy = () => {},
  deadlineMs = DEFAULT_DEADLINE_MS, tooLong = "no worker answered in time; is a worker running?",
} = {}) {
  const request = typeof ask === "string" ? () => getJsonResponse(ask) : ask;
  const until = Date.now() + deadlineMs;
  let res = await request(undefined);
  while (current()) {
    const body = await bodyOf(res);
    if (res.ok && res.status !== 202) return body;
    if (res.status !== 202 && res.status !== 429) {
      throw new PollFailed(body.error || `error ${res.status}`, res.status, body);
    }
    (res.status === 202 ? onPending : onBusy)(body);
    const wait = retryAfterMs(res);
    if (Date.now() + wait > until) throw new PollTimedOut(tooLong);
    await sleep(wait);
    if (!current()) return null;
    res = await request(body);
  }
  return null;
}
