import { qualified } from "../../services/kit/db/orm.js";
import { aiRun } from "../support/ai-runs.js";
import type { TestPlatform } from "../support/platform.js";

/** The people the test platforms seed as reviews editors (PF_REVIEWS_EDITORS); the matrix's usr_a1 and usr_b1 among them. */
export const EDITORS = ["usr_a1", "usr_b1", "usr_editor1"];
export const REVIEWS_ENV = { PF_REVIEWS_EDITORS: EDITORS.join(",") };

/** Every reviews capability: the first-party web service's token. */
export const ALL_REVIEWS = [
  "reviews.entity.manage",
  "reviews.entity.resolve",
  "reviews.entity.merge",
  "reviews.entity.split",
  "reviews.correction.submit",
  "reviews.summary.propose",
  "reviews.summary.publish",
  "reviews.signal.write",
];

let n = 0;
/** A fresh person id. */
export const person = (tag = "p") => `usr_${tag}${Date.now().toString(36)}${(n++).toString(36)}`;
/** A fresh word for names, slugs and source refs. */
export const fresh = (tag = "x") => `${tag}${Date.now().toString(36)}${(n++).toString(36)}`;

/** Calls the reviews routes as the web service (for a person when `who` is given) or as the AI workflow. */
export function reviewsKit(t: TestPlatform) {
  let web = "";
  let ai = "";
  const tokens = async () => {
    if (web === "") {
      web = await t.token({ kind: "service", svc: "web", caps: ALL_REVIEWS });
      ai = await t.token({ kind: "service", svc: "ai", caps: [...ALL_REVIEWS, "ai.run.create"] });
    }
    return { web, ai };
  };
  const call = async (method: string, path: string, who?: string, body?: unknown) =>
    t.http(method, `/reviews/api/v1${path}`, {
      token: (await tokens()).web,
      body,
      headers: who === undefined ? {} : { "x-pf-subject": who },
    });
  /** As the AI workflow (origin ai), for a person when `who` is given. */
  const asAi = async (path: string, body: unknown, who?: string) =>
    t.http("POST", `/reviews/api/v1${path}`, {
      token: (await tokens()).ai,
      body,
      headers: { "x-pf-origin": "ai", ...(who === undefined ? {} : { "x-pf-subject": who }) },
    });
  const entity = async (body: Record<string, unknown> = {}) => {
    const answer = await call("POST", "/entities", "usr_editor1", { name: fresh("Entity "), ...body });
    if (answer.status !== 201) throw new Error(`entity: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body.entity as { id: string; slug: string; name: string };
  };
  const signal = async (entityId: string, score: number, extra: Record<string, unknown> = {}) => {
    const answer = await call("POST", `/entities/${entityId}/signals`, undefined, {
      kind: "rating",
      score,
      scale: 5,
      source_key: "shop",
      source_ref: fresh("r"),
      ...extra,
    });
    if (answer.status !== 201) throw new Error(`signal: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body.signal as { id: string; entity_id: string };
  };
  /** A run of reviews.summarize_entity by the AI workflow's service, through the AI service (which the platform runs). */
  const runId = async () =>
    (await aiRun(t, { token: (await tokens()).ai, workflow: "reviews.summarize_entity" })).runId;
  return { tokens, call, asAi, entity, signal, runId };
}

/** SQL on the reviews schema, `{table}` qualified: to read search documents and to try the database's own rules. */
export function reviewsSql(t: TestPlatform) {
  return async <T>(text: string, params: unknown[] = []) => {
    const em = t.platform.contexts.get("reviews")!.orm.em.fork();
    return em.getConnection().execute<T[]>(
      text.replace(/\{(\w+)\}/g, (_m, table: string) => qualified(em, table)),
      params,
    );
  };
}

/** The search document of an entity as the reviews service keeps it for search: its text, or null for a tombstone. */
export function searchDocumentOf(t: TestPlatform) {
  const sql = reviewsSql(t);
  return async (entityId: string) => {
    const [row] = await sql<{ document: { title: string; body: string } | null }>(
      `select document from {search_documents} where type = 'entity' and id = ?`,
      [entityId],
    );
    return row?.document;
  };
}
