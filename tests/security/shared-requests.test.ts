import {
  fromJson,
  getOption,
  hasOption,
  ScalarType,
  type DescField,
  type DescMessage,
  type DescMethod,
  type JsonObject,
  type JsonValue,
} from "@bufbuild/protobuf";
import type { Transport } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { beforeAll, describe, expect, it } from "vitest";
import { bindingsOf, type Binding } from "../../gateway/bindings.js";
import { requestFields } from "../../gateway/request.js";
import { id_prefix as idPrefix, request_fields as requestFieldsOption } from "../../gen/pf/v1/options_pb.js";
import { modules } from "../../platform/registry.js";
import { admittedCaller, routesOf, type Caller, type Route, servicesOf } from "../support/access.js";
import { usePlatform } from "../support/platform.js";
import { answered, rpcAnswer } from "../support/rpc-answer.js";
import { backend, merchant, staff } from "../coupons/support.js";

/**
 * Issue 11, finding B: a field that belongs to another route of a shared
 * request schema was silently ignored (coupons' merchant status with domains,
 * domains with status, billing's intent create with an id). Every RPC whose
 * request message another RPC also takes declares the fields it reads
 * (`(pf.v1.request_fields)`), and a field of another route is refused as 400
 * request.invalid naming it, as unknown fields are, over the gateway and over
 * RPC.
 */
const t = usePlatform();

let rpc: Transport;
beforeAll(() => {
  rpc = createConnectTransport({ baseUrl: t.platform.rpcUrl, httpVersion: "2" });
});

const allMethods = () => modules.flatMap((module) => servicesOf(module.key).flatMap((service) => service.methods));
const rpcName = (method: DescMethod) => `${method.parent.name}.${method.name}`;

/** The fields a route reads, as its request_fields declares them (undefined where it declares none). */
function readsOf(method: DescMethod): string[] | undefined {
  return hasOption(method, requestFieldsOption) ? getOption(method, requestFieldsOption).names : undefined;
}

/** A value that sets a field (any value: the route must refuse the field before reading it). */
function valueOf(field: DescField): JsonValue {
  switch (field.fieldKind) {
    case "scalar":
      return scalarValue(field);
    case "enum":
      return field.enum.values[1].name;
    case "message":
      return messageValue(field.message);
    case "list":
      return [
        field.listKind === "message"
          ? messageValue(field.message)
          : field.listKind === "enum"
            ? field.enum.values[1].name
            : scalarValue(field),
      ];
    case "map":
      // An empty map is no map at all: one entry sets the field.
      return {
        k1:
          field.mapKind === "message"
            ? messageValue(field.message)
            : field.mapKind === "enum"
              ? field.enum.values[1].name
              : scalarValue(field),
      };
  }
}

function scalarValue(field: DescField): JsonValue {
  switch (field.scalar) {
    case ScalarType.STRING: {
      const prefix = getOption(field, idPrefix);
      return prefix === "" ? "x1" : `${prefix}_01jd0000000000000000000000`;
    }
    case ScalarType.BOOL:
      return true;
    case ScalarType.BYTES:
      return "AA==";
    default:
      return 1;
  }
}

function messageValue(message: DescMessage): JsonValue {
  if (message.typeName === "google.protobuf.Timestamp") return "2026-01-01T00:00:00Z";
  if (message.typeName === "google.protobuf.Duration") return "1s";
  return {};
}

/** One call over the gateway setting a field of another route, or undefined where the binding cannot carry it. */
async function overHttp(binding: Binding, field: DescField, caller: Caller): Promise<string | undefined> {
  const fields = requestFields(binding);
  const path = binding.template.segments
    .map((segment) => {
      if (segment.kind === "literal") return segment.text;
      const target = fields.path.find((each) => each.path === segment.field)!;
      return encodeURIComponent(scalarValue(target.field) as string);
    })
    .join("/");
  let search = "";
  let body: unknown = binding.body === "" ? undefined : {};
  if (binding.body === "*") body = { [field.name]: valueOf(field) };
  else {
    // A query parameter sets the field, or one of its fields where it is a message.
    const target = [...fields.query.values()].find(
      (each) => each.path === field.name || each.path.startsWith(`${field.name}.`),
    );
    if (!target) return undefined;
    // Query targets are scalar-like: a scalar, an enum, a timestamp, or a list of one of them.
    const value = valueOf(target.field);
    search = `?${target.path}=${encodeURIComponent((Array.isArray(value) ? value[0] : value) as string | number)}`;
  }
  const answer = await t.http(binding.verb, `/${binding.key}/${path}${search}`, {
    token: await t.token(caller.claims!),
    headers: caller.headers,
    body,
  });
  return answered(answer.status, answer.body?.code, answer.body?.field);
}

/** One call on the RPC port (Connect over HTTP/2, the whole interceptor chain) setting a field of another route. */
async function overRpc(method: DescMethod, field: DescField, caller: Caller): Promise<string> {
  const headers = { authorization: `Bearer ${await t.token(caller.claims!)}`, ...caller.headers };
  const request = fromJson(method.input, { [field.name]: valueOf(field) } as JsonObject);
  return rpcAnswer(rpc, method, request, headers);
}

/** What a route answers each field of its request it does not read, where that is not 400 naming it. */
async function wrongAnswers(route: Route): Promise<string[]> {
  const method = route.method;
  const reads = readsOf(method)!;
  const [binding] = bindingsOf(method.parent).filter((each) => each.method === method);
  const caller = admittedCaller(route);
  const wrong: string[] = [];
  for (const field of method.input.fields.filter((each) => !reads.includes(each.name))) {
    const want = answered(400, "request.invalid", field.name);
    const direct = await overRpc(method, field, caller);
    if (direct !== want) wrong.push(`${rpcName(method)} ${field.name} over RPC: ${direct}`);
    const http = binding && (await overHttp(binding, field, caller));
    if (http !== undefined && http !== want) wrong.push(`${rpcName(method)} ${field.name} over HTTP: ${http}`);
  }
  return wrong;
}

describe("the contract of shared request schemas", () => {
  it("every RPC whose request message another RPC takes declares the fields it reads", () => {
    const byInput = new Map<DescMessage, DescMethod[]>();
    for (const method of allMethods()) byInput.set(method.input, [...(byInput.get(method.input) ?? []), method]);
    const shared = [...byInput.values()].filter((methods) => methods.length > 1);
    expect(shared.length).toBeGreaterThan(10);
    const undeclared = shared.flat().filter((method) => readsOf(method) === undefined);
    expect(undeclared.map(rpcName)).toEqual([]);
    // Every field of a shared message is read by one of its routes: a field none reads is refused everywhere.
    const unread = shared.flatMap(([first, ...others]) =>
      first.input.fields
        .filter((field) => ![first, ...others].some((method) => readsOf(method)!.includes(field.name)))
        .map((field) => `${first.input.typeName}.${field.name}`),
    );
    expect(unread).toEqual([]);
  });

  it("names only fields of the request, its path variables among them", () => {
    const wrong = allMethods().flatMap((method) => {
      const reads = readsOf(method);
      if (!reads) return [];
      const names = method.input.fields.map((field) => field.name);
      const variables = bindingsOf(method.parent)
        .filter((binding) => binding.method === method)
        .flatMap((binding) => binding.template.variables.map((variable) => variable.field.split(".")[0]));
      return [
        ...reads.filter((name) => !names.includes(name)).map((name) => `${rpcName(method)} names no field ${name}`),
        ...variables
          .filter((name) => !reads.includes(name))
          .map((name) => `${rpcName(method)} refuses its path variable ${name}`),
      ];
    });
    expect(wrong).toEqual([]);
  });
});

describe.each(modules.map((module) => module.key))("cross-route fields on every shared request schema of %s", (key) => {
  const declaring = () => routesOf(...servicesOf(key)).filter((route) => readsOf(route.method) !== undefined);

  it("a field of another route is refused as 400 naming it, over the gateway and over RPC", async () => {
    const routes = declaring();
    expect(routes.length).toBeGreaterThan(0);
    const wrong: string[] = [];
    for (const route of routes) wrong.push(...(await wrongAnswers(route)));
    expect(wrong).toEqual([]);
  });
});

describe("the fields the finding names", () => {
  it("a merchant's status route refuses domains, and its domains route refuses status (400 naming the field)", async () => {
    const token = await backend(t);
    const { id } = await merchant(t, token, { status: "MERCHANT_STATUS_PENDING" });
    const status = (body: object) =>
      t.http("POST", `/coupons/api/v1/merchants/${id}/status`, { token, headers: staff, body });
    const domains = (body: object) =>
      t.http("POST", `/coupons/api/v1/merchants/${id}/domains`, { token, headers: staff, body });
    const rule = { domain: `${id.slice(4)}.example.com` };

    const withDomains = await status({ status: "MERCHANT_STATUS_APPROVED", domains: [rule] });
    expect(withDomains.body).toMatchObject({ status: 400, code: "request.invalid", field: "domains" });
    const withStatus = await domains({ domains: [rule], status: "MERCHANT_STATUS_DISABLED" });
    expect(withStatus.body).toMatchObject({ status: 400, code: "request.invalid", field: "status" });

    // Each route without the other's field does what it says.
    expect((await domains({ domains: [rule] })).status).toBe(200);
    const approved = await status({ status: "MERCHANT_STATUS_APPROVED" });
    expect(approved.status).toBe(200);
    expect(approved.body.merchant.status).toBe("MERCHANT_STATUS_APPROVED");
  });

  it("billing's intent create refuses an id (400 naming it): billing makes the intent's id", async () => {
    const token = await t.token({ kind: "service", svc: "tips", caps: ["billing.intent.create"] });
    const create = (body: object) => t.http("POST", "/billing/api/v1/intents", { token, body });
    const purchase = { subject: "usr_buyer1", credit: { pack: "credits_500" } };
    const withId = await create({ ...purchase, id: "pi_01jd0000000000000000000000" });
    expect(withId.body).toMatchObject({ status: 400, code: "request.invalid", field: "id" });
    const created = await create(purchase);
    expect(created.status).toBe(201);
    expect(created.body.intent.id).toMatch(/^pi_/);
  });
});
