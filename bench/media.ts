import Fastify from "fastify";
import { createHash, randomBytes } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { Benchmark, LoadResult, LoadSettings } from "./load.js";
import { startBenchPlatform } from "./platform.js";
import { profiling, startProfile } from "./profile.js";

const MIB = 1024 * 1024;
/** The file moved each time, and how many move at once. */
const FILE_BYTES = 8 * MIB;
const CONCURRENCY = 4;

/**
 * `media upload` and `media download`: an 8 MiB file moved through the gateway
 * (multipart in, streamed to the directory blob store with its digest; bytes
 * out of `/f/{key}`) against a bare Fastify route streaming the same file to or
 * from disk (hashing what it receives), 4 at a time. Reported in MB/s.
 */
export const mediaTransfer: Benchmark = {
  name: "media transfer",
  async run(settings) {
    // The anonymous read limit raised out of the way: every download here comes from one address.
    const bench = await startBenchPlatform({
      PF_SERVICES: "media",
      PF_MEDIA_MAX_BYTES: String(64 * MIB),
      PF_MEDIA_ANONYMOUS_READS_PER_MINUTE: "1000000000",
      // Every upload goes into one namespace: its quota out of the way too.
      PF_MEDIA_QUOTA_BYTES: String(2 ** 50),
    });
    const dir = await mkdtemp(join(tmpdir(), "pf-bench-media-"));
    const bare = Fastify();
    try {
      const bytes = randomBytes(FILE_BYTES);
      const source = join(dir, "source.bin");
      await writeFile(source, bytes);
      bare.removeAllContentTypeParsers();
      bare.addContentTypeParser("*", (_request, _payload, done) => done(null));
      let stored = 0;
      bare.post("/upload", async (request) => {
        const hash = createHash("sha256");
        const hashing = new Transform({
          transform: (chunk: Buffer, _e, next) => next(null, hash.update(chunk) && chunk),
        });
        await pipeline(request.raw, hashing, createWriteStream(join(dir, `up-${stored++ % 8}.bin`)));
        return { sha256: hash.digest("hex") };
      });
      bare.get("/download", (_request, reply) => reply.type("application/octet-stream").send(createReadStream(source)));
      await bare.listen({ port: 0, host: "127.0.0.1" });
      const bareUrl = `http://127.0.0.1:${(bare.server.address() as AddressInfo).port}`;

      const token = await bench.platform.mintToken({ kind: "app", app_id: "bench", caps: ["media.object.upload"] });
      const uploadUrl = `${bench.gatewayUrl}/media/api/v1/bench/files`;
      // Both targets get the same multipart body, encoded once: fetch encoding a FormData each time cost the client
      // (in this process) 10–20 ms of CPU an upload more than a Blob, charged to the gateway's row alone. The bare
      // route stores the body as it comes; reading the form is part of what the gateway is measured doing.
      const encoded = new Response(formOf(bytes));
      const form = { type: encoded.headers.get("content-type")!, bytes: Buffer.from(await encoded.arrayBuffer()) };
      const upload = (url: string) => async () => {
        const body = new Blob([form.bytes], { type: form.type });
        const response = await fetch(url, { method: "POST", body, headers: { authorization: `Bearer ${token}` } });
        await response.arrayBuffer();
        return response.ok;
      };
      const first = await fetch(uploadUrl, {
        method: "POST",
        body: new Blob([form.bytes], { type: form.type }),
        headers: { authorization: `Bearer ${token}` },
      });
      if (first.status !== 201) throw new Error(`upload answered ${first.status}: ${await first.text()}`);
      const { key } = (await first.json()) as { key: string };
      const download = (url: string) => async () => {
        const response = await fetch(url);
        return response.ok && (await response.arrayBuffer()).byteLength === FILE_BYTES;
      };

      // The same file each time: files/s to the bare route's is the MB/s ratio (goal ≥ 0.8 both ways, issue 33).
      const rows = [
        await transfer("upload: bare fastify", upload(`${bareUrl}/upload`), settings),
        {
          ...(await transfer("upload: gateway (fs store)", upload(uploadUrl), settings)),
          goal: { figure: "ratio", of: "upload: bare fastify", atLeast: 0.8 } as const,
        },
        await transfer("download: bare fastify", download(`${bareUrl}/download`), settings),
        {
          ...(await transfer("download: gateway /f/{key}", download(`${bench.gatewayUrl}/media/f/${key}`), settings)),
          goal: { figure: "ratio", of: "download: bare fastify", atLeast: 0.8 } as const,
        },
      ];
      const mbps = (row: LoadResult) => (row.rps * FILE_BYTES) / 1e6;
      const notes = rows.map((row) => `${row.label}: ${mbps(row).toFixed(0)} MB/s`);
      notes.push(
        `upload: gateway/bare = ${(mbps(rows[1]) / mbps(rows[0])).toFixed(2)}; download: gateway/bare = ${(mbps(rows[3]) / mbps(rows[2])).toFixed(2)} (${CONCURRENCY} at a time, ${FILE_BYTES / MIB} MiB each, client in process)`,
      );
      return { rows, notes };
    } finally {
      await bare.close();
      await bench.stop();
      await rm(dir, { recursive: true, force: true });
    }
  },
};

function formOf(bytes: Buffer): FormData {
  const form = new FormData();
  form.append("file", new Blob([bytes], { type: "application/octet-stream" }), "bench.bin");
  return form;
}

/**
 * Runs `once` CONCURRENCY at a time for the warm-up, then measures for the duration: files per second and latency
 * (with BENCH_PROFILE=1, the window's profile).
 */
async function transfer(label: string, once: () => Promise<boolean>, settings: LoadSettings): Promise<LoadResult> {
  const drive = async (seconds: number, times: number[]) => {
    let failures = 0;
    const until = Date.now() + seconds * 1000;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (Date.now() < until) {
          const start = performance.now();
          const ok = await once().catch(() => false);
          times.push(performance.now() - start);
          if (!ok) failures++;
        }
      }),
    );
    return failures;
  };
  await drive(settings.warmup, []);
  const times: number[] = [];
  const profile = profiling() ? await startProfile() : undefined;
  const cpu = process.cpuUsage();
  const started = performance.now();
  const failures = await drive(settings.duration, times);
  const elapsed = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  const hot = await profile?.();
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? 0;
  return {
    label,
    requests: times.length,
    rps: times.length / elapsed,
    p50: at(0.5),
    p99: at(0.99),
    failures,
    cpuPerRequest: (used.user + used.system) / Math.max(1, times.length),
    profile: hot,
  };
}
