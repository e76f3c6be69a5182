import { NewsStoryService } from "../../gen/pf/news/v1/stories_pb.js";
import { MarketContextService } from "../../gen/pf/trade/v1/context_pb.js";
import { create, getOption, hasOption, setExtension, type DescService } from "@bufbuild/protobuf";
import { readdir } from "node:fs/promises";
import { beforeAll, describe, expect, it } from "vitest";
import { bindingsOf, rpcName } from "../../gateway/bindings.js";
import { openApiDocument } from "../../gateway/openapi.js";
import { http } from "../../gen/google/api/annotations_pb.js";
import { NetworkAdminService } from "../../gen/pf/network/v1/admin_pb.js";
import { NetworkService } from "../../gen/pf/network/v1/network_pb.js";
import { TipsOverlayService } from "../../gen/pf/tips/v1/overlays_pb.js";
import { VipService } from "../../gen/pf/vip/v1/vip_pb.js";
import { access, AccessSchema, Actor, Cors, designed, token_audience, Visibility } from "../../gen/pf/v1/options_pb.js";
import { withAccess, withService } from "./support.js";

type Operation = {
  operationId: string;
  parameters: {
    name: string;
    in: string;
    required?: boolean;
    description?: string;
    example?: unknown;
    schema: object;
  }[];
  requestBody?: { content: Record<string, { schema: { $ref: string }; example?: unknown }> };
  responses: Record<string, { content: Record<string, { schema: { $ref: string } }>; [member: string]: unknown }>;
  security?: object[];
  [member: string]: unknown;
};
type Document = {
  openapi: string;
  servers?: { url: string }[];
  tags: { name: string; description?: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<
      string,
      { properties: Record<string, Record<string, unknown>>; additionalProperties?: boolean; description?: string }
    >;
  };
};

type JsonSchema = { $ref?: string; properties?: Record<string, unknown> };

const bindings = [NetworkService, NetworkAdminService].flatMap(bindingsOf);
const service = openApiDocument(bindings, { title: "pf network", basePath: "/network" }) as unknown as Document;
const whole = openApiDocument(bindings, { title: "pf platform" }) as unknown as Document;

/** The method and path each RPC declares, read straight from its option. */
const declared = NetworkService.methods
  .filter((method) => hasOption(method, http))
  .map((method) => {
    const { pattern } = getOption(method, http);
    return {
      rpc: method,
      verb: pattern.case as string,
      path: (pattern.value as string).replace("{kind=**}", "{kind}"),
    };
  });

describe("OpenAPI from the descriptors", () => {
  it("has one operation per http-bound RPC at its exact method and path, and none for RPCs without a binding", () => {
    expect(service.openapi).toBe("3.1.0");
    expect(service.servers).toEqual([{ url: "/network" }]);
    const operations = Object.entries(service.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([verb, op]) => ({ path, verb, op })),
    );
    expect(operations).toHaveLength(declared.length);
    for (const { rpc, verb, path } of declared) {
      expect(service.paths[path]?.[verb]?.operationId, `${verb} ${path}`).toBe(`NetworkService.${rpc.name}`);
      expect(whole.paths[`/network${path}`]?.[verb]?.operationId).toBe(`NetworkService.${rpc.name}`);
    }
    expect(JSON.stringify(service)).not.toContain("NetworkAdminService");
  });

  it("carries the access rule: capabilities, visibility, special rules and bearer security", () => {
    for (const { rpc, verb, path } of declared) {
      const op = service.paths[path][verb];
      const rule = getOption(rpc, access);
      expect(op["x-pf-capabilities"]).toEqual(rule.capabilities);
      expect(op["x-pf-visibility"]).toMatch(/^(public|first-party|internal|partner)$/);
      expect(op.security).toEqual([{ bearer: [] }]);
    }
    const github = service.paths["/internal/integrations/github-token"].get;
    expect(github).toMatchObject({
      "x-pf-visibility": "first-party",
      "x-pf-never-to-apps": true,
      "x-pf-never-to-mods": true,
    });
    expect(service.paths["/internal/coins/credit"].post).toMatchObject({ "x-pf-visibility": "internal" });
    expect(service.paths["/internal/coins/credit"].post).not.toHaveProperty("x-pf-never-to-apps");
  });

  it("documents the fields a route of a shared request schema reads, and the shape of the ids the platform made", () => {
    const plans = openApiDocument(bindingsOf(VipService), { title: "pf vip", basePath: "/vip" }) as unknown as Document;
    const getPlan = plans.paths["/api/v1/plans/{id}"].get;
    expect(getPlan["x-pf-request-fields"]).toEqual(["id"]);
    // The schema's other field (archive's expected_revision) is not offered as a query parameter.
    expect(getPlan.parameters).toEqual([
      {
        name: "id",
        in: "path",
        required: true,
        description: "The plan (pln_).",
        schema: { type: "string", pattern: "^pln_[0-9a-z]{1,64}$", maxLength: 68 },
        example: "pln_0",
      },
    ]);
    expect(plans.paths["/api/v1/plans"].get["x-pf-request-fields"]).toBeUndefined();
    // PATCH's path sets id: its body is the request's schema inline, less id.
    const update = (
      plans.paths["/api/v1/plans/{id}"].patch.requestBody!.content["application/json"].schema as unknown as {
        properties: Record<string, unknown>;
      }
    ).properties;
    expect(update).not.toHaveProperty("id");
    expect(update.perks).toEqual({
      $ref: "#/components/schemas/pf.vip.v1.PerkSelection",
      description: expect.any(String),
    });
    expect(plans.components.schemas["pf.vip.v1.PerkSelection"].properties.perk_ids.items).toEqual({
      type: "string",
      pattern: "^prk_[0-9a-z]{1,64}$",
      maxLength: 68,
    });
  });

  it("documents path parameters, query parameters and bodies from the input message, parameters by their fields' comments", () => {
    const getModule = service.paths["/internal/modules/{namespace}/{subject}"].get;
    expect(getModule.parameters.map((p) => [p.name, p.in, p.required])).toEqual([
      ["namespace", "path", true],
      ["subject", "path", true],
    ]);
    expect(getModule.requestBody).toBeUndefined();
    // The query's declared rules (required, usr_ ids) are the parameter's.
    expect(service.paths["/internal/blocks"].get.parameters).toEqual([
      {
        name: "subject",
        in: "query",
        required: true,
        description: "The person asked about (required; usr_ prefixed).",
        schema: { type: "string", pattern: "^usr_[0-9a-z]{1,64}$", maxLength: 68 },
      },
    ]);
    expect(service.paths["/internal/identity/resolve"].get.parameters.map((p) => p.name)).toEqual([
      "subject",
      "service",
      "local_id",
    ]);

    const push = service.paths["/internal/notifications/{kind}"].post;
    expect(push.parameters).toMatchObject([
      {
        name: "kind",
        in: "path",
        required: true,
        description:
          "The kind, from the path (`mention`, `reply`, `tips/received`…): words of lowercase letters, digits, _ or - separated by /, at most 100 characters. The rest of the path; may contain slashes.",
        schema: { type: "string", maxLength: 100, pattern: "^[a-z0-9_-]+(/[a-z0-9_-]+)*$" },
      },
    ]);
    // The path sets kind: the body's schema is the request's less kind, which the gateway refuses in a body.
    const body = push.requestBody?.content["application/json"].schema as unknown as Record<string, object>;
    expect(body).toMatchObject({ "x-pf-schema": "network.notification-push-request@1", type: "object" });
    expect(Object.keys(body.properties)).toEqual([
      "recipients",
      "title",
      "body",
      "link",
      "actor",
      "payload",
      "idempotency_key",
    ]);
    expect(push.responses["201"].content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/network.notification-push-result.v1",
    });
    expect(push.responses.default.content["application/problem+json"].schema).toEqual({
      $ref: "#/components/schemas/errors.problem.v1",
    });
  });

  it("names components by schema id, its version as .v<n> (else the full name), with JSON Schemas of the proto JSON mapping", () => {
    const { schemas } = service.components;
    for (const id of [
      "network.coins-change-request@1",
      "network.coins-balance-result@1",
      "modules.module-record@1",
      "errors.problem@1",
    ]) {
      // OpenAPI allows no @ in a component's name: the spec's id is its x-pf-schema.
      const name = id.replace("@", ".v");
      expect(schemas, id).toHaveProperty([name]);
      expect(schemas[name]).toMatchObject({ "x-pf-schema": id });
    }
    expect(schemas["network.coins-change-request.v1"].properties.amount).toMatchObject({
      type: ["string", "integer"],
      format: "int64",
    });
    const record = schemas["modules.module-record.v1"].properties;
    expect(record.updated_at).toMatchObject({ type: "string", format: "date-time" });
    expect(record.record).toMatchObject({ type: "object", additionalProperties: true });
    const staff = schemas["pf.network.v1.StaffEntry"].properties;
    expect(staff.role).toMatchObject({
      type: "string",
      enum: ["STAFF_ROLE_UNSPECIFIED", "STAFF_ROLE_OWNER", "STAFF_ROLE_ADMIN", "STAFF_ROLE_GLOBAL_MODERATOR"],
    });
    expect(staff.capabilities).toMatchObject({ type: "array", items: { type: "string" } });
    expect(staff.subject).toMatchObject({ $ref: "#/components/schemas/pf.v1.SubjectRef" });
    // The batch route reads only queries (request_fields): its body is the request's schema inline, with queries only.
    const batch = service.paths["/internal/identity/resolve-batch"].post.requestBody!.content["application/json"];
    expect(batch.schema).toMatchObject({ "x-pf-schema": "identity.resolve-request@1" });
    expect(Object.keys((batch.schema as unknown as { properties: object }).properties)).toEqual(["queries"]);
    expect((batch.schema as unknown as { properties: object }).properties).toMatchObject({
      queries: { type: "array", items: { $ref: "#/components/schemas/pf.network.v1.IdentityQuery" } },
    });
    // Descriptions are the proto comments, in the spec's words.
    expect(schemas["network.coins-change-request.v1"]).toMatchObject({
      required: ["subject", "amount"],
      properties: {
        amount: {
          description: "Coins, a positive whole number of loyalty units (1 to 10^15).",
          minimum: 1,
          maximum: 1e15,
        },
      },
    });
    expect(schemas["modules.module-record.v1"].description).toBe(
      "A subject's record in one namespace, with its revision (modules.module-record@1).",
    );
    const problem = schemas["errors.problem.v1"];
    expect(Object.keys(problem.properties)).toEqual(["type", "title", "status", "detail", "instance", "code"]);
    expect(problem.additionalProperties).toBe(true);
  });

  it("every $ref points at a component", () => {
    const refs = JSON.stringify(whole).match(/"\$ref":"#\/components\/schemas\/[^"]+"/g) ?? [];
    for (const ref of new Set(refs)) {
      expect(whole.components.schemas).toHaveProperty([ref.slice('"$ref":"#/components/schemas/'.length, -1)]);
    }
  });

  it("summarises each operation with the first sentence of its RPC's proto comment", () => {
    const credit = service.paths["/internal/coins/credit"].post;
    expect(credit.summary).toBe("Coin credit, idempotent by idempotency_key");
    expect(service.paths["/api/v1/staff/moderators"].get.summary).toBe(
      "Staff list: the owner, admins and global moderators with their roles and staff capabilities, for an owning service to show who moderates or to route a report",
    );
    expect(service.paths["/internal/coins/debit"].post.description).toBe(
      "Coin debit; 409 insufficient_funds when the balance is short.",
    );
  });

  it("documents the success statuses an RPC answers with", () => {
    const successes = (op: Operation) => Object.keys(op.responses).filter((status) => /^[23]/.test(status));
    expect(successes(service.paths["/internal/notifications/{kind}"].post)).toEqual(["201"]);
    expect(successes(service.paths["/internal/modules/{namespace}/{subject}"].put)).toEqual(["200", "201"]);
    expect(successes(service.paths["/internal/coins/credit"].post)).toEqual(["200"]);
  });

  it("documents the problems a route answers by status: its access rules' refusals and the codes its comment names", () => {
    const codes = (op: Operation) =>
      Object.fromEntries(
        Object.entries(op.responses)
          .filter(([status]) => /^[45]/.test(status))
          .map(([status, response]) => [status, response["x-pf-problem-codes"]]),
      );
    // Internal, for services only: a user or app token, a mod, a token without the capability are refused.
    const debit = service.paths["/internal/coins/debit"].post;
    expect(codes(debit)).toEqual({
      400: ["request.invalid", "auth.acting_subject_refused"],
      401: ["auth.required", "auth.invalid", "auth.wrong_audience"],
      403: ["auth.header_refused", "auth.internal_only", "auth.never_to_mods", "auth.capability_missing"],
      409: ["insufficient_funds"],
    });
    expect(debit.responses["409"]).toMatchObject({
      description: "`insufficient_funds`: see the description.",
      content: { "application/problem+json": { schema: { $ref: "#/components/schemas/errors.problem.v1" } } },
    });
    // First-party, never to apps or mods: X-PF-Subject is allowed, an app that is not first-party refused.
    const github = codes(service.paths["/internal/integrations/github-token"].get);
    expect(github[400]).toEqual(["request.invalid"]);
    expect(github[403]).toEqual(
      expect.arrayContaining(["auth.never_to_mods", "auth.never_to_apps", "auth.first_party_only"]),
    );
    expect(github[403]).not.toContain("auth.internal_only");
  });

  it("tags operations by the resource their path names, the whole document's tags naming their service too", () => {
    expect(service.tags.map((tag) => tag.name)).toEqual([
      "Staff",
      "Blocks",
      "Coins",
      "Identity",
      "Integrations",
      "Modules",
      "Notifications",
    ]);
    expect(service.tags[2]).toEqual({ name: "Coins", description: "Routes under `/internal/coins`." });
    expect(service.paths["/internal/coins/debit"].post.tags).toEqual(["Coins"]);
    expect(whole.tags[2]).toEqual({
      name: "Coins (network)",
      description: "Routes under `/network/internal/coins`, in the network service.",
    });
    expect(whole.paths["/network/internal/coins/debit"].post.tags).toEqual(["Coins (network)"]);
  });
});

describe("OpenAPI of a server-streaming RPC", () => {
  const overlays = openApiDocument(bindingsOf(TipsOverlayService), {
    title: "pf tips",
    basePath: "/tips",
  }) as unknown as Document;

  it("answers text/event-stream, naming each event's data by its message's schema id, and a problem otherwise", () => {
    const stream = overlays.paths["/api/v1/stream"].get;
    expect(Object.keys(stream.responses).filter((status) => !/^[45]/.test(status))).toEqual(["200", "default"]);
    expect(stream.responses["200"].content).toEqual({
      "text/event-stream": {
        schema: { type: "string" },
        "x-pf-event-data": { $ref: "#/components/schemas/tips.overlay-event.v1" },
        // One event as the stream writes it: its id, its oneof member's name, its data.
        example: expect.stringMatching(/^id: example\nevent: config\ndata: \{"id":"example",.*\}\n\n$/),
      },
    });
    expect(overlays.components.schemas["tips.overlay-event.v1"].properties).toHaveProperty("alert_removed");
    // Public and anonymous: a bearer token is optional (the overlay token is a query parameter the service checks).
    expect(stream.security).toEqual([{ bearer: [] }, {}]);
    expect(stream.parameters.map((parameter) => parameter.name)).toEqual(["token", "config_id"]);
  });
});

describe("OpenAPI of the access options", () => {
  /** ListStaff with every option set: moderate as staff (capability unchecked, CORS open), as a person, or anyone. */
  const edited = withService(
    withAccess(NetworkService, "ListStaff", (rule) => {
      Object.assign(rule, { name: "moderate", actor: Actor.STAFF, capabilityUnchecked: true, cors: Cors.OPEN });
      rule.alternatives = [
        create(AccessSchema, {
          name: "own",
          visibility: Visibility.FIRST_PARTY,
          capabilities: ["network.staff.own"],
          actor: Actor.PERSON,
        }),
        create(AccessSchema, { name: "anyone", visibility: Visibility.PUBLIC, anonymous: true }),
      ];
    }),
    (declaration) => setExtension(declaration.options!, token_audience, "studio"),
  );
  const document = openApiDocument(bindingsOf(edited), { title: "pf network" }) as unknown as Document;
  const listStaff = document.paths["/network/api/v1/staff/moderators"].get;

  it("documents the actor, the rule's name, an unchecked capability, CORS and the token audience as x-pf-*", () => {
    expect(listStaff).toMatchObject({
      "x-pf-name": "moderate",
      "x-pf-actor": "staff",
      "x-pf-capability-unchecked": true,
      "x-pf-cors": "open",
      "x-pf-token-audience": "studio",
    });
  });

  it("documents each alternative with its name, visibility, capabilities and actor", () => {
    expect(listStaff["x-pf-alternatives"]).toEqual([
      { name: "own", visibility: "first-party", capabilities: ["network.staff.own"], actor: "person" },
      { name: "anyone", visibility: "public", capabilities: [], anonymous: true },
    ]);
  });

  it("lets a caller without a token in (security {}) where any rule admits anonymous callers", () => {
    expect(listStaff.security).toEqual([{ bearer: [] }, {}]);
    expect(document.paths["/network/internal/blocks"].get.security).toEqual([{ bearer: [] }]);
  });

  it("documents a rule's rate limit as its service declares it (x-pf-rate-limit), and its 429 rate.limited", () => {
    const vip = openApiDocument(bindingsOf(VipService), { title: "pf vip", basePath: "/vip" }) as unknown as Document;
    const plans = vip.paths["/api/v1/plans"].get;
    expect(plans["x-pf-rate-limit"]).toEqual({
      name: "read",
      anonymous: { per_minute: 120, setting: "PF_VIP_ANONYMOUS_READS_PER_MINUTE" },
    });
    expect(plans.responses[429]["x-pf-problem-codes"]).toEqual(["rate.limited"]);
    expect(service.paths["/internal/blocks"].get.responses).not.toHaveProperty("429");
  });

  it("documents a rule's relation as its service declares it (x-pf-relation): name, scope, refusal, who holds it", () => {
    const trade = openApiDocument(bindingsOf(MarketContextService), {
      title: "pf trade",
      basePath: "/trade",
    }) as unknown as Document;
    const context = trade.paths["/api/v1/instruments/{symbol}/context"];
    expect(context.get["x-pf-relation"]).toEqual({
      name: "trade.editor",
      when_set: ["all"],
      refusal: "auth.editor_required",
      acting_for_nobody: true,
    });
    expect(context.post["x-pf-relation"]).toMatchObject({ when_set: ["approve", "reject", "publish"] });
    const news = openApiDocument(bindingsOf(NewsStoryService), {
      title: "pf news",
      basePath: "/news",
    }) as unknown as Document;
    const story = news.paths["/api/v1/stories/{id}"].get;
    expect(story).toMatchObject({ "x-pf-name": "editor", "x-pf-relation": { name: "news.editor" } });
    expect((story["x-pf-alternatives"] as object[])[0]).not.toHaveProperty("relation");
  });

  it("documents the defaults: platform CORS and audience; no actor, no alternatives, not designed", () => {
    const blocks = service.paths["/internal/blocks"].get;
    expect(blocks).toMatchObject({ "x-pf-cors": "platform", "x-pf-token-audience": "pf" });
    for (const member of [
      "actor",
      "alternatives",
      "capability-unchecked",
      "name",
      "designed",
      "rate-limit",
      "relation",
    ]) {
      expect(blocks).not.toHaveProperty([`x-pf-${member}`]);
    }
  });
});

describe("OpenAPI of every service", () => {
  /** A schema, or the component its $ref names. */
  const resolved = (schema: JsonSchema): JsonSchema =>
    schema.$ref
      ? (document.components.schemas[schema.$ref.slice("#/components/schemas/".length)] as JsonSchema)
      : schema;

  /** Every generated pf service, read from gen/ (the services need no running platform for their documents). */
  async function everyService(): Promise<DescService[]> {
    const found: DescService[] = [];
    for (const key of await readdir(new URL("../../gen/pf/", import.meta.url))) {
      const dir = new URL(`../../gen/pf/${key}/v1/`, import.meta.url);
      const files = await readdir(dir).catch(() => [] as string[]);
      for (const file of files.filter((name) => name.endsWith("_pb.ts"))) {
        const exports = (await import(new URL(file, dir).href)) as Record<string, { kind?: string }>;
        found.push(...(Object.values(exports).filter((value) => value?.kind === "service") as DescService[]));
      }
    }
    return found;
  }

  let services: DescService[];
  let document: Document;
  let operations: Operation[];
  beforeAll(async () => {
    services = await everyService();
    document = openApiDocument(services.flatMap(bindingsOf), { title: "pf" }) as unknown as Document;
    operations = Object.values(document.paths).flatMap(Object.values);
  });

  it('marks designed routes with x-pf-designed and never summarises an operation as "Designed"', () => {
    expect(services.length).toBeGreaterThan(6);
    for (const op of operations) expect(op.summary, op.operationId).not.toMatch(/^Designed/i);
    const rpcs = services.flatMap((each) => each.methods.filter((method) => hasOption(method, http)));
    const marked = rpcs.filter((method) => getOption(method, designed)).map(rpcName);
    expect(marked.length).toBeGreaterThan(0);
    const documented = operations.filter((op) => op["x-pf-designed"] === true).map((op) => op.operationId);
    expect([...new Set(documented.map((id) => id.replace(/_\d+$/, "")))].sort()).toEqual([...new Set(marked)].sort());
  });

  it("names each operation once: an RPC's additional bindings add their place among its bindings", () => {
    const ids = operations.map((op) => op.operationId);
    expect(ids.filter((id, index) => ids.indexOf(id) !== index)).toEqual([]);
    expect(document.paths["/space/api/v1/spaces"].get.operationId).toBe("SpaceService.ListSpaces");
    expect(document.paths["/space/s"].get.operationId).toBe("SpaceService.ListSpaces_2");
    expect(document.paths["/space/s/{space}/t/{slug}"].get.operationId).toBe("SpaceService.GetThread_2");
    // A short form is tagged as its main binding is.
    expect(document.paths["/space/s"].get.tags).toEqual(["Spaces (space)"]);
  });

  it("leaves out of each JSON body the fields its path sets and those its route does not read", () => {
    let checked = 0;
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [verb, op] of Object.entries(item)) {
        const body = op.requestBody?.content["application/json"]?.schema as JsonSchema | undefined;
        if (!body) continue;
        const named = Object.keys(resolved(body).properties ?? {});
        const bound = op.parameters.filter((parameter) => parameter.in === "path").map((parameter) => parameter.name);
        for (const name of bound) expect(named, `${verb} ${path}`).not.toContain(name.split(".")[0]);
        const reads = op["x-pf-request-fields"] as string[] | undefined;
        if (reads) for (const name of named) expect(reads, `${verb} ${path}`).toContain(name);
        checked += bound.length;
      }
    }
    expect(checked).toBeGreaterThan(100);
    // The path's slug is not the body's: Swagger UI's default body no longer names it.
    const fork = document.paths["/community/api/pastes/{slug}/fork"].post.requestBody!.content["application/json"];
    expect(fork).toMatchObject({ example: { title: "example", idempotency_key: "example" } });
  });

  it("gives every JSON body and path parameter an example, and describes the parameters by their fields' comments", () => {
    const parameters = operations.flatMap((op) => op.parameters);
    const path = parameters.filter((parameter) => parameter.in === "path");
    expect(path.filter((parameter) => !("example" in parameter))).toEqual([]);
    const json = operations.flatMap((op) => (op.requestBody?.content["application/json"] ? [op] : []));
    expect(json.length).toBeGreaterThan(100);
    expect(
      json.filter((op) => !("example" in op.requestBody!.content["application/json"])).map((op) => op.operationId),
    ).toEqual([]);
    expect(parameters.filter((parameter) => !parameter.description).map((parameter) => parameter.name)).toEqual([]);
  });

  it("gives every operation one example: a route showing none in its request shows its success answer, query parameters none", () => {
    const shows = (content: Record<string, object> = {}) => Object.values(content).some((media) => "example" in media);
    const inRequest = (op: Operation) =>
      op.parameters.some((parameter) => "example" in parameter) || shows(op.requestBody?.content);
    const answers = (op: Operation) =>
      Object.entries(op.responses).filter(([status, response]) => /^2/.test(status) && shows(response.content));
    expect(operations.filter((op) => !inRequest(op) && answers(op).length === 0).map((op) => op.operationId)).toEqual(
      [],
    );
    // One, not several: an operation whose request shows an example answers without one, and so does a problem.
    for (const op of operations) {
      expect(answers(op).length, op.operationId).toBe(inRequest(op) ? 0 : 1);
      expect(
        Object.entries(op.responses).filter(([status, response]) => !/^2/.test(status) && shows(response.content)),
      ).toEqual([]);
    }
    // Query parameters carry none: Swagger UI's "Try it out" would send it.
    const query = operations.flatMap((op) => op.parameters).filter((parameter) => parameter.in === "query");
    expect(query.filter((parameter) => "example" in parameter || "examples" in parameter)).toEqual([]);

    // Of a result's oneof by route, the member the RPC's name ends with (ListCashouts: cashouts), else the first.
    const answer = (path: string) =>
      (document.paths[path].get.responses["200"].content["application/json"] as { example?: object }).example;
    expect(Object.keys(answer("/billing/api/v1/cashouts")!)).toEqual(["cashouts"]);
    expect(answer("/billing/api/v1/cashouts")).toMatchObject({
      cashouts: { cashouts: [{ status: expect.any(String) }] },
    });
    expect(Object.keys(answer("/billing/api/v1/admin/import-holds")!)).toEqual(["import_holds"]);
    expect(Object.keys(answer("/tips/api/v1/overlay-configs")!)).toEqual(["configs"]);
    expect(Object.keys(answer("/billing/api/v1/admin/freeze")!)).toEqual(["economy"]);
    // A byte answer shows its JSON form (answered when its bytes are unset); an event stream one event as written.
    const feed = document.paths["/space/s/feed.xml"].get.responses["200"].content as Record<string, object>;
    expect(feed["*/*"]).not.toHaveProperty("example");
    expect(feed["application/json"]).toMatchObject({ example: { space: { key: "example" } } });
    expect((feed["application/json"] as { example: object }).example).not.toHaveProperty("feed");
    const stream = document.paths["/tips/api/v1/stream"].get.responses["200"].content["text/event-stream"] as {
      example?: string;
    };
    expect(stream.example).toMatch(/^(id: .*\n)?(event: \w+\n)?data: \{.*\}\n\n$/);
  });
});
