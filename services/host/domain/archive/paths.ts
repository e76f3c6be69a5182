import { UploadRefused } from "./types.js";

const MAX_PATH_BYTES = 1024;
const MAX_SEGMENT_BYTES = 255;
// eslint-disable-next-line no-control-regex -- control characters are what a name may not hold
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/gu;

/** Server-side code by extension: refused even though the file server never runs it (another server might). */
const SERVER_CODE_EXTENSIONS = new Set([
  ..."php phtml pht phps phar php3 php4 php5 php6 php7 php8 shtml shtm stm".split(" "),
  ..."cgi fcgi pl pm py pyc pyo rb erb asp aspx ascx ashx asmx asa jsp jspx".split(" "),
  ..."sh bash zsh ksh csh bat cmd ps1 vbs wsf exe dll so dylib msi jar war".split(" "),
]);
/** Server configuration by name. */
const SERVER_CODE_NAMES = new Set([".htaccess", ".htpasswd", "web.config", ".user.ini", "php.ini"]);
/** Extensions a misconfigured server runs anywhere in a name (`shell.php.jpg`), not only last. */
const INNER_HANDLER = /^(php\d?|phtml|pht|phar|cgi|asp|aspx|jsp)$/u;

/** The only hidden segment allowed, at the root: users need it for security.txt and app links. */
const WELL_KNOWN = ".well-known";

/** The entry's name as a log line or a problem may carry it: control characters escaped, at most 1024 characters. */
export function shownPath(raw: string): string {
  const escaped = raw.replace(CONTROLS, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
  return escaped.length > MAX_PATH_BYTES ? `${escaped.slice(0, MAX_PATH_BYTES)}…` : escaped;
}

const refuse = (raw: string, rule: "traversal" | "hidden" | "server_code", message: string) =>
  new UploadRefused(shownPath(raw), rule, message);

/**
 * The entry's path in the site, or the refusal of its name: NFC-normalised, a leading `./` (as `tar -C dir .`
 * writes) and a directory's trailing `/` dropped. Empty for the archive's root directory (`./`).
 */
export function sitePath(raw: string, kind: "file" | "directory"): string {
  let path = raw.normalize("NFC");
  if (path.search(CONTROLS) !== -1) throw refuse(raw, "traversal", "the name holds a NUL or control character");
  if (path.includes("\\")) throw refuse(raw, "traversal", "the name holds a backslash");
  if (path.startsWith("/")) throw refuse(raw, "traversal", "the name is an absolute path");
  if (/^[a-z]:/iu.test(path)) throw refuse(raw, "traversal", "the name starts with a drive letter");
  while (path.startsWith("./")) path = path.slice(2);
  if (kind === "directory" && path.endsWith("/")) path = path.slice(0, -1);
  if (kind === "directory" && (path === "" || path === ".")) return "";
  if (Buffer.byteLength(path) > MAX_PATH_BYTES)
    throw refuse(raw, "traversal", `the name is longer than ${MAX_PATH_BYTES} bytes`);
  const segments = path.split("/");
  for (const segment of segments) {
    if (segment === "") throw refuse(raw, "traversal", "the name has an empty segment");
    if (segment === "..") throw refuse(raw, "traversal", "the name has a `..` segment");
    if (segment === ".") throw refuse(raw, "traversal", "the name has a `.` segment");
    if (Buffer.byteLength(segment) > MAX_SEGMENT_BYTES)
      throw refuse(raw, "traversal", `a segment of the name is longer than ${MAX_SEGMENT_BYTES} bytes`);
  }
  if (kind === "file") refuseServerCode(raw, segments.at(-1) ?? "");
  segments.forEach((segment, index) => {
    if (segment.startsWith(".") && !(index === 0 && segment === WELL_KNOWN))
      throw refuse(raw, "hidden", `hidden ${index === segments.length - 1 ? "file" : "folder"} ${segment}`);
  });
  return path;
}

function refuseServerCode(raw: string, name: string): void {
  const lower = name.toLowerCase();
  if (SERVER_CODE_NAMES.has(lower)) throw refuse(raw, "server_code", `${name} is server configuration`);
  const parts = lower.split(".").slice(1);
  const last = parts.at(-1);
  if ((last !== undefined && SERVER_CODE_EXTENSIONS.has(last)) || parts.some((part) => INNER_HANDLER.test(part)))
    throw refuse(raw, "server_code", `${name} is server-side code`);
}

/** The key two paths collide on: the same after NFC and case folding (`a` and `A` are one file on many systems). */
export function pathKey(path: string): string {
  return path.toLowerCase().normalize("NFC");
}
