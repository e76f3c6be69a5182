import { describe, expect, it } from "vitest";
import { outboxEvents } from "../support/outbox.js";
import { usePlatform } from "../support/platform.js";
import { app, service, streamer } from "./support/streams.js";
import { FakeWorker } from "./support/worker.js";

const INGEST = "rtmps://ingest.example.com/live";
const t = usePlatform({ services: ["restream"], env: { PF_RESTREAM_PUBLIC_INGEST_URL: INGEST } });

describe("streams", () => {
  it("creates a stream with the defaults and answers its ingest key once (201), stored as a hash", async () => {
    const owner = await streamer(t);
    const created = await owner.call("POST", "/streams", { title: "  Morning show " });
    expect(created.status).toBe(201);
    const { stream, ingest_key: key } = created.body;
    expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(stream).toMatchObject({
      owner: owner.sub,
      title: "Morning show",
      ingest_urls: [INGEST],
      settings: { auto_start_outputs: true, recording: false, latency_mode: "normal", max_bitrate_kbps: 0 },
      key: { hint: key.slice(-4), status: "active" },
    });
    expect(stream.id).toMatch(/^rst_/);
    expect(stream.key.id).toMatch(/^rik_/);
    expect(stream.archived ?? false).toBe(false);

    const read = await owner.call("GET", `/streams/${stream.id}`);
    expect(read.status).toBe(200);
    expect(JSON.stringify(read.body)).not.toContain(key);
    expect(read.body.stream.key).toMatchObject({ hint: key.slice(-4), status: "active" });
  });

  it("takes settings and external references, and refuses a missing title and bad references (400 naming the field)", async () => {
    const owner = await streamer(t);
    const { body } = await owner.stream({
      settings: { recording: true, latency_mode: "low", max_bitrate_kbps: 6000 },
      external_refs: { live_channel: "chn_1", slot: "slt_9" },
    });
    expect(body.stream.settings).toMatchObject({
      auto_start_outputs: true,
      recording: true,
      latency_mode: "low",
      max_bitrate_kbps: 6000,
    });
    expect(body.stream.external_refs).toEqual({ live_channel: "chn_1", slot: "slt_9" });

    const refusals: [unknown, string][] = [
      [{}, "title"],
      [{ title: "   " }, "title"],
      [{ title: "x".repeat(201) }, "title"],
      [{ title: "T", settings: { latency_mode: "instant" } }, "settings.latency_mode"],
      [{ title: "T", external_refs: { "Bad-Key": "x" } }, "external_refs"],
      [{ title: "T", external_refs: { slot: "x".repeat(201) } }, "external_refs"],
      [
        { title: "T", external_refs: Object.fromEntries([...Array(21).keys()].map((n) => [`r${n}`, "x"])) },
        "external_refs",
      ],
    ];
    for (const [body, field] of refusals) {
      const answer = await owner.call("POST", "/streams", body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.code).toBe("request.invalid");
      expect(answer.body.field, JSON.stringify(body)).toBe(field);
    }
  });

  it("lists the owner's streams newest first, paged by before, archived ones only when asked", async () => {
    const owner = await streamer(t);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await owner.stream({ title: `S${i}` })).id);
    await (await streamer(t)).stream();
    const first = await owner.call("GET", "/streams?limit=2");
    expect(first.body.streams.map((s: { id: string }) => s.id)).toEqual([ids[2], ids[1]]);
    const second = await owner.call("GET", `/streams?limit=2&before=${first.body.next_before}`);
    expect(second.body.streams.map((s: { id: string }) => s.id)).toEqual([ids[0]]);
    expect(second.body.next_before ?? "").toBe("");

    expect((await owner.call("DELETE", `/streams/${ids[1]}`)).status).toBe(200);
    const listed = await owner.call("GET", "/streams");
    expect(listed.body.streams.map((s: { id: string }) => s.id)).toEqual([ids[2], ids[0]]);
    const all = await owner.call("GET", "/streams?include_archived=true");
    expect(all.body.streams.map((s: { id: string }) => s.id)).toEqual([ids[2], ids[1], ids[0]]);
    expect(all.body.streams[1]).toMatchObject({ archived: true });
  });

  it("answers another owner's stream as a missing one (404); an app acting for nobody sees none; a service every one", async () => {
    const owner = await streamer(t);
    const { id } = await owner.stream();
    const other = await streamer(t);
    for (const [method, path, body] of [
      ["GET", `/streams/${id}`, undefined],
      ["PATCH", `/streams/${id}`, { title: "Mine now" }],
      ["DELETE", `/streams/${id}`, undefined],
      ["GET", `/streams/${id}/keys`, undefined],
      ["POST", `/streams/${id}/keys/rotate`, {}],
    ] as const) {
      const answer = await other.call(method, path, body);
      expect(answer.body, `${method} ${path}`).toMatchObject({ status: 404, code: "restream.stream.not_found" });
    }
    expect((await other.call("GET", "/streams")).body.streams ?? []).toEqual([]);

    const asApp = await app(t);
    expect((await asApp("GET", `/streams/${id}`)).status).toBe(404);
    expect((await asApp("GET", "/streams")).body.streams ?? []).toEqual([]);

    const platform = await service(t);
    expect((await platform("GET", `/streams/${id}`)).body.stream.owner).toBe(owner.sub);
    const every = await platform("GET", "/streams?limit=200");
    expect(every.body.streams.map((s: { id: string }) => s.id)).toContain(id);
    const forOther = await service(t, other.sub);
    expect((await forOther("GET", `/streams/${id}`)).status).toBe(404);
    const forOwner = await service(t, owner.sub);
    expect((await forOwner("PATCH", `/streams/${id}`, { title: "Renamed for them" })).status).toBe(200);
  });

  it("updates the title, settings field by field, and merges or replaces external references", async () => {
    const owner = await streamer(t);
    const { id } = await owner.stream({ external_refs: { live_channel: "chn_1", slot: "slt_1" } });
    const merged = await owner.call("PATCH", `/streams/${id}`, {
      title: "Late show",
      settings: { recording: true },
      external_refs: { slot: "", extra: "x" },
    });
    expect(merged.status).toBe(200);
    expect(merged.body.stream).toMatchObject({
      title: "Late show",
      settings: { auto_start_outputs: true, recording: true, latency_mode: "normal" },
      external_refs: { live_channel: "chn_1", extra: "x" },
    });
    expect(merged.body.stream.external_refs.slot).toBeUndefined();
    const replaced = await owner.call("PATCH", `/streams/${id}`, {
      external_refs: { slot: "slt_2" },
      replace_external_refs: true,
    });
    expect(replaced.body.stream.external_refs).toEqual({ slot: "slt_2" });
    expect(replaced.body.stream.title).toBe("Late show");
    const bad = await owner.call("PATCH", `/streams/${id}`, { external_refs: { "9x": "y" } });
    expect(bad.body).toMatchObject({ status: 400, field: "external_refs" });
  });

  it("archives once (changed, then not), with its event; an archived stream takes no writes (409) and no ingest", async () => {
    const owner = await streamer(t);
    const { id, key } = await owner.stream();
    const archived = await owner.call("DELETE", `/streams/${id}`);
    expect(archived.status).toBe(200);
    expect(archived.body).toMatchObject({ changed: true, stream: { archived: true } });
    expect(archived.body.stream.archived_at).toBeDefined();
    const again = await owner.call("DELETE", `/streams/${id}`);
    expect(again.body.changed ?? false).toBe(false);

    for (const [method, path, body] of [
      ["PATCH", `/streams/${id}`, { title: "Back" }],
      ["POST", `/streams/${id}/keys/rotate`, {}],
    ] as const) {
      const answer = await owner.call(method, path, body);
      expect(answer.body, path).toMatchObject({ status: 409, code: "restream.stream_archived" });
    }
    const worker = await FakeWorker.of(t);
    await worker.register();
    expect(await worker.authorize(key)).toMatchObject({ granted: false, reason: "stream_archived" });

    const events = await outboxEvents(t, "restream", id);
    expect(events.filter((e) => e.subject === "restream.stream.archived")).toHaveLength(1);
  });

  it("refuses to archive while a session is open (409 restream.session_open), and archives once it ended", async () => {
    const owner = await streamer(t);
    const { id, key } = await owner.stream();
    const worker = await FakeWorker.of(t);
    await worker.register();
    const grant = await worker.authorize(key);
    expect(grant.granted).toBe(true);
    const read = await owner.call("GET", `/streams/${id}`);
    expect(read.body.stream.open_session_id).toBe(grant.sessionId);
    const refused = await owner.call("DELETE", `/streams/${id}`);
    expect(refused.body).toMatchObject({ status: 409, code: "restream.session_open" });
    await worker.ended(grant.sessionId);
    expect((await owner.call("DELETE", `/streams/${id}`)).body.changed).toBe(true);
  });
});
