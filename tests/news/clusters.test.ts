import { beforeAll, describe, expect, it } from "vitest";
import { newId } from "../../services/kit/handler/ids.js";
import { usePlatform } from "../support/platform.js";
import { until } from "../support/until.js";
import { addItem, ALL_SOURCES, caller, manualSource, QUIET_WORKERS } from "../sources/support.js";
import { ALL_NEWS, clusterOf, EDITOR, NEWS_ENV, newsCaller, person, sourceItem } from "./support.js";

const t = usePlatform({ services: ["news", "sources"], env: { ...NEWS_ENV, ...QUIET_WORKERS } });
let as: ReturnType<typeof newsCaller>;
beforeAll(async () => {
  const web = await t.token({ kind: "service", svc: "web", caps: ALL_NEWS });
  as = newsCaller(t, () => web);
});

/** The members of a cluster as [item, method]. */
async function members(cluster: string): Promise<[string, string][]> {
  const answer = await as("GET", `/clusters/${cluster}`, EDITOR);
  return answer.body.cluster.members.map((m: any) => [m.item.id, m.explanation.method]);
}

/** Every item's cluster and explanation: what a reversal must restore exactly. */
async function state(items: string[]) {
  const out: Record<string, unknown> = {};
  for (const item of items) {
    const cluster = await clusterOf(as, item);
    const read = await as("GET", `/clusters/${cluster}`, EDITOR);
    const member = read.body.cluster.members.find((m: any) => m.item.id === item);
    out[item] = { cluster, state: read.body.cluster.state, explanation: member.explanation };
  }
  return out;
}

describe("ingestion: dedupe and clusters with every membership explained", () => {
  it("same URL is a duplicate in the same cluster, same title joins it, anything else opens a cluster", async () => {
    const title = `Quake ${newId("q")}`;
    const first = await sourceItem(t, as, { title });
    const sameUrl = await sourceItem(t, as, { title: "Other words", url: `https://wire.example/${first}` });
    const sameTitle = await sourceItem(t, as, { title: `  ${title.toUpperCase()}!` });
    const other = await sourceItem(t, as, { title: `Unrelated ${newId("u")}` });
    const cluster = await clusterOf(as, first);
    expect(await members(cluster)).toEqual([
      [first, "first_item"],
      [sameUrl, "canonical_url"],
      [sameTitle, "title_match"],
    ]);
    expect((await as("GET", `/source-items/${sameUrl}`, EDITOR)).body.source_item).toMatchObject({
      dedupe: "duplicate",
      duplicate_of: first,
    });
    expect(await clusterOf(as, other)).not.toBe(cluster);
    // A story opens with the live, non-duplicate items only.
    const created = await as("POST", "/stories", EDITOR, { cluster_id: cluster });
    expect(created.body.story.sources.map((s: any) => [s.number, s.item_id])).toEqual([
      [1, first],
      [2, sameTitle],
    ]);
    const ingest = await as("GET", "/ingest", EDITOR);
    expect(ingest.body.ingest.sources).toContainEqual(expect.objectContaining({ source_key: "wire" }));
  });

  it("ingestion pages its sources by key (limit 1-200, default 50, cursor); the totals cover every source", async () => {
    const keys = ["a", "b", "c"].map((tag) => `page-${tag}-${newId("k").slice(4)}`);
    for (const sourceKey of keys) await sourceItem(t, as, { sourceKey });
    const pages = [];
    let cursor = "";
    do {
      const answer = await as("GET", `/ingest?limit=1${cursor === "" ? "" : `&cursor=${cursor}`}`, EDITOR);
      expect(answer.body.ingest.sources).toHaveLength(1);
      pages.push(answer.body.ingest);
      cursor = answer.body.ingest.next_cursor;
    } while (cursor !== "");
    const seen = pages.map((page) => page.sources[0].source_key);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(expect.arrayContaining(keys));
    const items = pages.reduce((total, page) => total + page.sources[0].items, 0);
    for (const page of pages) expect(page.items).toBe(items);
    for (const limit of [0, 201])
      expect((await as("GET", `/ingest?limit=${limit}`, EDITOR)).body).toMatchObject({ status: 400, field: "limit" });
  });

  it("an item removed in the sources service reaches news through its outbox and refuses the next publish", async () => {
    const sourcesToken = await t.token({ kind: "service", svc: "web", caps: ALL_SOURCES });
    const src = caller(t, () => sourcesToken);
    const key = await manualSource(src);
    const title = `Filing ${newId("f")}`;
    const [a] = await addItem(src, key, { evidence_url: `https://e.example/${newId("a")}`, title, content: "A" });
    const [b] = await addItem(src, key, { evidence_url: `https://e.example/${newId("b")}`, title, content: "B" });
    await until(async () => (await as("GET", `/source-items/${b.id}`, EDITOR)).status === 200);
    const created = await as("POST", "/stories", EDITOR, { cluster_id: await clusterOf(as, a.id) });
    const story = created.body.story.id;
    await as("POST", `/stories/${story}/revisions`, EDITOR, {
      revision: { headline: { text: "H", citations: [1, 2] } },
    });
    expect((await src("DELETE", `/items/${a.id}?reason=${encodeURIComponent("Withdrawn")}`)).status).toBe(200);
    await until(async () => (await as("GET", `/source-items/${a.id}`, EDITOR)).body.source_item.removed === true);
    const refused = await as("POST", `/stories/${story}/publish`, EDITOR, {});
    expect(refused.body).toMatchObject({
      status: 409,
      code: "story.not_publishable",
      problems: ["source_removed_upstream"],
    });
  });
});

describe("merge, split and reversal: audited, exact, refused when superseded", () => {
  it("merge moves every member and reversal restores each item's cluster and explanation exactly", async () => {
    const a = [await sourceItem(t, as), await sourceItem(t, as)];
    const b = [await sourceItem(t, as)];
    const [ca, cb] = [await clusterOf(as, a[0]), await clusterOf(as, b[0])];
    const before = await state([...a, ...b]);
    const merged = await as("POST", `/clusters/${ca}/merge`, EDITOR, { cluster_ids: [cb], reason: "Same event" });
    expect(merged.status).toBe(200);
    expect(merged.body.audit).toMatchObject({
      action: "merge",
      cluster_id: ca,
      by: EDITOR,
      moves: [{ item_id: b[0], from_cluster_id: cb, to_cluster_id: ca }],
    });
    expect(await members(ca)).toContainEqual([b[0], "editor_merge"]);
    expect((await as("GET", `/clusters/${cb}`, EDITOR)).body.cluster).toMatchObject({
      state: "merged",
      merged_into: ca,
    });
    const reversed = await as("POST", `/clusters/audit/${merged.body.audit.id}/reverse`, EDITOR, {
      reason: "Not the same",
    });
    expect(reversed.body.audit).toMatchObject({ action: "reverse", reverses: merged.body.audit.id });
    expect(await state([...a, ...b])).toEqual(before);
    const history = (await as("GET", `/clusters/${ca}`, EDITOR)).body.cluster.history;
    expect(history.map((h: any) => [h.action, h.reversed_by ?? ""])).toEqual([
      ["reverse", ""],
      ["merge", reversed.body.audit.id],
    ]);
    // Reversing twice is refused: the reversal is a later change of the same items.
    const twice = await as("POST", `/clusters/audit/${merged.body.audit.id}/reverse`, EDITOR, { reason: "Again" });
    expect(twice.body).toMatchObject({ status: 409, code: "cluster.audit_superseded" });
  });

  it("split moves exactly the items named; a later change of the same items makes the reversal 409", async () => {
    const title = `Split ${newId("s")}`;
    const items = [];
    for (let i = 0; i < 3; i++) items.push(await sourceItem(t, as, { title }));
    const cluster = await clusterOf(as, items[0]);
    const start = await state(items);
    const split = await as("POST", `/clusters/${cluster}/split`, EDITOR, { item_ids: [items[2]], reason: "Different" });
    expect(split.status).toBe(201);
    const created = split.body.audit.moves[0].to_cluster_id;
    expect(split.body.audit.moves).toEqual([{ item_id: items[2], from_cluster_id: cluster, to_cluster_id: created }]);
    expect(await members(created)).toEqual([[items[2], "editor_split"]]);
    // A later merge moving the split-off item supersedes the split.
    const merge = await as("POST", `/clusters/${cluster}/merge`, EDITOR, { cluster_ids: [created], reason: "Same" });
    const refused = await as("POST", `/clusters/audit/${split.body.audit.id}/reverse`, EDITOR, { reason: "Undo" });
    expect(refused.body).toMatchObject({
      status: 409,
      code: "cluster.audit_superseded",
      later_audit: merge.body.audit.id,
    });
    // Undone newest first, the later change no longer stands: the split reverses, restoring the start exactly.
    await as("POST", `/clusters/audit/${merge.body.audit.id}/reverse`, EDITOR, { reason: "Undo merge" });
    const undoSplit = await as("POST", `/clusters/audit/${split.body.audit.id}/reverse`, EDITOR, { reason: "Undo" });
    expect(undoSplit.status).toBe(200);
    expect(await state(items)).toEqual(start);
  });

  it("a random sequence of merges and splits undone in reverse order restores every membership exactly", async () => {
    const items = [];
    for (let i = 0; i < 6; i++) items.push(await sourceItem(t, as));
    const start = await state(items);
    let seed = 7;
    const random = (n: number) => (seed = (seed * 1103515245 + 12345) % 2147483648) % n;
    const audits: string[] = [];
    for (let step = 0; step < 6; step++) {
      const clusters = [...new Set(await Promise.all(items.map((item) => clusterOf(as, item))))];
      const target = clusters[random(clusters.length)];
      const inTarget = (await members(target)).map(([item]) => item);
      const answer =
        random(2) === 0 && clusters.length > 1
          ? await as("POST", `/clusters/${target}/merge`, EDITOR, {
              cluster_ids: clusters.filter((c) => c !== target).slice(0, 1 + random(2)),
              reason: `step ${step}`,
            })
          : inTarget.length > 1
            ? await as("POST", `/clusters/${target}/split`, EDITOR, {
                item_ids: inTarget.slice(0, 1 + random(inTarget.length - 1)),
                reason: `step ${step}`,
              })
            : undefined;
      if (answer) {
        expect(answer.status, JSON.stringify(answer.body)).toBeLessThan(300);
        audits.push(answer.body.audit.id);
      }
    }
    expect(audits.length).toBeGreaterThan(0);
    for (const audit of audits.reverse())
      expect((await as("POST", `/clusters/audit/${audit}/reverse`, EDITOR, { reason: "undo" })).status).toBe(200);
    expect(await state(items)).toEqual(start);
  });

  it("refuses bad input naming the field, non-editors, and merges of inactive clusters", async () => {
    const [x, y] = [await sourceItem(t, as), await sourceItem(t, as)];
    const [cx, cy] = [await clusterOf(as, x), await clusterOf(as, y)];
    const noReason = await as("POST", `/clusters/${cx}/merge`, EDITOR, { cluster_ids: [cy] });
    expect(noReason.body).toMatchObject({ status: 400, field: "reason" });
    const self = await as("POST", `/clusters/${cx}/merge`, EDITOR, { cluster_ids: [cx], reason: "r" });
    expect(self.body).toMatchObject({ status: 400, field: "cluster_ids" });
    const stranger = await as("POST", `/clusters/${cx}/split`, EDITOR, { item_ids: [y], reason: "r" });
    expect(stranger.body).toMatchObject({ status: 422, code: "cluster.item_not_member", field: "item_ids" });
    const all = await as("POST", `/clusters/${cx}/split`, EDITOR, { item_ids: [x], reason: "r" });
    expect(all.body).toMatchObject({ status: 422, code: "cluster.split_all" });
    const outsider = await as("POST", `/clusters/${cx}/merge`, person("o"), { cluster_ids: [cy], reason: "r" });
    expect(outsider.body).toMatchObject({ status: 403, code: "auth.editor_required" });
    await as("POST", `/clusters/${cx}/merge`, EDITOR, { cluster_ids: [cy], reason: "r" });
    const again = await as("POST", `/clusters/${cy}/merge`, EDITOR, { cluster_ids: [cx], reason: "r" });
    expect(again.body).toMatchObject({ status: 409, code: "cluster.merged" });
    expect((await as("POST", "/stories", EDITOR, { cluster_id: cy })).body.code).toBe("cluster.merged");
    expect((await as("GET", "/clusters/ncl_0nosuch", EDITOR)).body.code).toBe("cluster.not_found");
    expect((await as("POST", "/clusters/audit/cau_0nosuch/reverse", EDITOR, { reason: "r" })).status).toBe(404);
  });
});
