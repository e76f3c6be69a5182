import { create, toJsonString } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { ItemChangedSchema, ItemRemovedSchema } from "../../gen/pf/sources/v1/events_pb.js";
import { newId } from "../../services/kit/handler/ids.js";
import type { TestPlatform } from "../support/platform.js";
import { until } from "../support/until.js";

/** The people the test platforms seed as news editors (PF_NEWS_EDITORS). */
export const EDITORS = ["usr_a1", "usr_b1", "usr_editor1", "usr_editor2"];
export const EDITOR = "usr_editor1";
export const NEWS_ENV = { PF_NEWS_EDITORS: EDITORS.join(",") };

/** Every capability of the news routes: the first-party web service's token. */
export const ALL_NEWS = [
  "news.cluster.read",
  "news.cluster.manage",
  "news.story.create",
  "news.story.read",
  "news.story.revise",
  "news.story.publish",
  "news.story.retract",
  "news.story.approve",
  "news.source.attach",
  "news.perspective.update",
  "news.timeline.update",
];

let n = 0;
/** A fresh person id. */
export const person = (tag = "p") => `usr_${tag}${Date.now().toString(36)}${(n++).toString(36)}`;

/** What a call answers. */
export interface Answer {
  status: number;
  body: any;
}

/** Calls news routes with a token, for a person when `who` is given, with extra headers. */
export function newsCaller(t: TestPlatform, token: () => string) {
  return (method: string, path: string, who?: string, body?: unknown, headers: Record<string, string> = {}) =>
    t.http(method, `/news/api/v1${path}`, {
      token: token(),
      body,
      headers: { ...(who === undefined ? {} : { "x-pf-subject": who }), ...headers },
    }) as Promise<Answer>;
}

/** Publishes a sources event on the bus as the sources service's outbox relay would. */
export async function publishSources(t: TestPlatform, subject: string, data: string): Promise<string> {
  const bus = t.platform.contexts.get("news")!.bus;
  const id = newId("evt");
  await bus.publish(subject, id, new TextEncoder().encode(data), { "Nats-Msg-Id": id });
  return id;
}

let order = 1n;
/** A sources item created upstream; answers its id once news has received it. */
export async function sourceItem(
  t: TestPlatform,
  as: ReturnType<typeof newsCaller>,
  fields: Partial<{ id: string; title: string; url: string; revision: number; sourceKey: string }> = {},
): Promise<string> {
  const id = fields.id ?? newId("itm");
  const revision = fields.revision ?? 1;
  const event = create(ItemChangedSchema, {
    itemId: id,
    sourceKey: fields.sourceKey ?? "wire",
    canonicalUrl: fields.url ?? `https://wire.example/${id}`,
    revision,
    changeOrder: order++,
    contentHash: `h${revision}`,
    title: fields.title ?? `Story ${id}`,
    publishedAt: timestampFromDate(new Date("2026-11-27T10:00:00Z")),
  });
  await publishSources(
    t,
    revision === 1 ? "sources.item.created" : "sources.item.revised",
    toJsonString(ItemChangedSchema, event),
  );
  await until(async () => {
    const answer = await as("GET", `/source-items/${id}`);
    return answer.status === 200 && answer.body.source_item.revision === revision;
  });
  return id;
}

/** Removes an item upstream; resolves once news has recorded the removal. */
export async function removeUpstream(
  t: TestPlatform,
  as: ReturnType<typeof newsCaller>,
  id: string,
  reason = "Retracted by publisher",
) {
  const event = create(ItemRemovedSchema, {
    itemId: id,
    sourceKey: "wire",
    canonicalUrl: `https://wire.example/${id}`,
    reason,
    changeOrder: order++,
  });
  await publishSources(t, "sources.item.removed", toJsonString(ItemRemovedSchema, event));
  await until(async () => (await as("GET", `/source-items/${id}`)).body.source_item?.removed === true);
}

/** The cluster an item is in. */
export async function clusterOf(as: ReturnType<typeof newsCaller>, item: string): Promise<string> {
  return (await as("GET", `/source-items/${item}`)).body.source_item.cluster_id;
}

/** A story opened by the editor from a fresh cluster of `count` items with one title; answers ids. */
export async function openStory(t: TestPlatform, as: ReturnType<typeof newsCaller>, count = 2) {
  const title = `Event ${newId("x")}`;
  const items: string[] = [];
  for (let i = 0; i < count; i++) items.push(await sourceItem(t, as, { title }));
  const cluster = await clusterOf(as, items[0]);
  const created = await as("POST", "/stories", EDITOR, { cluster_id: cluster });
  if (created.status !== 201) throw new Error(`story create failed: ${created.status} ${JSON.stringify(created.body)}`);
  return { story: created.body.story.id as string, cluster, items };
}

/** Saves a revision citing `citations` in the headline; answers the answer. */
export function saveRevision(
  as: ReturnType<typeof newsCaller>,
  story: string,
  who: string | undefined,
  revision: Record<string, unknown>,
  headers: Record<string, string> = {},
) {
  return as("POST", `/stories/${story}/revisions`, who, { revision }, headers);
}
