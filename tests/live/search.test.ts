import { describe, expect, it } from "vitest";
import { newId } from "../../services/kit/handler/ids.js";
import { usePlatform } from "../support/platform.js";
import { until } from "../support/until.js";
import { person, session, subjectChanged } from "./support.js";

// Live and the real search service in one platform: live's relay pushes each channel's document after the commit
// that changed it. The clock is the real one: the relay's lease runs on it.
const t = usePlatform({
  services: ["live", "search"],
  env: { PF_SEARCH_ANONYMOUS_PER_MINUTE: "100000", PF_LIVE_ANONYMOUS_READS_PER_MINUTE: "100000" },
});

interface Hit {
  id: string;
  title: string;
  body: string;
  facets: Record<string, { values: string[] }>;
}

/** A fresh word no other document holds. */
const word = () => newId("w").slice(4).toLowerCase();

/** The channels anyone finds in search by these words (and facet filters). */
async function found(q: string, filters = ""): Promise<Hit[]> {
  const answer = await t.http(
    "GET",
    `/search/api/v1/search?owner=live&type=channel&q=${encodeURIComponent(q)}${filters}`,
  );
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body.results;
}

/** Waits until the search for `q` answers exactly these usernames; answers the hits. */
async function untilFound(q: string, usernames: string[], filters = ""): Promise<Hit[]> {
  let hits: Hit[] = [];
  await until(async () => {
    hits = await found(q, filters);
    return JSON.stringify(hits.map((hit) => hit.id).sort()) === JSON.stringify([...usernames].sort());
  }, 30_000);
  return hits;
}

/** The whole document search holds for a username, as live's own token reads it (404 when never written). */
async function held(username: string) {
  const token = await t.token({ kind: "service", svc: "live", caps: ["search.document.write"] });
  return t.http("GET", `/search/api/v1/owners/live/documents/channel/${username}`, { token });
}

/** A person with a handle and a display name holding `name`, as network announced them. */
async function named(name: string) {
  const who = person();
  await subjectChanged(t, who, new Date(), { displayName: `Ada ${name}` });
  return who;
}

describe("live channels in search", () => {
  it("indexes a channel once network names it, live with its stream's title, and again when the stream ends", async () => {
    const name = word();
    const who = await named(name);
    const [hit] = await untilFound(name, [who.username]);
    expect(hit).toMatchObject({ title: `Ada ${name} (@${who.username})`, facets: { live: { values: ["false"] } } });

    const title = word();
    const sessionId = `rss_${who.owner.slice(4)}`;
    await session(t, "started", { sessionId, owner: who.owner, title: `Speedrun ${title}`, at: new Date() });
    const [live] = await untilFound(title, [who.username]);
    expect(live.facets).toEqual({ live: { values: ["true"] } });
    expect(live.body).toContain(`Speedrun ${title}`);
    await untilFound(name, [who.username], "&facet.live=true");

    await session(t, "ended", { sessionId, owner: who.owner, at: new Date() });
    await untilFound(title, []);
    const [ended] = await untilFound(name, [who.username], "&facet.live=false");
    expect(ended.body).not.toContain(title);
  }, 60_000);

  it("indexes a channel first seen by its stream once network names it, and re-indexes the owner's bio", async () => {
    const who = person();
    const title = word();
    await session(t, "started", { sessionId: `rss_${who.owner.slice(4)}`, owner: who.owner, title, at: new Date() });
    const name = word();
    await subjectChanged(t, who, new Date(), { displayName: name });
    const [hit] = await untilFound(title, [who.username]);
    expect(hit).toMatchObject({ title: `${name} (@${who.username})`, facets: { live: { values: ["true"] } } });

    const bio = word();
    const owner = await t.token({ kind: "user", sub: who.owner });
    const patched = await t.http("PATCH", `/live/api/channels/${who.username}`, {
      token: owner,
      body: { bio_en: `Speedruns of ${bio}` },
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    const [withBio] = await untilFound(bio, [who.username]);
    expect(withBio.body).toBe(`${title}\n\nSpeedruns of ${bio}`);
  }, 60_000);

  it("moves the document with the handle and takes it out when the channel has no username", async () => {
    const name = word();
    const who = await named(name);
    await untilFound(name, [who.username]);

    const moved = { ...who, handle: `${who.handle}_new`, username: `${who.username}_new` };
    await subjectChanged(t, moved, new Date(Date.now() + 1_000), { displayName: `Ada ${name}` });
    await untilFound(name, [moved.username]);
    await until(async () => (await held(who.username)).body.document?.deleted === true);

    // A handle no channel can be read by: no username, no document.
    await subjectChanged(t, { ...who, handle: "" }, new Date(Date.now() + 2_000), { displayName: `Ada ${name}` });
    await untilFound(name, []);
    await until(async () => (await held(moved.username)).body.document?.deleted === true);
  }, 60_000);

  it("gives a handle taken by another person that person's channel under the same username", async () => {
    const first = word();
    const who = await named(first);
    await untilFound(first, [who.username]);
    const second = word();
    const taker = { ...person(), handle: who.handle, username: who.username };
    await subjectChanged(t, taker, new Date(Date.now() + 1_000), { displayName: `Bo ${second}` });
    await untilFound(second, [who.username]);
    await untilFound(first, []);
  }, 60_000);

  it("never puts a private listing, a key or an id other than the username in the document", async () => {
    const name = word();
    const who = await named(name);
    const secret = "sk_live_INGESTSECRET42";
    const sessionId = `rss_${who.owner.slice(4)}`;
    await session(t, "started", {
      sessionId,
      owner: who.owner,
      title: `Open ${name}`,
      at: new Date(),
      refs: { ingest_key: secret, stream_key: "STREAMKEYSECRET99" },
    });
    let streamId = "";
    await until(async () => {
      const answer = await t.http("GET", `/live/api/streams/channel/${who.username}`);
      streamId = answer.body.channel?.streams?.[0]?.id ?? "";
      return streamId !== "";
    });
    const hidden = word();
    const media = await t.token({ kind: "service", svc: "media", caps: ["live.stream.write"] });
    for (const kind of ["vods", "clips"]) {
      const put = await t.http("PUT", `/live/api/${kind}/${kind}-${hidden}`, {
        token: media,
        body: { stream_id: streamId, title: `Private ${hidden}`, url: "https://cdn.example/p.mp4", listing: "private" },
      });
      expect(put.status, JSON.stringify(put.body)).toBe(201);
    }
    const owner = await t.token({ kind: "user", sub: who.owner });
    const slot = await t.http("PUT", `/live/api/channels/${who.username}/slots/lsl_${hidden}`, {
      token: owner,
      body: {
        title: `Unlisted ${hidden}`,
        starts_at: new Date(Date.now() + 3_600_000).toISOString(),
        ends_at: new Date(Date.now() + 7_200_000).toISOString(),
        listing: "unlisted",
      },
    });
    expect(slot.status, JSON.stringify(slot.body)).toBe(201);
    // A later change re-indexes the channel: what it describes still leaves the listings out.
    const bio = word();
    expect(
      (await t.http("PATCH", `/live/api/channels/${who.username}`, { token: owner, body: { bio_en: bio } })).status,
    ).toBe(200);
    await untilFound(bio, [who.username]);

    expect(await found(hidden)).toEqual([]);
    const document = (await held(who.username)).body.document;
    expect(document).toMatchObject({ id: who.username, deleted: false });
    const text = JSON.stringify(document);
    for (const never of [hidden, secret, "STREAMKEYSECRET", who.owner, streamId, sessionId])
      expect(text).not.toContain(never);
  }, 60_000);
});
