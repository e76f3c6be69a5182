/** What a stored log line holds at most (the control plane keeps a bounded number of them). */
export const MAX_LINE_CHARS = 500;

const MASK = "***";

/**
 * A log line safe to store: every secret replaced by `***` in any of its URL-encoded forms (each character as itself
 * or percent-encoded, once or twice, in either hex case; a space also as `+`), then every URL's user info, path and
 * query (where stream keys, SRT passphrases and ingest keys travel) replaced by `***`, then cut to
 * MAX_LINE_CHARS. Redacting comes first so a cut never leaves a secret's prefix the patterns no longer match.
 */
export function redactLine(line: string, secrets: readonly string[]): string {
  const redacted = redact(line, secrets);
  return redacted.length > MAX_LINE_CHARS ? `${redacted.slice(0, MAX_LINE_CHARS - 1)}…` : redacted;
}

/** `text` with every secret and every URL's path, query and user info replaced by `***` (see redactLine). */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  // Longest first: a secret containing another is masked whole.
  for (const secret of [...new Set(secrets)].filter(Boolean).sort((a, b) => b.length - a.length)) {
    out = out.replace(secretPattern(secret), MASK);
  }
  return out.replace(PLAIN_URL, maskPlainUrl).replace(ENCODED_URL, maskEncodedUrl);
}

/**
 * A URL as logs print it: scheme, authority (user info included), then whatever path, query or fragment follows up
 * to a space or quote; punctuation that ends it (FFmpeg writes `rtmp://host/app/key: Connection refused`) is given
 * back by `trailing`. A bounded scheme (a longer one is masked from its last 32 characters), greedy parts and no
 * lookahead: linear on any line (a lazy part before a lookahead of punctuation was quadratic on a run of it).
 */
const PLAIN_URL = /([a-z][a-z0-9+.-]{0,31}):\/\/([^\s/?#'"<>]*)([^\s'"<>]*)/gi;
/** A percent-encoded URL (a URL inside another's query): `rtmp%3A%2F%2Fhost%2Flive%2Fkey`. */
const ENCODED_URL = /([a-z][a-z0-9+.-]{0,31})%3A%2F%2F([a-z0-9.\-[\]]*(?:%3A\d+)?)([^\s'"<>]*)/gi;
/** What ends a URL in prose rather than belonging to it. */
const ENDING = new Set([":", ".", ",", ";", ")", "]"]);

function maskPlainUrl(_match: string, scheme: string, authority: string, tail: string): string {
  const [rest, after] = trailing(tail);
  const at = authority.lastIndexOf("@");
  const host = at < 0 ? authority : `${MASK}@${authority.slice(at + 1)}`;
  return `${scheme}://${host}${rest ? `/${MASK}` : ""}${after}`;
}

function maskEncodedUrl(_match: string, scheme: string, host: string, tail: string): string {
  const [rest, after] = trailing(tail);
  return `${scheme}%3A%2F%2F${host}${rest ? `%2F${MASK}` : ""}${after}`;
}

/** A URL's tail split into what belongs to it and the punctuation that ends it, scanned once from the end. */
function trailing(tail: string): [string, string] {
  let end = tail.length;
  while (end > 0 && ENDING.has(tail[end - 1]!)) end--;
  return [tail.slice(0, end), tail.slice(end)];
}

function secretPattern(secret: string): RegExp {
  let source = "";
  for (const char of secret) {
    const encoded = [...Buffer.from(char, "utf8")].map((byte) => `%(?:25)?${hexPattern(byte)}`).join("");
    const alternatives = [escapeRegExp(char), encoded];
    if (char === " ") alternatives.push("\\+");
    source += `(?:${alternatives.join("|")})`;
  }
  return new RegExp(source, "g");
}

/** A byte's two hex digits, either case: 0x2f → `2[fF]`. */
function hexPattern(byte: number): string {
  return byte
    .toString(16)
    .padStart(2, "0")
    .replace(/[a-f]/g, (digit) => `[${digit}${digit.toUpperCase()}]`);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}
