import { describe, expect, it } from "vitest";
import { outboxEvents } from "../support/outbox.js";
import { usePlatform } from "../support/platform.js";
import { untilPassesAfter } from "../support/lease-tries.js";
import { ADMIN, jobBody, project, projectClaims, runCall, runOf, submitted } from "./support.js";

/**
 * Submit, list and read: a job belongs to the token's project, submit is idempotent per project, lists are newest
 * first and cursor-paged, project_id is an admin's filter, and run.job.admin reads any job but never from an app or
 * a mod. Bot does not run here: every job stays queued.
 */
const t = usePlatform({ services: ["run"] });

async function projectApp(projectId = project(), extra = {}) {
  return { projectId, call: runCall(t, await t.token(projectClaims(projectId, extra))) };
}

describe("submit", () => {
  it("queues a job of the token's project with the frame as submitted (201), its first stream event recorded", async () => {
    const { projectId, call } = await projectApp();
    const body = jobBody({
      net: "NET_POLICY_NONE",
      limits: { memory_bytes: "1048576" },
      inputs: [{ name: "in.txt", media_key: "AbCdEfGhIjKlMnOpQrStUvWx", size: "3", sha256: "a".repeat(64) }],
    });
    const answer = await call("POST", "/jobs", body);
    expect(answer.status).toBe(201);
    const job = answer.body.job;
    expect(job).toMatchObject({
      project_id: projectId,
      state: "queued",
      class: "function",
      artifact: "echo",
      args: { text: "hello" },
      ttl_ms: "60000",
      net: "NET_POLICY_NONE",
      limits: { memory_bytes: "1048576" },
      inputs: [{ name: "in.txt", media_key: "AbCdEfGhIjKlMnOpQrStUvWx", size: "3" }],
      placement: { device_id: "", robot_id: "" },
      usage_seconds: "0",
      usage_final: false,
      result: { stdout: "", stderr: "", truncated: false },
      cancel_requested: false,
    });
    expect(job.id).toMatch(/^job_/);
    expect(job.timings.submitted_at).toBeDefined();
    const events = await outboxEvents(t, "run", job.id);
    expect(events[0]).toMatchObject({ subject: "run.job.queued" });
    expect(JSON.parse(events[0].payload)).toMatchObject({ job_id: job.id, project_id: projectId });
  });

  it("keeps a job queued while bot does not answer, never ending it for an answer bot did not give", async () => {
    const { call } = await projectApp();
    const id = (await call("POST", "/jobs", jobBody())).body.job.id;
    await untilPassesAfter(runOf(t), "run.placement", 2);
    expect((await call("GET", `/jobs/${id}`)).body.job).toMatchObject({ state: "queued", usage_final: false });
  });

  it("refuses a token without a project (403 run.project_required)", async () => {
    const token = await t.token({ ...projectClaims(""), project_id: undefined });
    const call = runCall(t, token);
    for (const [method, path, body] of [
      ["POST", "/jobs", jobBody()],
      ["GET", "/jobs", undefined],
      ["GET", "/jobs/job_1", undefined],
      ["POST", "/jobs/job_1/cancel", {}],
      ["POST", "/jobs/job_1/stream/ticket", {}],
    ] as const) {
      const answer = await call(method, path, body);
      expect(answer.body, `${method} ${path}`).toMatchObject({ status: 403, code: "run.project_required" });
    }
  });

  it("answers a retry with the same idempotency_key with the first job; another body under it is 409", async () => {
    const { call } = await projectApp();
    const first = await call("POST", "/jobs", jobBody({ idempotency_key: "k1" }));
    const again = await call("POST", "/jobs", jobBody({ idempotency_key: "k1" }));
    expect(again.status).toBe(201);
    expect(again.body.job.id).toBe(first.body.job.id);
    const other = await call("POST", "/jobs", jobBody({ idempotency_key: "k1", args: { text: "other" } }));
    expect(other.body).toMatchObject({ status: 409, code: "idempotency.mismatch" });
    expect((await call("GET", "/jobs")).body.jobs).toHaveLength(1);
  });

  it("scopes idempotency keys per project, and makes one job of concurrent retries", async () => {
    const a = await projectApp();
    const b = await projectApp();
    const [one, two] = [
      await a.call("POST", "/jobs", jobBody({ idempotency_key: "same" })),
      await b.call("POST", "/jobs", jobBody({ idempotency_key: "same" })),
    ];
    expect(one.body.job.id).not.toBe(two.body.job.id);
    const c = await projectApp();
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => c.call("POST", "/jobs", jobBody({ idempotency_key: "race" }))),
    );
    expect(new Set(answers.map((answer) => answer.body.job?.id)).size).toBe(1);
    expect((await c.call("GET", "/jobs")).body.jobs).toHaveLength(1);
  });

  it("refuses what the frame's rules refuse, each fault named (400 request.invalid)", async () => {
    const { call } = await projectApp();
    const answer = await call("POST", "/jobs", {
      class: "",
      args: undefined,
      ttl_ms: 0,
      net: 9,
      inputs: [{ name: "a/b", media_key: "AbCdEfGhIjKlMnOpQrStUvWx", sha256: "x" }],
    });
    expect(answer.body).toMatchObject({ status: 400, code: "request.invalid" });
    expect(answer.body.errors.map((error: { field: string }) => error.field)).toEqual([
      "class",
      "args",
      "ttl_ms",
      "limits",
      "net",
      "inputs[0].name",
      "inputs[0].sha256",
    ]);
  });

  it("refuses an artifact missing for function and code, duplicate input names, and a URL or credential for an input", async () => {
    const { call } = await projectApp();
    const input = { name: "in.txt", media_key: "AbCdEfGhIjKlMnOpQrStUvWx", size: "3", sha256: "a".repeat(64) };
    const cases: [Record<string, unknown>, string][] = [
      [{ artifact: "" }, "artifact"],
      [{ class: "code", artifact: "" }, "artifact"],
      [{ inputs: [input, { ...input }] }, "inputs[1].name"],
      [{ inputs: [{ ...input, name: ".." }] }, "inputs[0].name"],
      [{ inputs: [{ ...input, media_key: "https://evil.example/x" }] }, "inputs[0].media_key"],
      [{ inputs: [{ ...input, media_key: "Bearer eyJhbGciOiJFZERTQSJ9.e30" }] }, "inputs[0].media_key"],
    ];
    for (const [extra, field] of cases) {
      const answer = await call("POST", "/jobs", jobBody(extra));
      expect(answer.body, JSON.stringify(extra)).toMatchObject({ status: 400, code: "request.invalid", field });
    }
    // Another class brings no artifact of the spec's: queued, for a device that advertises it.
    expect((await call("POST", "/jobs", jobBody({ class: "gpu.shader", artifact: "" }))).status).toBe(201);
  });
});

describe("the lists", () => {
  it("answer the project's jobs newest first, cursor-paged, and filter by state", async () => {
    const { call } = await projectApp();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await call("POST", "/jobs", jobBody())).body.job.id);
    await call("POST", `/jobs/${ids[1]}/cancel`, {});
    const first = await call("GET", "/jobs?limit=2");
    expect(first.body.jobs.map((job: { id: string }) => job.id)).toEqual([ids[4], ids[3]]);
    const second = await call("GET", `/jobs?limit=2&cursor=${first.body.next_cursor}`);
    expect(second.body.jobs.map((job: { id: string }) => job.id)).toEqual([ids[2], ids[1]]);
    const last = await call("GET", `/jobs?limit=2&cursor=${second.body.next_cursor}`);
    expect(last.body).toMatchObject({ jobs: [{ id: ids[0] }], next_cursor: "" });
    const ended = await call("GET", "/jobs?state=ended");
    expect(ended.body.jobs.map((job: { id: string }) => job.id)).toEqual([ids[1]]);
    expect((await call("GET", "/jobs?state=queued")).body.jobs).toHaveLength(4);
  });

  it("never show another project's jobs", async () => {
    const mine = await projectApp();
    const theirs = await projectApp();
    await submitted(t, await t.token(projectClaims(theirs.projectId)));
    expect((await mine.call("GET", "/jobs")).body).toMatchObject({ jobs: [], next_cursor: "" });
  });

  it("refuse project_id on the plain list (403), even naming the caller's own project", async () => {
    const { projectId, call } = await projectApp();
    for (const named of [projectId, "prj_other"]) {
      const answer = await call("GET", `/jobs?project_id=${named}`);
      expect(answer.body).toMatchObject({ status: 403, code: "run.job.project_id_admin_only" });
    }
  });

  it("refuse a limit outside 1 to 200, an unknown state and a forged cursor (400 naming them)", async () => {
    const { call } = await projectApp();
    for (const [query, field] of [
      ["limit=0", "limit"],
      ["limit=201", "limit"],
      ["state=done", "state"],
      ["cursor=bm90IG9uZQ", "cursor"],
    ]) {
      const answer = await call("GET", `/jobs?${query}`);
      expect(answer.body, query).toMatchObject({ status: 400, code: "request.invalid", field });
    }
  });

  it("give an admin every project's jobs, project_id filtering", async () => {
    const a = await projectApp();
    const b = await projectApp();
    const jobA = (await a.call("POST", "/jobs", jobBody())).body.job.id;
    const jobB = (await b.call("POST", "/jobs", jobBody())).body.job.id;
    const admin = runCall(t, await t.token(ADMIN));
    const all = (await admin("GET", "/admin/jobs?limit=200")).body.jobs.map((job: { id: string }) => job.id);
    expect(all).toEqual(expect.arrayContaining([jobA, jobB]));
    expect(all.indexOf(jobB)).toBeLessThan(all.indexOf(jobA));
    const onlyA = await admin("GET", `/admin/jobs?project_id=${a.projectId}`);
    expect(onlyA.body.jobs.map((job: { id: string }) => job.id)).toEqual([jobA]);
  });
});

describe("read", () => {
  it("answers a job of the token's project with state, placement, timings, exit, usage and result", async () => {
    const { call } = await projectApp();
    const job = (await call("POST", "/jobs", jobBody())).body.job;
    const answer = await call("GET", `/jobs/${job.id}`);
    expect(answer.status).toBe(200);
    expect(Object.keys(answer.body.job)).toEqual(
      expect.arrayContaining(["state", "placement", "timings", "usage_seconds", "result"]),
    );
    expect(answer.body.job).toMatchObject({ id: job.id, state: "queued" });
  });

  it("answers another project's job as a missing one (404)", async () => {
    const theirs = await projectApp();
    const job = (await theirs.call("POST", "/jobs", jobBody())).body.job;
    const mine = await projectApp();
    for (const [method, path] of [
      ["GET", `/jobs/${job.id}`],
      ["POST", `/jobs/${job.id}/cancel`],
      ["POST", `/jobs/${job.id}/stream/ticket`],
    ] as const) {
      const answer = await mine.call(method, path, method === "POST" ? {} : undefined);
      expect(answer.body, `${method} ${path}`).toMatchObject({ status: 404, code: "run.job.not_found" });
    }
    expect((await theirs.call("GET", `/jobs/${job.id}`)).status).toBe(200);
  });

  it("answers and cancels any job for run.job.admin on a service token acting for nobody", async () => {
    const { call } = await projectApp();
    const job = (await call("POST", "/jobs", jobBody())).body.job;
    const admin = runCall(t, await t.token(ADMIN));
    expect((await admin("GET", `/jobs/${job.id}`)).body.job).toMatchObject({ id: job.id });
    const cancelled = await admin("POST", `/jobs/${job.id}/cancel`, {});
    expect(cancelled.body.job).toMatchObject({ id: job.id, state: "ended", exit: { reason: "canceled" } });
    // Never delegated: naming a person is refused.
    const delegated = runCall(t, await t.token(ADMIN), { "x-pf-subject": "usr_a1" });
    expect((await delegated("GET", `/jobs/${job.id}`)).body).toMatchObject({
      status: 400,
      code: "auth.acting_subject_refused",
    });
  });

  it("never opens another project's job to an app or a mod carrying run.job.admin", async () => {
    const theirs = await projectApp();
    const job = (await theirs.call("POST", "/jobs", jobBody())).body.job;
    const mine = project();
    const appWithBoth = runCall(t, await t.token(projectClaims(mine, { caps: ["run.job.read", "run.job.admin"] })));
    expect((await appWithBoth("GET", `/jobs/${job.id}`)).body).toMatchObject({ status: 404 });
    const appWithAdmin = runCall(t, await t.token(projectClaims(mine, { caps: ["run.job.admin"] })));
    expect((await appWithAdmin("GET", `/jobs/${job.id}`)).body).toMatchObject({
      status: 403,
      code: "auth.internal_only",
    });
    const mod = runCall(t, await t.token({ ...ADMIN, mod: "mod_1" }));
    for (const path of [`/jobs/${job.id}`, "/admin/jobs"])
      expect((await mod("GET", path)).body, path).toMatchObject({ status: 403, code: "auth.never_to_mods" });
    const app = runCall(t, await t.token(projectClaims(mine, { caps: ["run.job.admin"], fp: true })));
    expect((await app("GET", "/admin/jobs")).body).toMatchObject({ status: 403, code: "auth.internal_only" });
  });
});
