import { create, getOption, ScalarType, type DescMethod, type DescService, type Message } from "@bufbuild/protobuf";
import { reflect } from "@bufbuild/protobuf/reflect";
import type { Interceptor } from "@connectrpc/connect";
import {
  relations as relationsOption,
  service_key as serviceKey,
  type Relation,
  type RelationRule,
} from "../../../gen/pf/v1/options_pb.js";
import { routeAccessOf } from "../auth/enforce.js";
import { callerKey, type Caller } from "../auth/principal.js";
import { isDatabaseUnavailable } from "../db/unavailable.js";
import { problem } from "../handler/problem.js";
import { replayed } from "./streams.js";
import type { Logger } from "../runtime/logger.js";
import { notAnswered } from "../runtime/call.js";

/** The kit's 403 codes a relation may refuse with (services/kit/README.md); any other `auth.` code is enforcement's. */
export const RELATION_REFUSALS = [
  "auth.editor_required",
  "auth.staff_required",
  "auth.member_required",
  "auth.role_required",
] as const;

/**
 * A declared refusal: one of the kit's, or the declaring service's own code where its spec names one for that
 * refusal (blog.member_required), declared once beside the relation; never another `auth.` or `relation.` code.
 */
export function declarableRefusal(code: string): boolean {
  if ((RELATION_REFUSALS as readonly string[]).includes(code)) return true;
  return /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/.test(code) && !/^(auth|relation)\./.test(code);
}

/**
 * A service's answer to "what is this person to this object": their role in
 * a relation it declares (`editor`, a blog member's `owner`…), or undefined
 * when they stand outside it. `scope` is the request's `scope_field` ("" for
 * a relation to the service as a whole). It may read the database or ask
 * another service; throwing because a dependency did not answer is 503, never
 * a no; a problem it throws (the scoped object's 404) is answered as is.
 * `ctx` is the service's context (`ServiceContext`, kit/service/module.ts).
 */
export type RelationResolver<C> = (ctx: C, asked: RelationAsked) => Promise<string | undefined>;

/**
 * Who is asked about and where: the person (or, for a relation `held_by_apps`, an app acting for nobody as
 * `app:<id>`), the scope, and the token's environment claim (`sandbox` tokens are refused where a service keeps
 * production apart).
 */
export interface RelationAsked {
  person: string;
  scope: string;
  env?: string;
}

const decisions = new WeakSet<Error>();

/**
 * Marks a problem a resolver throws as its own decision, answered as is: a 403 of the service's own (host's
 * host.sandbox_refused) would otherwise be taken for a callee refusing the resolver's credentials (503).
 */
export function resolverDecision<E extends Error>(error: E): E {
  decisions.add(error);
  return error;
}

/** One declared relation as this process resolves it. */
interface Resolving {
  readonly name: string;
  readonly declared: Relation;
  readonly resolve: (asked: RelationAsked) => Promise<string | undefined>;
}

/**
 * Roles and lists as declared access rules: an access rule's `relation`
 * (proto/pf/v1/options.proto) is resolved here, by the resolver its service
 * registers (`defineService({ relations })`), once admission has admitted the
 * token and the input guard has read the request, before the rate limits and
 * the handler, for gateway and RPC callers alike. A caller outside the
 * relation is refused with the relation's declared code, unless a later rule
 * of the route admits it (`Caller.otherwise`); the handler reads what
 * admitted it (`callerOf(call).relation`, `relatedActor`). AI output never
 * holds a relation (naming a person, 403 auth.person_required) unless declared `held_by_ai_output`, nor a mod. A resolver that cannot answer is 503
 * `relation.unavailable`: never allowed, never a false "not allowed".
 */
export class Relations {
  /** Per service key, its relations by name. */
  private readonly byKey = new Map<string, Map<string, Resolving>>();

  constructor(private readonly logger: Logger) {}

  /**
   * Registers a module's resolvers for its proto services and checks its contract at start: every relation a rule
   * names is declared on its service with a refusal of the kit's vocabulary (or the service's own code), resolved by the module, scoped by a
   * string field of the request, required when fields the request has are set, and never on a client stream.
   */
  register<C>(protos: readonly DescService[], resolvers: Readonly<Record<string, RelationResolver<C>>>, ctx: C): void {
    for (const service of protos) {
      const key = getOption(service, serviceKey);
      const found = this.byKey.get(key) ?? new Map<string, Resolving>();
      this.byKey.set(key, found);
      for (const declared of getOption(service, relationsOption)) {
        const resolver = resolvers[declared.name];
        const where = `${service.typeName} relation "${declared.name}"`;
        if (!resolver) throw new Error(`${where}: the ${key} module registers no resolver for it (relations)`);
        if (!declarableRefusal(declared.refusal))
          throw new Error(
            `${where}: refusal "${declared.refusal}" is neither one of ${RELATION_REFUSALS.join(", ")} nor a code of the service's own`,
          );
        const seen = found.get(declared.name);
        if (
          seen &&
          (seen.declared.refusal !== declared.refusal ||
            seen.declared.actingForNobody !== declared.actingForNobody ||
            seen.declared.heldByAiOutput !== declared.heldByAiOutput ||
            seen.declared.heldByApps !== declared.heldByApps ||
            seen.declared.ofObject !== declared.ofObject)
        )
          throw new Error(`${where} is declared twice in ${key}, unalike`);
        found.set(declared.name, {
          name: `${key}.${declared.name}`,
          declared,
          resolve: (asked) => resolver(ctx, asked),
        });
      }
      for (const method of service.methods)
        for (const rule of routeAccessOf(method).rules) checkRule(method, rule.relation, found);
    }
    for (const name of Object.keys(resolvers))
      if (!protos.some((service) => getOption(service, relationsOption).some((each) => each.name === name)))
        throw new Error(`the resolver of relation "${name}" serves no declared relation`);
  }

  /**
   * The interceptor: placed after admission and the input guard (it reads the request's scope), before the rate
   * limits. A streamed request is scoped by its first message (an upload's first names what it goes to): that message
   * is read, the relation resolved, and the handler reads it again as the stream's first.
   */
  interceptor(): Interceptor {
    return (next) => async (req) => {
      const caller = req.contextValues.get(callerKey);
      if (caller.requires === undefined) return next(req);
      if (!req.stream) {
        req.contextValues.set(callerKey, await this.admit(req.method, caller, req.message));
        return next(req);
      }
      const messages = req.message[Symbol.asyncIterator]();
      const first = await messages.next();
      const scope = first.done ? create(req.method.input) : first.value;
      req.contextValues.set(callerKey, await this.admit(req.method, caller, scope));
      return next({ ...req, message: replayed(first, messages) });
    };
  }

  /** The Caller of the first rule whose relation holds (or that needs none), else the last rule's refusal. */
  async admit(method: DescMethod, caller: Caller, message: Message): Promise<Caller> {
    let refusal: Error | undefined;
    for (const candidate of [caller, ...(caller.otherwise ?? [])]) {
      const { requires, otherwise: _later, ...admitted } = candidate;
      if (requires === undefined || !requiredBy(method, requires, message)) return admitted;
      const relation = this.relationOf(method, requires.name);
      const role = await this.roleOf(relation, candidate, scopeOf(method, requires, message));
      if (role !== undefined && (requires.roles.length === 0 || requires.roles.includes(role)))
        return { ...admitted, relation: { name: relation.name, role } };
      refusal = refused(relation, requires, candidate);
    }
    throw refusal!;
  }

  private relationOf(method: DescMethod, name: string): Resolving {
    const found = this.byKey.get(getOption(method.parent, serviceKey))?.get(name);
    if (!found) throw new Error(`${method.parent.typeName}.${method.name}: relation "${name}" is not registered`);
    return found;
  }

  /** The caller's role in the relation; "" for a service or first-party app acting for nobody where that holds it. */
  private async roleOf(relation: Resolving, { principal, person }: Caller, scope: string): Promise<string | undefined> {
    // The object's own class: the same answer for every caller, asked with no person.
    if (relation.declared.ofObject) return this.resolved(relation, { person: "", scope, env: principal.env });
    if (principal.mod !== undefined) return undefined;
    if (principal.origin === "ai" && !(person !== undefined && relation.declared.heldByAiOutput)) return undefined;
    const asked = person ?? (relation.declared.heldByApps && principal.kind === "app" ? principal.sub : undefined);
    if (asked === undefined) {
      const platform = principal.kind === "service" || (principal.kind === "app" && principal.fp);
      return relation.declared.actingForNobody && platform ? "" : undefined;
    }
    return this.resolved(relation, { person: asked, scope, env: principal.env });
  }

  /** The resolver's answer; a resolver that cannot answer now is 503, never a no. */
  private async resolved(relation: Resolving, asked: RelationAsked): Promise<string | undefined> {
    try {
      return await relation.resolve(asked);
    } catch (error) {
      if (decisions.has(error as Error) || (!notAnswered(error) && !isDatabaseUnavailable(error))) throw error;
      this.logger.warn(
        { err: error, relation: relation.name },
        "a relation could not be resolved; the call is refused",
      );
      throw problem(503, "relation.unavailable", `${relation.name} cannot be resolved now; try again later.`, {
        relation: relation.name,
      });
    }
  }
}

/** Whether a rule's relation applies to this request: always, or when it sets one of `when_set`. */
function requiredBy(method: DescMethod, rule: RelationRule, message: Message): boolean {
  if (rule.whenSet.length === 0) return true;
  const read = reflect(method.input, message);
  return rule.whenSet.some((name) => read.isSet(method.input.fields.find((field) => field.name === name)!));
}

/** The scope the request names (`scope_field`), "" for a relation to the service as a whole. */
function scopeOf(method: DescMethod, rule: RelationRule, message: Message): string {
  if (rule.scopeField === "") return "";
  const field = method.input.fields.find((each) => each.name === rule.scopeField)!;
  return reflect(method.input, message).get(field) as string;
}

function refused(relation: Resolving, rule: RelationRule, { person, principal }: Caller): Error {
  // An object's class refusing an anonymous caller: signing in may change the answer.
  if (relation.declared.ofObject && principal.kind === "anonymous")
    return problem(401, "auth.required", `${relation.name} here needs a signed-in caller or a token.`, {
      relation: relation.name,
    });
  // AI output is never a person's: naming one, it is refused as a person's own act is (enforce.ts, no_ai_origin).
  if (person !== undefined && principal.origin === "ai" && !relation.declared.heldByAiOutput)
    return problem(403, "auth.person_required", `AI output never holds ${relation.name} as the person it names.`);
  const roles = rule.roles.length > 0 ? ` as ${rule.roles.join(" or ")}` : "";
  const who = person ?? "A caller acting for nobody";
  return problem(403, relation.declared.refusal, `${who} does not hold ${relation.name}${roles} here.`, {
    relation: relation.name,
    ...(rule.roles.length > 0 ? { roles: rule.roles } : {}),
  });
}

/** Refuses at start a rule naming a relation its service does not declare, or fields its request does not have. */
function checkRule(method: DescMethod, rule: RelationRule | undefined, declared: Map<string, Resolving>): void {
  if (rule === undefined) return;
  const where = `${method.parent.typeName}.${method.name}`;
  if (!declared.has(rule.name))
    throw new Error(`${where} names relation "${rule.name}", which its service does not declare`);
  const field = (name: string) => method.input.fields.find((each) => each.name === name);
  if (rule.scopeField !== "" && field(rule.scopeField)?.scalar !== ScalarType.STRING)
    throw new Error(`${where}: scope_field "${rule.scopeField}" is no string field of ${method.input.typeName}`);
  const missing = rule.whenSet.find((name) => field(name) === undefined);
  if (missing !== undefined) throw new Error(`${where}: when_set "${missing}" is no field of ${method.input.typeName}`);
}
