import { create, toJsonString } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ItemChangedSchema } from "../../gen/pf/sources/v1/events_pb.js";
import { newId } from "../../services/kit/handler/ids.js";
import { usePlatform } from "../support/platform.js";
import { until } from "../support/until.js";
import { fresh, person, REVIEWS_ENV, reviewsKit } from "./support.js";

/**
 * Sources items and the resolution queue (spec rule 2, README "Sources
 * items"): sources.item.created through NATS records a mention signal when
 * its identifiers name one entity, queues it for an editor when they name
 * several (conflict) or only its title matches names (name_only), and does
 * nothing otherwise; editors list the queue and confirm or ignore an item.
 */
const t = usePlatform({ services: ["reviews"], env: REVIEWS_ENV });
const { call, entity } = reviewsKit(t);
const EDITOR = "usr_editor1";

interface Item {
  itemId?: string;
  sourceKey?: string;
  canonicalUrl?: string;
  title?: string;
  identifiers?: Record<string, string>;
  externalId?: string;
}

/** Publishes sources.item.created as the sources service's relay would, each delivery its own event id. */
async function itemCreated(fields: Item = {}) {
  const event = create(ItemChangedSchema, {
    itemId: newId("itm"),
    sourceKey: "wire",
    canonicalUrl: `https://wire.example/${fresh("a")}`,
    revision: 1,
    changeOrder: 1n,
    title: fresh("Unrelated headline "),
    ...fields,
  });
  const bus = t.platform.contexts.get("reviews")!.bus;
  const id = newId("evt");
  await bus.publish("sources.item.created", id, new TextEncoder().encode(toJsonString(ItemChangedSchema, event)), {
    "Nats-Msg-Id": id,
  });
  return event.itemId;
}

interface QueueItem {
  id: string;
  item_id: string;
  reason: string;
  candidates: string[];
  state: string;
  entity_id?: string;
  signal_id?: string;
  decided_by?: string;
}
interface Signal {
  id: string;
  kind: string;
  entity_id: string;
  provenance: { source_key: string; source_ref: string; ingested_by: string; item_id: string; url: string };
}

const queue = async (): Promise<QueueItem[]> =>
  (await call("GET", "/resolution-queue?limit=200", EDITOR)).body.queue.items ?? [];
const queued = async (itemId: string) => (await queue()).filter((item) => item.item_id === itemId);
const signals = async (entityId: string): Promise<Signal[]> =>
  (await call("GET", `/entities/${entityId}/signals?limit=200`, EDITOR)).body.signals.signals ?? [];
const mentionsOf = async (entityId: string, itemId: string) =>
  (await signals(entityId)).filter((s) => s.provenance.item_id === itemId);

/**
 * Waits until the consumer has applied everything published so far: events
 * are applied in order, so an item that records a signal, published last,
 * marks the point.
 */
async function settled() {
  const externalId = fresh("marker-");
  const marker = await entity({ aliases: [{ kind: "external_id", value: externalId }] });
  const itemId = await itemCreated({ externalId });
  await until(async () => (await mentionsOf(marker.id, itemId)).length === 1);
}

describe("sources.item.created", () => {
  it("records a mention signal when its identifiers name exactly one entity, with the item's provenance", async () => {
    const url = `https://shop.example/${fresh("p")}`;
    const sku = fresh("SKU-");
    const a = await entity({
      aliases: [
        { kind: "url", value: url },
        { kind: "sku", value: sku },
      ],
    });
    // Another spelling of the same URL and SKU: normalised as aliases are.
    const itemId = await itemCreated({
      canonicalUrl: `${url.replace("https://shop", "https://www.shop")}/?utm_source=feed`,
      identifiers: { SKU: sku.toLowerCase() },
      title: "Hands-on with the widget",
    });
    await until(async () => (await mentionsOf(a.id, itemId)).length === 1);
    const [mention] = await mentionsOf(a.id, itemId);
    expect(mention).toMatchObject({
      kind: "mention",
      entity_id: a.id,
      provenance: { source_key: "wire", source_ref: itemId, ingested_by: "svc:sources", item_id: itemId },
    });
    expect(await queued(itemId)).toEqual([]);
    // A source binding: every item of that source is about the entity.
    const bound = await entity();
    const source = fresh("feed");
    expect((await call("PUT", `/entities/${bound.id}/bindings/${source}`, EDITOR, {})).status).toBe(201);
    const fromSource = await itemCreated({ sourceKey: source });
    await until(async () => (await mentionsOf(bound.id, fromSource)).length === 1);
  });

  it("queues identifiers naming several entities as a conflict, and a title matching names only as name_only", async () => {
    const url = `https://shop.example/${fresh("c")}`;
    const gtin = "4006381333931";
    const a = await entity({ aliases: [{ kind: "url", value: url }] });
    const b = await entity({ aliases: [{ kind: "gtin", value: gtin }] });
    const name = fresh("Quiet Kettle ");
    const c = await entity({ name });
    const d = await entity({ aliases: [{ kind: "name", value: name }] });
    const conflict = await itemCreated({ canonicalUrl: url, identifiers: { EAN: gtin } });
    const nameOnly = await itemCreated({ title: `  ${name.toUpperCase()} ` });
    const nothing = await itemCreated({ title: fresh("Nothing reviewed ") });
    await settled();
    const [first] = await queued(conflict);
    expect(first).toMatchObject({ reason: "conflict", state: "pending" });
    expect([...first.candidates].sort()).toEqual([a.id, b.id].sort());
    const [second] = await queued(nameOnly);
    expect(second).toMatchObject({ reason: "name_only", state: "pending" });
    expect([...second.candidates].sort()).toEqual([c.id, d.id].sort());
    expect(await queued(nothing)).toEqual([]);
    // A name is never a match: neither entity got a signal.
    for (const id of [a.id, b.id, c.id, d.id]) expect(await signals(id)).toEqual([]);
  });

  it("delivered twice (the same item under another event id) records no second signal and no second queue item", async () => {
    const sku = fresh("TWICE-");
    const a = await entity({ aliases: [{ kind: "sku", value: sku }] });
    const name = fresh("Twice Told ");
    await entity({ name });
    const mention = { itemId: newId("itm"), identifiers: { sku } };
    const ambiguous = { itemId: newId("itm"), title: name };
    await itemCreated(mention);
    await itemCreated(ambiguous);
    await itemCreated(mention);
    await itemCreated(ambiguous);
    await settled();
    expect(await mentionsOf(a.id, mention.itemId)).toHaveLength(1);
    expect(await queued(ambiguous.itemId)).toHaveLength(1);
  });
});

describe("the resolution queue", () => {
  /** A pending name_only item whose title two entities bear; answers it and the entities. */
  async function pendingItem() {
    const name = fresh("Shared Name ");
    const [a, b] = [await entity({ name }), await entity({ name })];
    const itemId = await itemCreated({ title: name, canonicalUrl: `https://blog.example/${fresh("r")}` });
    await until(async () => (await queued(itemId)).length === 1);
    const [item] = await queued(itemId);
    return { item, a, b };
  }

  it("is for editors only: others are refused listing and deciding", async () => {
    const { item } = await pendingItem();
    const stranger = person();
    const list = await call("GET", "/resolution-queue", stranger);
    expect(list.body).toMatchObject({ status: 403, code: "auth.editor_required" });
    const decide = await call("POST", `/resolution-queue/${item.id}`, stranger, { ignore: true });
    expect(decide.body).toMatchObject({ status: 403, code: "auth.editor_required" });
    expect((await queued(item.item_id))[0].state).toBe("pending");
  });

  it("confirm records a mention signal by the editor on the entity chosen and takes the item off the queue", async () => {
    const { item, a } = await pendingItem();
    const confirmed = await call("POST", `/resolution-queue/${item.id}`, EDITOR, { confirm: a.slug });
    expect(confirmed.status).toBe(200);
    const decided = confirmed.body.queue_item;
    expect(decided).toMatchObject({ state: "confirmed", entity_id: a.id, decided_by: EDITOR });
    const [mention] = await mentionsOf(a.id, item.item_id);
    expect(mention).toMatchObject({
      id: decided.signal_id,
      kind: "mention",
      entity_id: a.id,
      provenance: { source_key: "wire", source_ref: item.item_id, ingested_by: EDITOR },
    });
    const page = (await call("GET", `/entities/${a.id}`, EDITOR)).body.page;
    expect(page.signals.map((s: Signal) => s.id)).toContain(decided.signal_id);
    expect(page.history.map((h: { action: string }) => h.action)).toContain("item_confirmed");
    expect(await queued(item.item_id)).toEqual([]);
    const again = await call("POST", `/resolution-queue/${item.id}`, EDITOR, { ignore: true });
    expect(again.body).toMatchObject({ status: 409, code: "queue_item.decided" });
  });

  it("ignore records nothing and takes the item off the queue; a decision names exactly one of confirm or ignore", async () => {
    const { item, a, b } = await pendingItem();
    for (const body of [{}, { confirm: a.id, ignore: true }])
      expect((await call("POST", `/resolution-queue/${item.id}`, EDITOR, body)).body).toMatchObject({
        status: 400,
        field: "confirm",
      });
    const missing = await call("POST", "/resolution-queue/rsq_missing1", EDITOR, { ignore: true });
    expect(missing.body).toMatchObject({ status: 404, code: "queue_item.not_found" });
    const ignored = await call("POST", `/resolution-queue/${item.id}`, EDITOR, { ignore: true });
    expect(ignored.body.queue_item).toMatchObject({ state: "ignored", decided_by: EDITOR });
    expect(ignored.body.queue_item.signal_id ?? "").toBe("");
    for (const id of [a.id, b.id]) expect(await signals(id)).toEqual([]);
    expect(await queued(item.item_id)).toEqual([]);
  });
});
