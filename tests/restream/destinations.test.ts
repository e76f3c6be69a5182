import { beforeAll, describe, expect, it } from "vitest";
import { qualified } from "../../services/kit/db/orm.js";
import { outboxEvents } from "../support/outbox.js";
import { usePlatform } from "../support/platform.js";
import { liveStream, resolveAs, restreamContext } from "./support/destinations.js";
import { service, streamer } from "./support/streams.js";

const t = usePlatform({ services: ["restream"] });
beforeAll(() => resolveAs(t));

const KEY = "yt-secret-key-abcd";

describe("destinations", () => {
  it("creates a destination (201): url as stored, key sealed and masked to its last four, enabled by default", async () => {
    const { owner, stream } = await liveStream(t);
    const created = await owner.call("POST", `/streams/${stream.id}/destinations`, {
      name: " YouTube ",
      url: "rtmp://a.rtmp.youtube.com/live2",
      stream_key: KEY,
    });
    expect(created.status).toBe(201);
    expect(created.body.destination).toMatchObject({
      stream_id: stream.id,
      name: "YouTube",
      url: "rtmp://a.rtmp.youtube.com/live2",
      stream_key_masked: "••••abcd",
      enabled: true,
    });
    expect(created.body.destination.id).toMatch(/^rsd_/);
    expect(created.body.destination.passphrase_set ?? false).toBe(false);
    expect(JSON.stringify(created.body)).not.toContain(KEY);

    const listed = await owner.call("GET", `/streams/${stream.id}/destinations`);
    expect(listed.status).toBe(200);
    expect(listed.body.destinations).toEqual([created.body.destination]);
    // Sealed at rest: the row holds neither the key nor the passphrase in the clear.
    const em = restreamContext(t).orm.em;
    const rows = await em
      .getConnection()
      .execute<{ stream_key_sealed: string; stream_key_hint: string }[]>(
        `select stream_key_sealed, stream_key_hint from ${qualified(em, "destinations")} where id = ?`,
        [created.body.destination.id],
      );
    expect(rows[0]!.stream_key_sealed).not.toContain(KEY);
    expect(restreamContext(t).sealer.open(rows[0]!.stream_key_sealed)).toBe(KEY);
    expect(rows[0]!.stream_key_hint).toBe("abcd");
  });

  it("takes an srt destination with its passphrase, never read back", async () => {
    const { owner, stream } = await liveStream(t);
    const created = await owner.call("POST", `/streams/${stream.id}/destinations`, {
      url: "srt://ingest.example.net:9000?latency=200",
      stream_key: "srt-stream-id-9876",
      passphrase: "a long passphrase",
      enabled: false,
    });
    expect(created.status).toBe(201);
    expect(created.body.destination).toMatchObject({
      name: "ingest.example.net",
      url: "srt://ingest.example.net:9000?latency=200",
      stream_key_masked: "••••9876",
      passphrase_set: true,
    });
    expect(created.body.destination.enabled ?? false).toBe(false);
    expect(JSON.stringify(created.body)).not.toContain("a long passphrase");
  });

  it("refuses bad urls with 400 restream.destination_invalid naming url, and other bad input as request.invalid", async () => {
    const { owner, stream } = await liveStream(t);
    const post = (body: Record<string, unknown>) => owner.call("POST", `/streams/${stream.id}/destinations`, body);
    for (const url of [
      "https://live.example.com/app",
      "rtmp://user:secret@live.example.com/app",
      "srt://live.example.com:9000?passphrase=abcdefghijk",
      "srt://live.example.com:9000?StreamId=abc",
      "srt://live.example.com",
      "rtmp://live/app",
      "rtmp://127%2e0.0.1/app",
      "not a url",
    ]) {
      const answer = await post({ url, stream_key: KEY });
      expect(answer.status, url).toBe(400);
      expect(answer.body, url).toMatchObject({ code: "restream.destination_invalid", field: "url" });
      expect(JSON.stringify(answer.body)).not.toContain(KEY);
    }
    const missing = await post({ name: "No url" });
    expect(missing.body).toMatchObject({ status: 400, code: "request.invalid", field: "url" });
    const passphrase = await post({ url: "rtmp://live.example.com/app", passphrase: "ten or more chars" });
    expect(passphrase.body).toMatchObject({ status: 400, code: "request.invalid", field: "passphrase" });
    const short = await post({ url: "srt://live.example.com:9000", passphrase: "short" });
    expect(short.body).toMatchObject({ status: 400, code: "request.invalid", field: "passphrase" });
    expect((await owner.call("GET", `/streams/${stream.id}/destinations`)).body.destinations ?? []).toEqual([]);
  });

  it("updates a destination: url checked again, a key sent replaces, a key left out is kept", async () => {
    const { owner, stream, destination } = await liveStream(t);
    const id = await destination({ stream_key: KEY });
    const renamed = await owner.call("PATCH", `/destinations/${id}`, { name: "Renamed", enabled: false });
    expect(renamed.status).toBe(200);
    expect(renamed.body.destination).toMatchObject({ name: "Renamed", stream_key_masked: "••••abcd" });
    expect(renamed.body.destination.enabled ?? false).toBe(false);

    const rekeyed = await owner.call("PATCH", `/destinations/${id}`, { stream_key: "another-key-wxyz" });
    expect(rekeyed.body.destination.stream_key_masked).toBe("••••wxyz");
    const refused = await owner.call("PATCH", `/destinations/${id}`, { url: "rtmp://10.0.0.1/app" });
    expect(refused.body).toMatchObject({ status: 400, code: "restream.destination_invalid", field: "url" });
    const noPassphrase = await owner.call("PATCH", `/destinations/${id}`, { passphrase: "ten or more chars" });
    expect(noPassphrase.body).toMatchObject({ status: 400, field: "passphrase" });

    const srt = await owner.call("PATCH", `/destinations/${id}`, {
      url: "srt://srt.example.org:7000",
      passphrase: "ten or more chars",
    });
    expect(srt.body.destination).toMatchObject({ url: "srt://srt.example.org:7000", passphrase_set: true });
    // Back to rtmp: the passphrase goes with the srt url.
    const back = await owner.call("PATCH", `/destinations/${id}`, { url: "rtmps://live.example.com/app" });
    expect(back.body.destination.passphrase_set ?? false).toBe(false);
    const listed = await owner.call("GET", `/streams/${stream.id}/destinations`);
    expect(listed.body.destinations[0]).toMatchObject({ url: "rtmps://live.example.com/app", name: "Renamed" });
  });

  it("deletes a destination: it then answers 404 and leaves the list", async () => {
    const { owner, stream, destination } = await liveStream(t);
    const id = await destination();
    const deleted = await owner.call("DELETE", `/destinations/${id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body.changed).toBe(true);
    const again = await owner.call("DELETE", `/destinations/${id}`);
    expect(again.body).toMatchObject({ status: 404, code: "restream.destination.not_found" });
    expect((await owner.call("PATCH", `/destinations/${id}`, { name: "x" })).status).toBe(404);
    expect((await owner.call("GET", `/destinations/${id}/logs`)).status).toBe(404);
    expect((await owner.call("GET", `/streams/${stream.id}/destinations`)).body.destinations ?? []).toEqual([]);
  });

  it("answers another owner's stream and destinations 404, and reads them for a service", async () => {
    const { owner, stream, destination } = await liveStream(t);
    const id = await destination();
    const other = await streamer(t);
    expect((await other.call("GET", `/streams/${stream.id}/destinations`)).body).toMatchObject({
      status: 404,
      code: "restream.stream.not_found",
    });
    expect(
      (await other.call("POST", `/streams/${stream.id}/destinations`, { url: "rtmp://live.example.com/a" })).status,
    ).toBe(404);
    for (const [method, path] of [
      ["PATCH", `/destinations/${id}`],
      ["DELETE", `/destinations/${id}`],
      ["POST", `/destinations/${id}/test`],
      ["POST", `/destinations/${id}/start`],
      ["POST", `/destinations/${id}/stop`],
      ["GET", `/destinations/${id}/logs`],
    ] as const) {
      const answer = await other.call(method, path, method === "GET" || method === "DELETE" ? undefined : {});
      expect(answer.body, `${method} ${path}`).toMatchObject({ status: 404, code: "restream.destination.not_found" });
    }
    const every = await service(t);
    expect((await every("GET", `/streams/${stream.id}/destinations`)).body.destinations).toHaveLength(1);
    const forOther = await service(t, other.sub);
    expect((await forOther("GET", `/streams/${stream.id}/destinations`)).status).toBe(404);
    const forOwner = await service(t, owner.sub);
    expect((await forOwner("GET", `/destinations/${id}/logs`)).status).toBe(200);
  });

  it("refuses every destination write on an archived stream (409 restream.stream_archived)", async () => {
    const { owner, stream, destination } = await liveStream(t);
    const id = await destination();
    expect((await owner.call("DELETE", `/streams/${stream.id}`)).status).toBe(200);
    const writes = [
      owner.call("POST", `/streams/${stream.id}/destinations`, { url: "rtmp://live.example.com/a" }),
      owner.call("PATCH", `/destinations/${id}`, { name: "x" }),
      owner.call("DELETE", `/destinations/${id}`),
      owner.call("POST", `/destinations/${id}/test`, {}),
      owner.call("POST", `/destinations/${id}/start`, {}),
    ];
    for (const answer of await Promise.all(writes))
      expect(answer.body).toMatchObject({ status: 409, code: "restream.stream_archived" });
    // Reads still answer.
    expect((await owner.call("GET", `/streams/${stream.id}/destinations`)).body.destinations).toHaveLength(1);
  });

  it("keeps keys write-only: no answer or event of a destination's life carries its key or passphrase", async () => {
    const { owner, stream, destination, open } = await liveStream(t);
    const key = "never-shown-key-5678";
    const passphrase = "never shown passphrase";
    const id = await destination({ url: "srt://live.example.com:9000", stream_key: key, passphrase });
    const sessionId = await open();
    const answers = [
      await owner.call("GET", `/streams/${stream.id}/destinations`),
      await owner.call("PATCH", `/destinations/${id}`, { name: "Changed" }),
      await owner.call("POST", `/destinations/${id}/start`, {}),
      await owner.call("GET", `/sessions/${sessionId}/outputs`),
      await owner.call("POST", `/destinations/${id}/stop`, {}),
      await owner.call("GET", `/destinations/${id}/logs`),
      await owner.call("DELETE", `/destinations/${id}`),
    ];
    for (const answer of answers) {
      expect(answer.status).toBeLessThan(300);
      expect(JSON.stringify(answer.body)).not.toContain(key);
      expect(JSON.stringify(answer.body)).not.toContain(passphrase);
      expect(JSON.stringify(answer.body)).not.toContain(encodeURIComponent(passphrase));
    }
    const events = JSON.stringify(await outboxEvents(t, "restream", stream.id));
    expect(events).toContain(id);
    expect(events).not.toContain(key);
    expect(events).not.toContain(encodeURIComponent(passphrase));
  });
});
