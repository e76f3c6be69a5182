import { createHash } from "node:crypto";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { buffer } from "node:stream/consumers";
import { createGzip } from "node:zlib";
import { pack, type Headers } from "tar-stream";
import { expect } from "vitest";
import { qualified } from "../../services/kit/db/orm.js";
import type { HttpAnswer, TestPlatform } from "../support/platform.js";
import { fresh, hostContext } from "./support.js";

export const sha256 = (bytes: Uint8Array | string) => createHash("sha256").update(bytes).digest("hex");

/** A person's own token, a project they own and a site in it. */
export async function siteOfOwnProject(t: TestPlatform): Promise<{ token: string; projectId: string; siteId: string }> {
  const person = `usr_${fresh("deployer")}`;
  const token = await t.token({ kind: "user", sub: person });
  const project = await t.http("POST", "/host/api/v1/projects", { token, body: { name: "Deploys" } });
  expect(project.status, JSON.stringify(project.body)).toBe(201);
  const projectId: string = project.body.project.id;
  const slug = fresh("d");
  const site = await t.http("POST", `/host/api/v1/projects/${projectId}/sites`, { token, body: { slug } });
  expect(site.status, JSON.stringify(site.body)).toBe(201);
  return { token, projectId, siteId: site.body.site.id };
}

/** One tar entry: a file with its bytes, or any other header (links, devices); `pax`: records tar-stream writes. */
export type Entry = Headers & { body?: string | Buffer; pax?: Record<string, string> };

/** A tar of these entries, gzipped when asked. */
export async function tarOf(entries: Entry[], gzip = true): Promise<Buffer> {
  const archive = pack();
  // Read as it is written: the packer holds only so much.
  const packed = buffer(gzip ? archive.pipe(createGzip()) : archive);
  for (const entry of entries) {
    const { body, ...header } = entry;
    await new Promise<void>((resolve, reject) =>
      archive.entry(header, body === undefined ? undefined : Buffer.from(body), (error) =>
        error ? reject(error) : resolve(),
      ),
    );
  }
  archive.finalize();
  return packed;
}

/** A small site: pages, a stylesheet, a script, an image (not compressible) and a well-known file. */
export const SITE: { name: string; body: string | Buffer }[] = [
  { name: "index.html", body: `<!doctype html><title>Home</title>${"<p>Welcome to the site.</p>".repeat(40)}` },
  { name: "about/index.html", body: "<!doctype html><title>About</title>" },
  { name: "assets/app.3f9a1c2b.css", body: `body { color: #123; }\n${".x { margin: 0 }\n".repeat(50)}` },
  { name: "assets/app.js", body: `console.log("hello");\n${"export const a = 1;\n".repeat(50)}` },
  { name: "img/dot.png", body: Buffer.from("89504e470d0a1a0a0000000d49484452", "hex") },
  { name: ".well-known/security.txt", body: "Contact: mailto:security@example.com\n" },
];

/** POSTs a raw archive body to the site's deploys. */
export async function uploadArchive(
  t: TestPlatform,
  token: string,
  siteId: string,
  body: Buffer,
  type = "application/gzip",
): Promise<HttpAnswer> {
  return answerOf(
    await fetch(`${t.gatewayUrl}/host/api/v1/sites/${siteId}/deploys`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": type },
      body,
    }),
  );
}

/** POSTs files as multipart parts, each named by its path. */
export async function uploadFiles(
  t: TestPlatform,
  token: string,
  siteId: string,
  files: { name: string; body: string | Buffer; type?: string }[],
): Promise<HttpAnswer> {
  const form = new FormData();
  for (const file of files)
    form.append("file", new Blob([file.body], { type: file.type ?? "application/octet-stream" }), file.name);
  return answerOf(
    await fetch(`${t.gatewayUrl}/host/api/v1/sites/${siteId}/deploys`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
      body: form,
    }),
  );
}

async function answerOf(response: Response): Promise<HttpAnswer> {
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text === "" ? undefined : JSON.parse(text) };
}

/** The blob store's objects of host (names under its prefix), sorted. */
export async function blobObjects(t: TestPlatform): Promise<string[]> {
  const dir = join(hostContext(t).config.dataDir, "blobs", "host");
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(dir.length + 1))
    .sort();
}

/** Rows of a host table, by a raw query (`{table}` qualified). */
export async function hostRows<T>(t: TestPlatform, text: string, params: unknown[] = []): Promise<T[]> {
  const em = hostContext(t).orm.em;
  const sqlText = text.replace(/\{([a-z_]+)\}/g, (_, table: string) => qualified(em, table));
  return em.getConnection().execute<T[]>(sqlText, params);
}

/** The deploys of a project in each state. */
export async function deployStates(t: TestPlatform, projectId: string): Promise<Record<string, number>> {
  const rows = await hostRows<{ state: string; n: number }>(
    t,
    `select state, count(*)::int as n from {deploys} where project_id = ? group by state`,
    [projectId],
  );
  return Object.fromEntries(rows.map((row) => [row.state, row.n]));
}

/** The blob's bytes as the store keeps them. */
export async function blobBytes(t: TestPlatform, digest: string): Promise<Buffer> {
  return buffer((await hostContext(t).blobs.get(digest)) as Readable);
}
