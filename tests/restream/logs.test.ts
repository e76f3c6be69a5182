import { beforeAll, describe, expect, it } from "vitest";
import { qualified } from "../../services/kit/db/orm.js";
import { usePlatform } from "../support/platform.js";
import { liveStream, resolveAs, restreamContext } from "./support/destinations.js";
import { service, streamer } from "./support/streams.js";

const LOG_LINES = 5;
const t = usePlatform({ services: ["restream"], env: { PF_RESTREAM_LOG_LINES: String(LOG_LINES) } });
beforeAll(() => resolveAs(t));

const KEY = "log-key-secret-4242";
const PASSPHRASE = "log pass phrase";

/** A live session pushing one srt destination (key and passphrase set): its parts and its output. */
async function pushing() {
  const live = await liveStream(t);
  const destinationId = await live.destination({
    url: "srt://srt.example.net:9000",
    stream_key: KEY,
    passphrase: PASSPHRASE,
  });
  const sessionId = await live.open();
  const start = async () =>
    (await live.owner.call("POST", `/destinations/${destinationId}/start`, {})).body.output.id as string;
  return { ...live, destinationId, sessionId, outputId: await start(), start };
}

/** Every line stored in restream's log table, whoever it belongs to. */
async function storedLines(): Promise<string[]> {
  const em = restreamContext(t).orm.em;
  const rows = await em.getConnection().execute<{ text: string }[]>(`select text from ${qualified(em, "output_logs")}`);
  return rows.map((row) => row.text);
}

describe("output logs", () => {
  it("redacts every line again before it is stored: the output's key and passphrase, URL paths and queries", async () => {
    const { owner, worker, outputId } = await pushing();
    const lines = [
      `[srt] connecting with streamid ${KEY}`,
      `passphrase ${PASSPHRASE} refused`,
      `encoded ${encodeURIComponent(PASSPHRASE)} and ${encodeURIComponent(encodeURIComponent(KEY))}`,
      `Opening 'srt://srt.example.net:9000?streamid=${KEY}&passphrase=x' for writing`,
      `rtmp://user:pw@live.example.com/app/anything?token=abc failed`,
    ];
    expect((await worker.appendLogs(outputId, lines)).applied).toBe(true);
    const logs = (await owner.call("GET", `/outputs/${outputId}/logs`)).body.logs;
    expect(logs.map((line: { text: string }) => line.text)).toEqual([
      "[srt] connecting with streamid ***",
      "passphrase *** refused",
      "encoded *** and ***",
      "Opening 'srt://srt.example.net:9000/***' for writing",
      "rtmp://***@live.example.com/*** failed",
    ]);
    expect(logs[0]).toMatchObject({ output_id: outputId });
    expect(logs[0].at).toBeDefined();
    for (const text of await storedLines()) {
      expect(text).not.toContain(KEY);
      expect(text).not.toContain(PASSPHRASE);
      expect(text).not.toContain(encodeURIComponent(PASSPHRASE));
    }
  });

  it("cuts a line to 500 characters, after redacting it", async () => {
    const { owner, worker, outputId } = await pushing();
    await worker.appendLogs(outputId, [`${"x".repeat(495)}${KEY}${"y".repeat(100)}`]);
    const [line] = (await owner.call("GET", `/outputs/${outputId}/logs`)).body.logs;
    expect(line.text).toHaveLength(500);
    expect(line.text).toBe(`${"x".repeat(495)}***y…`);
  });

  it("keeps only the last PF_RESTREAM_LOG_LINES lines of each output, oldest first", async () => {
    const { owner, worker, outputId } = await pushing();
    await worker.appendLogs(outputId, ["line 1", "line 2", "line 3"]);
    await worker.appendLogs(outputId, ["line 4", "line 5", "line 6", "line 7", "line 8"]);
    const texts = async (query = "") =>
      (await owner.call("GET", `/outputs/${outputId}/logs${query}`)).body.logs.map((l: { text: string }) => l.text);
    expect(await texts()).toEqual(["line 4", "line 5", "line 6", "line 7", "line 8"]);
    expect(await texts("?limit=2")).toEqual(["line 7", "line 8"]);
    const stored = (await storedLines()).filter((text) => /^line \d$/.test(text));
    expect(stored).toEqual(["line 4", "line 5", "line 6", "line 7", "line 8"]);
    const bad = await owner.call("GET", `/outputs/${outputId}/logs?limit=0`);
    expect(bad.body).toMatchObject({ status: 400, code: "request.invalid", field: "limit" });
  });

  it("reads a destination's logs across its outputs, oldest first, bounded by limit", async () => {
    const { owner, worker, destinationId, outputId, start } = await pushing();
    await worker.appendLogs(outputId, ["first run 1", "first run 2"]);
    await owner.call("POST", `/destinations/${destinationId}/stop`, {});
    // Lines still arrive after the stop (FFmpeg's last words): kept.
    await worker.appendLogs(outputId, ["first run 3"]);
    const second = await start();
    await worker.appendLogs(second, ["second run 1"]);
    const logs = (await owner.call("GET", `/destinations/${destinationId}/logs`)).body.logs;
    expect(logs.map((l: { output_id: string; text: string }) => [l.output_id, l.text])).toEqual([
      [outputId, "first run 1"],
      [outputId, "first run 2"],
      [outputId, "first run 3"],
      [second, "second run 1"],
    ]);
    const last = (await owner.call("GET", `/destinations/${destinationId}/logs?limit=2`)).body.logs;
    expect(last.map((l: { text: string }) => l.text)).toEqual(["first run 3", "second run 1"]);
    expect((await worker.appendLogs(second, [])).applied).toBe(false);
  });

  it("answers another owner's output logs 404, and reads them for a service", async () => {
    const { owner, worker, outputId } = await pushing();
    await worker.appendLogs(outputId, ["a line"]);
    const other = await streamer(t);
    expect((await other.call("GET", `/outputs/${outputId}/logs`)).body).toMatchObject({
      status: 404,
      code: "restream.output.not_found",
    });
    expect((await owner.call("GET", `/outputs/rso_missing/logs`)).status).toBe(404);
    const every = await service(t);
    expect((await every("GET", `/outputs/${outputId}/logs`)).body.logs).toHaveLength(1);
    const forOther = await service(t, other.sub);
    expect((await forOther("GET", `/outputs/${outputId}/logs`)).status).toBe(404);
  });
});
