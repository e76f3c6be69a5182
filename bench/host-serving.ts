import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { HostContext } from "../services/host/context.js";
import { sitesUrl } from "../services/host/workers/serving.js";
import { freePorts } from "../tests/support/ports.js";
import { runLoad, type Benchmark, type LoadResult } from "./load.js";
import { startBenchPlatform, type BenchPlatform } from "./platform.js";

const MIB = 1024 * 1024;
const SLUG = "bench";
/** The site: a small page (served for `/`) and a 1 MiB photo, the same bytes for both servers. */
const FILES = {
  "index.html": { bytes: Buffer.from(`<!doctype html><title>bench</title>${"<p>static</p>".repeat(70)}\n`) },
  "photo.jpg": { bytes: randomBytes(MIB) },
};

/**
 * `host serving`: the sites listener against Debian's nginx (started here on loopback, one worker as the listener is
 * one event loop, over the same files in a temp directory): a small page's req/s and a 1 MiB file's MB/s. Goal: at
 * least half of nginx's. Without an `nginx` on PATH the serving plane is measured alone.
 */
export const hostServing: Benchmark = {
  name: "host serving",
  async run(settings) {
    const bench = await startBenchPlatform({ PF_SERVICES: "host", PF_HOST_SITES_PORT: "0" });
    const dir = await mkdtemp(join(tmpdir(), "pf-bench-host-"));
    let nginx: ChildProcess | undefined;
    try {
      const ctx = bench.platform.contexts.get("host") as HostContext;
      await deploySite(bench);
      const sites = sitesUrl(ctx)!;
      const host = { host: `${SLUG}.${ctx.settings.sitesDomain}` };
      const rows: LoadResult[] = [];
      const notes: string[] = [];
      const nginxUrl = await startNginx(dir).then(
        (started) => {
          nginx = started.child;
          return started.url;
        },
        (error: Error) => {
          notes.push(`nginx skipped: ${error.message}`);
          return undefined;
        },
      );
      const pair = async (what: string, path: string) => {
        const ours = await runLoad(`${what}: serving plane`, { url: sites + path, headers: host }, settings);
        const theirs = nginxUrl && (await runLoad(`${what}: nginx`, { url: nginxUrl + path }, settings));
        rows.push(ours, ...(theirs ? [theirs] : []));
        return [ours, theirs] as const;
      };
      const [small, smallNginx] = await pair("small page", "/");
      const [large, largeNginx] = await pair("1 MiB file", "/photo.jpg");
      const mbps = (row: LoadResult) => (row.rps * MIB) / 1e6;
      notes.push(`1 MiB file: serving plane ${mbps(large).toFixed(0)} MB/s`);
      if (smallNginx && largeNginx) {
        notes.push(`1 MiB file: nginx ${mbps(largeNginx).toFixed(0)} MB/s`);
        notes.push(
          `serving/nginx: small page ${(small.rps / smallNginx.rps).toFixed(2)}, 1 MiB file ${(mbps(large) / mbps(largeNginx)).toFixed(2)} (goal >= 0.5)`,
        );
      }
      return { rows, notes };
    } finally {
      nginx?.kill("SIGTERM");
      if (nginx && nginx.exitCode === null) await new Promise((resolve) => nginx!.once("exit", resolve));
      await bench.stop();
      await rm(dir, { recursive: true, force: true });
    }
  },
};

/** A project, its site and an active deploy of FILES, through the gateway as a person would (multipart upload). */
async function deploySite(bench: BenchPlatform): Promise<void> {
  const token = await bench.platform.mintToken({ kind: "user", sub: "usr_bench" });
  const call = async (path: string, body: string | FormData, type?: string) => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, ...(type && { "content-type": type }) };
    const answer = await fetch(`${bench.gatewayUrl}/host/api/v1${path}`, { method: "POST", headers, body });
    const json = (await answer.json()) as Record<string, { id: string }>;
    if (!answer.ok) throw new Error(`POST ${path}: ${answer.status} ${JSON.stringify(json)}`);
    return json;
  };
  const project = await call("/projects", JSON.stringify({ name: "bench" }), "application/json");
  const site = await call(`/projects/${project.project.id}/sites`, JSON.stringify({ slug: SLUG }), "application/json");
  const form = new FormData();
  for (const [path, { bytes }] of Object.entries(FILES)) form.append("file", new Blob([bytes]), path);
  const deploy = await call(`/sites/${site.site.id}/deploys`, form);
  await call(`/deploys/${deploy.deploy.id}/activate`, "{}", "application/json");
}

/** nginx on a free loopback port, serving FILES from `dir/site` with a config written there; rejects when it cannot. */
async function startNginx(dir: string): Promise<{ child: ChildProcess; url: string }> {
  if (spawnSync("nginx", ["-v"]).error) throw new Error("no `nginx` on PATH (apt-get install nginx-light)");
  const site = join(dir, "site");
  await mkdir(site);
  for (const [path, { bytes }] of Object.entries(FILES)) await writeFile(join(site, path), bytes);
  // Its workers drop root for nobody, who must read the files.
  await chmod(dir, 0o755);
  await chmod(site, 0o755);
  const [port] = await freePorts(1);
  const conf = join(dir, "nginx.conf");
  await writeFile(
    conf,
    `worker_processes 1;
daemon off;
pid ${join(dir, "nginx.pid")};
error_log ${join(dir, "error.log")} warn;
events { worker_connections 4096; }
http {
  types { text/html html; image/jpeg jpg; }
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  client_body_temp_path ${join(dir, "body")};
  server {
    listen 127.0.0.1:${port};
    root ${site};
    index index.html;
  }
}
`,
  );
  const child = spawn("nginx", ["-p", dir, "-e", join(dir, "error.log"), "-c", conf], { stdio: "ignore" });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited (${child.exitCode}); see its error.log`);
    const ok = await fetch(`${url}/`).then(
      (answer) => answer.ok,
      () => false,
    );
    if (ok) return { child, url };
    if (Date.now() > deadline) {
      child.kill("SIGTERM");
      throw new Error("nginx did not answer within 10 s");
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
