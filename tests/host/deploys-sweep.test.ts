import { Readable } from "node:stream";
import { beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { outboxEvents } from "../support/outbox.js";
import { usePlatform } from "../support/platform.js";
import { until } from "../support/until.js";
import {
  blobObjects,
  deployStates,
  hostRows,
  sha256,
  SITE,
  siteOfOwnProject,
  tarOf,
  uploadArchive,
} from "./deploys-support.js";
import { HOST_ENV, hostContext } from "./support.js";

// The sweep runs as the worker does, often; nothing is older than the grace until a test moves the clock.
const clock = new ManualClock(new Date());
const t = usePlatform({
  services: ["host"],
  clock,
  env: { ...HOST_ENV, PF_HOST_BLOB_GRACE_MS: "0", PF_HOST_SWEEP_EVERY_MS: "200" },
});

let site: Awaited<ReturnType<typeof siteOfOwnProject>>;
let kept: string[];
beforeAll(async () => {
  site = await siteOfOwnProject(t);
  expect((await uploadArchive(t, site.token, site.siteId, await tarOf(SITE))).status).toBe(201);
  kept = await blobObjects(t);
});

/** The site's deploys as stored, oldest first. */
const deploysOf = (siteId: string) =>
  hostRows<{ id: string; state: string; error: string }>(
    t,
    `select id, state, error from {deploys} where site_id = ? order by id`,
    [siteId],
  );

/** The blobs' rows, by digest. */
const blobRows = async () =>
  (await hostRows<{ digest: string }>(t, `select digest from {blobs} order by digest`)).map((row) => row.digest);

/** Moves the clock past the grace and waits for the worker's pass to leave the store and its rows as `expected`. */
async function sweptTo(expected: string[]): Promise<void> {
  clock.advance(1);
  const wanted = JSON.stringify([expected, expected]);
  await until(async () => JSON.stringify([await blobObjects(t), await blobRows()]) === wanted);
}

describe("the sweep", () => {
  it("a client gone mid-body: the deploy fails with the reason, nothing ready, its blobs swept", async () => {
    const other = await siteOfOwnProject(t);
    const first = `kept until the client went ${Date.now()}`;
    const tar = await tarOf(
      [
        { name: "first.txt", body: first },
        { name: "second.txt", body: Buffer.alloc(200_000, 97) },
      ],
      false,
    );
    let sender!: ReadableStreamDefaultController<Uint8Array>;
    const body = new ReadableStream<Uint8Array>({ start: (controller) => void (sender = controller) });
    const going = new AbortController();
    const answered = fetch(`${t.gatewayUrl}/host/api/v1/sites/${other.siteId}/deploys`, {
      method: "POST",
      headers: { authorization: `Bearer ${other.token}`, "content-type": "application/x-tar" },
      body,
      duplex: "half",
      signal: going.signal,
    } as RequestInit).catch((error: unknown) => error);
    // The first file whole, and part of the second.
    sender.enqueue(tar.subarray(0, 512 * 3 + 50_000));
    await until(async () => (await hostRows(t, `select 1 from {blobs} where digest = ?`, [sha256(first)])).length > 0);
    going.abort();
    await answered;
    await until(async () => (await deploysOf(other.siteId)).some((deploy) => deploy.state === "failed"));
    const [deploy] = await deploysOf(other.siteId);
    expect(deploy.error).toMatch(/^the upload did not finish: /);
    expect(await deployStates(t, other.projectId)).toEqual({ failed: 1 });
    expect((await outboxEvents(t, "host", deploy.id)).map((event) => event.subject)).toEqual(["host.deploy.failed"]);
    await sweptTo(kept);
  });

  it("a deploy a crashed process left validating: failed as unfinished, its blob swept", async () => {
    const ctx = hostContext(t);
    const bytes = Buffer.from(`left by a crash ${Date.now()}`);
    const digest = sha256(bytes);
    // What the upload had written when its process died: the deploy, a blob's row, then its bytes.
    await hostRows(
      t,
      `insert into {deploys} (id, site_id, project_id, state, bytes, created_by, created_at)
       values ('dep_crashed1', ?, ?, 'validating', 0, 'usr_gone', ?)`,
      [site.siteId, site.projectId, clock.now()],
    );
    await hostRows(t, `insert into {blobs} (digest, size, created_at) values (?, ?, ?)`, [
      digest,
      bytes.length,
      clock.now(),
    ]);
    await ctx.blobs.put(digest, Readable.from([bytes]), "application/octet-stream");
    expect(await blobObjects(t)).toContain(digest);

    await sweptTo(kept);
    const [deploy] = await hostRows<{ state: string; error: string }>(
      t,
      `select state, error from {deploys} where id = 'dep_crashed1'`,
    );
    expect(deploy).toEqual({ state: "failed", error: "the upload did not finish" });
    const log = await t.http("GET", "/host/api/v1/deploys/dep_crashed1/log", { token: site.token });
    expect(log.body.log).toMatchObject([{ level: "error", message: "the upload did not finish" }]);
    expect((await outboxEvents(t, "host", "dep_crashed1")).map((event) => event.subject)).toEqual([
      "host.deploy.failed",
    ]);
  });

  it("frees a deleted deploy's blobs, keeping those another deploy still names", async () => {
    const shared = { name: "shared.txt", body: `in both ${Date.now()}` };
    const own = { name: "own.txt", body: `only in the deleted one ${Date.now()}` };
    const gone = await uploadArchive(t, site.token, site.siteId, await tarOf([shared, own]));
    const stays = await uploadArchive(t, site.token, site.siteId, await tarOf([shared]));
    expect([gone.status, stays.status]).toEqual([201, 201]);
    const withBoth = await blobObjects(t);
    expect(withBoth).toEqual(expect.arrayContaining([sha256(shared.body), sha256(own.body)]));
    expect((await t.http("DELETE", `/host/api/v1/deploys/${gone.body.deploy.id}`, { token: site.token })).status).toBe(
      200,
    );
    // What earlier tests left for the sweep may still be there (a slow machine): the end state is what is named.
    await sweptTo([...kept, sha256(shared.body)].sort());
  });
});
