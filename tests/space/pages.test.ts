import { XMLParser, XMLValidator } from "fast-xml-parser";
import { beforeAll, describe, expect, it } from "vitest";
import { SpaceVisibility } from "../../gen/pf/space/v1/forum_pb.js";
import { usePlatform } from "../support/platform.js";
import { communityClient, expectStatus, makeSpace, person, spaceKey, startThread } from "./support.js";

const t = usePlatform({ services: ["space"], env: { PF_SPACE_SITE_URL: "https://forum.example/space" } });
const user = (sub: string) => t.token({ kind: "user", sub });
const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "@" });

/** A feed over real HTTP, as a feed reader fetches it. */
const fetchFeed = (path: string, headers: Record<string, string> = {}) =>
  fetch(`${t.gatewayUrl}/space${path}`, { headers });

describe("RSS 2.0 feeds: only what an anonymous reader may see, escaped", () => {
  const keys = { pub: spaceKey("pub"), members: spaceKey("mem"), staff: spaceKey("stf"), vip: spaceKey("vip") };
  const tricky = 'Less < than & "quotes" ]]> ]]> done';
  // In the feed a title is escaped text (readers take it as HTML and decode it to the title exactly).
  const escaped = "Less &lt; than &amp; &quot;quotes&quot; ]]&gt; ]]&gt; done";
  beforeAll(async () => {
    await makeSpace(t, keys.pub, { title: "Public & <open>" });
    await makeSpace(t, keys.members, { visibility: SpaceVisibility.MEMBERS });
    await makeSpace(t, keys.staff, { visibility: SpaceVisibility.STAFF });
    await makeSpace(t, keys.vip, { membersOnly: true, vipCreator: "network" });
    await startThread(t, keys.pub, person(), tricky, "Body with <script>alert(1)</script> & **bold**");
    await startThread(t, keys.members, person(), "members-only-title");
    // Threads in a staff and a VIP space are written by a moderator's service (it may open them).
    const service = await t.token({ kind: "service", svc: "blog", caps: ["space.post.write"] });
    for (const key of [keys.staff, keys.vip]) {
      const answer = await t.http("POST", `/space/api/v1/spaces/${key}/threads`, {
        token: service,
        headers: { "x-pf-origin": "ai" },
        body: { title: `${key}-hidden-title`, body: "x" },
      });
      expectStatus(answer, 201);
    }
  });

  it("/s/feed.xml is valid RSS 2.0 holding public threads only, their titles escaped and read back exactly", async () => {
    const answer = await fetchFeed("/s/feed.xml", { authorization: `Bearer ${await user(person())}` });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toBe("application/rss+xml; charset=utf-8");
    const text = await answer.text();
    expect(XMLValidator.validate(text)).toBe(true);
    const rss = xml.parse(text).rss;
    expect(rss["@version"]).toBe("2.0");
    const items = [rss.channel.item].flat();
    const titles = items.map((item: { title: string }) => item.title);
    expect(titles).toContain(escaped);
    expect(text).not.toContain("members-only-title");
    expect(text).not.toContain("hidden-title");
    const item = items.find((each: { title: string }) => each.title === escaped);
    expect(item.link).toMatch(new RegExp(`^https://forum\\.example/space/s/${keys.pub}/t/`));
    expect(item.description).not.toMatch(/<script/);
  });

  it("/s/{space}/feed.xml: a public space's feed; members and staff spaces 404, a VIP one 403, whatever token asks", async () => {
    const answer = await fetchFeed(`/s/${keys.pub}/feed.xml`);
    expect(answer.status).toBe(200);
    const rss = xml.parse(await answer.text()).rss;
    expect(rss.channel.title).toBe("Public & <open>");
    const moderator = await t.token({ kind: "service", svc: "blog", caps: ["space.thread.read"] });
    for (const [key, status] of [
      [keys.members, 404],
      [keys.staff, 404],
      [keys.vip, 403],
    ] as const) {
      expect((await fetchFeed(`/s/${key}/feed.xml`)).status).toBe(status);
      expect((await fetchFeed(`/s/${key}/feed.xml`, { authorization: `Bearer ${moderator}` })).status).toBe(status);
    }
  });

  it("answers 304 to If-None-Match with its ETag, and JSON (space.thread-read-result@1) to Accept: application/json", async () => {
    const first = await fetchFeed(`/s/${keys.pub}/feed.xml`);
    const etag = first.headers.get("etag")!;
    expect(etag).toMatch(/^"/);
    expect(first.headers.get("cache-control")).toMatch(/^public, max-age=\d+$/);
    const again = await fetchFeed(`/s/${keys.pub}/feed.xml`, { "if-none-match": etag });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");
    const json = await fetchFeed(`/s/${keys.pub}/feed.xml`, { accept: "application/json" });
    expect(json.headers.get("content-type")).toContain("application/json");
    const body = (await json.json()) as { space: { key: string }; threads: { title: string }[]; feed?: unknown };
    expect(body.space.key).toBe(keys.pub);
    expect(body.threads.map((thread: { title: string }) => thread.title)).toEqual([tricky]);
    expect(body.feed).toBeUndefined();
  });
});

describe("orderings hot, new and top, pinned first, with stable cursors", () => {
  const key = spaceKey("ord");
  const threads: { id: string; slug: string }[] = [];
  beforeAll(async () => {
    await makeSpace(t, key);
    for (let i = 0; i < 7; i++) threads.push((await startThread(t, key, person(), `Thread ${i}`)).thread);
    // Scores: thread i gets (i % 3) upvotes.
    for (const [i, thread] of threads.entries()) {
      for (let v = 0; v < i % 3; v++) {
        const answer = await t.http("POST", `/space/api/v1/spaces/${key}/threads/${thread.slug}/votes`, {
          token: await user(person()),
          body: { value: 1 },
        });
        expectStatus(answer, 200);
      }
    }
    const internal = await communityClient(t);
    await internal.pinThread({ threadId: threads[0].id, pinned: true, idempotencyKey: `pin-${threads[0].id}` }, {});
  });

  /** Every page of an ordering, two threads a page, as ids. */
  async function walk(order: string): Promise<string[]> {
    const seen: string[] = [];
    let cursor = "";
    for (let pages = 0; pages < 10; pages++) {
      const query = `order=${order}&limit=2${cursor ? `&cursor=${cursor}` : ""}`;
      const body = expectStatus(await t.http("GET", `/space/api/v1/spaces/${key}/threads?${query}`), 200).body;
      seen.push(...body.threads.map((thread: { id: string }) => thread.id));
      cursor = body.next_cursor ?? "";
      if (!cursor) return seen;
    }
    throw new Error("paging did not end");
  }

  it("new: pinned first, then newest first; the pages serve each thread once", async () => {
    const ids = threads.map((thread) => thread.id);
    expect(await walk("THREAD_ORDER_NEW")).toEqual([ids[0], ...ids.slice(1).reverse()]);
  });

  it("top: pinned first, then by score, newest first among equals", async () => {
    const ids = threads.map((thread) => thread.id);
    // Scores 0,1,2,0,1,2,0 for threads 0..6; thread 0 pinned.
    expect(await walk("THREAD_ORDER_TOP")).toEqual([ids[0], ids[5], ids[2], ids[4], ids[1], ids[6], ids[3]]);
  });

  it("hot (the default): pinned first, then by rank; pages never repeat nor skip a thread, even as new threads arrive", async () => {
    const ids = threads.map((thread) => thread.id);
    // Scores 0,1,2,0,1,2,0: one point ranks as none (log10 1 = 0), two above; newer first among equal ranks.
    expect(await walk("THREAD_ORDER_HOT")).toEqual([ids[0], ids[5], ids[2], ids[6], ids[4], ids[3], ids[1]]);
    // A thread created between two pages is served where its rank falls; every other thread exactly once.
    const first = expectStatus(await t.http("GET", `/space/api/v1/spaces/${key}/threads?limit=3`), 200).body;
    await startThread(t, key, person(), "Latecomer");
    const rest = expectStatus(
      await t.http("GET", `/space/api/v1/spaces/${key}/threads?limit=50&cursor=${first.next_cursor}`),
      200,
    ).body;
    const served = [...first.threads, ...rest.threads].map((thread: { id: string }) => thread.id);
    expect(served.filter((id) => ids.includes(id)).sort()).toEqual([...ids].sort());
  });

  it("a cursor of another ordering is 400 naming cursor", async () => {
    const page = expectStatus(
      await t.http("GET", `/space/api/v1/spaces/${key}/threads?order=THREAD_ORDER_NEW&limit=1`),
      200,
    ).body;
    const answer = await t.http(
      "GET",
      `/space/api/v1/spaces/${key}/threads?order=THREAD_ORDER_TOP&cursor=${page.next_cursor}`,
    );
    expect(expectStatus(answer, 400).body.field).toBe("cursor");
  });
});
