import { readdir } from "node:fs/promises";
import { join } from "node:path";
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { JobRow } from "../../services/tools/db/entities.js";
import { appClaims, upload } from "../media/support.js";
import { outboxEvents } from "../support/outbox.js";
import { usePlatform } from "../support/platform.js";
import type { SentEvent } from "../support/sse.js";
import {
  createWithFiles,
  fileBytes,
  person,
  png,
  sha256,
  toolsCall,
  toolsOf,
  untilJob,
  watch,
} from "./jobs-support.js";

const t = usePlatform({ services: ["tools", "media"], env: { PF_TOOLS_MAX_FILE_BYTES: "200000" } });

const user = async () => {
  const sub = person();
  return { sub, token: await t.token({ kind: "user", sub }) };
};

/** The events of a stream up to its end. */
async function eventsToEnd(stream: NonNullable<Awaited<ReturnType<typeof watch>>["stream"]>): Promise<SentEvent[]> {
  const events: SentEvent[] = [];
  for (let event = await stream.next(30_000); event; event = await stream.next(30_000)) events.push(event);
  return events;
}

describe("job creation, progress, and result files", () => {
  it("creates an img.process job from a form, streams its progress (resumable), and serves its result", async () => {
    const { sub, token } = await user();
    const image = await png(80, 60);
    const created = await createWithFiles(
      t.gatewayUrl,
      token,
      "img.process",
      { resize: { width: 40 }, format: "png" },
      [{ name: "photo.png", type: "image/png", data: image }],
    );
    expect(created.status).toBe(201);
    const job = created.body;
    expect(job).toMatchObject({ tool: "img.process", owner: sub, state: "queued", progress: 0, attempts: 0 });
    expect(job.id).toMatch(/^job_[0-9a-z]{24}$/);
    expect(job.input).toEqual({ resize: { width: 40 }, format: "png" });
    expect(job.inputs).toEqual([
      { n: 1, name: "photo.png", content_type: "image/png", size: String(image.length), sha256: sha256(image) },
    ]);

    const opened = await watch(t.gatewayUrl, token, job.id);
    expect(opened.status).toBe(200);
    const stream = opened.stream!;
    // First the job as it stands (no id), then its events, each with its persisted id, up to its end.
    const head = await stream.next(30_000);
    expect(head?.id).toBeUndefined();
    expect(head?.data.job.id).toBe(job.id);
    const events = await eventsToEnd(stream);
    expect(stream.ended).toBe(true);
    const kinds = events.map((event) => event.data.kind);
    expect(kinds[0]).toBe("queued");
    expect(kinds[1]).toBe("started");
    expect(kinds).toContain("progress");
    expect(kinds.at(-1)).toBe("succeeded");
    const ids = events.map((event) => BigInt(event.id!));
    expect([...ids].sort((a, b) => (a < b ? -1 : 1))).toEqual(ids);
    const done = events.at(-1)!.data.job;
    expect(done).toMatchObject({ state: "succeeded", progress: 100, attempts: 1, output: { width: 40, height: 30 } });
    expect(done.files).toHaveLength(1);

    // A client resuming after the second event is sent only what followed it.
    const resumed = await watch(t.gatewayUrl, token, job.id, { "last-event-id": events[1].id! });
    const after = await eventsToEnd(resumed.stream!);
    expect(after.slice(1).map((event) => event.id)).toEqual(events.slice(2).map((event) => event.id));
    // …and after its end, nothing but the job as it stands.
    const ended = await watch(t.gatewayUrl, token, job.id, { "last-event-id": events.at(-1)!.id! });
    expect((await eventsToEnd(ended.stream!)).map((event) => event.id)).toEqual([undefined]);

    const file = done.files[0];
    const whole = await fileBytes(t.gatewayUrl, token, job.id, 1);
    expect(whole.status).toBe(200);
    expect(whole.headers.get("content-type")).toBe("image/png");
    expect(whole.headers.get("etag")).toBe(`"${file.sha256}"`);
    expect(sha256(whole.bytes)).toBe(file.sha256);
    expect(whole.bytes.length).toBe(Number(file.size));
    expect((await sharp(whole.bytes).metadata()).width).toBe(40);
    const part = await fileBytes(t.gatewayUrl, token, job.id, 1, { range: "bytes=0-9" });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe(`bytes 0-9/${file.size}`);
    expect(part.bytes).toEqual(whole.bytes.subarray(0, 10));
    const unchanged = await fileBytes(t.gatewayUrl, token, job.id, 1, { "if-none-match": `"${file.sha256}"` });
    expect(unchanged.status).toBe(304);
    expect(unchanged.bytes.length).toBe(0);
    const outside = await fileBytes(t.gatewayUrl, token, job.id, 1, { range: `bytes=${Number(file.size) + 10}-` });
    expect(outside.status).toBe(416);
    expect(JSON.parse(outside.bytes.toString()).code).toBe("tools.range_unsatisfiable");
    const missing = await fileBytes(t.gatewayUrl, token, job.id, 2);
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.bytes.toString()).code).toBe("tools.file.not_found");

    // Its end is published from the outbox.
    const published = await outboxEvents(t, "tools", job.id);
    expect(published.map((event) => event.subject)).toEqual(["tools.job.succeeded"]);
  });

  it("creates a job from JSON naming a media object, read from media as its input file", async () => {
    const { token } = await user();
    const appToken = await t.token(appClaims("jobsapp"));
    const image = await png(30, 30);
    const stored = await upload(t, appToken, image, "square.png", "image/png", "jobsapp");
    expect(stored.status).toBe(201);
    const call = toolsCall(t, token);
    const created = await call("POST", "/jobs", {
      tool: "img.process",
      input: { format: "webp" },
      media_keys: [stored.body.key],
    });
    expect(created.status).toBe(201);
    expect(created.body.inputs).toEqual([
      { n: 1, name: "square.png", content_type: "image/png", size: String(image.length), sha256: sha256(image) },
    ]);
    const done = await untilJob(t, token, created.body.id, ["succeeded", "failed"]);
    expect(done).toMatchObject({ state: "succeeded", output: { format: "webp", width: 30, height: 30 } });
    const bytes = await fileBytes(t.gatewayUrl, token, created.body.id, 1);
    expect(bytes.headers.get("content-type")).toBe("image/webp");
    expect((await sharp(bytes.bytes).metadata()).format).toBe("webp");

    const unknown = await call("POST", "/jobs", { tool: "img.process", input: {}, media_keys: ["B".repeat(24)] });
    expect([unknown.status, unknown.body.code]).toEqual([404, "media.file.not_found"]);
  });

  it("answers a repeat under an Idempotency-Key with the same job, and another request under it 409", async () => {
    const { token } = await user();
    const image = await png(20, 20);
    const send = (input: unknown, data = image) =>
      createWithFiles(t.gatewayUrl, token, "img.process", input, [{ name: "a.png", type: "image/png", data }], {
        "idempotency-key": "create-1",
      });
    const first = await send({ format: "png", quality: 80 });
    expect(first.status).toBe(201);
    // The same input with its members in another order is the same request.
    const again = await send({ quality: 80, format: "png" });
    expect(again.status).toBe(201);
    expect(again.body.id).toBe(first.body.id);
    const otherInput = await send({ format: "jpeg" });
    expect([otherInput.status, otherInput.body.code]).toEqual([409, "idempotency.mismatch"]);
    const otherFile = await send({ format: "png", quality: 80 }, await png(21, 20));
    expect([otherFile.status, otherFile.body.code]).toEqual([409, "idempotency.mismatch"]);
    const rows = await toolsOf(t).orm.em.fork().count(JobRow, { idempotencyKey: "create-1" });
    expect(rows).toBe(1);
    // Concurrent repeats: still one job.
    const concurrent = await Promise.all(
      [1, 2, 3].map(() =>
        createWithFiles(t.gatewayUrl, token, "img.process", {}, [{ name: "b.png", type: "image/png", data: image }], {
          "idempotency-key": "create-2",
        }),
      ),
    );
    expect(concurrent.map((answer) => answer.status)).toEqual([201, 201, 201]);
    expect(new Set(concurrent.map((answer) => answer.body.id)).size).toBe(1);
  });

  it("answers another caller's job as a missing one on every route", async () => {
    const owner = await user();
    const other = await user();
    const created = await createWithFiles(t.gatewayUrl, owner.token, "img.process", {}, [
      { name: "a.png", type: "image/png", data: await png(10, 10) },
    ]);
    await untilJob(t, owner.token, created.body.id, ["succeeded"]);
    const id = created.body.id;
    const call = toolsCall(t, other.token);
    for (const [method, path, body] of [
      ["GET", `/jobs/${id}`],
      ["DELETE", `/jobs/${id}`],
      ["GET", `/jobs/${id}/files/1`],
      ["POST", `/jobs/${id}/retry`, {}],
      ["PUT", `/jobs/${id}/references/blog:post:pst_1`, {}],
      ["DELETE", `/jobs/${id}/references/blog:post:pst_1`],
    ] as const) {
      const answer = await call(method, path, body);
      expect([method, path, answer.status, answer.body.code]).toEqual([method, path, 404, "tools.job.not_found"]);
    }
    const events = await watch(t.gatewayUrl, other.token, id);
    expect([events.status, events.problem.code]).toEqual([404, "tools.job.not_found"]);
    // The owner still has it, untouched.
    expect((await untilJob(t, owner.token, id, ["succeeded"])).references).toEqual([]);
  });
});

describe("refused creations", () => {
  it("refuses, storing nothing: an unknown tool, an inline tool, bad input, a file it does not take, too big, too many, none", async () => {
    const { token } = await user();
    const image = await png(10, 10);
    const blobsBefore = new Set(await blobPaths());
    const jobsBefore = await toolsOf(t).orm.em.fork().count(JobRow, {});
    const cases: [string, Promise<{ status: number; body: any }>, number, string][] = [
      ["unknown", createWithFiles(t.gatewayUrl, token, "img.nothing", {}, [png1(image)]), 404, "tools.tool.not_found"],
      ["inline", toolsCall(t, token)("POST", "/jobs", { tool: "text.hash", input: {} }), 400, "tools.input.invalid"],
      [
        "input",
        createWithFiles(t.gatewayUrl, token, "img.process", { size: 3 }, [png1(image)]),
        400,
        "tools.input.invalid",
      ],
      [
        "type",
        createWithFiles(t.gatewayUrl, token, "img.process", {}, [{ name: "a.txt", type: "text/plain", data: image }]),
        415,
        "tools.file.unsupported",
      ],
      [
        "size",
        createWithFiles(t.gatewayUrl, token, "img.process", {}, [
          { name: "big.png", type: "image/png", data: Buffer.concat([image, Buffer.alloc(200_001)]) },
        ]),
        413,
        "tools.file.too_large",
      ],
      [
        "count",
        createWithFiles(t.gatewayUrl, token, "img.process", {}, [png1(image), png1(image)]),
        400,
        "tools.file.too_many",
      ],
      ["none", toolsCall(t, token)("POST", "/jobs", { tool: "img.process", input: {} }), 400, "tools.file.missing"],
    ];
    for (const [what, answer, status, code] of cases) {
      const { status: got, body } = await answer;
      expect([what, got, body.code]).toEqual([what, status, code]);
    }
    const invalid = (await cases[2][1]).body;
    expect(invalid.errors[0].pointer).toBe("/size");
    expect(await toolsOf(t).orm.em.fork().count(JobRow, {})).toBe(jobsBefore);
    expect((await blobPaths()).filter((path) => !blobsBefore.has(path))).toEqual([]);
  });
});

const png1 = (data: Buffer) => ({ name: "a.png", type: "image/png", data });

/** The files under the blob store's directory (the fs store), temporary ones included. */
async function blobPaths(): Promise<string[]> {
  const dir = join(toolsOf(t).config.dataDir, "blobs");
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
}
