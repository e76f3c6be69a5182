import { getOption, type JsonObject } from "@bufbuild/protobuf";
import {
  Actor,
  in_flight as inFlight,
  namespace_claim as namespaceClaim,
  Visibility,
  type Access,
} from "../gen/pf/v1/options_pb.js";
import { protoComments } from "../gen/pf/docs.js";
import { admitsAnonymous, type RouteAccess } from "../services/kit/auth/enforce.js";
import { servedAsWebSocket, type Binding } from "./bindings.js";
import { PROBLEM_CONTENT_TYPE } from "./problems.js";

/** One problem a route may answer: its status, the spec's code and when. */
export interface RouteProblem {
  readonly status: number;
  readonly code: string;
  readonly when: string;
}

/**
 * The problems a route answers, by status: those the gateway and enforcement
 * give on every route, those its access rules imply (what kit/auth/enforce.ts
 * refuses with), and those its RPC's comment names ("409 staff.owner_exists").
 * What a handler raises without saying so in the comment is left to `default`.
 */
export function routeProblems(binding: Binding, access: RouteAccess): RouteProblem[] {
  const found = new Map<string, RouteProblem>();
  const add = (status: number, code: string, when: string) => {
    if (!found.has(code)) found.set(code, { status, code, when });
  };
  add(
    400,
    "request.invalid",
    "a path variable, query parameter, body or X-PF-* header is malformed or breaks its field's declared rules " +
      "(`field` names the first, `errors` lists each with its rule)",
  );
  if (!access.rules.some(admitsAnonymous)) add(401, "auth.required", "no bearer token");
  add(401, "auth.invalid", "the token is not valid: bad signature, expired, or not a platform token");
  add(401, "auth.wrong_audience", `the token is not for the audience ${access.audience}`);
  add(403, "auth.header_refused", "X-PF-* headers from a caller that is not a service");
  for (const rule of access.rules) ruleRefusals(rule, add);
  if (servedAsWebSocket(binding)) {
    add(403, "request.origin_refused", "a browser page on an origin the route's CORS does not answer");
    add(426, "request.upgrade_required", "a request without `Upgrade: websocket`");
    add(504, "deadline_exceeded", "the RPC sent no first message within the call deadline");
  }
  const claim = getOption(binding.method, namespaceClaim);
  if (claim.fields.length > 0)
    add(403, claim.refusal, `the token's ns claim does not list the namespace ${claim.fields.join(" or ")} names`);
  if (getOption(binding.method, inFlight) !== "")
    add(429, "service.busy", "too many of the route's costly calls wait their turn (Retry-After: when to try again)");
  for (const { status, code } of namedInComment(binding)) add(status, code, "see the description");
  return [...found.values()].sort((a, b) => a.status - b.status);
}

/** The problems as OpenAPI responses, one per status, each listing its codes (also as `x-pf-problem-codes`). */
export function problemResponses(problems: readonly RouteProblem[], schema: JsonObject): JsonObject {
  const responses: Record<string, { description: string; codes: string[] }> = {};
  for (const { status, code, when } of problems) {
    const response = (responses[status] ??= { description: "", codes: [] });
    response.description += `${response.description ? "\n\n" : ""}\`${code}\`: ${when}.`;
    response.codes.push(code);
  }
  const answer: JsonObject = {};
  for (const [status, { description, codes }] of Object.entries(responses)) {
    answer[status] = { description, content: { [PROBLEM_CONTENT_TYPE]: { schema } }, "x-pf-problem-codes": codes };
  }
  return answer;
}

/** What enforcement refuses a caller with under one rule (admitToken, requireCapabilities, admitByRule). */
function ruleRefusals(rule: Access, add: (status: number, code: string, when: string) => void): void {
  if (rule.visibility === Visibility.INTERNAL) {
    add(403, "auth.internal_only", "a user or app token on an internal route");
    add(403, "auth.never_to_mods", "a token carrying a mod claim");
  }
  if (rule.neverToMods) add(403, "auth.never_to_mods", "a token carrying a mod claim");
  // A mod acts only by a capability the rule names, and never for a person.
  if (rule.capabilities.length === 0 && rule.allCapabilities.length === 0)
    add(403, "auth.never_to_mods", "a mod's token: the route names no capability");
  if (rule.actingSubject || rule.visibility === Visibility.FIRST_PARTY)
    add(403, "auth.never_to_mods", "X-PF-Subject or X-PF-Staff from a mod's token");
  if (rule.noPeople) add(403, "auth.people_refused", "a user token");
  if (rule.neverToApps) add(403, "auth.never_to_apps", "an app token");
  if (rule.visibility === Visibility.FIRST_PARTY) add(403, "auth.first_party_only", "an app that is not first-party");
  if (rule.onlyServices.length > 0) {
    add(403, "auth.service_not_allowed", `a service other than ${rule.onlyServices.join(", ")}`);
  }
  if (!rule.capabilityUnchecked && (rule.capabilities.length > 0 || rule.allCapabilities.length > 0)) {
    add(403, "auth.capability_missing", "the token lacks the capability (`x-pf-capabilities`)");
  }
  if (rule.separateGrant) add(403, "auth.separate_grant", "the token carries other capabilities too");
  if (!rule.actingSubject && rule.visibility !== Visibility.FIRST_PARTY) {
    add(400, "auth.acting_subject_refused", "X-PF-Subject on a route that acts for nobody");
  }
  const actor = ACTOR_REFUSALS[rule.actor];
  if (actor) add(403, actor[0], actor[1]);
  if (rule.rateLimit !== "") {
    add(
      429,
      "rate.limited",
      "past the calls a minute `x-pf-rate-limit` allows the caller's tier (Retry-After: when to try again)",
    );
  }
}

const ACTOR_REFUSALS: Partial<Record<Actor, [string, string]>> = {
  [Actor.PERSON]: ["auth.person_required", "the call acts for no person"],
  [Actor.MEMBER]: ["auth.member_required", "the call acts for no network user (usr_)"],
  [Actor.STAFF]: ["auth.staff_required", "the call acts for no staff"],
  [Actor.PLATFORM_STAFF]: ["auth.staff_required", "the call acts for no platform staff"],
  [Actor.AI_OUTPUT]: ["auth.ai_origin_required", "the call is not AI output (X-PF-Origin: ai)"],
};

/** A status and a code as comments write them: `409 staff.owner_exists`, `409 insufficient_funds`. */
const NAMED = /\b([45]\d\d) `?([a-z][a-z0-9]*(?:[._][a-z0-9]+)+)\b/g;

function namedInComment(binding: Binding): { status: number; code: string }[] {
  const comment = protoComments[`${binding.method.parent.typeName}.${binding.method.name}`] ?? "";
  return [...comment.matchAll(NAMED)].map((match) => ({ status: Number(match[1]), code: match[2] }));
}
