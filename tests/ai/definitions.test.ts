import { connect, type NatsConnection } from "@nats-io/transport-node";
import { ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AiContext } from "../../services/ai/context.js";
import { checkBody, checkKey } from "../../services/ai/domain/definitions/bodies.js";
import { versionMove, type VersionStatus } from "../../services/ai/domain/definitions/lifecycle.js";
import { routeToUse, targetsFor, workflowToRun } from "../../services/ai/domain/definitions/resolve.js";
import { renderTemplate } from "../../services/ai/domain/definitions/template.js";
import { sql } from "../../services/kit/db/sql.js";
import { problemOf } from "../../services/kit/handler/problem.js";
import { subscribeToStream, type StreamMessage } from "../support/nats.js";
import { outboxEvents } from "../support/outbox.js";
import { usePlatform } from "../support/platform.js";
import { until } from "../support/until.js";

const t = usePlatform({ services: ["ai"] });
const ctx = () => t.platform.contexts.get("ai") as AiContext;
const manager = () => t.token({ kind: "service", sub: "svc:ops", caps: ["ai.workflow.manage"] });
const reader = () => t.token({ kind: "service", sub: "svc:ops", caps: ["ai.usage.read"] });

/** The problem a pure rule throws: its status, code and extensions. */
function thrown(work: () => unknown) {
  try {
    work();
  } catch (error) {
    const found = problemOf(ConnectError.from(error));
    return { status: found.status, code: found.code, ...(found.extensions as object) };
  }
  throw new Error("nothing was thrown");
}

async function rejected(work: Promise<unknown>) {
  const found = problemOf(await work.then(() => new Error("nothing was thrown"), ConnectError.from));
  return { status: found.status, code: found.code, ...(found.extensions as object) };
}

const post = async (path: string, body: unknown) =>
  t.http("POST", `/ai/api/v1/${path}`, { token: await manager(), body });
const create = (kind: string, key: string, body: unknown, note = "") =>
  post(`${kind}s/${key}/versions`, { body, note });
const move = (kind: string, key: string, version: number, status: string) =>
  post(`${kind}s/${key}/versions/${version}/status`, { status });

describe("the lifecycle (pure)", () => {
  const statuses: VersionStatus[] = ["draft", "active", "deprecated", "archived"];
  const allowed = ["draft>active", "draft>archived", "active>deprecated", "deprecated>active", "deprecated>archived"];

  it("moves draft → active → deprecated → archived, abandons drafts, reactivates deprecated; the same is a no-op", () => {
    for (const from of statuses)
      for (const to of statuses) {
        if (from === to) expect(versionMove(from, to), `${from}>${to}`).toBe(false);
        else if (allowed.includes(`${from}>${to}`)) expect(versionMove(from, to), `${from}>${to}`).toBe(true);
        else
          expect(
            thrown(() => versionMove(from, to)),
            `${from}>${to}`,
          ).toMatchObject({
            status: 409,
            code: "ai.definition_state",
            from,
            to,
          });
      }
  });

  it("checks each kind's body, naming the field at fault", () => {
    const refusal = (field: string) => ({ status: 400, code: "ai.definition_invalid", field });
    expect(thrown(() => checkBody("route", { targets: ["local/extractive", "nope"] }))).toMatchObject(
      refusal("body.targets[1]"),
    );
    expect(thrown(() => checkBody("route", { targets: [] }))).toMatchObject(refusal("body.targets"));
    expect(thrown(() => checkBody("route", { targets: ["a/b"], operations: { dance: ["a/b"] } }))).toMatchObject(
      refusal("body.operations.dance"),
    );
    expect(thrown(() => checkBody("prompt", { template: "" }))).toMatchObject(refusal("body.template"));
    expect(thrown(() => checkBody("prompt", { template: "x", colour: "red" }))).toMatchObject(refusal("body.colour"));
    expect(thrown(() => checkBody("workflow", { operation: "dance" }))).toMatchObject(refusal("body.operation"));
    expect(thrown(() => checkBody("workflow", { operation: "chat", max_output_tokens: 1.5 }))).toMatchObject(
      refusal("body.max_output_tokens"),
    );
    expect(thrown(() => checkBody("workflow", { operation: "chat", labels: ["a"] }))).toMatchObject(
      refusal("body.labels"),
    );
    expect(thrown(() => checkBody("workflow", undefined))).toMatchObject(refusal("body"));
    expect(thrown(() => checkKey("workflow", "summarize"))).toMatchObject(refusal("key"));
    // Targets need not exist yet: a run checks them.
    expect(() => checkBody("route", { targets: ["nowhere/model-9:latest"] })).not.toThrow();
    expect(() => checkKey("workflow", "trade.summarize")).not.toThrow();
  });

  it("renders templates: text, numbers and JSON; a missing variable is 400 ai.input.invalid naming it", () => {
    expect(renderTemplate("{{a}} is {{ n }} / {{o}} {{b}}", { a: "ACME", n: 4, o: { x: 1 }, b: true })).toBe(
      'ACME is 4 / {"x":1} true',
    );
    expect(thrown(() => renderTemplate("About {{symbol}}", {}))).toMatchObject({
      status: 400,
      code: "ai.input.invalid",
      field: "variables.symbol",
    });
  });

  it("targetsFor: the operation's own list, else the route's targets", () => {
    const route = { key: "r", version: 1, targets: ["a/x"], operations: { embed: ["a/e"] } };
    expect(targetsFor(route, "embed")).toEqual(["a/e"]);
    expect(targetsFor(route, "chat")).toEqual(["a/x"]);
  });
});

describe("routing profile versions", () => {
  it("creates v1 and v2 as drafts (201), the route itself active; created_by is the token's subject", async () => {
    const first = await create("route", "fast", { targets: ["local/extractive"] }, "first");
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(first.body.version).toMatchObject({
      kind: "route",
      key: "fast",
      version: 1,
      status: "draft",
      note: "first",
    });
    expect(first.body.version.created_by).toBe("svc:ops");
    expect(first.body.definition).toMatchObject({ kind: "route", key: "fast", status: "active" });
    const second = await create("route", "fast", {
      targets: ["local/extractive"],
      operations: { embed: ["local/hash-embed"] },
    });
    expect(second.status).toBe(201);
    expect(second.body.version.version).toBe(2);
    expect(second.body.definition.versions.map((each: { version: number }) => each.version)).toEqual([1, 2]);
  });

  it("activating v2 deprecates v1; the same status again is answered as it is", async () => {
    expect((await move("route", "fast", 1, "active")).body.definition.active_version).toBe(1);
    const activated = await move("route", "fast", 2, "active");
    expect(activated.status).toBe(200);
    expect(activated.body.definition.active_version).toBe(2);
    expect(activated.body.definition.versions.map((each: { status: string }) => each.status)).toEqual([
      "deprecated",
      "active",
    ]);
    expect(activated.body.version.status_changed_by).toBe("svc:ops");
    const again = await move("route", "fast", 2, "active");
    expect(again.status).toBe(200);
    expect(again.body.version.status).toBe("active");
    expect(await routeToUse(ctx().orm.em.fork(), "fast")).toMatchObject({ version: 2 });
  });

  it("an archived version never comes back (409 ai.definition_state); a deprecated one is reactivated", async () => {
    expect((await move("route", "fast", 1, "archived")).body.version.status).toBe("archived");
    expect((await move("route", "fast", 1, "active")).body).toMatchObject({
      status: 409,
      code: "ai.definition_state",
      from: "archived",
      to: "active",
    });
    await create("route", "fast", { targets: ["local/extractive"] });
    await move("route", "fast", 3, "active");
    const back = await move("route", "fast", 2, "active");
    expect(back.body.definition.versions.map((each: { status: string }) => each.status)).toEqual([
      "archived",
      "active",
      "deprecated",
    ]);
    // Deprecating the active version leaves none active: the route serves no run until one is.
    expect((await move("route", "fast", 2, "deprecated")).body.definition.active_version).toBe(0);
    expect(await rejected(routeToUse(ctx().orm.em.fork(), "fast"))).toMatchObject({
      status: 404,
      code: "ai.route.not_found",
    });
  });

  it("refuses an unknown version or key (404 ai.definition.not_found), a bad body or status (400)", async () => {
    expect((await move("route", "fast", 9, "active")).body).toMatchObject({
      status: 404,
      code: "ai.definition.not_found",
    });
    expect((await move("prompt", "fast", 1, "active")).body).toMatchObject({
      status: 404,
      code: "ai.definition.not_found",
    });
    expect((await move("route", "fast", 2, "disabled")).body).toMatchObject({ status: 400, field: "status" });
    const bad = await create("route", "fast", { targets: ["local/extractive", "no-model"] });
    expect(bad.body).toMatchObject({ status: 400, code: "ai.definition_invalid", field: "body.targets[1]" });
    const unnamed = await create("workflow", "summarize", { operation: "summarize" });
    expect(unnamed.body).toMatchObject({ status: 400, code: "ai.definition_invalid", field: "key" });
  });

  it("5 concurrent creations of a new definition get versions 1..5", async () => {
    const answers = await Promise.all(
      Array.from({ length: 5 }, (_, at) => create("prompt", "race.prompt", { template: `Take ${at}: {{text}}` })),
    );
    expect(answers.map((answer) => answer.status)).toEqual([201, 201, 201, 201, 201]);
    expect(answers.map((answer) => answer.body.version.version).sort()).toEqual([1, 2, 3, 4, 5]);
  });

  it("versions are insert-only: the database refuses an UPDATE of a body", async () => {
    const update = ctx().transaction((em) =>
      sql(em, `update {definition_versions} set body = '{"targets":["x/y"]}' where kind = 'route' and key = 'fast'`),
    );
    await expect(update).rejects.toThrow(/insert-only/);
  });
});

describe("route status", () => {
  it("a disabled route refuses runs (409 ai.route_disabled) until it is active again", async () => {
    await create("route", "closing", { targets: ["local/extractive"] });
    await move("route", "closing", 1, "active");
    const disabled = await post("routes/closing/status", { status: "disabled" });
    expect(disabled.status).toBe(200);
    expect(disabled.body.definition.status).toBe("disabled");
    expect(await rejected(routeToUse(ctx().orm.em.fork(), "closing"))).toMatchObject({
      status: 409,
      code: "ai.route_disabled",
    });
    const run = await t.http("POST", "/ai/api/v1/summarize", {
      token: await t.token({ kind: "user", sub: "usr_defs1" }),
      body: { route: "closing", documents: [{ id: "d1", text: "Shares rose." }], no_cache: true },
    });
    expect(run.body).toMatchObject({ status: 409, code: "ai.route_disabled" });
    await post("routes/closing/status", { status: "active" });
    expect(await routeToUse(ctx().orm.em.fork(), "closing")).toMatchObject({ targets: ["local/extractive"] });
  });

  it("refuses another status (400) and an unknown route (404 ai.route.not_found)", async () => {
    expect((await post("routes/closing/status", { status: "archived" })).body).toMatchObject({
      status: 400,
      field: "status",
    });
    expect((await post("routes/nowhere/status", { status: "disabled" })).body).toMatchObject({
      status: 404,
      code: "ai.route.not_found",
    });
  });
});

describe("workflows as runs see them", () => {
  it("resolves the seeded workflow's active version with its prompt and route", async () => {
    const workflow = await workflowToRun(ctx().orm.em.fork(), "trade.summarize_market_context");
    expect(workflow).toMatchObject({ version: 1, operation: "summarize", route: "default", labels: [], fields: [] });
    expect(workflow.prompt).toMatchObject({ key: "trade.summarize_market_context", version: 1 });
    expect(workflow.prompt!.template).toContain("{{symbol}}");
  });

  it("runs an asked deprecated version, refuses a draft or archived one (409), and 404s what is not there", async () => {
    const key = "ops.sort_tickets";
    await create("workflow", key, { operation: "classify", labels: ["bug", "question"] });
    await create("workflow", key, { operation: "classify", labels: ["bug", "question", "idea"] });
    const em = () => ctx().orm.em.fork();
    expect(await rejected(workflowToRun(em(), key))).toMatchObject({ status: 404, code: "ai.workflow.not_found" });
    await move("workflow", key, 1, "active");
    await move("workflow", key, 2, "active");
    expect(await workflowToRun(em(), key)).toMatchObject({ version: 2, labels: ["bug", "question", "idea"] });
    expect(await workflowToRun(em(), key, 1)).toMatchObject({ version: 1, labels: ["bug", "question"] });
    await create("workflow", key, { operation: "classify" });
    expect(await rejected(workflowToRun(em(), key, 3))).toMatchObject({
      status: 409,
      code: "ai.definition_state",
      version_status: "draft",
    });
    expect(await rejected(workflowToRun(em(), key, 4))).toMatchObject({ status: 404, code: "ai.workflow.not_found" });
    expect(await rejected(workflowToRun(em(), "ops.nothing"))).toMatchObject({ status: 404 });
  });
});

describe("the audit and the events", () => {
  let nc: NatsConnection | undefined;
  let received: StreamMessage[] = [];
  let stop = () => {};

  beforeAll(async () => {
    if (!t.events) return;
    nc = await connect({ servers: process.env.NATS_URL });
    ({ received, stop } = await subscribeToStream(nc, t.events, "ai", "ai.definition.status_changed"));
  });
  afterAll(async () => {
    stop();
    await nc?.close();
  });

  it("audits every change with before and after, and publishes each status change", async () => {
    await create("prompt", "audit.greet", { template: "Hello {{name}}" }, "v1");
    await create("prompt", "audit.greet", { template: "Hi {{name}}" }, "v2");
    await move("prompt", "audit.greet", 1, "active");
    await move("prompt", "audit.greet", 2, "active");
    const audit = await t.http("GET", "/ai/api/v1/audit?target_kind=prompt&target_key=audit.greet", {
      token: await reader(),
    });
    expect(audit.status, JSON.stringify(audit.body)).toBe(200);
    const entries = [...audit.body.audit].reverse().map((entry: Record<string, unknown>) => ({
      action: entry.action,
      actor: entry.actor,
      before: entry.before ?? null,
      after: entry.after,
    }));
    expect(entries).toEqual([
      {
        action: "prompt.version_created",
        actor: "svc:ops",
        before: null,
        after: expect.objectContaining({ version: 1, status: "draft", note: "v1" }),
      },
      {
        action: "prompt.version_created",
        actor: "svc:ops",
        before: null,
        after: expect.objectContaining({ version: 2, note: "v2" }),
      },
      {
        action: "prompt.status_changed",
        actor: "svc:ops",
        before: { version: 1, status: "draft" },
        after: { version: 1, status: "active" },
      },
      {
        action: "prompt.status_changed",
        actor: "svc:ops",
        before: { version: 1, status: "active" },
        after: { version: 1, status: "deprecated" },
      },
      {
        action: "prompt.status_changed",
        actor: "svc:ops",
        before: { version: 2, status: "draft" },
        after: { version: 2, status: "active" },
      },
    ]);
    const events = await outboxEvents(t, "ai", "audit.greet");
    expect(events.map((event) => event.subject)).toEqual(Array(3).fill("ai.definition.status_changed"));
    if (t.events) {
      await until(() => received.filter((message) => message.body.target_key === "audit.greet").length === 3);
      expect(
        received.filter((message) => message.body.target_key === "audit.greet").map((message) => message.body),
      ).toEqual([
        expect.objectContaining({ target_kind: "prompt", version: 1, status: "active" }),
        expect.objectContaining({ target_kind: "prompt", version: 1, status: "deprecated" }),
        expect.objectContaining({ target_kind: "prompt", version: 2, status: "active" }),
      ]);
    }
  });

  it("audits a route disabled and enabled", async () => {
    const audit = await t.http("GET", "/ai/api/v1/audit?target_kind=route&target_key=closing", {
      token: await reader(),
    });
    expect(audit.status, JSON.stringify(audit.body)).toBe(200);
    const actions = audit.body.audit.map((entry: Record<string, unknown>) => [entry.action, entry.before, entry.after]);
    expect(actions).toContainEqual(["route.disabled", { status: "active" }, { status: "disabled" }]);
    expect(actions).toContainEqual(["route.enabled", { status: "disabled" }, { status: "active" }]);
  });
});

describe("the list", () => {
  it("filters by kind and pages by cursor, each definition with its versions", async () => {
    const token = await manager();
    const seen: string[] = [];
    let cursor = "";
    do {
      const answer = await t.http(
        "GET",
        `/ai/api/v1/definitions?kind=route&limit=2${cursor ? `&cursor=${cursor}` : ""}`,
        {
          token,
        },
      );
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      for (const definition of answer.body.definitions) {
        expect(definition.kind).toBe("route");
        expect(definition.versions.length).toBeGreaterThan(0);
        seen.push(definition.key);
      }
      cursor = answer.body.next_cursor ?? "";
    } while (cursor !== "");
    expect(seen).toEqual(["closing", "default", "fast"]);
  });
});
