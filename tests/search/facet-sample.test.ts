import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { beforeAll, describe, expect, it } from "vitest";
import { SearchIndexService } from "../../gen/pf/search/v1/search_pb.js";
import { QUERY_LIMITS } from "../../services/search/domain/query.js";
import { usePlatform } from "../support/platform.js";
import { ownerToken, query } from "./support.js";

/** The PostgreSQL path's sample (no in-memory index: it counts every match, index-equivalence.test.ts). */
const t = usePlatform({
  services: ["search"],
  env: { PF_SEARCH_ANONYMOUS_PER_MINUTE: "100000", PF_SEARCH_INDEX_MAX_DOCUMENTS: "0" },
});
const SAMPLE = QUERY_LIMITS.rankWindow;
/** One document more than the sample: the oldest, the only green one, is never counted. */
const MANY = SAMPLE + 1;
const many = `owner=coupons&type=m${Date.now().toString(36)}`;
const few = `owner=coupons&type=f${Date.now().toString(36)}`;
type Counts = Record<string, { values: { value: string; count: string }[]; at_least: boolean }>;
const total = (counts: Counts, key: string) => counts[key].values.reduce((sum, each) => sum + Number(each.count), 0);

beforeAll(async () => {
  const index = t.client(SearchIndexService, await ownerToken(t));
  const write = (scope: string, n: number) => {
    const type = scope.split("type=")[1];
    // Newest first by n: document 0 is the newest, the last the oldest.
    const publishedAt = timestampFromDate(new Date(Date.UTC(2026, 0, 1) - n * 60_000));
    const color = n === MANY - 1 ? "green" : n % 2 === 0 ? "red" : "blue";
    return {
      type,
      id: `s${n}`,
      revision: 1n,
      document: {
        title: `Sampled umbrella ${n}`,
        body: "umbrella",
        public: true,
        published: true,
        facets: { color: { values: [color] }, shape: { values: ["round"] } },
        publishedAt,
      },
    };
  };
  for (let from = 0; from < MANY; from += 500)
    await index.writeDocuments({
      writes: Array.from({ length: Math.min(500, MANY - from) }, (_, i) => write(many, from + i)),
    });
  await index.writeDocuments({ writes: Array.from({ length: 3 }, (_, i) => write(few, i)) });
}, 60_000);

describe("facet counts from a bounded sample", () => {
  it("count the newest matches only, each count flagged at_least, when more match than the sample", async () => {
    for (const search of [
      `${many}&facets=color,shape`,
      `q=umbrella&${many}&facets=color,shape`,
      `${many}&facet.shape=round&facets=color,shape`,
    ]) {
      const answer = await query(t, search);
      expect(answer.status, search).toBe(200);
      const counts = answer.body.facets as Counts;
      expect(counts.color.at_least, search).toBe(true);
      expect(counts.shape.at_least, search).toBe(true);
      expect(counts.shape.values, search).toEqual([{ value: "round", count: String(SAMPLE) }]);
      expect(total(counts, "color"), search).toBe(SAMPLE);
      // The oldest match is outside the sample: a lower bound, never an invented count.
      expect(counts.color.values.map((each) => each.value).sort(), search).toEqual(["blue", "red"]);
    }
    const suggested = await t.http("GET", `/search/api/v1/suggest?q=sampled&${many}&facets=color`);
    expect(suggested.body.facets.color.at_least).toBe(true);
    expect(total(suggested.body.facets, "color")).toBe(SAMPLE);
  });

  it("stay exact, at_least false, when the sample holds every match", async () => {
    const answer = await query(t, `q=umbrella&${few}&facets=color`);
    expect(answer.body.facets).toEqual({
      color: {
        values: [
          { value: "red", count: "2" },
          { value: "blue", count: "1" },
        ],
        at_least: false,
      },
    });
    const suggested = await t.http("GET", `/search/api/v1/suggest?q=sampled&${few}&facets=color`);
    expect(suggested.body.facets.color).toEqual(answer.body.facets.color);
    // Half of them carry red: fewer than the sample, every one counted exactly.
    const filtered = await query(t, `${many}&facet.color=red&facets=color`);
    expect(filtered.body.facets.color).toEqual({
      values: [{ value: "red", count: String(SAMPLE / 2) }],
      at_least: false,
    });
  });
});
