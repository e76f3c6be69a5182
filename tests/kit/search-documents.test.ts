import { ConnectError, Code } from "@connectrpc/connect";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { IndexDocument } from "../../gen/pf/search/v1/documents_pb.js";
import {
  publicDocument,
  type DocumentWrite,
  type HeldDocument,
  type SearchDocumentSource,
  type SearchIndex,
  type WriteOutcome,
} from "../../services/kit/search-documents/document.js";
import { recordSearchDocuments } from "../../services/kit/search-documents/record.js";
import { compareInventory, sweep } from "../../services/kit/search-documents/reconcile.js";
import { SearchRelay } from "../../services/kit/search-documents/relay.js";
import { searchDocumentWorkers } from "../../services/kit/search-documents/search-documents.js";
import { statementsOf } from "../../services/kit/search-documents/statements.js";
import type { ServiceContext } from "../../services/kit/service/module.js";
import { leaseTries } from "../support/lease-tries.js";
import { startTestPlatform, type TestPlatform } from "../support/platform.js";
import { until } from "../support/until.js";

/** Search as the owner sees it, in memory, with its revision rules: an older write never wins, a deletion wins ties. */
class FakeSearch implements SearchIndex {
  held = new Map<string, HeldDocument & { document?: IndexDocument }>();
  down = false;
  calls: DocumentWrite[][] = [];
  active = 0;
  overlapped = false;
  /** Awaited inside each write, as a slow search would be. */
  hold?: () => Promise<void>;
  refuse?: (write: DocumentWrite) => boolean;

  async write(writes: DocumentWrite[]): Promise<WriteOutcome[]> {
    this.active++;
    if (this.active > 1) this.overlapped = true;
    try {
      await this.hold?.();
      if (this.down) throw new ConnectError("search is down", Code.Unavailable);
      if (writes.length > 1 && writes.some((write) => this.refuse?.(write)))
        throw new ConnectError("one write is malformed", Code.InvalidArgument);
      this.calls.push(writes);
      return writes.map((write) => {
        if (this.refuse?.(write)) return { outcome: "rejected", reason: "search.document_invalid: title" };
        const key = `${write.type}/${write.id}`;
        const current = this.held.get(key);
        if (
          current &&
          (current.revision > write.revision ||
            (current.revision === write.revision && current.deleted && !write.deleted))
        )
          return { outcome: "stale", currentRevision: current.revision };
        this.held.set(key, {
          type: write.type,
          id: write.id,
          revision: write.revision,
          deleted: write.deleted,
          document: write.document,
        });
        return { outcome: "applied" };
      });
    } finally {
      this.active--;
    }
  }

  async inventory(cursor: string) {
    if (this.down) throw new ConnectError("search is down", Code.Unavailable);
    const all = [...this.held.values()].sort((a, b) => (a.type + a.id < b.type + b.id ? -1 : 1));
    const start = Number(cursor || 0);
    const page = all
      .slice(start, start + 2)
      .map(({ type, id, revision, deleted }) => ({ type, id, revision, deleted }));
    return { documents: page, nextCursor: start + 2 < all.length ? String(start + 2) : "" };
  }

  live(id: string, type = "note") {
    const held = this.held.get(`${type}/${id}`);
    return held && !held.deleted ? held : undefined;
  }
}

const doc = (title: string) =>
  publicDocument({
    title,
    body: `${title} body`,
    url: `https://example.test/${encodeURIComponent(title)}`,
    lang: "en",
    facets: { kind: ["note"] },
    publishedAt: new Date("2026-01-02T03:04:05Z"),
  });

let first: TestPlatform;
let second: TestPlatform;
let ctx: ServiceContext;
beforeAll(async () => {
  // network owns no search documents: its schema's table is the kit's to test.
  first = await startTestPlatform({ services: ["network"] });
  second = await startTestPlatform({ services: ["network"], env: { DATABASE_URL: first.platform.databaseUrl } });
  ctx = first.platform.contexts.get("network")!;
});
afterAll(async () => {
  await second?.stop();
  await first?.stop();
});

const db = () => statementsOf(ctx.orm);
const record = (changes: { id: string; document: IndexDocument | null; type?: string }[]) =>
  ctx.transaction((em) =>
    recordSearchDocuments(
      em,
      changes.map((c) => ({ type: "note", ...c })),
    ),
  );
const row = async (id: string, type = "note") =>
  (
    await db().run<{
      revision: string;
      pushed_revision: string;
      deleted: boolean;
      rejected: boolean;
      attempts: number;
    }>(`select revision, pushed_revision, deleted, rejected, attempts from ${db().table} where type = $1 and id = $2`, [
      type,
      id,
    ])
  )[0];
const relayOver = (search: SearchIndex, batch = 200) =>
  new SearchRelay(search, db(), { batch, maxBackoffMs: 1_000 }, ctx.logger);
/** The relay's statements, counted as they end. */
const counted = (base: ReturnType<typeof db>) => {
  const statements = {
    ...base,
    count: 0,
    run: async <Row>(sql: string, params: unknown[]) => {
      const rows = await base.run<Row>(sql, params);
      statements.count++;
      return rows;
    },
  };
  return statements;
};

beforeEach(async () => {
  await db().run(`delete from ${db().table}`, []);
});

describe("an owner's document", () => {
  it("is the generated IndexDocument, published for everyone, facets as their values", () => {
    expect(doc("n")).toMatchObject({
      $typeName: "pf.search.v1.IndexDocument",
      lang: "en",
      access: [],
      public: true,
      published: true,
      facets: { kind: { values: ["note"] } },
      publishedAt: { seconds: BigInt(Date.parse("2026-01-02T03:04:05Z") / 1000) },
    });
    expect(publicDocument({ title: "t", body: "b", publishedAt: new Date(0) })).toMatchObject({ url: "", lang: "" });
  });
});

describe("recording search documents in the owner's transaction", () => {
  it("takes a new revision on every change and none when nothing changed", async () => {
    await record([{ id: "a", document: doc("first") }]);
    expect(await row("a")).toMatchObject({ revision: "1", deleted: false, pushed_revision: "0" });
    await record([{ id: "a", document: doc("first") }]);
    expect((await row("a")).revision).toBe("1");
    await record([{ id: "a", document: doc("second") }]);
    expect((await row("a")).revision).toBe("2");
    await record([{ id: "a", document: null }]);
    expect(await row("a")).toMatchObject({ revision: "3", deleted: true });
    await record([{ id: "a", document: null }]);
    expect((await row("a")).revision).toBe("3");
    // Brought back: above the tombstone, which search keeps.
    await record([{ id: "a", document: doc("second") }]);
    expect(await row("a")).toMatchObject({ revision: "4", deleted: false });
  });

  it("writes nothing when the owner's transaction rolls back, and no tombstone for a document never recorded", async () => {
    await ctx
      .transaction(async (em) => {
        await recordSearchDocuments(em, [{ type: "note", id: "b", document: doc("lost") }]);
        throw new Error("the change fails");
      })
      .catch(() => undefined);
    expect(await row("b")).toBeUndefined();
    await record([{ id: "never", document: null }]);
    expect(await row("never")).toBeUndefined();
  });
});

describe("the relay", () => {
  it("pushes pending documents and their tombstones, in batches, once", async () => {
    const search = new FakeSearch();
    await record(Array.from({ length: 5 }, (_, i) => ({ id: `n${i}`, document: doc(`note ${i}`) })));
    expect(await relayOver(search, 2).pass()).toBe(5);
    expect(search.calls.map((batch) => batch.length)).toEqual([2, 2, 1]);
    // What search gets is the owner's message whole: facets, language and time through the stored JSON.
    expect(search.live("n3")?.document).toEqual(doc("note 3"));
    expect(await relayOver(search, 2).pass()).toBe(0);
    await record([{ id: "n3", document: null }]);
    await relayOver(search).pass();
    expect(search.live("n3")).toBeUndefined();
    expect(search.held.get("note/n3")).toMatchObject({ revision: 2, deleted: true });
  });

  it("loses nothing while search is down, pauses, and delivers once it is back", async () => {
    const search = new FakeSearch();
    search.down = true;
    const relay = relayOver(search);
    await record([{ id: "d1", document: doc("while down") }]);
    expect(await relay.pass()).toBe(0);
    expect(await row("d1")).toMatchObject({ pushed_revision: "0", attempts: 1 });
    // Written while search is down: the owner's write never fails.
    await record([{ id: "d2", document: doc("also while down") }]);
    search.down = false;
    // Paused after the failure: no call until the pause is over.
    expect(await relay.pass()).toBe(0);
    await until(async () => (await relay.pass()) > 0, 3_000);
    expect(search.live("d1")?.document?.title).toBe("while down");
    expect(search.live("d2")).toBeDefined();
    expect(await row("d1")).toMatchObject({ pushed_revision: "1", attempts: 0 });
  });

  it("sets aside a document search refuses, sends the rest of its batch, and sends it again once changed", async () => {
    const search = new FakeSearch();
    search.refuse = (write) => write.document?.title === "";
    await record([
      { id: "ok1", document: doc("fine") },
      { id: "bad", document: doc("") },
      { id: "ok2", document: doc("fine too") },
    ]);
    expect(await relayOver(search).pass()).toBe(3);
    expect(search.live("ok1")).toBeDefined();
    expect(search.live("ok2")).toBeDefined();
    expect(await row("bad")).toMatchObject({ rejected: true, pushed_revision: "1" });
    expect(await relayOver(search).pass()).toBe(0);
    await record([{ id: "bad", document: doc("fixed") }]);
    await relayOver(search).pass();
    expect(search.live("bad")?.document?.title).toBe("fixed");
    expect(await row("bad")).toMatchObject({ rejected: false, revision: "2" });
  });

  it("finds the write that spoils a batch by halves, so the others go in a few calls", async () => {
    const search = new FakeSearch();
    search.refuse = (write) => write.document?.title === "";
    await record(Array.from({ length: 8 }, (_, i) => ({ id: `h${i}`, document: doc(i === 5 ? "" : `h${i}`) })));
    expect(await relayOver(search).pass()).toBe(8);
    // Refused whole: h0–h3 go, then h4–h7 in halves until h5 goes alone and is refused.
    expect(search.calls.map((batch) => batch.map((write) => write.id))).toEqual([
      ["h0", "h1", "h2", "h3"],
      ["h4"],
      ["h5"],
      ["h6", "h7"],
    ]);
    expect(await row("h5")).toMatchObject({ rejected: true });
    expect(search.held.size).toBe(7);
  });

  it("moves the owner's revision above a newer one search holds, so the owner's state wins", async () => {
    const search = new FakeSearch();
    search.held.set("note/old", { type: "note", id: "old", revision: 7, deleted: false, document: doc("from before") });
    await record([{ id: "old", document: doc("the owner's") }]);
    await relayOver(search).pass();
    expect(search.live("old")).toMatchObject({ revision: 8, document: { title: "the owner's" } });
    expect(await row("old")).toMatchObject({ revision: "8", pushed_revision: "8" });
  });

  it("reads the next batch while a call is on its way, and ends with the last version of a document changed meanwhile", async () => {
    const search = new FakeSearch();
    const statements = counted(db());
    await record(Array.from({ length: 4 }, (_, i) => ({ id: `p${i}`, document: doc(`p${i} v1`) })));
    search.hold = async () => {
      if (search.calls.length > 0) return;
      // The first call is held until the relay has read the next batch, and p0, on its way, changes meanwhile.
      const before = statements.count;
      await until(() => statements.count > before, 5_000);
      await record([{ id: "p0", document: doc("p0 v2") }]);
    };
    const relay = new SearchRelay(search, statements, { batch: 2, maxBackoffMs: 1_000 }, ctx.logger);
    expect(await relay.pass()).toBe(5);
    expect(search.overlapped).toBe(false);
    // p0's second revision went after search answered its first, in a later call.
    expect(search.calls.map((batch) => batch.map((write) => `${write.id}@${write.revision}`))).toEqual([
      ["p0@1", "p1@1"],
      ["p2@1", "p3@1"],
      ["p0@2"],
    ]);
    expect(search.live("p0")).toMatchObject({ revision: 2, document: { title: "p0 v2" } });
    expect(await row("p0")).toMatchObject({ revision: "2", pushed_revision: "2" });
  });

  it("loses nothing when a call fails with the next batch read, and sends it again after the pause", async () => {
    const search = new FakeSearch();
    const statements = counted(db());
    await record(Array.from({ length: 6 }, (_, i) => ({ id: `f${i}`, document: doc(`f${i}`) })));
    let readBeside = false;
    search.hold = async () => {
      if (search.calls.length !== 1) return;
      // The second call fails once the third batch has been read (and the first marked) beside it.
      const before = statements.count;
      await until(() => statements.count > before, 5_000);
      readBeside = true;
      search.down = true;
    };
    const relay = new SearchRelay(search, statements, { batch: 2, maxBackoffMs: 1_000 }, ctx.logger);
    expect(await relay.pass()).toBe(2);
    expect(readBeside).toBe(true);
    expect(await row("f1")).toMatchObject({ pushed_revision: "1", attempts: 0 });
    expect(await row("f2")).toMatchObject({ pushed_revision: "0", attempts: 1 });
    // Read, never sent: neither pushed nor tried.
    expect(await row("f4")).toMatchObject({ pushed_revision: "0", attempts: 0 });
    search.hold = undefined;
    search.down = false;
    await until(async () => (await relay.pass()) > 0, 3_000);
    expect(search.calls.flat().map((write) => write.id)).toEqual(["f0", "f1", "f2", "f3", "f4", "f5"]);
    for (const id of ["f2", "f3", "f4", "f5"])
      expect(await row(id)).toMatchObject({ pushed_revision: "1", attempts: 0 });
  });

  it("sends again, at the same revision, what search took but a stopped pass did not mark", async () => {
    const search = new FakeSearch();
    await record([{ id: "m1", document: doc("m1") }]);
    // The statement marking search's answer fails, as when the process stops before it.
    const failing = {
      ...db(),
      run: <Row>(sql: string, params: unknown[]) =>
        (params[0] as string[]).length > 0 ? Promise.reject(new Error("stopped")) : db().run<Row>(sql, params),
    };
    await expect(
      new SearchRelay(search, failing, { batch: 2, maxBackoffMs: 1_000 }, ctx.logger).pass(),
    ).rejects.toThrow("stopped");
    expect(await row("m1")).toMatchObject({ pushed_revision: "0" });
    expect(await relayOver(search).pass()).toBe(1);
    expect(search.calls.flat().map((write) => `${write.id}@${write.revision}`)).toEqual(["m1@1", "m1@1"]);
    expect(await row("m1")).toMatchObject({ pushed_revision: "1" });
  });

  it("never has two instances push at once, and pushes each change once", async () => {
    const search = new FakeSearch();
    const relays = [first, second].map((platform) => platform.platform.contexts.get("network")!);
    const tries = () => relays.reduce((sum, ctx) => sum + leaseTries(ctx, "kit.search-relay"), 0);
    let stopping = false;
    // Each push is held until the other instance has tried to relay meanwhile (the pushing one is busy).
    search.hold = async () => {
      const before = tries();
      await until(() => stopping || tries() > before + 1);
    };
    const env = { ...ctx.config.env, PF_SEARCH_RELAY_POLL_MS: "10", PF_SEARCH_RELAY_BATCH: "3" };
    const workers = searchDocumentWorkers<ServiceContext>({ sources: [], index: () => search });
    const instance = (platform: TestPlatform) => {
      const base = platform.platform.contexts.get("network")!;
      return workers[0]({ ...base, config: { ...base.config, env } });
    };
    const stops = await Promise.all([instance(first), instance(second)]);
    try {
      await record(
        Array.from({ length: 30 }, (_, i) => ({ id: `c${String(i).padStart(2, "0")}`, document: doc(`c${i}`) })),
      );
      await until(async () => search.held.size === 30, 10_000);
    } finally {
      stopping = true;
      await Promise.all(stops.map((stop) => stop()));
    }
    expect(search.overlapped).toBe(false);
    const sent = search.calls.flat().map((write) => `${write.id}@${write.revision}`);
    expect(new Set(sent).size).toBe(sent.length);
  });

  it("leaves at the owner's commit, not at its next poll", async () => {
    const search = new FakeSearch();
    const env = { ...ctx.config.env, PF_SEARCH_RELAY_POLL_MS: "600000" };
    const [relay] = searchDocumentWorkers<ServiceContext>({ sources: [], index: () => search });
    const stop = await relay({ ...ctx, config: { ...ctx.config, env } });
    try {
      // The pass at start finds nothing; the next poll is ten minutes away.
      await record([{ id: "woken", document: doc("woken") }]);
      await until(async () => search.live("woken") !== undefined, 5_000);
      // A burst of commits during a pass is carried by one more pass after it.
      await Promise.all(
        Array.from({ length: 20 }, (_, i) => record([{ id: `burst${i}`, document: doc(`burst ${i}`) }])),
      );
      await until(async () => search.held.size === 21, 5_000);
    } finally {
      await stop();
    }
  });
});

describe("reconciliation", () => {
  it("sends again what search lacks or holds older, and tombstones what the owner does not have", async () => {
    const search = new FakeSearch();
    await record([
      { id: "kept", document: doc("kept") },
      { id: "lost", document: doc("lost") },
      { id: "behind", document: doc("behind v1") },
      { id: "gone", document: doc("gone") },
    ]);
    await relayOver(search).pass();
    await record([
      { id: "behind", document: doc("behind v2") },
      { id: "gone", document: null },
    ]);
    await relayOver(search).pass();
    // Drift: search lost one, went back a revision on another, kept a document the owner deleted, and holds one
    // the owner never had.
    search.held.delete("note/lost");
    search.held.set("note/behind", {
      type: "note",
      id: "behind",
      revision: 1,
      deleted: false,
      document: doc("behind v1"),
    });
    search.held.set("note/gone", { type: "note", id: "gone", revision: 1, deleted: false, document: doc("gone") });
    search.held.set("note/stray", { type: "note", id: "stray", revision: 3, deleted: false, document: doc("stray") });
    expect(await compareInventory(search, db())).toBe(4);
    await relayOver(search).pass();
    expect(search.live("kept")?.document?.title).toBe("kept");
    expect(search.live("lost")?.document?.title).toBe("lost");
    expect(search.live("behind")).toMatchObject({ revision: 2, document: { title: "behind v2" } });
    expect(search.live("gone")).toBeUndefined();
    expect(search.held.get("note/stray")).toMatchObject({ revision: 3, deleted: true });
    // In step now: nothing more to repair.
    expect(await compareInventory(search, db())).toBe(0);
  });

  it("leaves pending documents to the relay", async () => {
    const search = new FakeSearch();
    await record([{ id: "p", document: doc("pending") }]);
    expect(await compareInventory(search, db())).toBe(0);
    expect(await row("p")).toMatchObject({ revision: "1", pushed_revision: "0" });
  });

  it("sweeps the sources: documents older than the wiring are recorded, vanished ones tombstoned", async () => {
    const rows = new Map([
      ["x1", "first"],
      ["x2", "second"],
    ]);
    const source: SearchDocumentSource = {
      type: "note",
      describe: async (_em, ids) => new Map(ids.filter((id) => rows.has(id)).map((id) => [id, doc(rows.get(id)!)])),
      ids: async (_em, after, limit) =>
        [...rows.keys()]
          .filter((id) => id > after)
          .sort()
          .slice(0, limit),
    };
    const run = <T>(work: Parameters<ServiceContext["transaction"]>[0]) => ctx.transaction(work) as Promise<T>;
    await sweep(run, [source], ctx.clock);
    expect(await row("x1")).toMatchObject({ revision: "1", deleted: false });
    rows.delete("x2");
    rows.set("x1", "first, edited");
    await sweep(run, [source], ctx.clock);
    expect(await row("x1")).toMatchObject({ revision: "2" });
    expect(await row("x2")).toMatchObject({ revision: "2", deleted: true });
  });
});
