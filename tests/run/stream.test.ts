import { describe, expect, it } from "vitest";
import { qualified } from "../../services/kit/db/orm.js";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { usePlatform } from "../support/platform.js";
import { openEventStream } from "../support/sse.js";
import { project, projectClaims, runCall, runOf, submitted } from "./support.js";

/**
 * The job's stream (text/event-stream of run.job-stream-event@1) and its tickets: one use, two minutes (the
 * platform's clock), bound to the job and its minter, stored hashed; the stream also takes a Bearer token, resumes
 * after Last-Event-ID from persisted event ids and ends with the job. Bot does not run here: a job is queued until
 * cancelled, which ends it (two persisted events: queued, ended).
 */
const clock = new ManualClock(new Date());
const t = usePlatform({ services: ["run"], clock });

async function projectJob() {
  const projectId = project();
  const token = await t.token(projectClaims(projectId));
  const job = await submitted(t, token);
  return { token, job, call: runCall(t, token) };
}

async function ticketFor(call: ReturnType<typeof runCall>, jobId: string) {
  const answer = await call("POST", `/jobs/${jobId}/stream/ticket`, {});
  expect(answer.status).toBe(201);
  return answer.body as { ticket: string; job_id: string; expires_at: string };
}

const streamUrl = (jobId: string, query = "") => `${t.gatewayUrl}/run/api/v1/jobs/${jobId}/stream${query}`;
const withTicket = (jobId: string, ticket: string, headers: Record<string, string> = {}) =>
  openEventStream(streamUrl(jobId, `?ticket=${encodeURIComponent(ticket)}`), headers);

describe("stream tickets", () => {
  it("are minted for a job of the token's project, valid two minutes, and stored only as a hash", async () => {
    const { job, call } = await projectJob();
    const minted = await ticketFor(call, job.id);
    expect(minted.job_id).toBe(job.id);
    expect(new Date(minted.expires_at).getTime()).toBe(clock.now().getTime() + 120_000);
    const em = runOf(t).orm.em.fork();
    const rows = await em
      .getConnection()
      .execute<{ hash: string }[]>(`select hash from ${qualified(em, "stream_tickets")} where job_id = ?`, [job.id]);
    expect(rows).toHaveLength(1);
    expect(rows[0].hash).not.toContain(minted.ticket);
  });

  it("open the stream once, without a token; a second use is 401 run.stream.ticket_invalid", async () => {
    const { job, call } = await projectJob();
    const { ticket } = await ticketFor(call, job.id);
    const opened = await withTicket(job.id, ticket);
    expect(opened.status).toBe(200);
    expect(opened.headers.get("content-type")).toContain("text/event-stream");
    const first = await opened.stream!.next();
    expect(first).toMatchObject({ event: "job", data: { job: { id: job.id, state: "queued" } } });
    await opened.stream!.close();
    const again = await withTicket(job.id, ticket);
    expect(again).toMatchObject({ status: 401, problem: { code: "run.stream.ticket_invalid" } });
  });

  it("are used by exactly one of two concurrent opens", async () => {
    const { job, call } = await projectJob();
    const { ticket } = await ticketFor(call, job.id);
    const opens = await Promise.all([withTicket(job.id, ticket), withTicket(job.id, ticket)]);
    expect(opens.map((opened) => opened.status).sort()).toEqual([200, 401]);
    for (const opened of opens) await opened.stream?.close();
  });

  it("expire two minutes after minting (the platform's clock)", async () => {
    const { job, call } = await projectJob();
    const late = await ticketFor(call, job.id);
    const inTime = await ticketFor(call, job.id);
    clock.advance(120_000 - 1);
    const open = await withTicket(job.id, inTime.ticket);
    expect(open.status).toBe(200);
    await open.stream!.close();
    clock.advance(1);
    expect(await withTicket(job.id, late.ticket)).toMatchObject({
      status: 401,
      problem: { code: "run.stream.ticket_invalid" },
    });
  });

  it("are bound to their job and to their minter, and a refused open does not use them up", async () => {
    const { job, call } = await projectJob();
    const other = await submitted(t, await t.token(projectClaims(job.project_id)));
    const { ticket } = await ticketFor(call, job.id);
    expect(await withTicket(other.id, ticket)).toMatchObject({ status: 401 });
    const stranger = await t.token(projectClaims(job.project_id));
    expect(await withTicket(job.id, ticket, { authorization: `Bearer ${stranger}` })).toMatchObject({
      status: 401,
      problem: { code: "run.stream.ticket_invalid" },
    });
    const open = await withTicket(job.id, ticket);
    expect(open.status).toBe(200);
    await open.stream!.close();
  });

  it("open with the minter's own token beside it", async () => {
    const { token, job, call } = await projectJob();
    const { ticket } = await ticketFor(call, job.id);
    const open = await withTicket(job.id, ticket, { authorization: `Bearer ${token}` });
    expect(open.status).toBe(200);
    await open.stream!.close();
  });
});

describe("the job stream", () => {
  it("takes a Bearer token of the job's project instead of a ticket; another project's answers 404", async () => {
    const { token, job } = await projectJob();
    const open = await openEventStream(streamUrl(job.id), { authorization: `Bearer ${token}` });
    expect(open.status).toBe(200);
    await open.stream!.close();
    const stranger = await t.token(projectClaims(project()));
    expect(await openEventStream(streamUrl(job.id), { authorization: `Bearer ${stranger}` })).toMatchObject({
      status: 404,
      problem: { code: "run.job.not_found" },
    });
  });

  it("refuses an open with neither (401) and a Last-Event-ID that is none of its ids (400)", async () => {
    const { token, job } = await projectJob();
    expect(await openEventStream(streamUrl(job.id))).toMatchObject({
      status: 401,
      problem: { code: "run.stream.ticket_invalid" },
    });
    const bad = await openEventStream(streamUrl(job.id), { authorization: `Bearer ${token}`, "last-event-id": "x" });
    expect(bad).toMatchObject({ status: 400, problem: { code: "request.invalid", field: "Last-Event-ID" } });
  });

  it("sends the job, its persisted events with their ids, then live ones, and ends with the job", async () => {
    const { token, job, call } = await projectJob();
    const open = await openEventStream(streamUrl(job.id), { authorization: `Bearer ${token}` });
    const stream = open.stream!;
    const snapshot = await stream.next();
    expect(snapshot).toMatchObject({ event: "job", data: { id: "", job: { id: job.id } } });
    expect(snapshot!.id).toBeUndefined();
    expect(await stream.next()).toMatchObject({
      id: "1",
      event: "state",
      data: { id: "1", state: { state: "queued" } },
    });
    await call("POST", `/jobs/${job.id}/cancel`, {});
    expect(await stream.next()).toMatchObject({
      id: "2",
      event: "state",
      data: { state: { state: "ended", exit: { reason: "canceled" } } },
    });
    await stream.end();
  });

  it("resumes after Last-Event-ID (or last_event_id where the header cannot be sent)", async () => {
    const { token, job, call } = await projectJob();
    await call("POST", `/jobs/${job.id}/cancel`, {});
    const auth = { authorization: `Bearer ${token}` };
    const resumed = (await openEventStream(streamUrl(job.id), { ...auth, "last-event-id": "1" })).stream!;
    expect(await resumed.next()).toMatchObject({ event: "job", data: { job: { state: "ended" } } });
    expect(await resumed.next()).toMatchObject({ id: "2", event: "state" });
    await resumed.end();
    const byQuery = (await openEventStream(streamUrl(job.id, "?last_event_id=1"), auth)).stream!;
    await byQuery.next();
    expect(await byQuery.next()).toMatchObject({ id: "2" });
    await byQuery.end();
    // Resumed after its last event: the job, and the end.
    const after = (await openEventStream(streamUrl(job.id), { ...auth, "last-event-id": "2" })).stream!;
    expect(await after.next()).toMatchObject({ event: "job" });
    expect(await after.next()).toBeUndefined();
  });
});
