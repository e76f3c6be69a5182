/**
 * Which quotas a call is counted against, and their windows. A quota counts per key of its scope (the call's
 * namespace, its caller, or its model `provider/model`); its subject names one key, or `*` for each key alike. Its
 * windows are fixed, from the epoch in UTC (a day runs midnight to midnight UTC).
 */
export const QUOTA_SCOPES = ["namespace", "caller", "model"] as const;
export type QuotaScope = (typeof QUOTA_SCOPES)[number];

export const QUOTA_WINDOWS = ["minute", "hour", "day"] as const;
export type QuotaWindow = (typeof QUOTA_WINDOWS)[number];

/** Each key of a `*` quota alike. */
export const EVERY_SUBJECT = "*";

export const WINDOW_MS: Record<QuotaWindow, number> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 };

/** What a call is counted against: its namespace, its caller, and its model (`provider/model`). */
export interface QuotaSubjects {
  namespace: string;
  caller: string;
  model: string;
}

/** A quota's rule: what it counts per, for which subject, in which window, up to what (0: unlimited). */
export interface QuotaRule {
  id: string;
  scope: QuotaScope;
  subject: string;
  window: QuotaWindow;
  maxRequests: number;
  maxTokens: number;
}

/** The dimensions a quota limits, each counted as a kit quota of its own. */
export type QuotaDimension = "requests" | "tokens";

/** The call's key in a scope: what a quota of that scope counts it under. */
export function keyIn(scope: QuotaScope, subjects: QuotaSubjects): string {
  return subjects[scope];
}

/** Whether a quota counts this call: its subject is the call's key in its scope, or `*`. */
export function applies(rule: QuotaRule, subjects: QuotaSubjects): boolean {
  return rule.subject === EVERY_SUBJECT || rule.subject === keyIn(rule.scope, subjects);
}

/** The kit quota's name of one dimension of a rule: `ai.<id>.requests`, `ai.<id>.tokens`. */
export function counterName(id: string, dimension: QuotaDimension): string {
  return `ai.${id}.${dimension}`;
}

/** The window `at` falls in: fixed windows from the epoch (UTC), its end exclusive. */
export function windowAt(window: QuotaWindow, at: Date): { start: Date; end: Date } {
  const size = WINDOW_MS[window];
  const start = Math.floor(at.getTime() / size) * size;
  return { start: new Date(start), end: new Date(start + size) };
}

/** Whole seconds until the window `at` falls in ends (at least 1): when a refused call may try again. */
export function retryAfterSeconds(window: QuotaWindow, at: Date): number {
  return Math.max(1, Math.ceil((windowAt(window, at).end.getTime() - at.getTime()) / 1000));
}

export const isQuotaScope = (value: string): value is QuotaScope => (QUOTA_SCOPES as readonly string[]).includes(value);

export const isQuotaWindow = (value: string): value is QuotaWindow =>
  (QUOTA_WINDOWS as readonly string[]).includes(value);
