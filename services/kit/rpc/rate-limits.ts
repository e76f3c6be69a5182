import { getOption, type DescMethod, type DescService } from "@bufbuild/protobuf";
import type { Interceptor } from "@connectrpc/connect";
import {
  rate_limits as rateLimitsOption,
  service_key as serviceKey,
  type Access,
  type RateLimit,
} from "../../../gen/pf/v1/options_pb.js";
import { routeAccessOf } from "../auth/enforce.js";
import { callerKey, type Caller } from "../auth/principal.js";
import type { ClientKeys } from "../handler/client-address.js";
import { tooManyRequests } from "../writes/rate-limit.js";
import type { Clock } from "../runtime/clock.js";
import { wholeSetting } from "../runtime/whole-setting.js";

/** The tiers a caller is counted in, by its token's kind (RateLimit's fields). */
export const RATE_TIERS = ["anonymous", "person", "app", "service"] as const;
export type RateTier = (typeof RATE_TIERS)[number];

/** One tier's limit as this process applies it: its counter (`search.query.anonymous`) and calls per minute. */
export interface TierLimit {
  readonly counter: string;
  readonly perMinute: number;
}

type TierLimits = Partial<Record<RateTier, TierLimit>>;

/** Every declared limit counts calls per minute, in windows aligned to the minute. */
const WINDOW_MS = 60_000;

/** Counters one window holds at most (about 100 bytes each): 10 MB, far above one instance's distinct callers a minute. */
const MAX_CALLERS = 100_000;

/**
 * The rate limit an access rule names (`rate_limit`), as its proto service
 * declares it (`rate_limits`); undefined when the rule names none. A name the
 * service does not declare is a contract error, thrown when the host starts.
 */
export function declaredRateLimit(method: DescMethod, rule: Access): RateLimit | undefined {
  if (rule.rateLimit === "") return undefined;
  const found = getOption(method.parent, rateLimitsOption).find((limit) => limit.name === rule.rateLimit);
  if (!found) {
    throw new Error(
      `${method.parent.typeName}.${method.name} names the rate limit "${rule.rateLimit}", which its service does not declare (pf.v1.rate_limits)`,
    );
  }
  return found;
}

/**
 * The declared rate limits, applied by one interceptor to every call of the
 * process's services, gateway and RPC callers alike, once enforcement has
 * admitted the caller and before the handler runs. A call is counted against
 * the limit of the rule that admitted it, in the caller's tier: anonymous by
 * client address (ClientKeys: a keyed hash, an IPv6 /64 as one; none between
 * services in process, so nothing is counted), people per person, apps per
 * app, services per service. Counted in this instance's memory, never in the
 * database: a read pays no write, and N instances allow N times a limit. A
 * call over its limit is 429 `rate.limited` and counts nothing.
 */
export class RateLimits {
  /** Per RPC, the tier limits of its rules by rule name. */
  private readonly byMethod = new Map<DescMethod, Map<string, TierLimits>>();
  /** Calls counted in the current window, by counter and caller key; a new window starts empty. */
  private hits = new Map<string, number>();
  private windowStart = Number.NaN;

  constructor(
    services: readonly DescService[],
    env: Record<string, string | undefined>,
    private readonly clientKeys: ClientKeys,
    private readonly clock: Clock,
    /** Callers counted in one window at most: past it an unseen caller is refused, so a flood of addresses cannot grow memory. */
    private readonly maxCallers = MAX_CALLERS,
  ) {
    const counters = new Map<string, string>();
    for (const service of services) {
      for (const method of service.methods) {
        const rules = new Map<string, TierLimits>();
        const named = new Map<string, string>();
        for (const rule of routeAccessOf(method).rules) {
          // Enforcement tells which rule admitted by its name: rules sharing one must name one limit.
          if ((named.get(rule.name) ?? rule.rateLimit) !== rule.rateLimit)
            throw new Error(
              `${method.parent.typeName}.${method.name}: rules named "${rule.name}" name two rate limits`,
            );
          named.set(rule.name, rule.rateLimit);
          const limit = declaredRateLimit(method, rule);
          if (limit) rules.set(rule.name, tierLimits(getOption(service, serviceKey), limit, env, counters));
        }
        if (rules.size > 0) this.byMethod.set(method, rules);
      }
    }
  }

  /** The interceptor: placed after admission (it reads the admitted Caller), before the handler. */
  interceptor(): Interceptor {
    return (next) => (req) => {
      this.count(req.method, req.contextValues.get(callerKey), req.header);
      return next(req);
    };
  }

  /** Counts one call of an admitted caller, or throws 429 `rate.limited` (counting nothing) when it is over its limit. */
  count(method: DescMethod, caller: Caller, header: Headers): void {
    const tier = tierOf(caller);
    const limit = this.byMethod.get(method)?.get(caller.admittedBy)?.[tier];
    if (!limit) return;
    const key = tier === "anonymous" ? this.clientKeys.of(header) : callerId(caller);
    if (key === "") return;
    const now = this.clock.now().getTime();
    const start = Math.floor(now / WINDOW_MS) * WINDOW_MS;
    if (start !== this.windowStart) {
      this.windowStart = start;
      this.hits = new Map();
    }
    const counted = `${limit.counter}\n${key}`;
    const hits = this.hits.get(counted);
    const full = hits === undefined && this.hits.size >= this.maxCallers;
    if ((hits ?? 0) >= limit.perMinute || full)
      throw tooManyRequests(limit.counter, Math.max(1, Math.ceil((start + WINDOW_MS - now) / 1000)));
    this.hits.set(counted, (hits ?? 0) + 1);
  }
}

/**
 * A declaration's tiers with their limits from the settings they name. Its
 * counters are `<key>.<name>.<tier>`; services of one key declaring one name
 * must declare it alike (`counters` holds what each counter was declared as).
 */
function tierLimits(
  key: string,
  limit: RateLimit,
  env: Record<string, string | undefined>,
  counters: Map<string, string>,
): TierLimits {
  const limits: TierLimits = {};
  for (const tier of RATE_TIERS) {
    const declared = limit[tier];
    if (!declared) continue;
    const counter = `${key}.${limit.name}.${tier}`;
    if (declared.perMinute < 1 || declared.setting === "")
      throw new Error(`rate limit ${counter}: declare per_minute (at least 1) and the setting that overrides it`);
    const seen = `${declared.perMinute} ${declared.setting}`;
    if ((counters.get(counter) ?? seen) !== seen) throw new Error(`rate limit ${counter} is declared twice, unalike`);
    counters.set(counter, seen);
    limits[tier] = { counter, perMinute: wholeSetting(env, declared.setting, declared.perMinute, 1) };
  }
  return limits;
}

/** The tier a caller is counted in: by its token's kind (a service acting for a person stays a service). */
function tierOf({ principal }: Caller): RateTier {
  if (principal.kind === "anonymous") return "anonymous";
  return principal.kind === "user" ? "person" : principal.kind;
}

/** Whom a token's calls count against: the person, the app, the service. */
function callerId({ principal }: Caller): string {
  return (principal.kind === "app" ? principal.appId : principal.service) ?? principal.sub;
}
