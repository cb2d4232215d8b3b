// The page's one base64 decoder: the API sends attention maps, their scales and the split's
// half floats as base64 bytes.
export function base64Bytes(b64) {
  const bin = atob(b64), out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}
