import { qualified } from "../../services/kit/db/orm.js";
import type { SourcesContext } from "../../services/sources/context.js";
import type { TestPlatform } from "../support/platform.js";
import { holdRows, type HeldRows } from "../support/row-lock.js";
import { until } from "../support/until.js";

/** Every sources capability: what a first-party service such as news holds. */
export const ALL_SOURCES = ["sources.source.read", "sources.source.manage", "sources.item.read"];

/** The sources context the host built (once) for the platform's handlers and workers. */
export const sourcesOf = (t: TestPlatform) => t.platform.contexts.get("sources") as SourcesContext;

let n = 0;
/** A fresh source key. */
export const freshKey = (tag = "src") => `${tag}-${Date.now().toString(36)}-${(n++).toString(36)}`;

/** Calls a sources route through the gateway as the service whose token `token()` answers. */
export function caller(t: TestPlatform, token: () => string) {
  return (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    t.http(method, `/sources/api/v1${path}`, { token: token(), body, headers });
}

/** Terms and robots notes that pass the enable gate. */
export const NOTES = { terms_note: "Public feed; attribution required.", robots_note: "robots.txt allows /feed." };

/** A manual source, enabled; answers its key. */
export async function manualSource(call: ReturnType<typeof caller>, key = freshKey("man")): Promise<string> {
  const answer = await call("POST", "/sources", {
    key,
    kind: "SOURCE_KIND_MANUAL",
    enabled: true,
    terms_note: NOTES.terms_note,
  });
  if (answer.status !== 201) throw new Error(`create failed: ${answer.status} ${JSON.stringify(answer.body)}`);
  return key;
}

/** Adds one item to a manual source; answers the 201 body. */
export async function addItem(call: ReturnType<typeof caller>, key: string, item: Record<string, unknown>) {
  const answer = await call("POST", `/sources/${key}/items`, { items: [item] });
  if (answer.status !== 201) throw new Error(`add failed: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body.items.items;
}

/** Settings that keep the background scheduler, executor and reaper out of a test's way (it drives them itself). */
export const QUIET_WORKERS = {
  PF_SOURCES_SCHEDULE_EVERY_MS: "2000000000",
  PF_SOURCES_EXECUTOR_EVERY_MS: "2000000000",
  PF_SOURCES_REAPER_EVERY_MS: "2000000000",
  PF_SOURCES_TRIGGERS_PER_MINUTE: "1000",
};

/** An enabled fetched source (never reached: tests apply outcomes to its runs); answers its key. */
export async function fetchedSource(call: ReturnType<typeof caller>, extra: Record<string, unknown> = {}) {
  const key = freshKey("rss");
  const answer = await call("POST", "/sources", {
    key,
    kind: "SOURCE_KIND_RSS",
    url: `https://${key}.example.com/feed.xml`,
    enabled: true,
    ...NOTES,
    ...extra,
  });
  if (answer.status !== 201) throw new Error(`create failed: ${answer.status} ${JSON.stringify(answer.body)}`);
  return key;
}

/**
 * Waits for the scheduler's first pass (a second after start; with QUIET_WORKERS the only one), so that a test's
 * runs are the ones it triggers, never a scheduled one.
 */
export async function afterFirstSchedulerPass(t: TestPlatform): Promise<void> {
  const em = sourcesOf(t).orm.em.fork();
  const leases = qualified(em, "leases");
  await until(
    async () =>
      (await em.getConnection().execute(`select 1 from ${leases} where name = 'sources.schedule'`)).length > 0,
  );
}

/**
 * Holds the change counter's row from another session, so every item change (an intake, a removal) waits inside its
 * transaction until `release()` (each test file has a database of its own, so `waiting()` counts its changes).
 */
export function holdChangeCounter(t: TestPlatform): Promise<HeldRows> {
  const counter = qualified(sourcesOf(t).orm.em, "change_counter");
  return holdRows(t.platform.databaseUrl, `select 1 from ${counter} where id = 1 for update`, []);
}
