import type { ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ExitReason } from "../../gen/pf/bot/v1/jobs_pb.js";
import { INPUT_DIGEST_MISMATCH } from "../../agent/jobs.js";
import { fixtureServer, type Fixture } from "../support/http-fixture.js";
import { until } from "../support/until.js";
import { jobsUnderTest, sha256 } from "./support.js";

const BYTES = "the pinned bytes\n";

// Inputs come from media (`<media_url>/f/<key>`) and are checked before the job starts.
describe("job inputs", () => {
  let media: Fixture;
  let held: ServerResponse | undefined;
  let t: Awaited<ReturnType<typeof jobsUnderTest>>;
  beforeAll(async () => {
    media = await fixtureServer((request, response) => {
      if (request.url === "/media/f/pinned") return void response.end(BYTES);
      if (request.url === "/media/f/slow") return void (held = response);
      response.writeHead(404).end();
    });
    t = await jobsUnderTest({ mediaUrl: media.url("/media") });
  });
  afterAll(async () => {
    await t.close();
    await media.close();
  });

  const input = (mediaKey: string, overrides: { size?: bigint; sha256?: string; name?: string } = {}) => ({
    name: "data.txt",
    mediaKey,
    size: BigInt(Buffer.byteLength(BYTES)),
    sha256: sha256(BYTES),
    ...overrides,
  });

  it("that match their size and sha256 let the job run; the media address is the gateway's when the frame has none", async () => {
    t.dispatch("job_in", { class: "function", artifact: "echo", args: { text: "x" }, inputs: [input("pinned")] });
    expect((await t.exit("job_in")).reason).toBe(ExitReason.COMPLETED);
    expect(media.requests.map((request) => request.url)).toContain("/media/f/pinned");
  });

  it("read from the frame's media address when it names one", async () => {
    const other = await fixtureServer((_, response) => response.end(BYTES));
    try {
      const job = { class: "function", artifact: "echo", args: { text: "x" }, inputs: [input("pinned")] };
      t.dispatch("job_other_media", job, other.url("/elsewhere"));
      expect((await t.exit("job_other_media")).reason).toBe(ExitReason.COMPLETED);
      expect(other.requests.map((request) => request.url)).toEqual(["/elsewhere/f/pinned"]);
    } finally {
      await other.close();
    }
  });

  it("whose sha256 differs end the job input_digest_mismatch before it starts", async () => {
    const job = { class: "function", artifact: "echo", args: { text: "x" } };
    t.dispatch("job_digest", { ...job, inputs: [input("pinned", { sha256: sha256("other bytes") })] });
    const exit = await t.exit("job_digest");
    expect(exit).toMatchObject({ reason: ExitReason.INPUT_DIGEST_MISMATCH, codeName: INPUT_DIGEST_MISMATCH });
    expect(exit.detail).toContain("sha256");
    expect(t.kinds("job_digest")).toEqual(["ack", "exit"]);
  });

  it("whose size differs, or that media does not hold, end the job the same way", async () => {
    const job = { class: "function", artifact: "echo", args: { text: "x" } };
    t.dispatch("job_size", { ...job, inputs: [input("pinned", { size: 3n })] });
    t.dispatch("job_missing", { ...job, inputs: [input("gone")] });
    for (const id of ["job_size", "job_missing"]) {
      expect(await t.exit(id)).toMatchObject({
        reason: ExitReason.INPUT_DIGEST_MISMATCH,
        codeName: INPUT_DIGEST_MISMATCH,
      });
      expect(t.kinds(id)).toEqual(["ack", "exit"]);
    }
  });

  it("named with a path separator are refused, and nothing is fetched", async () => {
    const before = media.requests.length;
    t.dispatch("job_escape", {
      class: "function",
      artifact: "echo",
      args: { text: "x" },
      inputs: [input("pinned", { name: "../escape" })],
    });
    expect((await t.exit("job_escape")).reason).toBe(ExitReason.REFUSED);
    expect(media.requests.length).toBe(before);
  });

  it("still being fetched when a job_cancel comes: the job never starts", async () => {
    t.dispatch("job_slow", { class: "function", artifact: "echo", args: { text: "x" }, inputs: [input("slow")] });
    await until(() => held !== undefined);
    t.jobs.cancel("job_slow");
    expect((await t.exit("job_slow")).reason).toBe(ExitReason.CANCELED);
    held!.end(BYTES);
    // The fetch is over when its working directory is gone; by then the job would have started if it were to.
    await until(async () => (await t.leftovers()).length === 0);
    expect(t.kinds("job_slow")).toEqual(["ack", "exit"]);
  });
});
