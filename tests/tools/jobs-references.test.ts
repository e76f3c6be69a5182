import { describe, expect, it } from "vitest";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { JobFileRow } from "../../services/tools/db/entities.js";
import { sweepJobs } from "../../services/tools/workers/sweep.js";
import { usePlatform } from "../support/platform.js";
import { until } from "../support/until.js";
import { createWithFiles, fileBytes, person, png, toolsCall, toolsOf, untilJob, watch } from "./jobs-support.js";

const HOUR = 3_600_000;
const TTL = 24 * HOUR;
// The clock the tools service keeps expiries by: a test moves it past them, then sweeps.
const clock = new ManualClock(new Date());
const t = usePlatform({ services: ["tools", "media"], clock });

const user = async () => {
  const sub = person();
  return { sub, token: await t.token({ kind: "user", sub }) };
};

/** A succeeded img.process job of the person's. */
async function succeeded(token: string) {
  const created = await createWithFiles(t.gatewayUrl, token, "img.process", {}, [
    { name: "a.png", type: "image/png", data: await png(12, 12) },
  ]);
  return untilJob(t, token, created.body.id, ["succeeded"]);
}

/** Moves the clock past every expiry set so far and runs the sweep. */
async function pastExpiry() {
  clock.advance(TTL + HOUR);
  await sweepJobs(toolsOf(t));
}

/** A job's events (each with its id and kind) from its stream, after `lastEventId` when given. */
async function eventsOf(token: string, id: string, lastEventId?: string) {
  const opened = await watch(t.gatewayUrl, token, id, lastEventId ? { "last-event-id": lastEventId } : {});
  const events: { id: string; kind: string }[] = [];
  for (let event = await opened.stream!.next(); event; event = await opened.stream!.next())
    if (event.id) events.push({ id: event.id, kind: event.data.kind });
  return events;
}

const heldKeys = async (jobId: string, kind: "input" | "result") =>
  (await toolsOf(t).orm.em.fork().find(JobFileRow, { jobId, kind }, { refresh: true })).map((row) => row.blobKey);

describe("references and expiry", () => {
  it("keeps a result past its expiry while a reference exists; once the last is removed, it expires (410)", async () => {
    const { token } = await user();
    const call = toolsCall(t, token);
    const job = await succeeded(token);
    expect(new Date(job.expires_at).getTime()).toBe(new Date(job.ended_at).getTime() + TTL);

    const kept = await call("PUT", `/jobs/${job.id}/references/blog:post:pst_1`, {});
    expect(kept.status).toBe(200);
    expect(kept.body.references).toEqual(["blog:post:pst_1"]);
    expect(kept.body.expires_at).toBeUndefined();
    expect((await call("PUT", `/jobs/${job.id}/references/blog:post:pst_1`, {})).body).toEqual(kept.body);
    await call("PUT", `/jobs/${job.id}/references/news:story:sty_2`, {});

    await pastExpiry();
    expect((await fileBytes(t.gatewayUrl, token, job.id, 1)).status).toBe(200);
    const one = await call("DELETE", `/jobs/${job.id}/references/blog:post:pst_1`);
    expect(one.body).toMatchObject({ references: ["news:story:sty_2"], expired: false });
    expect(one.body.expires_at).toBeUndefined();
    expect((await call("DELETE", `/jobs/${job.id}/references/blog:post:pst_1`)).body).toEqual(one.body);
    await pastExpiry();
    expect((await fileBytes(t.gatewayUrl, token, job.id, 1)).status).toBe(200);

    const last = await call("DELETE", `/jobs/${job.id}/references/news:story:sty_2`);
    expect(last.body.references).toEqual([]);
    expect(new Date(last.body.expires_at).getTime()).toBe(clock.now().getTime() + TTL);
    await pastExpiry();
    const gone = await fileBytes(t.gatewayUrl, token, job.id, 1);
    expect([gone.status, JSON.parse(gone.bytes.toString()).code]).toEqual([410, "tools.result_expired"]);
    const read = (await call("GET", `/jobs/${job.id}`)).body.job;
    expect(read).toMatchObject({ state: "succeeded", expired: true });
    expect(read.expires_at).toBeUndefined();
    expect(await heldKeys(job.id, "result")).toEqual([""]);
    expect(await call("PUT", `/jobs/${job.id}/references/blog:post:pst_1`, {})).toMatchObject({
      status: 410,
      body: { code: "tools.result_expired" },
    });
    // Its stream ends at its success; resumed after it, it tells of the expiry.
    const events = await eventsOf(token, job.id);
    expect(events.at(-1)?.kind).toBe("succeeded");
    expect((await eventsOf(token, job.id, events.at(-1)!.id)).map((event) => event.kind)).toEqual(["expired"]);
  });

  it("expires an unreferenced result at the sweep after its expiry; a reference added before the sweep still keeps it", async () => {
    const { token } = await user();
    const call = toolsCall(t, token);
    const [lapsing, rescued] = [await succeeded(token), await succeeded(token)];
    clock.advance(TTL + HOUR);
    expect((await call("PUT", `/jobs/${rescued.id}/references/blog:post:pst_9`, {})).status).toBe(200);
    await sweepJobs(toolsOf(t));
    expect((await fileBytes(t.gatewayUrl, token, lapsing.id, 1)).status).toBe(410);
    expect((await fileBytes(t.gatewayUrl, token, rescued.id, 1)).status).toBe(200);
  });

  it("lets a service acting for nobody keep anyone's result; nobody else's but the owner's; 409 before success", async () => {
    const owner = await user();
    const job = await succeeded(owner.token);
    const service = await t.token({ kind: "service", svc: "blog", caps: ["tools.job.create"] });
    const asService = toolsCall(t, service);
    const kept = await asService("PUT", `/jobs/${job.id}/references/blog:post:pst_7`, {});
    expect([kept.status, kept.body.references]).toEqual([200, ["blog:post:pst_7"]]);
    // The same service acting for someone else is that person: not their job.
    const forOther = await asService(
      "PUT",
      `/jobs/${job.id}/references/blog:post:pst_8`,
      {},
      { "x-pf-subject": person() },
    );
    expect([forOther.status, forOther.body.code]).toEqual([404, "tools.job.not_found"]);
    expect((await asService("DELETE", `/jobs/${job.id}/references/blog:post:pst_7`)).body.references).toEqual([]);

    const bad = await createWithFiles(t.gatewayUrl, owner.token, "img.process", {}, [
      { name: "a.png", type: "image/png", data: Buffer.from("no image") },
    ]);
    await untilJob(t, owner.token, bad.body.id, ["failed"]);
    expect(await toolsCall(t, owner.token)("PUT", `/jobs/${bad.body.id}/references/blog:post:pst_1`, {})).toMatchObject(
      {
        status: 409,
        body: { code: "tools.job_not_succeeded" },
      },
    );
    expect((await fileBytes(t.gatewayUrl, owner.token, bad.body.id, 1)).status).toBe(409);
  });

  it("keeps a failed job's input files for a retry until its expiry, then lets them go (retry 410)", async () => {
    const { token } = await user();
    const call = toolsCall(t, token);
    const bad = await createWithFiles(t.gatewayUrl, token, "img.process", {}, [
      { name: "a.png", type: "image/png", data: Buffer.from("no image") },
    ]);
    await untilJob(t, token, bad.body.id, ["failed"]);
    expect(await heldKeys(bad.body.id, "input")).toEqual([`${bad.body.id}/in/1`]);
    await pastExpiry();
    expect(await heldKeys(bad.body.id, "input")).toEqual([""]);
    expect((await call("GET", `/jobs/${bad.body.id}`)).body.job.expired).toBe(true);
    expect(await call("POST", `/jobs/${bad.body.id}/retry`, {})).toMatchObject({
      status: 410,
      body: { code: "tools.result_expired" },
    });
    // A succeeded job needs its inputs no more: they go once it succeeded.
    const good = await succeeded(token);
    await until(async () => (await heldKeys(good.id, "input"))[0] === "");
  });
});
