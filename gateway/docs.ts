import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { FastifyInstance, FastifyReply } from "fastify";
import { problemMessage } from "../services/kit/handler/problem.js";
import { instanceOf, sendProblem } from "./problems.js";

/**
 * `/docs`: Swagger UI (swagger-ui-dist, served from node_modules, no CDN) over
 * `/openapi.json`, with "Try it out" against this gateway and "Authorize" taking
 * a pasted bearer token. `GET /` redirects to it.
 */

const packages = createRequire(import.meta.url);
const SWAGGER_UI = dirname(packages.resolve("swagger-ui-dist/package.json"));
const SWAGGER_UI_VERSION = (packages("swagger-ui-dist/package.json") as { version: string }).version;

/**
 * The page's own script (a file, so the CSP needs no inline script). After
 * "Authorize" or "Logout" the document is fetched again with the token: a
 * service token reads the whole document, internal routes too (gateway README).
 */
const INIT_SCRIPT = `"use strict";
const token = (system) => system.authSelectors.authorized().getIn(["bearer", "value"]);
const refetching = (next, system) => (payload) => {
  const answer = next(payload);
  system.specActions.download();
  return answer;
};
window.ui = SwaggerUIBundle({
  url: "/openapi.json",
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
`;

/** What the page loads: swagger-ui-dist's files it needs, and its script. */
const ASSETS: Record<string, { type: string; body: () => Promise<Buffer | string> }> = {
  "swagger-ui.css": { type: "text/css; charset=utf-8", body: () => readFile(join(SWAGGER_UI, "swagger-ui.css")) },
  "swagger-ui-bundle.js": {
    type: "text/javascript; charset=utf-8",
    body: () => readFile(join(SWAGGER_UI, "swagger-ui-bundle.js")),
  },
  "init.js": { type: "text/javascript; charset=utf-8", body: () => Promise.resolve(INIT_SCRIPT) },
};

/** Names what the assets are: a new swagger-ui-dist or script is a new URL, so assets may be cached for good. */
const ASSET_TAG = createHash("sha256").update(`${SWAGGER_UI_VERSION}\n${INIT_SCRIPT}`).digest("hex").slice(0, 12);
const ASSET_BASE = `/docs/assets/${ASSET_TAG}`;

const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <title>pf platform API</title>
    <link rel="icon" href="data:,">
    <link rel="stylesheet" href="${ASSET_BASE}/swagger-ui.css">
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="${ASSET_BASE}/swagger-ui-bundle.js"></script>
    <script src="${ASSET_BASE}/init.js"></script>
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

export function registerDocs(app: FastifyInstance): void {
  // A redirect, not a page: the root may answer something else later, so it is temporary and not cached.
  app.get("/", (_request, reply) => {
    void reply.header("cache-control", "no-cache").redirect("/docs", 302);
  });
  // The page names the current assets: revalidated each time, so a new version is seen at once.
  app.get("/docs", (_request, reply) => {
    void documentHeaders(reply, "text/html; charset=utf-8", "no-cache").send(PAGE);
  });
  app.get<{ Params: { tag: string; file: string } }>("/docs/assets/:tag/:file", async (request, reply) => {
    const asset = Object.hasOwn(ASSETS, request.params.file) ? ASSETS[request.params.file] : undefined;
    if (!asset || request.params.tag !== ASSET_TAG) {
      const path = instanceOf(request);
      return sendProblem(reply, problemMessage(404, "route.not_found", `No route answers GET ${path}.`), path);
    }
    // Read when asked (the bundle is 1.7 MB, rarely fetched): nothing is held in memory between requests.
    const body = await asset.body();
    return documentHeaders(reply, asset.type, "public, max-age=31536000, immutable").send(body);
  });
}
