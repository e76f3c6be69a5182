import { ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { BillingUsageService } from "../../gen/pf/billing/v1/usage_pb.js";
import { ProblemSchema } from "../../gen/pf/v1/problem_pb.js";
import type { TokenClaims } from "../../services/kit/auth/tokens.js";
import { qualified } from "../../services/kit/db/orm.js";
import { usePlatform } from "../support/platform.js";
import { billingOf } from "./support.js";

/**
 * Billing's designed metering RPC: the job-run service records a job's wall-clock seconds (service run, operation
 * function.invoke, unit s) once per job id, against the job's project, paying itself.
 */
const t = usePlatform({ services: ["billing"] });

const RUN: TokenClaims = { kind: "service", svc: "run", caps: ["billing.usage.record"] };
let n = 0;
const reference = () => `job_${Date.now().toString(36)}${(n++).toString(36)}`;
const usage = (extra: Record<string, unknown> = {}) => ({
  operation: "function.invoke",
  unit: "s",
  quantity: 7n,
  projectId: "prj_alpha",
  reference: reference(),
  ...extra,
});

async function client(claims: TokenClaims = RUN) {
  return t.client(BillingUsageService, await t.token(claims));
}

/** The problem a call was refused with. */
async function refusal(call: Promise<unknown>) {
  const error = await call.then(
    () => undefined,
    (caught: unknown) => ConnectError.from(caught),
  );
  expect(error, "the call was answered").toBeDefined();
  return error!.findDetails(ProblemSchema)[0];
}

/** The usage records billing holds for a reference. */
async function recordsOf(ref: string) {
  const em = billingOf(t).orm.em.fork();
  return em
    .getConnection()
    .execute<{ quantity: string }[]>(`select quantity from ${qualified(em, "usage_records")} where reference = ?`, [
      ref,
    ]);
}

describe("recording usage (billing.usage.record, run only)", () => {
  it("records the quantity against the project, the job-run service paying, with no money moved", async () => {
    const asked = usage();
    const answer = await (await client()).recordUsage(asked);
    expect(answer.usage).toMatchObject({
      service: "run",
      operation: "function.invoke",
      unit: "s",
      quantity: 7n,
      projectId: "prj_alpha",
      reference: asked.reference,
      payer: "svc:run",
    });
    expect(answer.usage!.id).toMatch(/^usg_/);
    expect(await recordsOf(asked.reference)).toEqual([{ quantity: "7" }]);
  });

  it("records a job that never started as 0 seconds", async () => {
    const asked = usage({ quantity: 0n });
    expect((await (await client()).recordUsage(asked)).usage?.quantity).toBe(0n);
    expect(await recordsOf(asked.reference)).toEqual([{ quantity: "0" }]);
  });

  it("records a retry once, answering the first record", async () => {
    const asked = usage();
    const usageClient = await client();
    const first = await usageClient.recordUsage(asked);
    const again = await usageClient.recordUsage(asked);
    expect(again.usage?.id).toBe(first.usage?.id);
    expect(await recordsOf(asked.reference)).toHaveLength(1);
  });

  it("records concurrent calls for one job once, every caller answered the same record", async () => {
    const asked = usage();
    const usageClient = await client();
    const answers = await Promise.all(Array.from({ length: 12 }, () => usageClient.recordUsage(asked)));
    expect(new Set(answers.map((answer) => answer.usage?.id)).size).toBe(1);
    expect(await recordsOf(asked.reference)).toHaveLength(1);
  });

  it("refuses the same job with another quantity or project (409 idempotency.mismatch), keeping the first", async () => {
    const asked = usage();
    const usageClient = await client();
    await usageClient.recordUsage(asked);
    const other = await refusal(usageClient.recordUsage({ ...asked, quantity: 8n }));
    expect(other).toMatchObject({ status: 409, code: "idempotency.mismatch" });
    const elsewhere = await refusal(usageClient.recordUsage({ ...asked, projectId: "prj_beta" }));
    expect(elsewhere).toMatchObject({ status: 409, code: "idempotency.mismatch" });
    expect(await recordsOf(asked.reference)).toEqual([{ quantity: "7" }]);
  });

  it("refuses what breaks the declared rules, every fault listed (400 request.invalid)", async () => {
    const problem = await refusal(
      (await client()).recordUsage({ operation: "", unit: "ms", quantity: -1n, projectId: "", reference: "" }),
    );
    expect(problem).toMatchObject({ status: 400, code: "request.invalid" });
    const errors = (problem?.extensions?.errors ?? []) as { field: string }[];
    expect(errors.map((error) => error.field)).toEqual(["operation", "unit", "quantity", "project_id", "reference"]);
  });

  it("takes only the job-run service's token holding the capability", async () => {
    const asked = usage();
    expect(await refusal((await client({ ...RUN, svc: "tips" })).recordUsage(asked))).toMatchObject({
      status: 403,
      code: "auth.service_not_allowed",
    });
    expect(await refusal((await client({ ...RUN, caps: [] })).recordUsage(asked))).toMatchObject({
      status: 403,
      code: "auth.capability_missing",
    });
    const app: TokenClaims = { kind: "app", app_id: "a1", caps: RUN.caps, fp: true };
    expect(await refusal((await client(app)).recordUsage(asked))).toMatchObject({
      status: 403,
      code: "auth.internal_only",
    });
    expect(await refusal((await client({ ...RUN, mod: "mod_1" })).recordUsage(asked))).toMatchObject({
      status: 403,
      code: "auth.never_to_mods",
    });
    expect(await recordsOf(asked.reference)).toEqual([]);
  });
});
