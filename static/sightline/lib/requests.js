// The pages' requests to the site besides the websocket.

// A GET that asks for JSON (the site answers errors in JSON too); the response, to read its status.
export const getJsonResponse = (url) => fetch(url, { headers: { Accept: "application/json" } });

// A JSON POST with the page's CSRF token (the body's hx-headers carry it for htmx too).
export function postHeaders() {
  const csrf = JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRFToken"];
  return { "Content-Type": "application/json", "X-CSRFToken": csrf };
}

// The job's stored state (nodes, status and results, White's view), or null when refused.
export async function fetchState(url) {
  const res = await getJsonResponse(url);
  return res.ok ? res.json() : null;
}
