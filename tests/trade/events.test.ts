import { create, toJsonString } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ItemChangedSchema, ItemRemovedSchema } from "../../gen/pf/sources/v1/events_pb.js";
import { qualified } from "../../services/kit/db/orm.js";
import { recordEvent } from "../../services/kit/events/outbox.js";
import { newId } from "../../services/kit/handler/ids.js";
import { type StreamMessage, subscribeToStream } from "../support/nats.js";
import { startTestPlatform, usePlatform, type TestPlatform } from "../support/platform.js";
import { describeWith, NATS } from "../support/skips.js";
import { until } from "../support/until.js";
import { ALL_TRADE, instrument, observationBody, person, TRADE_ENV, tradeCaller } from "./support.js";

describeWith(NATS, "trade.alert.triggered on NATS", () => {
  let nc: NatsConnection;
  let first: TestPlatform;
  let second: TestPlatform | undefined;
  let received: StreamMessage[] = [];
  let stop: () => void;

  beforeAll(async () => {
    nc = await connect({ servers: process.env.NATS_URL });
    first = await startTestPlatform({ services: ["trade"], env: TRADE_ENV });
    ({ received, stop } = await subscribeToStream(nc, first.events!, "trade", "trade.alert.triggered"));
  });
  afterAll(async () => {
    stop?.();
    await second?.stop();
    await first?.stop();
    await nc?.close();
  });

  it("a crossing reaches a subscriber exactly once, across a replayed observation and a relay restart", async () => {
    const web = await first.token({ kind: "service", svc: "web", caps: ALL_TRADE });
    const as = tradeCaller(first, () => web);
    const { symbol } = await instrument(first, web);
    const owner = person("n");
    const rule = await as("POST", "/alerts", owner, {
      symbol,
      kind: "ALERT_KIND_THRESHOLD",
      metric: "price",
      unit: "USD",
      currency: "USD",
      level: "10",
      direction: "DIRECTION_UP",
    });
    await as("POST", "/observations", undefined, observationBody(symbol, "9", "2026-12-01T10:00:00Z"));
    const crossing = observationBody(symbol, "11", "2026-12-01T11:00:00Z");
    expect((await as("POST", "/observations", undefined, crossing)).status).toBe(201);
    const mine = () => received.filter((m) => m.body.delivery.rule_id === rule.body.rule.id);
    await until(() => mine().length === 1);
    expect(mine()[0].body).toMatchObject({ subject: owner, visibility: "subject", delivery: { value: "11" } });
    expect((await as("POST", "/observations", undefined, crossing)).status).toBe(200);

    // The relay stops after publishing but before marking sent (as a crash would), and a new instance relays again.
    const em = first.platform.contexts.get("trade")!.orm.em;
    await em
      .getConnection()
      .execute(`update ${qualified(em, "outbox")} set sent_at = null where subject = 'trade.alert.triggered'`);
    const databaseUrl = first.platform.databaseUrl;
    await first.platform.stop();
    second = await startTestPlatform({
      services: ["trade"],
      env: { ...TRADE_ENV, DATABASE_URL: databaseUrl, PF_NATS_NAMESPACE: first.events!.namespace },
    });
    const ctx = second.platform.contexts.get("trade")!;
    const unsent = async () =>
      (
        await ctx.orm.em
          .getConnection()
          .execute<{ n: string }[]>(
            `select count(*) as n from ${qualified(ctx.orm.em, "outbox")} where sent_at is null`,
          )
      )[0].n;
    await until(async () => (await unsent()) === "0");
    // A later crossing through the new instance: the stream is ordered, so a resend of the first would precede it.
    const web2 = await second.token({ kind: "service", svc: "web", caps: ALL_TRADE });
    const again = tradeCaller(second, () => web2);
    await again("POST", "/observations", undefined, observationBody(symbol, "9", "2026-12-01T12:00:00Z"));
    await again("POST", "/observations", undefined, observationBody(symbol, "12", "2026-12-01T13:00:00Z"));
    await until(() => mine().length >= 2);
    expect(mine().map((m) => m.body.delivery.value)).toEqual(["11", "12"]);
    expect(new Set(mine().map((m) => m.id)).size).toBe(2);
  });
});

describe("documents from sources items", () => {
  const t = usePlatform({ services: ["trade"], env: TRADE_ENV });
  let web: string;
  let as: ReturnType<typeof tradeCaller>;
  beforeAll(async () => {
    web = await t.token({ kind: "service", svc: "web", caps: ALL_TRADE });
    as = tradeCaller(t, () => web);
  });

  const item = (
    fields: Partial<{ itemId: string; revision: number; identifiers: Record<string, string>; filingType: string }>,
  ) =>
    create(ItemChangedSchema, {
      itemId: fields.itemId ?? newId("itm"),
      sourceKey: "sec-edgar",
      canonicalUrl: `https://www.sec.gov/Archives/${Date.now()}`,
      revision: fields.revision ?? 1,
      changeOrder: 1n,
      contentHash: "h",
      title: "Annual report",
      publishedAt: timestampFromDate(new Date("2026-11-30T00:00:00Z")),
      identifiers: fields.identifiers ?? {},
      filingType: fields.filingType ?? "",
    });
  const publish = async (subject: string, event: ReturnType<typeof item>, id = newId("evt")) => {
    const bus = t.platform.contexts.get("trade")!.bus;
    const data = new TextEncoder().encode(toJsonString(ItemChangedSchema, event));
    await bus.publish(subject, id, data, { "Nats-Msg-Id": id });
    return id;
  };
  const publishRemoved = async (event: ReturnType<typeof create<typeof ItemRemovedSchema>>) => {
    const bus = t.platform.contexts.get("trade")!.bus;
    const id = newId("evt");
    await bus.publish("sources.item.removed", id, new TextEncoder().encode(toJsonString(ItemRemovedSchema, event)), {
      "Nats-Msg-Id": id,
    });
  };
  const rule = async (owner: string, symbol: string, body: Record<string, unknown>) =>
    (await as("POST", "/alerts", owner, { symbol, ...body })).body.rule;
  const deliveries = async (owner: string) =>
    (await as("GET", "/alerts/deliveries", owner)).body.deliveries.deliveries as any[];

  it("an item naming an instrument's CIK delivers new_document and matching filing_type rules, once per (rule, document)", async () => {
    const cik = String(Date.now()).slice(-7);
    const { symbol } = await instrument(t, web, { cik });
    const [news, tenK, eightK] = [person("n"), person("k"), person("e")];
    const newsRule = await rule(news, symbol, { kind: "ALERT_KIND_NEW_DOCUMENT" });
    await rule(tenK, symbol, { kind: "ALERT_KIND_FILING_TYPE", filing_type: "10-K" });
    await rule(eightK, symbol, { kind: "ALERT_KIND_FILING_TYPE", filing_type: "8-K" });
    const created = item({ identifiers: { CIK: cik }, filingType: "10-K" });
    const id = await publish("sources.item.created", created);
    await until(async () => (await deliveries(tenK)).length === 1);
    const [delivery] = await deliveries(news);
    expect(delivery).toMatchObject({
      rule_id: newsRule.id,
      subject: news,
      symbol,
      kind: "ALERT_KIND_NEW_DOCUMENT",
      document: { item_id: created.itemId, source_key: "sec-edgar", filing_type: "10-K", revision: 1 },
    });
    // The same event again, and a revision of the item: the same document, nothing delivered again.
    await publish("sources.item.created", created, id);
    await publish("sources.item.revised", item({ itemId: created.itemId, revision: 2, identifiers: { cik } }));
    const em = t.platform.contexts.get("trade")!.orm.em;
    await until(async () => {
      const [row] = await em
        .getConnection()
        .execute<{ revision: number }[]>(`select revision from ${qualified(em, "documents")} where item_id = ?`, [
          created.itemId,
        ]);
      return row?.revision === 2;
    });
    expect(await deliveries(news)).toHaveLength(1);
    expect(await deliveries(tenK)).toHaveLength(1);
    expect(await deliveries(eightK)).toEqual([]);
  });

  it("an item removed upstream leaves the context input, and one removed before it arrives makes no document", async () => {
    const cik = String(Date.now() + 7).slice(-7);
    const { symbol } = await instrument(t, web, { cik });
    const owner = person("r");
    await rule(owner, symbol, { kind: "ALERT_KIND_NEW_DOCUMENT" });
    const kept = item({ identifiers: { cik } });
    const removed = item({ identifiers: { cik } });
    const early = item({ identifiers: { cik } });
    for (const event of [kept, removed, early]) event.canonicalUrl = `https://www.sec.gov/Archives/${event.itemId}`;
    const removal = (event: ReturnType<typeof item>) =>
      create(ItemRemovedSchema, { itemId: event.itemId, sourceKey: "sec-edgar", reason: "withdrawn", changeOrder: 2n });
    await publishRemoved(removal(early));
    await publish("sources.item.created", kept);
    await publish("sources.item.created", removed);
    await until(async () => (await deliveries(owner)).length === 2);
    await publishRemoved(removal(removed));
    const em = t.platform.contexts.get("trade")!.orm.em;
    const live = async () =>
      (
        await em
          .getConnection()
          .execute<{ item_id: string }[]>(
            `select item_id from ${qualified(em, "documents")} where removed_at is null and item_id in (?, ?, ?)`,
            [kept.itemId, removed.itemId, early.itemId],
          )
      ).map((row) => row.item_id);
    await until(async () => (await live()).length === 1);
    // The early removal was applied first (its consumer ran apart): the item's later event makes nothing.
    await publish("sources.item.created", early);
    await publish("sources.item.revised", item({ itemId: removed.itemId, revision: 2, identifiers: { cik } }));
    await publish("sources.item.created", item({ identifiers: { cik } }));
    await until(async () => (await deliveries(owner)).length === 3);
    expect(await live()).not.toContain(removed.itemId);
    expect(await live()).not.toContain(early.itemId);
    expect((await deliveries(owner)).map((delivery) => delivery.document.item_id)).not.toContain(early.itemId);
    const workflow = await t.token({ kind: "service", svc: "ai", caps: ["trade.context.read"] });
    const input = (await t.http("GET", `/trade/api/v1/instruments/${symbol}/context/input`, { token: workflow })).body;
    const urls = JSON.stringify(input);
    expect(urls).toContain(kept.canonicalUrl);
    expect(urls).not.toContain(removed.canonicalUrl);
  });

  it("matches by ticker when no CIK names an instrument; items naming none are ignored", async () => {
    const { symbol } = await instrument(t, web);
    const owner = person("t");
    await rule(owner, symbol, { kind: "ALERT_KIND_NEW_DOCUMENT" });
    await publish("sources.item.created", item({ identifiers: { ticker: "NOSUCHQ" } }));
    await publish("sources.item.created", item({ identifiers: { cik: "1", ticker: symbol.toLowerCase() } }));
    await until(async () => (await deliveries(owner)).length === 1);
    expect((await deliveries(owner))[0].document.item_id).toMatch(/^itm_/);
  });
});

describe("documents through the sources outbox", () => {
  const t = usePlatform({ services: ["trade", "sources"], env: TRADE_ENV });

  it("an item the sources service records in its outbox reaches trade's consumer and delivers", async () => {
    const web = await t.token({ kind: "service", svc: "web", caps: ALL_TRADE });
    const as = tradeCaller(t, () => web);
    const { symbol } = await instrument(t, web);
    const owner = person("s");
    await as("POST", "/alerts", owner, { symbol, kind: "ALERT_KIND_FILING_TYPE", filing_type: "8-K" });
    const sources = t.platform.contexts.get("sources")!;
    const event = create(ItemChangedSchema, {
      itemId: newId("itm"),
      sourceKey: "sec-edgar",
      canonicalUrl: "https://www.sec.gov/Archives/8k",
      revision: 1,
      changeOrder: 1n,
      title: "Current report",
      identifiers: { ticker: symbol },
      filingType: "8-k",
    });
    await sources.transaction((em) => recordEvent(em, "sources.item.created", ItemChangedSchema, event));
    await until(async () => (await as("GET", "/alerts/deliveries", owner)).body.deliveries.deliveries.length === 1);
    const [delivery] = (await as("GET", "/alerts/deliveries", owner)).body.deliveries.deliveries;
    expect(delivery).toMatchObject({
      kind: "ALERT_KIND_FILING_TYPE",
      document: { item_id: event.itemId, filing_type: "8-k" },
    });
  });
});
