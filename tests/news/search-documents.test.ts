import { beforeAll, describe, expect, it } from "vitest";
import { newId } from "../../services/kit/handler/ids.js";
import { useBeside } from "../support/beside.js";
import { untilPushFailed } from "../support/search-relay.js";
import { until } from "../support/until.js";
import { ALL_NEWS, EDITOR, NEWS_ENV, newsCaller, openStory, saveRevision } from "./support.js";

// Search in a platform of its own, reached by news over gRPC through a proxy the test cuts: publishing and
// retracting never wait for search, and what they changed reaches it once it is back. No reconciliation runs
// meanwhile: only the write's own record carries the document.
const split = useBeside("news", { callees: ["search"], env: NEWS_ENV });
const t = split.service;
let as: ReturnType<typeof newsCaller>;

beforeAll(async () => {
  const web = await t.token({ kind: "service", svc: "web", caps: ALL_NEWS });
  as = newsCaller(t, () => web);
});

/** The ids of the stories anyone finds in search by these words. */
async function found(words: string): Promise<string[]> {
  const answer = await split.callees.http(
    "GET",
    `/search/api/v1/search?owner=news&type=story&q=${encodeURIComponent(words)}`,
  );
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body.results.map((hit: { id: string }) => hit.id);
}

/** Search cut off for one write of `story`: the write is answered at once, and the relay tries and fails. */
async function whileSearchIsCut<T>(story: string, write: () => Promise<T>): Promise<T> {
  await split.reachable(["search"], false);
  try {
    const answer = await write();
    await untilPushFailed(t.platform.databaseUrl, "news", [story]);
    return answer;
  } finally {
    await split.reachable(["search"], true);
  }
}

describe("a story's search document while search is unreachable", () => {
  it("publishing succeeds and the document reaches search later; retracting removes it", async () => {
    const { story } = await openStory(t, as);
    const word = newId("w").slice(4).toLowerCase();
    const saved = await saveRevision(as, story, EDITOR, {
      headline: { text: `Flood ${word} closes the bridge`, citations: [1] },
      paragraphs: [{ text: `The ${word} river rose overnight.`, citations: [2] }],
    });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);

    const published = await whileSearchIsCut(story, async () => {
      const answer = await as("POST", `/stories/${story}/publish`, EDITOR, {});
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body.story).toMatchObject({ state: "published", published_revision: 1 });
      // Search has nothing of it yet.
      expect(await found(word)).toEqual([]);
      return answer;
    });
    expect(published.body.story.id).toBe(story);
    await until(async () => (await found(word)).includes(story), 30_000);

    await whileSearchIsCut(story, async () => {
      const retracted = await as("POST", `/stories/${story}/retract`, EDITOR, { note: "The bridge stayed open." });
      expect(retracted.status, JSON.stringify(retracted.body)).toBe(200);
      expect(retracted.body.story).toMatchObject({ state: "retracted", noindex: true, in_sitemap: false });
      // Search still shows what it had.
      expect(await found(word)).toEqual([story]);
    });
    await until(async () => (await found(word)).length === 0, 30_000);
  }, 90_000);
});
