import { beforeAll, describe, expect, it } from "vitest";
import { outboxEvents } from "../support/outbox.js";
import { usePlatform } from "../support/platform.js";
import { until } from "../support/until.js";
import { liveStream, resolveAs } from "./support/destinations.js";
import { service, streamer } from "./support/streams.js";

const t = usePlatform({ services: ["restream"] });
beforeAll(() => resolveAs(t));

/** The outbox's output events about `id`: their states and reasons, in order. */
async function outputEvents(id: string) {
  const events = await outboxEvents(t, "restream", id);
  return events
    .filter((event) => event.subject === "restream.output.state_changed")
    .map((event) => JSON.parse(event.payload) as { state: string; reason: string; owner: string });
}

describe("outputs", () => {
  it("starts an output for the live session: starting, pushed by the session's worker generation", async () => {
    const { owner, stream, worker, destination, open } = await liveStream(t);
    const id = await destination({ url: "rtmps://live.example.com/app/", stream_key: "rtmps-key-0042" });
    const sessionId = await open();
    const watch = worker.watch();
    try {
      const started = await owner.call("POST", `/destinations/${id}/start`, {});
      expect(started.status).toBe(200);
      expect(started.body).toMatchObject({
        changed: true,
        destination: { id },
        output: {
          destination_id: id,
          session_id: sessionId,
          stream_id: stream.id,
          state: "starting",
          worker_id: worker.id,
          generation: worker.generation,
        },
      });
      const outputId = started.body.output.id as string;
      expect(outputId).toMatch(/^rso_/);
      // The command names the output; its order (URL with the key) is built as it is delivered.
      await until(() => watch.received.length === 1);
      expect(watch.received[0]).toMatchObject({
        kind: "start_output",
        sessionId,
        output: {
          outputId,
          url: "rtmps://live.example.com/app/rtmps-key-0042",
          format: "flv",
          secrets: ["rtmps-key-0042"],
        },
      });
      // Starting a running output answers it as it is.
      const again = await owner.call("POST", `/destinations/${id}/start`, {});
      expect(again.body.changed ?? false).toBe(false);
      expect(again.body.output).toMatchObject({ id: outputId, state: "starting" });
      expect(await outputEvents(outputId)).toEqual([expect.objectContaining({ state: "starting", owner: owner.sub })]);
    } finally {
      watch.stop();
    }
  });

  it("orders an srt output with its streamid and passphrase in the query, as mpegts", async () => {
    const { owner, worker, destination, open } = await liveStream(t);
    const id = await destination({
      url: "srt://srt.example.net:9000?latency=200",
      stream_key: "#!::r=live/abc,m=publish",
      passphrase: "srt pass phrase",
    });
    await open();
    const watch = worker.watch();
    try {
      expect((await owner.call("POST", `/destinations/${id}/start`, {})).status).toBe(200);
      await until(() => watch.received.length === 1);
      const order = watch.received[0]!.output!;
      expect(order.format).toBe("mpegts");
      const url = new URL(order.url);
      expect(url.host).toBe("srt.example.net:9000");
      expect(url.searchParams.get("latency")).toBe("200");
      expect(url.searchParams.get("streamid")).toBe("#!::r=live/abc,m=publish");
      expect(url.searchParams.get("passphrase")).toBe("srt pass phrase");
      expect(order.secrets).toEqual(["#!::r=live/abc,m=publish", "srt pass phrase"]);
    } finally {
      watch.stop();
    }
  });

  it("refuses start and stop without a live session (409 restream.no_live_session)", async () => {
    const { owner, destination, worker, open } = await liveStream(t);
    const id = await destination();
    for (const action of ["start", "stop"]) {
      const answer = await owner.call("POST", `/destinations/${id}/${action}`, {});
      expect(answer.body, action).toMatchObject({ status: 409, code: "restream.no_live_session" });
    }
    const sessionId = await open();
    await worker.ended(sessionId);
    const after = await owner.call("POST", `/destinations/${id}/start`, {});
    expect(after.body).toMatchObject({ status: 409, code: "restream.no_live_session" });
  });

  it("stops a running output (stopped_by_owner) and tells the worker; stopping again changes nothing", async () => {
    const { owner, worker, destination, open } = await liveStream(t);
    const id = await destination();
    const sessionId = await open();
    const watch = worker.watch();
    try {
      const outputId = (await owner.call("POST", `/destinations/${id}/start`, {})).body.output.id as string;
      // The worker has the start before the stop: a start_output taken after its output stopped is moot and skipped.
      await until(() => watch.received.length === 1);
      const stopped = await owner.call("POST", `/destinations/${id}/stop`, {});
      expect(stopped.status).toBe(200);
      expect(stopped.body).toMatchObject({
        changed: true,
        output: { id: outputId, state: "stopped", reason: "stopped_by_owner" },
      });
      expect(stopped.body.output.ended_at).toBeDefined();
      await until(() => watch.received.length === 2);
      expect(watch.received[1]).toMatchObject({ kind: "stop_output", outputId });
      const again = await owner.call("POST", `/destinations/${id}/stop`, {});
      expect(again.body.changed ?? false).toBe(false);
      expect(again.body.output).toMatchObject({ id: outputId, state: "stopped" });
      // A new start makes a new output.
      const restarted = await owner.call("POST", `/destinations/${id}/start`, {});
      expect(restarted.body.output.id).not.toBe(outputId);
      const listed = await owner.call("GET", `/sessions/${sessionId}/outputs`);
      expect(listed.body.outputs.map((o: { state: string }) => o.state)).toEqual(["stopped", "starting"]);
      expect((await outputEvents(outputId)).map((e) => [e.state, e.reason ?? ""])).toEqual([
        ["starting", ""],
        ["stopped", "stopped_by_owner"],
      ]);
    } finally {
      watch.stop();
    }
  });

  it("opens outputs on its own for enabled destinations when the stream's auto_start_outputs is on", async () => {
    const auto = await liveStream(t, { settings: { autoStartOutputs: true } });
    const first = await auto.destination({ stream_key: "first-key-1111" });
    await auto.destination({ enabled: false });
    const third = await auto.destination({ url: "srt://srt.example.net:9000", stream_key: "third-key-3333" });
    const grant = await auto.worker.authorize(auto.stream.key);
    expect(grant.outputs.map((o) => [o.url, o.format])).toEqual([
      ["rtmp://live.example.com/app/first-key-1111", "flv"],
      ["srt://srt.example.net:9000?streamid=third-key-3333", "mpegts"],
    ]);
    const outputs = (await auto.owner.call("GET", `/sessions/${grant.sessionId}/outputs`)).body.outputs;
    expect(outputs.map((o: { destination_id: string; state: string }) => [o.destination_id, o.state])).toEqual([
      [first, "starting"],
      [third, "starting"],
    ]);
    expect(grant.outputs.map((o) => o.outputId)).toEqual(outputs.map((o: { id: string }) => o.id));

    const manual = await liveStream(t);
    await manual.destination();
    const none = await manual.worker.authorize(manual.stream.key);
    expect(none.granted).toBe(true);
    expect(none.outputs).toEqual([]);
  });

  it("stops a session's running outputs when it ends (session_ended), and a deleted destination's at once", async () => {
    const { owner, worker, destination, open } = await liveStream(t);
    const kept = await destination();
    const deleted = await destination({ url: "rtmp://other.example.com/app" });
    const sessionId = await open();
    const keptOutput = (await owner.call("POST", `/destinations/${kept}/start`, {})).body.output.id as string;
    const deletedOutput = (await owner.call("POST", `/destinations/${deleted}/start`, {})).body.output.id as string;
    const watch = worker.watch();
    try {
      expect((await owner.call("DELETE", `/destinations/${deleted}`)).status).toBe(200);
      await until(() => watch.received.some((c) => c.kind === "stop_output"));
      expect(watch.received.find((c) => c.kind === "stop_output")).toMatchObject({ outputId: deletedOutput });
    } finally {
      watch.stop();
    }
    expect((await owner.call("POST", `/sessions/${sessionId}/end`, {})).status).toBe(200);
    const outputs = (await owner.call("GET", `/sessions/${sessionId}/outputs`)).body.outputs;
    expect(outputs.map((o: { id: string; state: string; reason: string }) => [o.id, o.state, o.reason])).toEqual([
      [keptOutput, "stopped", "session_ended"],
      [deletedOutput, "stopped", "destination_deleted"],
    ]);
    expect((await outputEvents(keptOutput)).map((e) => e.state)).toEqual(["starting", "stopped"]);
  });

  it("lists a session's outputs within reach only (another owner's session answers 404)", async () => {
    const { owner, destination, open } = await liveStream(t);
    const id = await destination();
    const sessionId = await open();
    await owner.call("POST", `/destinations/${id}/start`, {});
    const other = await streamer(t);
    expect((await other.call("GET", `/sessions/${sessionId}/outputs`)).body).toMatchObject({
      status: 404,
      code: "restream.session.not_found",
    });
    const every = await service(t);
    expect((await every("GET", `/sessions/${sessionId}/outputs`)).body.outputs).toHaveLength(1);
    expect((await owner.call("GET", `/sessions/rss_missing/outputs`)).status).toBe(404);
  });
});
