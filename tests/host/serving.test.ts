import DNS from "dns2";
import { mkdtemp, rm } from "node:fs/promises";
import { request, type IncomingHttpHeaders } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sitesUrl } from "../../services/host/workers/serving.js";
import { SERVERS } from "../support/beside.js";
import { startTestPlatform, type TestPlatform } from "../support/platform.js";
import { itWith } from "../support/skips.js";
import { until } from "../support/until.js";
import { sha256, tarOf, uploadArchive } from "./deploys-support.js";
import {
  asPerson,
  fresh,
  HOST_ENV,
  hostContext,
  projectOf,
  seedStaff,
  siteOf,
  StaffRole,
  type HostCall,
} from "./support.js";

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** One request to a sites listener with this Host, over real HTTP (a fresh connection each). */
function fetchSite(
  url: string,
  host: string,
  path: string,
  { method = "GET", headers = {} }: { method?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const outgoing = request({ hostname, port, path, method, agent: false, headers: { host, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on("error", reject);
    });
    outgoing.on("error", reject);
    outgoing.end();
  });
}

const html = (text: string) => `<!doctype html><title>${text}</title><h1>${text}</h1>\n`;
const DIGITS = "0123456789".repeat(10);
// Long and repetitive: compression saves bytes, so the upload keeps brotli and gzip copies of it.
const PAGE = `<!doctype html><title>compressible</title>${"<p>the same words again and again</p>\n".repeat(200)}`;
const STYLE = "body{color:#000}";

const siteV1 = [
  { name: "index.html", body: html("home v1") },
  { name: "docs/index.html", body: html("docs index") },
  { name: "docs/guide.html", body: html("the guide") },
  { name: "404.html", body: html("custom not found") },
  { name: "app.3f9a1c2b.js", body: "console.log(1);" },
  { name: "style.css", body: STYLE },
  { name: "digits.txt", body: DIGITS },
  { name: "page.html", body: PAGE },
];
const siteV2 = [{ name: "index.html", body: html("home v2") }];

/** A real DNS server on loopback for the domains' TXT verification records: name → TXT strings. */
const zone = new Map<string, string[]>();
const dns = DNS.createServer({
  udp: true,
  handle(question, send) {
    const response = DNS.Packet.createResponseFromRequest(question);
    const name = question.questions[0].name.toLowerCase();
    for (const data of zone.get(name) ?? [])
      response.answers.push({ name, type: DNS.Packet.TYPE.TXT, class: DNS.Packet.CLASS.IN, ttl: 1, data });
    send(response);
  },
});
await dns.listen({ udp: { port: 0, address: "127.0.0.1" } });
const { udp } = dns.addresses();

let blobDir: string;
let first: TestPlatform;
/** A second instance on the same database, NATS namespace and blob directory (when both servers are there). */
let second: TestPlatform | undefined;
let owner: HostCall;
let ownerToken: string;
let staff: HostCall;
const urlOf = (t: TestPlatform) => sitesUrl(hostContext(t))!;

beforeAll(async () => {
  blobDir = await mkdtemp(join(tmpdir(), "pf-host-blobs-"));
  const env = { ...HOST_ENV, PF_BLOB_DIR: blobDir, PF_HOST_DNS_SERVERS: `127.0.0.1:${udp!.port}` };
  first = await startTestPlatform({ services: ["host", "network"], env });
  if (!SERVERS.skips)
    second = await startTestPlatform({
      services: ["host"],
      env: { ...env, DATABASE_URL: first.platform.databaseUrl, PF_NATS_NAMESPACE: first.events!.namespace },
    });
  await seedStaff(first, { usr_servingstaff: StaffRole.OWNER });
  staff = await asPerson(first, "usr_servingstaff");
  ownerToken = await first.token({ kind: "user", sub: "usr_servingowner" });
  owner = await asPerson(first, "usr_servingowner");
}, 120_000);
afterAll(async () => {
  await second?.stop();
  await first?.stop();
  await dns.close();
  await rm(blobDir, { recursive: true, force: true });
});

interface Site {
  id: string;
  slug: string;
  projectId: string;
}

/** A site of its own project, through the gateway. */
async function createSite(): Promise<Site> {
  const projectId = await projectOf(owner);
  return { ...(await siteOf(owner, projectId, fresh("s"))), projectId };
}

/** Uploads a deploy of these files as a tar.gz through the gateway; answers its id. */
async function createDeploy(site: Site, files: { name: string; body: string }[]): Promise<string> {
  const answer = await uploadArchive(first, ownerToken, site.id, await tarOf(files));
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body.deploy.id as string;
}

async function activate(deployId: string): Promise<void> {
  const answer = await owner("POST", `/deploys/${deployId}/activate`, {});
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
}

/** Takes a site (or its whole project) down, or lifts it, as network staff. */
async function takeDown(site: Site, down: boolean, whole: "sites" | "projects" = "sites"): Promise<void> {
  const path = `/${whole}/${whole === "sites" ? site.id : site.projectId}/takedown`;
  const answer = down ? await staff("POST", path, { reason: "Review" }) : await staff("DELETE", path);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
}

describe("a site served by host name", () => {
  let host: string;
  const get = (path: string, headers: Record<string, string> = {}) => fetchSite(urlOf(first), host, path, { headers });

  beforeAll(async () => {
    const site = await createSite();
    // Any port: the edge may forward the one it was asked on.
    host = `${site.slug}.localhost:8090`;
    await activate(await createDeploy(site, siteV1));
  });

  it("serves index.html at /, a directory's index at /docs/, and redirects /docs to /docs/ (its query kept)", async () => {
    const home = await get("/");
    expect(home.status).toBe(200);
    expect(home.body.toString()).toContain("home v1");
    expect(home.headers["content-type"]).toMatch(/^text\/html/);
    expect((await get("/index.html")).body.toString()).toContain("home v1");
    expect((await get("/docs/")).body.toString()).toContain("docs index");
    expect((await get("/docs/guide.html")).body.toString()).toContain("the guide");
    const bare = await get("/docs?tab=1");
    expect(bare.status).toBe(301);
    expect(bare.headers.location).toBe("/docs/?tab=1");
  });

  it("answers a missing file with the site's 404.html and status 404; lists no directory", async () => {
    for (const path of ["/missing.html", "/docs/nothing/", "/assets/", "/%E0%A4%A"]) {
      const missing = await get(path);
      expect(missing.status, path).toBe(404);
      expect(missing.body.toString(), path).toContain("custom not found");
    }
  });

  it("answers If-None-Match with the file's digest as a strong ETag by 304", async () => {
    const style = await get("/style.css");
    expect(style.headers.etag).toBe(`"${sha256(STYLE)}"`);
    const again = await get("/style.css", { "if-none-match": style.headers.etag! });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
    expect(again.headers.etag).toBe(style.headers.etag);
    expect((await get("/style.css", { "if-none-match": '"another"' })).status).toBe(200);
  });

  it("answers a Range by 206 with its bytes, the first of several ranges alone, and one past the end by 416", async () => {
    const part = await get("/digits.txt", { range: "bytes=10-19" });
    expect(part.status).toBe(206);
    expect(part.body.toString()).toBe("0123456789");
    expect(part.headers["content-range"]).toBe("bytes 10-19/100");
    expect(part.headers["content-length"]).toBe("10");
    const suffix = await get("/digits.txt", { range: "bytes=-3" });
    expect([suffix.status, suffix.body.toString(), suffix.headers["content-range"]]).toEqual([
      206,
      "789",
      "bytes 97-99/100",
    ]);
    const several = await get("/digits.txt", { range: "bytes=0-1, 5-6" });
    expect([several.status, several.body.toString()]).toEqual([206, "01"]);
    const past = await get("/digits.txt", { range: "bytes=100-200" });
    expect(past.status).toBe(416);
    expect(past.headers["content-range"]).toBe("bytes */100");
  });

  it("answers HEAD with the headers of GET and no body", async () => {
    const full = await get("/docs/guide.html");
    const head = await fetchSite(urlOf(first), host, "/docs/guide.html", { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    for (const name of ["content-type", "content-length", "etag", "cache-control", "x-content-type-options"])
      expect(head.headers[name], name).toBe(full.headers[name]);
  });

  it("sends the brotli or gzip copy where Accept-Encoding allows it, varying on it", async () => {
    const br = await get("/page.html", { "accept-encoding": "gzip, deflate, br" });
    expect(br.headers["content-encoding"]).toBe("br");
    expect(brotliDecompressSync(br.body).toString()).toBe(PAGE);
    expect(br.headers.vary).toBe("accept-encoding");
    const gzip = await get("/page.html", { "accept-encoding": "gzip, br;q=0" });
    expect(gzip.headers["content-encoding"]).toBe("gzip");
    expect(gunzipSync(gzip.body).toString()).toBe(PAGE);
    const plain = await get("/page.html");
    expect(plain.headers["content-encoding"]).toBeUndefined();
    expect(plain.body.toString()).toBe(PAGE);
    expect(new Set([br.headers.etag, gzip.headers.etag, plain.headers.etag]).size).toBe(3);
    // A file kept without copies is sent as it is.
    expect((await get("/style.css", { "accept-encoding": "br" })).headers["content-encoding"]).toBeUndefined();
  });

  it("sends nosniff, revalidates HTML, keeps hashed names a year and the rest five minutes; never a cookie", async () => {
    const expected = {
      "/": "no-cache",
      "/app.3f9a1c2b.js": "public, max-age=31536000, immutable",
      "/style.css": "public, max-age=300, must-revalidate",
    };
    for (const [path, cacheControl] of Object.entries(expected)) {
      const answer = await get(path);
      expect(answer.headers["cache-control"], path).toBe(cacheControl);
      expect(answer.headers["x-content-type-options"], path).toBe("nosniff");
      expect(answer.headers["set-cookie"], path).toBeUndefined();
    }
    expect((await get("/app.3f9a1c2b.js")).headers["content-type"]).toMatch(/^text\/javascript/);
  });

  it("answers only GET and HEAD (405 with Allow)", async () => {
    for (const method of ["POST", "PUT", "DELETE", "OPTIONS"]) {
      const answer = await fetchSite(urlOf(first), host, "/", { method });
      expect(answer.status, method).toBe(405);
      expect(answer.headers.allow, method).toBe("GET, HEAD");
    }
  });

  it("answers an unknown host, and a site with nothing active, with the platform's 404", async () => {
    const unknown = await fetchSite(urlOf(first), "nobody-here.localhost", "/");
    expect(unknown.status).toBe(404);
    expect(unknown.body.toString()).toContain("No site is served");
    const empty = await fetchSite(urlOf(first), `${(await createSite()).slug}.localhost`, "/");
    expect(empty.status).toBe(404);
  });
});

describe("a switch on every instance", () => {
  let host: string;
  let site: Site;
  let v1: string;
  let v2: string;
  const instances = () => [first, ...(second ? [second] : [])];
  const homeOn = async (t: TestPlatform) => fetchSite(urlOf(t), host, "/");
  const everywhere = (check: (answer: Answer) => boolean) => () =>
    Promise.all(instances().map(homeOn)).then((answers) => answers.every(check));

  beforeAll(async () => {
    site = await createSite();
    host = `${site.slug}.localhost`;
    v1 = await createDeploy(site, siteV1);
    v2 = await createDeploy(site, siteV2);
  });

  itWith(SERVERS, "activating a deploy, then an earlier one, switches what both instances serve", async () => {
    await activate(v2);
    await until(everywhere((answer) => answer.body.toString().includes("home v2")));
    await activate(v1);
    await until(everywhere((answer) => answer.body.toString().includes("home v1")));
  });

  itWith(SERVERS, "a takedown answers 451 on both instances, and lifting it serves the site again", async () => {
    await activate(v1);
    await until(everywhere((answer) => answer.status === 200));
    await takeDown(site, true);
    await until(everywhere((answer) => answer.status === 451));
    const down = await homeOn(second!);
    expect(down.body.toString()).toContain("taken down");
    expect((await fetchSite(urlOf(second!), host, "/style.css")).status).toBe(451);
    await takeDown(site, false);
    await until(everywhere((answer) => answer.status === 200 && answer.body.toString().includes("home v1")));
  });

  itWith(SERVERS, "a takedown of its project answers 451 on both instances too, until it is lifted", async () => {
    await activate(v1);
    await until(everywhere((answer) => answer.status === 200));
    await takeDown(site, true, "projects");
    await until(everywhere((answer) => answer.status === 451));
    await takeDown(site, false, "projects");
    await until(everywhere((answer) => answer.status === 200));
  });
});

describe("custom domains and the TLS ask endpoint", () => {
  let site: Site;
  const hostname = `www.${fresh("d")}.com`;
  const pending = `pending.${fresh("d")}.com`;
  let domainId: string;

  /** Adds a domain to the site; verifies it when its record is published. */
  async function addDomain(name: string, publish: boolean): Promise<string> {
    const added = await owner("POST", `/sites/${site.id}/domains`, { hostname: name });
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    const { id, verification } = added.body.domain;
    if (publish) {
      zone.set(verification.name, [verification.value]);
      const verified = await owner("POST", `/domains/${id}/verify`, {});
      expect(verified.body.domain.status, JSON.stringify(verified.body)).toBe("DOMAIN_STATUS_VERIFIED");
    }
    return id as string;
  }

  beforeAll(async () => {
    site = await createSite();
    await activate(await createDeploy(site, siteV1));
    domainId = await addDomain(hostname, true);
    await addDomain(pending, false);
  });

  it("serves a verified custom domain (any case, port, trailing dot), not an unverified one; removal stops it", async () => {
    const verified = await fetchSite(urlOf(first), `${hostname.toUpperCase()}.:443`, "/");
    expect(verified.status).toBe(200);
    expect(verified.body.toString()).toContain("home v1");
    expect((await fetchSite(urlOf(first), pending, "/")).status).toBe(404);
    // Served (and remembered) just before its removal: the removal's event ends it.
    expect((await fetchSite(urlOf(first), hostname, "/")).status).toBe(200);
    expect((await owner("DELETE", `/domains/${domainId}`)).status).toBe(200);
    await until(async () => (await fetchSite(urlOf(first), hostname, "/")).status === 404);
  });

  it("answers the ask 200 for a site's host or a verified domain, 404 otherwise, on a host that is no site", async () => {
    const ask = (domain: string) =>
      fetchSite(urlOf(first), "localhost:8090", `/.well-known/pf-host/tls-ask?domain=${encodeURIComponent(domain)}`);
    const shop = `shop.${fresh("d")}.org`;
    await addDomain(shop, true);
    expect((await ask(shop)).status).toBe(200);
    expect((await ask(`${site.slug}.localhost`)).status).toBe(200);
    expect((await ask(pending)).status).toBe(404);
    expect((await ask("unknown.example.net")).status).toBe(404);
    expect((await ask("nobody.localhost")).status).toBe(404);
    expect((await fetchSite(urlOf(first), "localhost", "/.well-known/pf-host/tls-ask")).status).toBe(404);
    // On a site's own host the path is the site's: no answer about other names there.
    const onSite = await fetchSite(
      urlOf(first),
      `${site.slug}.localhost`,
      `/.well-known/pf-host/tls-ask?domain=${shop}`,
    );
    expect(onSite.status).toBe(404);
    expect(onSite.body.toString()).toContain("custom not found");
  });
});
