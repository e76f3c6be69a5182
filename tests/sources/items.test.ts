import { randomBytes } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { usePlatform } from "../support/platform.js";
import { DATABASE_SERVER, itWith } from "../support/skips.js";
import { until } from "../support/until.js";
import { entry, runWith, succeeded } from "./fetched.js";
import {
  addItem,
  afterFirstSchedulerPass,
  ALL_SOURCES,
  caller,
  fetchedSource,
  holdChangeCounter,
  manualSource,
  QUIET_WORKERS,
  sourcesOf,
} from "./support.js";

const clock = new ManualClock(new Date("2026-06-01T12:00:00Z"));
const t = usePlatform({ services: ["sources"], clock, env: QUIET_WORKERS });
let call: ReturnType<typeof caller>;

beforeAll(async () => {
  const news = await t.token({ kind: "service", svc: "news", caps: ALL_SOURCES });
  call = caller(t, () => news);
  await afterFirstSchedulerPass(t);
});

const item = (n: number, extra: Record<string, unknown> = {}) => ({
  evidence_url: `https://evidence.example.com/doc/${n}`,
  title: `Document ${n}`,
  content: "Stated text.",
  ...extra,
});

describe("manual items", () => {
  it("are added with an evidence URL and full provenance (manual parser, the terms as they stood)", async () => {
    const key = await manualSource(call);
    const answer = await call("POST", `/sources/${key}/items`, {
      items: [item(1, { identifiers: { cik: "0000320193", ticker: "AAPL" }, filing_type: "10-K" })],
    });
    expect(answer.status).toBe(201);
    expect(answer.body.items).toMatchObject({ items_new: 1, items_revised: 0, items_unchanged: 0 });
    const [added] = answer.body.items.items;
    expect(added).toMatchObject({
      source_key: key,
      canonical_url: "https://evidence.example.com/doc/1",
      evidence_url: "https://evidence.example.com/doc/1",
      title: "Document 1",
      identifiers: { cik: "0000320193", ticker: "AAPL" },
      filing_type: "10-K",
      revision: 1,
      removed: false,
      provenance: {
        source_key: key,
        canonical_url: "https://evidence.example.com/doc/1",
        retrieved_at: clock.now().toISOString().replace(".000", ""),
        parser_version: "manual",
        terms: "Public feed; attribution required.",
      },
    });
    expect(added.id).toMatch(/^itm_/);
    expect(added.provenance.content_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(added.provenance.raw_body_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(BigInt(added.change_order)).toBeGreaterThan(0n);
  });

  it("422 item.evidence_url_required without one; 400 naming the field for a bad one", async () => {
    const key = await manualSource(call);
    const missing = await call("POST", `/sources/${key}/items`, { items: [item(1), { title: "No evidence" }] });
    expect(missing.body).toMatchObject({ status: 422, code: "item.evidence_url_required" });
    const bad = await call("POST", `/sources/${key}/items`, { items: [item(2, { evidence_url: "javascript:x" })] });
    expect(bad.body).toMatchObject({ status: 400, code: "request.invalid", field: "items[0].evidence_url" });
    // Percent-encoded, a URL of 1000 characters grows past 2000: the identity must fit.
    const wide = `https://evidence.example.com/${Array.from({ length: 970 }, (_, n) => String.fromCodePoint(0x4e00 + ((n * 7919) % 20000))).join("")}`;
    expect(wide.length).toBeLessThan(2000);
    const encoded = await call("POST", `/sources/${key}/items`, { items: [item(3, { evidence_url: wide })] });
    expect(encoded.body).toMatchObject({ status: 400, code: "request.invalid", field: "items[0].evidence_url" });
    const none = await call("POST", `/sources/${key}/items`, { items: [] });
    expect(none.body).toMatchObject({ status: 400, field: "items" });
    // Nothing of a refused request was kept.
    expect((await call("GET", `/items?source_key=${key}`)).body.items.items).toEqual([]);
  });

  it("409 source.not_manual on a fetched source, 409 source.disabled on a disabled manual one", async () => {
    const fetched = await fetchedSource(call);
    const answer = await call("POST", `/sources/${fetched}/items`, { items: [item(1)] });
    expect(answer.body).toMatchObject({ status: 409, code: "source.not_manual" });
    const key = await manualSource(call);
    await call("PATCH", `/sources/${key}`, { enabled: false });
    expect((await call("POST", `/sources/${key}/items`, { items: [item(1)] })).body).toMatchObject({
      status: 409,
      code: "source.disabled",
    });
  });
});

describe("revisions", () => {
  it("a new revision only when the content hash changes; each keeps its provenance", async () => {
    const key = await manualSource(call);
    const [first] = await addItem(call, key, item(1));
    clock.advance(60_000);
    const again = await call("POST", `/sources/${key}/items`, { items: [item(1)] });
    expect(again.body.items).toMatchObject({ items_new: 0, items_unchanged: 1 });
    expect(again.body.items.items[0]).toMatchObject({ id: first.id, revision: 1, change_order: first.change_order });
    clock.advance(60_000);
    const [revised] = await addItem(call, key, item(1, { title: "Document 1 (amended)" }));
    expect(revised).toMatchObject({ id: first.id, revision: 2, title: "Document 1 (amended)" });
    expect(BigInt(revised.change_order)).toBeGreaterThan(BigInt(first.change_order));
    expect(revised.provenance.content_hash).not.toBe(first.provenance.content_hash);
    const read = await call("GET", `/items/${first.id}`);
    expect(read.body.item.revisions).toMatchObject([
      { revision: 1, title: "Document 1", provenance: { content_hash: first.provenance.content_hash } },
      { revision: 2, title: "Document 1 (amended)", provenance: { content_hash: revised.provenance.content_hash } },
    ]);
    expect(read.body.item.source).toMatchObject({ source_key: key, health: { staleness: "STALENESS_NOT_APPLICABLE" } });
  });

  it("a fetch revises by content too: unchanged entries are counted, not revised", async () => {
    const key = await fetchedSource(call);
    await runWith(t, call, key, succeeded([entry("https://x.example/a"), entry("https://x.example/b")]));
    const runId = await runWith(
      t,
      call,
      key,
      succeeded([entry("https://x.example/a"), entry("https://x.example/b", { title: "B, corrected" })]),
    );
    const runs = (await call("GET", `/sources/${key}/runs`)).body.runs.runs;
    expect(runs[0]).toMatchObject({
      id: runId,
      state: "RUN_STATE_SUCCEEDED",
      trigger: "RUN_TRIGGER_MANUAL",
      http_status: 200,
      bytes: "1234",
      items_new: 0,
      items_revised: 1,
      items_unchanged: 1,
    });
    expect(runs[1]).toMatchObject({ items_new: 2 });
    const items = (await call("GET", `/items?source_key=${key}`)).body.items.items;
    expect(items.map((i: { revision: number }) => i.revision)).toEqual([1, 2]);
    expect(items[1].provenance).toMatchObject({ parser_version: "rss@1", raw_body_hash: "b".repeat(64) });
  });
});

describe("sticky removal", () => {
  it("removes with a reason, idempotently; reads show it with the reason; lists only with include_removed=1", async () => {
    const key = await manualSource(call);
    const [added] = await addItem(call, key, item(1));
    const removed = await call("DELETE", `/items/${added.id}?reason=${encodeURIComponent("Retracted upstream")}`);
    expect(removed.status).toBe(200);
    expect(removed.body.item).toMatchObject({ id: added.id, removed: true, removed_reason: "Retracted upstream" });
    expect(BigInt(removed.body.item.change_order)).toBeGreaterThan(BigInt(added.change_order));
    const again = await call("DELETE", `/items/${added.id}?reason=other`);
    expect(again.body.item).toEqual(removed.body.item);
    expect((await call("GET", `/items/${added.id}`)).body.item.item).toEqual(removed.body.item);
    expect((await call("GET", `/items?source_key=${key}`)).body.items.items).toEqual([]);
    const all = await call("GET", `/items?source_key=${key}&include_removed=1`);
    expect(all.body.items.items).toEqual([removed.body.item]);
  });

  it("a malformed source_key filter is 400 naming source_key", async () => {
    for (const path of ["/items?source_key=BAD%20KEY", "/runs?source_key=BAD"])
      expect((await call("GET", path)).body, path).toMatchObject({
        status: 400,
        code: "request.invalid",
        field: "source_key",
      });
  });

  it("a reason is required; an unknown item is 404 item.not_found", async () => {
    const key = await manualSource(call);
    const [added] = await addItem(call, key, item(1));
    expect((await call("DELETE", `/items/${added.id}`)).body).toMatchObject({ status: 400, field: "reason" });
    expect((await call("DELETE", "/items/itm_nothing?reason=x")).body).toMatchObject({
      status: 404,
      code: "item.not_found",
    });
    expect((await call("GET", "/items/itm_nothing")).body).toMatchObject({ status: 404, code: "item.not_found" });
  });

  it("sending a removed item again never revives it (skipped_removed)", async () => {
    const key = await manualSource(call);
    const [added] = await addItem(call, key, item(1));
    await call("DELETE", `/items/${added.id}?reason=spam`);
    const again = await call("POST", `/sources/${key}/items`, { items: [item(1, { title: "Changed" })] });
    expect(again.body.items).toMatchObject({ items_new: 0, items_revised: 0, items_skipped_removed: 1 });
    expect(again.body.items.items[0]).toMatchObject({ id: added.id, removed: true, title: "Document 1", revision: 1 });
  });

  it("a refetch never revives a removed item: the run counts it skipped_removed", async () => {
    const key = await fetchedSource(call);
    await runWith(t, call, key, succeeded([entry("https://y.example/1", { externalId: "e1" })]));
    const [fetched] = (await call("GET", `/items?source_key=${key}`)).body.items.items;
    await call("DELETE", `/items/${fetched.id}?reason=wrong`);
    const runId = await runWith(
      t,
      call,
      key,
      succeeded([entry("https://y.example/1-moved", { externalId: "e1", title: "New title" })]),
    );
    const [run] = (await call("GET", `/runs?source_key=${key}`)).body.runs.runs;
    expect(run).toMatchObject({ id: runId, items_new: 0, items_revised: 0, items_skipped_removed: 1 });
    const all = (await call("GET", `/items?source_key=${key}&include_removed=1`)).body.items.items;
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({ id: fetched.id, removed: true, title: "A filing" });
  });
});

describe("sticky removal under concurrency", () => {
  // A row lock held from another transaction needs a database server: the embedded one is a single session.
  itWith(
    DATABASE_SERVER,
    "a removal racing an intake of the same item: the intake sees it removed and never revises it",
    async () => {
      const key = await manualSource(call);
      const [added] = await addItem(call, key, item(1));
      const counter = await holdChangeCounter(t);
      let removal: ReturnType<typeof call> | undefined;
      let resend: ReturnType<typeof call> | undefined;
      try {
        removal = call("DELETE", `/items/${added.id}?reason=race`);
        // The removal waits for the counter (holding the item's source, where the lock order says so).
        await until(async () => (await counter.waiting()) >= 1);
        resend = call("POST", `/sources/${key}/items`, { items: [item(1, { title: "Changed meanwhile" })] });
        await until(async () => (await counter.waiting()) >= 2);
      } finally {
        await counter.release();
      }
      const [removed, sent] = await Promise.all([removal!, resend!]);
      expect(removed.body.item).toMatchObject({ id: added.id, removed: true, removed_reason: "race" });
      expect(sent.body.items).toMatchObject({ items_new: 0, items_revised: 0, items_skipped_removed: 1 });
      const read = (await call("GET", `/items/${added.id}`)).body.item;
      expect(read.item).toMatchObject({ removed: true, revision: 1, title: "Document 1" });
      expect(read.revisions).toHaveLength(1);
    },
  );
});

describe("fetched entries that cannot be stored as they are", () => {
  it("an identity too long is left out, NUL is dropped, an impossible date is unstated: the run still succeeds", async () => {
    const key = await fetchedSource(call);
    const runId = await runWith(
      t,
      call,
      key,
      succeeded([
        // Random, so the index cannot compress it under its row size limit.
        entry(`https://long.example/${randomBytes(1500).toString("hex")}`),
        entry("https://long.example/id", { externalId: "e".repeat(201) }),
        entry("https://long.example/nul", {
          title: "Title\u0000with NUL",
          identifiers: { ticker: "A\u0000B" },
          publishedAt: new Date("-050000-01-01T00:00:00Z"),
        }),
        entry("https://long.example/ok"),
      ]),
    );
    const [run] = (await call("GET", `/sources/${key}/runs`)).body.runs.runs;
    expect(run).toMatchObject({ id: runId, state: "RUN_STATE_SUCCEEDED", items_new: 2, entries_skipped: 2 });
    const items = (await call("GET", `/items?source_key=${key}`)).body.items.items;
    expect(items.map((i: { canonical_url: string }) => i.canonical_url)).toEqual([
      "https://long.example/nul",
      "https://long.example/ok",
    ]);
    expect(items[0]).toMatchObject({ title: "Titlewith NUL", identifiers: { ticker: "AB" } });
    expect(items[0].published_at).toBeUndefined();
  });

  it("an entry with a field over its cap is left out and counted; one at every cap is taken", async () => {
    const key = await fetchedSource(call);
    const identifiers = (n: number, value = "v") =>
      Object.fromEntries(Array.from({ length: n }, (_, i) => [`id_${i}`, value]));
    const runId = await runWith(
      t,
      call,
      key,
      succeeded([
        entry("https://caps.example/title", { title: "t".repeat(501) }),
        entry("https://caps.example/summary", { summary: "s".repeat(5_001) }),
        entry("https://caps.example/content", { content: "c".repeat(200_001) }),
        entry("https://caps.example/filing", { filingType: "F".repeat(33) }),
        entry("https://caps.example/identifiers", { identifiers: identifiers(21) }),
        entry("https://caps.example/identifier", { identifiers: { ticker: "A".repeat(201) } }),
        entry("https://caps.example/at-caps", {
          title: "t".repeat(500),
          summary: "s".repeat(5_000),
          content: "c".repeat(200_000),
          filingType: "F".repeat(32),
          identifiers: identifiers(20, "v".repeat(200)),
        }),
      ]),
    );
    const [run] = (await call("GET", `/sources/${key}/runs`)).body.runs.runs;
    expect(run).toMatchObject({ id: runId, state: "RUN_STATE_SUCCEEDED", items_new: 1, entries_skipped: 6 });
    const items = (await call("GET", `/items?source_key=${key}`)).body.items.items;
    expect(items.map((i: { canonical_url: string }) => i.canonical_url)).toEqual(["https://caps.example/at-caps"]);
  });
});

describe("manual item requests are rate-limited per source", () => {
  it("429 rate.limited past PF_SOURCES_ITEM_REQUESTS_PER_HOUR; a refused request counts against nothing", async () => {
    const settings = sourcesOf(t).settings;
    const before = settings.itemRequestsPerHour;
    settings.itemRequestsPerHour = 2;
    try {
      const key = await manualSource(call);
      expect((await call("POST", `/sources/${key}/items`, { items: [{ title: "x" }] })).status).toBe(422);
      expect((await call("POST", `/sources/${key}/items`, { items: [item(1)] })).status).toBe(201);
      expect((await call("POST", `/sources/${key}/items`, { items: [item(2)] })).status).toBe(201);
      const third = await call("POST", `/sources/${key}/items`, { items: [item(3)] });
      expect(third.body).toMatchObject({ status: 429, code: "rate.limited" });
      // Another source has its own count.
      expect((await call("POST", `/sources/${await manualSource(call)}/items`, { items: [item(3)] })).status).toBe(201);
    } finally {
      settings.itemRequestsPerHour = before;
    }
  });
});

describe("reading by change order", () => {
  it("pages after a change order; each change (new, revised, removed) moves the item after the others", async () => {
    const key = await manualSource(call);
    const start = BigInt((await call("GET", `/items?source_key=${key}`)).body.items.next_after);
    const added = await call("POST", `/sources/${key}/items`, { items: [item(1), item(2), item(3)] });
    const [a, b, c] = added.body.items.items;
    const page1 = (await call("GET", `/items?source_key=${key}&after=${start}&limit=2`)).body.items;
    expect(page1.items.map((i: { id: string }) => i.id)).toEqual([a.id, b.id]);
    expect(page1).toMatchObject({ has_more: true, next_after: b.change_order });
    await addItem(call, key, item(1, { title: "Revised" }));
    const page2 = (await call("GET", `/items?source_key=${key}&after=${page1.next_after}`)).body.items;
    expect(page2.items.map((i: { id: string }) => i.id)).toEqual([c.id, a.id]);
    expect(page2.has_more).toBe(false);
    const empty = (await call("GET", `/items?source_key=${key}&after=${page2.next_after}`)).body.items;
    expect(empty).toMatchObject({ items: [], next_after: page2.next_after });
  });

  it("concurrent writers never let a reader paging by change order skip a change", async () => {
    const keys = await Promise.all([manualSource(call), manualSource(call), manualSource(call)]);
    let after = BigInt((await call("GET", "/items?include_removed=1&limit=1")).body.items.next_after);
    const [{ change_order: last }] = (
      await call("GET", `/items?include_removed=1&after=${after}&limit=200`)
    ).body.items.items
      .slice(-1)
      .concat([{ change_order: String(after) }]);
    after = BigInt(last);
    const seen = new Map<string, string>();
    let writing = true;
    const reader = (async () => {
      for (let more = true; writing || more;) {
        const page = (await call("GET", `/items?include_removed=1&after=${after}&limit=200`)).body.items;
        for (const i of page.items) seen.set(i.id, i.change_order);
        after = BigInt(page.next_after);
        more = page.items.length > 0;
      }
    })();
    await Promise.all(
      Array.from({ length: 30 }, (_, n) => call("POST", `/sources/${keys[n % 3]}/items`, { items: [item(100 + n)] })),
    );
    writing = false;
    await reader;
    const final = new Map<string, string>();
    for (const key of keys) {
      for (const i of (await call("GET", `/items?source_key=${key}&include_removed=1&limit=200`)).body.items.items)
        final.set(i.id, i.change_order);
    }
    expect(final.size).toBe(30);
    expect(seen).toEqual(final);
  });
});

describe("staleness on every items page", () => {
  it("states each source of the page: fresh within three intervals, stale beyond; manual sources not applicable", async () => {
    const fetched = await fetchedSource(call, { fetch_interval_seconds: 600 });
    await runWith(t, call, fetched, succeeded([entry("https://z.example/1")]));
    const manual = await manualSource(call);
    await addItem(call, manual, item(1));
    const statusOf = async (key: string) =>
      (await call("GET", `/items?source_key=${key}`)).body.items.sources.find(
        (s: { source_key: string }) => s.source_key === key,
      );
    expect(await statusOf(fetched)).toMatchObject({ health: { staleness: "STALENESS_FRESH" } });
    expect(await statusOf(manual)).toMatchObject({ health: { staleness: "STALENESS_NOT_APPLICABLE" } });
    clock.advance(3 * 600_000 + 1_000);
    expect(await statusOf(fetched)).toMatchObject({ health: { staleness: "STALENESS_STALE" } });
    const health = (await call("GET", "/health?limit=200")).body.health.sources;
    expect(health.find((s: { source_key: string }) => s.source_key === fetched)).toMatchObject({
      health: { staleness: "STALENESS_STALE", consecutive_failures: 0 },
    });
    // An unfiltered page states the sources of the items it holds.
    const page = (await call("GET", "/items?limit=200")).body.items;
    const keys = new Set(page.items.map((i: { source_key: string }) => i.source_key));
    expect(new Set(page.sources.map((s: { source_key: string }) => s.source_key))).toEqual(keys);
  });
});
