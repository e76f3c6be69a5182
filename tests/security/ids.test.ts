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
import { answered, namedField, rpcAnswer } from "../support/rpc-answer.js";

/**
 * Issue 11, finding A: ids have no length or shape limit, and a 1 MB id
 * reaches PostgreSQL. For every RPC of every service, each id field its route
 * reads (found in the contract: `(pf.v1.id_prefix)`, or a string field named
 * `id`, `…_id` or `…_ids`) is sent oversize, and with another prefix where the
 * contract gives one: the answer is 400 request.invalid naming the field,
 * over the gateway and over RPC. The input guard runs before any handler, so a
 * refusal naming the field is one no query ran for; never a 404, 500 or 200.
 */
const t = usePlatform();

/**
 * As the finding sends: a megabyte. Over the gateway a query value must fit
 * the request's head (16 KiB), and a path segment the router's 1 KiB (414
 * beyond): those are sent as long as they can be, well past any id's limit.
 */
const MEGABYTE = 1_000_000;
const IN_QUERY = 8_000;
const IN_PATH = 1_000;

let rpc: Transport;
beforeAll(() => {
  rpc = createConnectTransport({ baseUrl: t.platform.rpcUrl, httpVersion: "2" });
});

/** One id field of a request: the fields down to it, its contract prefix, and the path the guard names. */
interface IdTarget {
  steps: DescField[];
  prefix: string;
  /** Dotted proto names (`perks.perk_ids`). */
  path: string;
  /** As refusals name it: a repeated step's first element is `[0]` (`perks.perk_ids[0]`). */
  named: string;
}

const idNamed = (field: DescField) => /^(?:id|ids)$|_ids?$/.test(field.name);
const holdsText = (field: DescField) =>
  (field.fieldKind === "scalar" || field.fieldKind === "list") && field.scalar === ScalarType.STRING;
const nestedOf = (field: DescField): DescMessage | undefined =>
  (field.fieldKind === "message" || (field.fieldKind === "list" && field.listKind === "message")) &&
  !field.message.typeName.startsWith("google.protobuf.")
    ? field.message
    : undefined;

/** Every id field under a request message, top-level fields limited to those its route reads. */
function idTargets(message: DescMessage, reads?: ReadonlySet<string>, parents: DescField[] = []): IdTarget[] {
  return message.fields.flatMap((field) => {
    if (parents.length === 0 && reads && !reads.has(field.name)) return [];
    const steps = [...parents, field];
    const prefix = getOption(field, idPrefix);
    if (holdsText(field) && (prefix !== "" || idNamed(field))) {
      const path = steps.map((step) => step.name).join(".");
      const named = steps.map((step) => (step.fieldKind === "list" ? `${step.name}[0]` : step.name)).join(".");
      return [{ steps, prefix, path, named }];
    }
    const nested = nestedOf(field);
    return nested && !parents.some((parent) => parent.message === nested) ? idTargets(nested, undefined, steps) : [];
  });
}

/** The request JSON holding one value at a target (a repeated step holds one element). */
function jsonAt(steps: readonly DescField[], value: JsonValue): JsonObject {
  const [step, ...rest] = steps;
  const inner = rest.length === 0 ? value : jsonAt(rest, value);
  return { [step.name]: step.fieldKind === "list" ? [inner] : inner };
}

/** The fields a route reads (request_fields), or undefined where it reads them all. */
function routeReads(method: DescMethod): ReadonlySet<string> | undefined {
  return hasOption(method, requestFieldsOption) ? new Set(getOption(method, requestFieldsOption).names) : undefined;
}

/** A value a path variable takes without a refusal of its own, for those other than the one under test. */
function validFor(field: DescField): string {
  if (field.fieldKind === "scalar" && field.scalar !== ScalarType.STRING) return "1"; // a revision number `{n}`
  const prefix = getOption(field, idPrefix);
  return prefix === "" ? "usr_a1" : `${prefix}_01jd0000000000000000000000`;
}

/** One call over the gateway with the id at its target, or undefined where the binding cannot carry it. */
async function overHttp(
  binding: Binding,
  target: IdTarget,
  value: string,
  caller: Caller,
): Promise<string | undefined> {
  const fields = requestFields(binding);
  const top = target.steps[0];
  const inPath = fields.path.some((each) => each.path === target.path);
  const inBody = !inPath && (binding.body === "*" || binding.bodyField === top);
  const inQuery = !inPath && !inBody && fields.query.has(target.path);
  if (!inPath && !inBody && !inQuery) return undefined;
  const sent = value.slice(0, inPath ? IN_PATH : inQuery ? IN_QUERY : value.length);
  const path = binding.template.segments
    .map((segment) => {
      if (segment.kind === "literal") return segment.text;
      if (segment.field === target.path) return encodeURIComponent(sent);
      return encodeURIComponent(validFor(fields.path.find((each) => each.path === segment.field)!.field));
    })
    .join("/");
  const json = jsonAt(target.steps, sent);
  const body = inBody ? (binding.bodyField ? json[top.name] : json) : binding.body === "" ? undefined : {};
  const search = inQuery ? `?${target.path}=${encodeURIComponent(sent)}` : "";
  const answer = await t.http(binding.verb, `/${binding.key}/${path}${search}`, {
    token: await t.token(caller.claims!),
    headers: caller.headers,
    body,
  });
  return answered(answer.status, answer.body?.code, namedField(answer.body, target.named));
}

/** One call on the RPC port (Connect over HTTP/2, the whole interceptor chain) with the id at its target. */
async function overRpc(method: DescMethod, target: IdTarget, value: string, caller: Caller): Promise<string> {
  const headers = { authorization: `Bearer ${await t.token(caller.claims!)}`, ...caller.headers };
  return rpcAnswer(rpc, method, fromJson(method.input, jsonAt(target.steps, value)), headers, target.named);
}

/** What a route answers each bad id of its request, where that is not 400 naming the field. */
async function wrongAnswers(route: Route): Promise<string[]> {
  const method = route.method;
  const [binding] = bindingsOf(method.parent).filter((each) => each.method === method);
  const caller = admittedCaller(route);
  const wrong: string[] = [];
  for (const target of idTargets(method.input, routeReads(method))) {
    const sent: [string, string][] = [
      ["1 MB", (target.prefix === "" ? "" : `${target.prefix}_`) + "a".repeat(MEGABYTE)],
    ];
    if (target.prefix !== "") sent.push(["another prefix", "zz_01jd0000000000000000000000"]);
    for (const [what, value] of sent) {
      const want = `400 request.invalid ${target.named}`;
      const name = `${method.parent.name}.${method.name} ${target.path} (${what})`;
      const direct = await overRpc(method, target, value, caller);
      if (direct !== want) wrong.push(`${name} over RPC: ${direct}`);
      const http = binding && (await overHttp(binding, target, value, caller));
      if (http !== undefined && http !== want) wrong.push(`${name} over HTTP: ${http}`);
    }
  }
  return wrong;
}

describe.each(modules.map((module) => module.key))("every route of %s with an id (from the contract)", (key) => {
  it("refuses an oversize id, and one with another prefix, as 400 naming the field before any query", async () => {
    // A streamed request (bot's device link, /control) is checked message by message as its handler reads it, after
    // the handler's own first checks (a device's credential): its ids are refused by the same guard, tested in tests/bot.
    const routes = routesOf(...servicesOf(key)).filter(
      (route) =>
        idTargets(route.method.input, routeReads(route.method)).length > 0 &&
        route.method.methodKind !== "bidi_streaming" &&
        route.method.methodKind !== "client_streaming",
    );
    // Every service but media names something by a prefixed id; media's keys are random keys of a fixed shape,
    // refused by that shape before any query (tests/media).
    if (key === "media") expect(routes).toEqual([]);
    else expect(routes.length).toBeGreaterThan(0);
    const wrong: string[] = [];
    for (const route of routes) wrong.push(...(await wrongAnswers(route)));
    expect(wrong).toEqual([]);
  });
});

it("covers the ids the finding names: merchant_id, plan_id and a coupon's id, among every route's", () => {
  const covered = modules.flatMap((module) =>
    routesOf(...servicesOf(module.key)).flatMap((route) =>
      idTargets(route.method.input, routeReads(route.method)).map(
        (target) => `${route.method.parent.name}.${route.method.name} ${target.path} ${target.prefix}`,
      ),
    ),
  );
  expect(covered).toEqual(
    expect.arrayContaining([
      "CouponsService.SubmitCoupon merchant_id mer",
      "CouponsService.GetCoupon id cpn",
      "VipService.GetPlan id pln",
      "VipService.CreateCheckout plan_id pln",
      "BillingService.CreateSubscription plan_id pln",
      "BillingService.CreateIntent channel_subscription.plan_id pln",
      "VipService.UpdatePlan perks.perk_ids prk",
      "TipsOverlayService.OpenOverlayStream config_id ovc",
      // Ids others make are bounded by length alone.
      "BillingService.CreateTransfer reference.id ",
      "NetworkService.CreditCoins app_id ",
    ]),
  );
});
