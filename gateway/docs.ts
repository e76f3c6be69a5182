import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { FastifyInstance, FastifyReply } from "fastify";
import { problemMessage } from "../services/kit/handler/problem.js";
import { instanceOf, sendProblem } from "./problems.js";

/**
 * `/docs`: Swagger UI (swagger-ui-dist, served from node_modules, no CDN) with a
 * service picker over each service's `/<key>/openapi.json` (Swagger UI did not
 * render the whole platform's 850 kB document within a minute), "Try it out" against this
 * gateway and "Authorize" taking a pasted bearer token. `GET /` redirects to it.
 */

const packages = createRequire(import.meta.url);
const SWAGGER_UI = dirname(packages.resolve("swagger-ui-dist/package.json"));
const SWAGGER_UI_VERSION = (packages("swagger-ui-dist/package.json") as { version: string }).version;

/**
 * The page's own script (a file, so the CSP needs no inline script): the picker
 * shows one service's document (`?service=<key>` opens one, else the first).
 * After "Authorize" or "Logout" the shown document is fetched again with the
 * token: a service token reads the whole document, internal routes too (gateway README).
 */
function initScript(keys: readonly string[]): string {
  return `"use strict";
const services = ${JSON.stringify(keys)};
const documentOf = (service) => "/" + service + "/openapi.json";
const picker = document.getElementById("service");
const asked = new URLSearchParams(location.search).get("service");
picker.value = services.includes(asked) ? asked : services[0];
const token = (system) => system.authSelectors.authorized().getIn(["bearer", "value"]);
const refetching = (next, system) => (payload) => {
  const answer = next(payload);
  system.specActions.download();
  return answer;
};
window.ui = SwaggerUIBundle({
  url: documentOf(picker.value),
  dom_id: "#swagger-ui",
  layout: "BaseLayout",
  deepLinking: true,
  showExtensions: true,
  showCommonExtensions: true,
  displayRequestDuration: true,
  validatorUrl: null,
  requestInterceptor(request) {
    const pasted = request.loadSpec && window.ui ? token(window.ui) : undefined;
    if (pasted) request.headers.Authorization = "Bearer " + pasted;
    return request;
  },
  plugins: [() => ({ statePlugins: { auth: { wrapActions: { authorize: refetching, logout: refetching } } } })],
});
picker.addEventListener("change", () => {
  const address = new URL(location.href);
  address.searchParams.set("service", picker.value);
  address.hash = "";
  history.replaceState(null, "", address);
  window.ui.specActions.updateUrl(documentOf(picker.value));
  window.ui.specActions.download(documentOf(picker.value));
});
`;
}

/** swagger-ui-dist's files the page loads, read from disk when asked. */
const DIST_FILES: Record<string, string> = {
  "swagger-ui.css": "text/css; charset=utf-8",
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
};

interface Asset {
  readonly type: string;
  readonly body: () => Promise<Buffer | string>;
}

/** What the page loads, its own script last; tagged by what they are, so they may be cached for good. */
function docsAssets(keys: readonly string[]) {
  const script = initScript(keys);
  const files: Record<string, Asset> = {};
  for (const [file, type] of Object.entries(DIST_FILES))
    files[file] = { type, body: () => readFile(join(SWAGGER_UI, file)) };
  files["init.js"] = { type: "text/javascript; charset=utf-8", body: () => Promise.resolve(script) };
  // A new swagger-ui-dist or script is a new URL.
  const tag = createHash("sha256").update(`${SWAGGER_UI_VERSION}\n${script}`).digest("hex").slice(0, 12);
  return { files, tag, page: docsPage(`/docs/assets/${tag}`, keys) };
}

/** Service keys are lowercase words (each is also its schema name), so they go into the markup as they are. */
const docsPage = (base: string, keys: readonly string[]) => `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <title>pf platform API</title>
    <link rel="icon" href="data:,">
    <link rel="stylesheet" href="${base}/swagger-ui.css">
  </head>
  <body>
    <header>
      <label>Service <select id="service">${keys.map((key) => `<option value="${key}">${key}</option>`).join("")}</select></label>
    </header>
    <div id="swagger-ui"></div>
    <script src="${base}/swagger-ui-bundle.js"></script>
    <script src="${base}/init.js"></script>
  </body>
</html>
`;

/**
 * Only this gateway's own files and calls; nothing inline (Swagger UI sets its
 * styles through the DOM, which CSP allows); icons from data: URIs.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

function documentHeaders(reply: FastifyReply, type: string, cacheControl: string): FastifyReply {
  return reply
    .type(type)
    .header("cache-control", cacheControl)
    .header("content-security-policy", CONTENT_SECURITY_POLICY)
    .header("x-content-type-options", "nosniff")
    .header("referrer-policy", "no-referrer");
}

/** `/docs` listing the services of `keys` (each with its `/<key>/openapi.json`), and `GET /` redirecting to it. */
export function registerDocs(app: FastifyInstance, keys: readonly string[]): void {
  const assets = docsAssets(keys);
  // A redirect, not a page: the root may answer something else later, so it is temporary and not cached.
  app.get("/", (_request, reply) => {
    void reply.header("cache-control", "no-cache").redirect("/docs", 302);
  });
  // The page names the current assets: revalidated each time, so a new version is seen at once.
  app.get("/docs", (_request, reply) => {
    void documentHeaders(reply, "text/html; charset=utf-8", "no-cache").send(assets.page);
  });
  app.get<{ Params: { tag: string; file: string } }>("/docs/assets/:tag/:file", async (request, reply) => {
    const asset = Object.hasOwn(assets.files, request.params.file) ? assets.files[request.params.file] : undefined;
    if (!asset || request.params.tag !== assets.tag) {
      const path = instanceOf(request);
      return sendProblem(reply, problemMessage(404, "route.not_found", `No route answers GET ${path}.`), path);
    }
    // Read when asked (the bundle is 1.7 MB, rarely fetched): nothing is held in memory between requests.
    const body = await asset.body();
    return documentHeaders(reply, asset.type, "public, max-age=31536000, immutable").send(body);
  });
}
