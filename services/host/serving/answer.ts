import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "../../kit/runtime/logger.js";
import type { FileBytes } from "./bytes.js";
import type { ServingCache } from "./cache.js";
import type { Manifest, ServedFile, Variant } from "./manifest.js";
import { etagMatches, variantFor } from "./negotiate.js";
import { pages, sendPage } from "./pages.js";
import { rangeOf } from "../../kit/blobs/ranges.js";
import { askTls, TLS_ASK_PATH } from "./tls-ask.js";

/** Beyond printable ASCII: only such a path may change under NFC. */
const NON_ASCII = /[^ -~]/;

/**
 * The sites' request handler: Host → site → active deploy → manifest → blob bytes. GET and HEAD only; a directory
 * serves its index.html, `/dir` redirects to `/dir/` when that has one, a missing file the site's 404.html (404).
 * Conditional (ETag) and range requests, precompressed copies where the client allows, nothing listed, no cookie.
 */
export function sitesHandler(cache: ServingCache, bytes: FileBytes, logger: Logger) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const head = req.method === "HEAD";
    if (req.method !== "GET" && !head) return sendPage(res, pages.notAllowed, false);
    answer(req, res, head).catch((error: unknown) => {
      logger.error({ err: error, host: req.headers.host, url: req.url }, "a site's request failed");
      if (!res.headersSent) sendPage(res, pages.failed, head);
      else res.destroy();
    });
  };

  async function answer(req: IncomingMessage, res: ServerResponse, head: boolean): Promise<void> {
    const host = req.headers.host ?? "";
    let route = cache.route(host, Date.now());
    if (route === undefined) route = await cache.readRoute(host);
    const url = req.url ?? "/";
    const query = url.indexOf("?");
    const raw = query === -1 ? url : url.slice(0, query);
    if (route === null) return raw === TLS_ASK_PATH ? askTls(res, cache, url, head) : sendPage(res, pages.noSite, head);
    if (route.takenDown) return sendPage(res, pages.unavailable, head);
    if (route.deployId === null) return sendPage(res, pages.noSite, head);
    const manifest = cache.manifest(route.deployId) ?? (await cache.readManifest(route.deployId));
    const path = sitePath(raw);
    if (path === undefined) return notFound(req, res, manifest, head);
    if (path === "" || path.endsWith("/")) {
      const index = manifest.get(`${path}index.html`);
      return index ? sendFile(req, res, index, head) : notFound(req, res, manifest, head);
    }
    const file = manifest.get(path);
    if (file) return sendFile(req, res, file, head);
    if (manifest.has(`${path}/index.html`)) {
      res.writeHead(301, { location: `${raw}/${query === -1 ? "" : url.slice(query)}`, "cache-control": "no-cache" });
      return void res.end();
    }
    return notFound(req, res, manifest, head);
  }

  async function sendFile(req: IncomingMessage, res: ServerResponse, file: ServedFile, head: boolean): Promise<void> {
    const { headers } = req;
    // A range is of the file's own bytes, never of a compressed copy.
    const ranged = !head && headers.range !== undefined;
    const variant = ranged ? file.identity : variantFor(file, headers["accept-encoding"]);
    const inm = headers["if-none-match"];
    if (inm !== undefined && etagMatches(inm, variant.etag)) {
      res.writeHead(304, validators(file, variant));
      return void res.end();
    }
    if (ranged && (headers["if-range"] === undefined || headers["if-range"] === variant.etag)) {
      const range = rangeOf(headers.range, variant.size, "first");
      if (range.kind === "unsatisfiable") {
        res.writeHead(416, {
          "content-range": `bytes */${variant.size}`,
          "x-content-type-options": "nosniff",
          ...(file.varies && { vary: "accept-encoding" }),
        });
        return void res.end();
      }
      // The identity's head with its length and the range's place in between (content-type, content-length first).
      if (range.kind === "part")
        return bytes.send(
          res,
          206,
          [
            ...variant.headers.slice(0, 2),
            "content-length",
            String(range.end - range.start + 1),
            "content-range",
            `bytes ${range.start}-${range.end}/${variant.size}`,
            ...variant.headers.slice(4),
          ],
          variant,
          range,
        );
    }
    if (head) {
      res.writeHead(200, variant.headers as string[]);
      return void res.end();
    }
    return bytes.send(res, 200, variant.headers, variant);
  }

  /** The site's own 404.html with status 404 (revalidated, no ETag), else the platform's. */
  async function notFound(req: IncomingMessage, res: ServerResponse, manifest: Manifest, head: boolean): Promise<void> {
    const page = manifest.get("404.html");
    if (!page) return sendPage(res, pages.notFound, head);
    const variant = variantFor(page, req.headers["accept-encoding"]);
    const headers = [
      "content-type",
      page.contentType,
      "content-length",
      String(variant.size),
      "cache-control",
      "no-cache",
      "x-content-type-options",
      "nosniff",
    ];
    if (variant.coding !== "") headers.push("content-encoding", variant.coding);
    if (page.varies) headers.push("vary", "accept-encoding");
    if (head) {
      res.writeHead(404, headers);
      return void res.end();
    }
    return bytes.send(res, 404, headers, variant);
  }
}

/** What a 304 repeats of the 200 it stands for. */
function validators(file: ServedFile, variant: Variant): Record<string, string> {
  return {
    etag: variant.etag,
    "cache-control": file.cacheControl,
    "x-content-type-options": "nosniff",
    ...(file.varies && { vary: "accept-encoding" }),
  };
}

/**
 * The manifest path a request path names (no leading slash, percent-decoded, NFC), or undefined when it names none.
 * Only a lookup in the manifest follows: no path reaches a file system.
 */
function sitePath(raw: string): string | undefined {
  if (raw.charCodeAt(0) !== 47 /* / */) return undefined;
  let path = raw.slice(1);
  if (path.includes("%")) {
    try {
      path = decodeURIComponent(path);
    } catch {
      return undefined;
    }
  }
  return NON_ASCII.test(path) ? path.normalize("NFC") : path;
}
