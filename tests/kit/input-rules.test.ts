import { fromJson, type DescField, type DescMessage, type DescMethod, type JsonObject } from "@bufbuild/protobuf";
import { ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import openapiTS, { astToString, type OpenAPI3 } from "openapi-typescript";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { bindingsOf } from "../../gateway/bindings.js";
import { openApiDocument } from "../../gateway/openapi.js";
import { componentName } from "../../gateway/schemas.js";
import { ModerationService } from "../../gen/pf/community/v1/moderation_pb.js";
import { GoalCreateRequestSchema } from "../../gen/pf/tips/v1/goals_pb.js";
import { OverlayTokenRequestSchema, TipsOverlayService } from "../../gen/pf/tips/v1/overlays_pb.js";
import { TipsService } from "../../gen/pf/tips/v1/tips_pb.js";
import { VipService } from "../../gen/pf/vip/v1/vip_pb.js";
import { ProblemSchema } from "../../gen/pf/v1/problem_pb.js";
import { modules } from "../../platform/registry.js";
import { ruleMismatch } from "../../services/kit/rpc/field-rules.js";
import { inputFaults } from "../../services/kit/rpc/input.js";
import { usePlatform } from "../support/platform.js";

interface ObjectSchema {
  required?: string[];
  properties: Record<string, JsonObject>;
}
interface Operation {
  parameters: { name: string; in: string; required?: boolean; schema: JsonObject }[];
  requestBody?: { content: Record<string, { schema: ObjectSchema }> };
}

/** What the guard refuses in a request given as proto JSON: `field rule` for each fault, in order. */
function refused(method: DescMethod, json: JsonObject): string[] {
  return inputFaults(method, fromJson(method.input, json)).map(({ field, rule }) => `${field} ${rule}`);
}

const usd = (minor: number) => ({ minor_units: minor, currency: "USD" });
const { createGoal, updateGoal, listInteractions, createCheckout, createMediaRequest, recordExternal } =
  TipsService.method;

describe("input rules declared in the contracts (pf.v1.rules)", () => {
  it("refuse each kind of rule naming the field and the rule; a valid request passes", () => {
    expect(refused(createGoal, { title: "A bike", target: usd(100) })).toEqual([]);
    // required: a message unset, a string empty (nothing else is checked of it).
    expect(refused(createGoal, { title: "" })).toEqual(["title required", "target required"]);
    // string: max_len in characters (code points: 120 emoji are 240 UTF-16 units), pattern.
    expect(refused(createGoal, { title: "🚲".repeat(120), target: usd(1) })).toEqual([]);
    expect(refused(createGoal, { title: "x".repeat(121), target: usd(1) })).toEqual(["title string.max_len"]);
    expect(refused(createGoal, { title: "   ", target: usd(1) })).toEqual(["title string.pattern"]);
    // The shared pf.v1.Money's own rules hold wherever a request carries it.
    expect(refused(createGoal, { title: "A bike", target: { minor_units: 1e16, currency: "usd" } })).toEqual([
      "target.minor_units int64.gte_lte",
      "target.currency string.pattern",
    ]);
    expect(refused(recordExternal, { creator: "usr_a", provider: "Ko Fi", provider_ref: "r", amount: usd(1) })).toEqual(
      ["provider string.pattern"],
    );
    // string in.
    const bulk = ModerationService.method.bulkModeratePastes;
    expect(refused(bulk, { action: "burn", slugs: ["a"], reason: "spam" })).toEqual(["action string.in"]);
    // int32 bounds: an optional field only when sent; ignore IF_ZERO_VALUE lets 0 mean the default.
    expect(refused(listInteractions, {})).toEqual([]);
    expect(refused(listInteractions, { limit: 0 })).toEqual(["limit int32.gte_lte"]);
    expect(refused(listInteractions, { limit: 201 })).toEqual(["limit int32.gte_lte"]);
    const config = (alerts: JsonObject) =>
      refused(TipsOverlayService.method.createOverlayConfig, { kind: "OVERLAY_KIND_ALERTS", name: "a", alerts });
    expect(config({ duration_ms: 0 })).toEqual([]);
    expect(config({ duration_ms: 999 })).toEqual(["alerts.duration_ms int32.gte_lte"]);
    // enum: defined_only (a number the enum does not name), not_in (a value the route does not take).
    expect(refused(listInteractions, { role: 7 })).toEqual(["role enum.defined_only"]);
    const checkout = { creator: "usr_c", amount: usd(100) };
    expect(refused(createCheckout, { ...checkout, payment_method: "PAYMENT_METHOD_EXTERNAL" })).toEqual([
      "payment_method enum.not_in",
    ]);
    // repeated: max_items, unique, each item's rules.
    expect(refused(bulk, { action: "censor", slugs: ["a", "a", "B!"], reason: "spam" })).toEqual([
      "slugs repeated.unique",
      "slugs[2] string.pattern",
    ]);
    expect(
      refused(bulk, { action: "censor", slugs: Array.from({ length: 501 }, (_, i) => `s${i}`), reason: "x" }),
    ).toEqual(["slugs repeated.max_items"]);
  });

  it("check an optional field only when sent, and only the fields a route reads of a shared request", () => {
    expect(refused(updateGoal, { id: "gol_1" })).toEqual([]);
    expect(refused(updateGoal, { id: "gol_1", title: "" })).toEqual(["title string.pattern"]);
    // IGNORE_IF_ZERO_VALUE on an optional field: sent as "" it is skipped too, as protovalidate does ("" = tier_1).
    const updatePlan = VipService.method.updatePlan;
    expect(refused(updatePlan, { id: "pln_1", tier: "" })).toEqual([]);
    expect(refused(updatePlan, { id: "pln_1", tier: "tier_0" })).toEqual(["tier string.pattern"]);
    // media_seconds (1 or more) is the media request's: a tip does not read it, so its 0 is no fault there.
    expect(refused(createCheckout, { creator: "usr_c", amount: usd(100) })).toEqual([]);
    expect(
      refused(createMediaRequest, { creator: "usr_c", amount: usd(100), media_url: "https://v.example/1" }),
    ).toEqual(["media_seconds int32.gte"]);
  });

  it("report every fault of a request in one list, the guard's own checks included", () => {
    const method = TipsService.method.closeGoal;
    const request = fromJson(GoalCreateRequestSchema, { title: "\u0000", description: "x".repeat(2001) });
    request.$unknown = [{ no: 99, wireType: 0, data: new Uint8Array([1]) }];
    expect(inputFaults(createGoal, request).map(({ field, rule }) => `${field} ${rule}`)).toEqual([
      "title storable",
      "#99 known",
      "target required",
      "description string.max_len",
    ]);
    expect(refused(method, { id: "nope" })).toEqual(["id id_prefix"]);
    const tokens = TipsOverlayService.method.createOverlayToken;
    const scopes = fromJson(OverlayTokenRequestSchema, { scopes: [0, 9], label: "x".repeat(81), limit: 5 });
    expect(inputFaults(tokens, scopes).map(({ field, rule, message }) => ({ field, rule, message }))).toEqual([
      { field: "limit", rule: "request_fields", message: expect.stringContaining("not part of this route") },
      { field: "scopes[0]", rule: "enum.not_in", message: "scopes[0] may not be OVERLAY_SCOPE_UNSPECIFIED here." },
      { field: "scopes[1]", rule: "enum.defined_only", message: "scopes[1] is not a value of OverlayScope." },
      { field: "label", rule: "string.max_len", message: "label holds at most 80 characters." },
    ]);
  });

  it("fit the fields they are declared on, in every service's contract", () => {
    const mismatches: string[] = [];
    const seen = new Set<DescMessage>();
    const walk = (message: DescMessage) => {
      if (seen.has(message)) return;
      seen.add(message);
      for (const field of message.fields) {
        const wrong = ruleMismatch(field);
        if (wrong) mismatches.push(`${message.typeName}.${field.name}: ${wrong}`);
        const nested = (field as DescField & { message?: DescMessage }).message;
        if (nested) walk(nested);
      }
    };
    for (const service of modules.flatMap((module) => module.protos))
      for (const method of service.methods) walk(method.input);
    expect(mismatches).toEqual([]);
  });
});

describe("input rules in OpenAPI", () => {
  const document = openApiDocument([...bindingsOf(TipsService), ...bindingsOf(TipsOverlayService)], {
    title: "tips",
  }) as unknown as {
    paths: Record<string, Record<string, Operation>>;
    components: { schemas: Record<string, ObjectSchema> };
  };
  const component = (message: DescMessage) => document.components.schemas[componentName(message)];

  it("carry required, lengths, patterns, bounds, enums and list sizes", () => {
    const goal = component(GoalCreateRequestSchema);
    expect(goal.required).toEqual(["title", "target"]);
    expect(goal.properties.title).toMatchObject({ type: "string", minLength: 1, maxLength: 120, pattern: "\\S" });
    expect(goal.properties.description).toMatchObject({ maxLength: 2000 });
    const limit = document.paths["/tips/api/v1/interactions"].get.parameters.find((p) => p.name === "limit");
    expect(limit?.schema).toMatchObject({ type: "integer", minimum: 1, maximum: 200 });
    const queue = document.paths["/tips/api/v1/moderation"].get.parameters;
    expect(queue.find((p) => p.name === "creator")).toMatchObject({ in: "query", required: true });
    expect(queue.find((p) => p.name === "limit")).not.toHaveProperty("required");
    // A shared request's body holds the fields its route reads, and of `required` those only.
    const tokens = document.paths["/tips/api/v1/overlay-tokens"].post.requestBody!.content["application/json"].schema;
    expect(tokens.required).toEqual(["scopes"]);
    expect(tokens.properties.scopes).toMatchObject({
      type: "array",
      minItems: 1,
      items: { enum: ["OVERLAY_SCOPE_ALERTS", "OVERLAY_SCOPE_GOALS"] },
    });
    expect(tokens.properties.label).toMatchObject({ maxLength: 80 });
    const alerts = document.components.schemas["pf.tips.v1.AlertSettings"];
    // 0 means the default (IGNORE_IF_ZERO_VALUE): the schema admits it beside the bounds.
    expect(alerts.properties.duration_ms).toMatchObject({ anyOf: [{ const: 0 }, { minimum: 1000, maximum: 60000 }] });
  });

  it("make a client generated by openapi-typescript refuse, at compile time, a call leaving out a required field", async () => {
    const types = astToString(await openapiTS(document as unknown as OpenAPI3));
    const body = 'paths["/tips/api/v1/goals"]["post"]["requestBody"]["content"]["application/json"]';
    const snippet = [
      `export const complete: ${body} = { title: "A bike", target: { minor_units: 100, currency: "USD" } };`,
      `export const untitled: ${body} = { target: { minor_units: 100, currency: "USD" } };`,
    ].join("\n");
    const errors = typeErrors(`${types}\n${snippet}\n`);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/untitled.*Property 'title' is missing/s);
  });
});

/** tsc's errors in one TypeScript source (strict), each as its line and message. */
function typeErrors(source: string): string[] {
  const name = "/virtual/client.ts";
  const options: ts.CompilerOptions = { strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, types: [] };
  const host = ts.createCompilerHost(options);
  const read = host.getSourceFile.bind(host);
  host.getSourceFile = (file, language) =>
    file === name ? ts.createSourceFile(name, source, language) : read(file, language);
  const program = ts.createProgram([name], options, host);
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const { line } = diagnostic.file!.getLineAndCharacterOfPosition(diagnostic.start!);
    const text = diagnostic.file!.text.split("\n")[line];
    return `${text}\n${ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n")}`;
  });
}

describe("a request breaking several rules, over the gateway and over RPC", () => {
  const t = usePlatform({ services: ["tips"] });
  const broken = { title: "   ", description: "x".repeat(2001) };
  const expected = [
    { field: "title", rule: "string.pattern", message: "title does not match \\S." },
    { field: "target", rule: "required", message: "target is required." },
    { field: "description", rule: "string.max_len", message: "description holds at most 2000 characters." },
  ];

  it("is one 400 problem naming the first field and listing each", async () => {
    const token = await t.token({ kind: "user", sub: "usr_rules1" });
    const answer = await t.http("POST", "/tips/api/v1/goals", { token, body: broken });
    expect(answer.status).toBe(400);
    expect(answer.headers.get("content-type")).toContain("application/problem+json");
    expect(answer.body).toMatchObject({ code: "request.invalid", field: "title", errors: expected });
    expect(answer.body.detail).toBe("title does not match \\S. 2 more in errors.");
  });

  it("is the same problem to a Connect caller on the RPC port", async () => {
    const token = await t.token({ kind: "service", svc: "web", caps: ["tips.goal.create"] });
    const client = createClient(
      TipsService,
      createConnectTransport({ baseUrl: t.platform.rpcUrl, httpVersion: "2", useBinaryFormat: false }),
    );
    const headers = { authorization: `Bearer ${token}`, "x-pf-subject": "usr_rules2" };
    const error = await client.createGoal(broken, { headers }).then(
      () => undefined,
      (caught: unknown) => ConnectError.from(caught),
    );
    const [problem] = error!.findDetails(ProblemSchema);
    expect(problem).toMatchObject({ status: 400, code: "request.invalid" });
    expect(problem.extensions).toMatchObject({ field: "title", errors: expected });
  });
});
