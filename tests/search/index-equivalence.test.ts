import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { beforeAll, describe, expect, it } from "vitest";
import { SearchIndexService } from "../../gen/pf/search/v1/search_pb.js";
import type { SearchContext } from "../../services/search/context.js";
import { postgresEngine } from "../../services/search/db/engine.js";
import { checkWrite } from "../../services/search/domain/documents.js";
import { checkQuery, type Position } from "../../services/search/domain/query.js";
import { PUBLIC_VIEW, type Viewer } from "../../services/search/domain/visibility.js";
import type { SearchEngine } from "../../services/search/engine/engine.js";
import { usePlatform } from "../support/platform.js";
import { until } from "../support/until.js";
import { ownerToken } from "./support.js";

/**
 * The proof of the in-memory index: the same queries through it and through the PostgreSQL path, over the same
 * documents, answer the same ids in the same order, the same scores and the same facet counts where both are exact.
 */
const t = usePlatform({ services: ["search"] });
const type = `eq${Date.now().toString(36)}`;
const EN = ["umbrella", "coffee", "garden", "running", "kitchen", "winter", "travel", "guitar", "camera", "café"];
const DE = ["regenschirm", "kaffee", "garten", "schuhe", "küche", "winter", "reise", "gitarre", "kamera", "fahrrad"];
const COUNT = 400;
const start = Date.UTC(2026, 5, 1);

let indexed: SearchEngine;
let postgres: SearchEngine;

beforeAll(async () => {
  const ctx = t.platform.contexts.get("search") as SearchContext;
  indexed = ctx.engine;
  postgres = postgresEngine(ctx.orm);
  await until(() => ctx.engine.documents() !== undefined, 30_000);
  const index = t.client(SearchIndexService, await ownerToken(t));
  const word = (list: string[], n: number) => list[n % list.length];
  const writes = Array.from({ length: COUNT }, (_, n) => {
    const list = n % 3 === 0 ? DE : EN;
    return {
      type,
      id: `d${n}`,
      revision: 1n,
      document: {
        title: `${word(list, n)} ${word(list, n * 7 + 3)} ${n % 5 === 0 ? "Umbrella-Stand" : "offer"} ${n}`,
        body: `${word(list, n * 3)} and ${word(list, n * 11 + 1)} with ${word(list, n * 13 + 2)} ${word(list, n)}`,
        lang: n % 3 === 0 ? "de" : n % 3 === 1 ? "en" : "",
        access: n % 7 === 0 ? ["usr_alice"] : n % 11 === 0 ? ["group:staff"] : [],
        public: n % 7 !== 0 && n % 11 !== 0,
        published: n % 13 !== 0,
        facets: { color: { values: [["red", "blue", "green"][n % 3]] }, size: { values: [`s${n % 4}`, `t${n % 2}`] } },
        // Some share a moment: ties break by key in both.
        publishedAt: timestampFromDate(new Date(start - Math.floor(n / 2) * 3_600_000)),
      },
    };
  });
  for (let from = 0; from < COUNT; from += 200) await index.writeDocuments({ writes: writes.slice(from, from + 200) });
  // Deleted and rewritten ones: the index drops and replaces them as PostgreSQL does.
  await index.writeDocuments({
    writes: [
      { type, id: "d1", revision: 2n, deleted: true },
      { ...writes[2], revision: 2n, document: { ...writes[2].document, title: "Umbrella renamed", public: true } },
    ],
  });
}, 60_000);

const viewers: [string, Viewer][] = [
  ["public", PUBLIC_VIEW],
  ["alice", { keys: ["usr_alice", "role:member"] }],
  ["staff", { keys: ["usr_bob", "role:member", "group:staff"] }],
];

type Input = { q?: string; lang?: string; facets?: string; facet?: Record<string, string> };
const query = (input: Input) =>
  checkQuery({ q: "", lang: "", facets: "", cursor: "", owner: "coupons", type, facet: {}, limit: 15, ...input });

const SEARCHES: Input[] = [
  {},
  { facets: "color,size" },
  { facet: { color: "red" }, facets: "size" },
  { q: "umbrella", lang: "en", facets: "color" },
  { q: "umbrella coffee", lang: "en" },
  { q: "umbrella or kamera", facets: "color,size" },
  { q: "garden -winter", lang: "en" },
  { q: "kaffee garten", lang: "de", facets: "color" },
  { q: "running", lang: "en" },
  { q: "gitarre or reise -kamera", lang: "de", facet: { size: "s1" } },
  { q: "the", lang: "en" },
  { q: '"winter kamera"' },
  { q: '"umbrella coffee" or "garden with kitchen" -travel', lang: "en", facets: "color" },
  { q: '"kaffee garten" reise', lang: "de" },
  { q: '"offer 12"' },
];

describe("the in-memory index answers as PostgreSQL does", () => {
  it("searches: ids, order, scores, exact counts, and the next page from the cursor", async () => {
    const at = new Date(start + 86_400_000);
    for (const [who, viewer] of viewers)
      for (const input of SEARCHES) {
        const q = query(input);
        const label = `${who} ${JSON.stringify(input)}`;
        const [mine, theirs] = await Promise.all([
          indexed.search(viewer, q, undefined, at),
          postgres.search(viewer, q, undefined, at),
        ]);
        expect(
          mine.rows.map((row) => row.id),
          label,
        ).toEqual(theirs.rows.map((row) => row.id));
        expect(
          mine.rows.map((row) => row.score),
          label,
        ).toEqual(theirs.rows.map((row) => row.score));
        if (!theirs.countsAtLeast) expect(mine.facets, label).toEqual(theirs.facets);
        const last = theirs.rows[q.limit - 1];
        if (!last) continue;
        const position: Position =
          q.q === ""
            ? { kind: "recent", publishedAt: last.publishedAt.toISOString(), key: last }
            : { kind: "ranked", at: at.toISOString(), score: last.score, key: last };
        const [next, theirNext] = await Promise.all([
          indexed.search(viewer, q, position, at),
          postgres.search(viewer, q, position, at),
        ]);
        expect(
          next.rows.map((row) => row.id),
          `${label} page 2`,
        ).toEqual(theirNext.rows.map((row) => row.id));
      }
  });

  it("suggests: the same titles in the same order, exact counts alike", async () => {
    for (const [who, viewer] of viewers)
      for (const input of <Input[]>[
        { q: "umb", facets: "color" },
        { q: "ga" },
        { q: "umbrella-s" },
        { q: "cafe" },
        { q: "kaffee g" },
        { q: "stand", facet: { color: "blue" } },
        { q: "umbrela" },
      ]) {
        const q = query(input);
        const label = `${who} ${JSON.stringify(input)}`;
        const [mine, theirs] = await Promise.all([
          indexed.suggest(viewer, q, undefined),
          postgres.suggest(viewer, q, undefined),
        ]);
        expect(
          mine.rows.map((row) => [row.id, row.title, row.score]),
          label,
        ).toEqual(theirs.rows.map((row) => [row.id, row.title, row.score]));
        if (!theirs.countsAtLeast) expect(mine.facets, label).toEqual(theirs.facets);
      }
  });

  it("takes another instance's writes (straight to PostgreSQL) at its next look, deletions too", async () => {
    const q = query({ q: "zeppelin", lang: "en" });
    const found = async () => (await indexed.search(PUBLIC_VIEW, q, undefined, new Date())).rows.map((row) => row.id);
    const content = checkWrite({
      type,
      id: "other",
      revision: 1n,
      deleted: false,
      document: {
        title: "Zeppelin",
        body: "",
        url: "",
        lang: "en",
        access: [],
        public: true,
        published: true,
        facets: {},
      },
    });
    if ("field" in content) throw new Error(content.detail);
    await postgres.write("coupons", [content], new Date());
    await until(async () => (await found()).includes("other"));
    await postgres.write("coupons", [{ type, id: "other", revision: 2n, deleted: true }], new Date());
    await until(async () => (await found()).length === 0);
  });
});
