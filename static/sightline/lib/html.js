// The page's one HTML escape, for text from the server or the user written into innerHTML
// (player names, network readout names, error sentences, FENs).
export const escapeHtml = (text) => String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
