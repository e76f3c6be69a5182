import type { RestreamContext } from "../../../services/restream/context.js";
import type { TestPlatform } from "../../support/platform.js";
import { streamer } from "./streams.js";
import { FakeWorker } from "./worker.js";

/** A public address the stub resolver answers for public names (never connected to: workers here are fakes). */
export const PUBLIC_ADDRESS = "93.184.216.34";

/** restream's context in this platform (its outbound rules, its sealer). */
export function restreamContext(t: TestPlatform): RestreamContext {
  return t.platform.contexts.get("restream") as RestreamContext;
}

/**
 * Makes restream's resolver answer from `names` (a name → its address; a function for answers that change between
 * calls, as DNS rebinding does); any other name answers PUBLIC_ADDRESS. Nothing reaches real DNS.
 */
export function resolveAs(t: TestPlatform, names: Record<string, string | (() => string)> = {}): void {
  restreamContext(t).outbound.resolve = async (host) => {
    const answer = names[host] ?? PUBLIC_ADDRESS;
    const address = typeof answer === "function" ? answer() : answer;
    return [{ address, family: address.includes(":") ? 6 : 4 }];
  };
}

/**
 * A streamer's stream with a session open on a fresh worker (live unless `live` is false), and a destination
 * helper: `destination(body)` creates one on the stream and answers its id.
 */
export async function liveStream(
  t: TestPlatform,
  options: { settings?: Record<string, unknown>; live?: boolean } = {},
) {
  const owner = await streamer(t);
  const stream = await owner.stream({ settings: { autoStartOutputs: false, ...options.settings } });
  const worker = await FakeWorker.of(t);
  await worker.register();
  return {
    owner,
    stream,
    worker,
    async destination(body: Record<string, unknown> = {}): Promise<string> {
      const created = await owner.call("POST", `/streams/${stream.id}/destinations`, {
        name: "Tube",
        url: "rtmp://live.example.com/app",
        stream_key: "tube-key-0123456789",
        ...body,
      });
      if (created.status !== 201)
        throw new Error(`create destination: ${created.status} ${JSON.stringify(created.body)}`);
      return created.body.destination.id as string;
    },
    /** Opens the session (the encoder publishes) and, unless `live` is false, reports it live. */
    async open(): Promise<string> {
      const grant = await worker.authorize(stream.key);
      if (!grant.granted) throw new Error(`publish refused: ${grant.reason}`);
      if (options.live !== false) await worker.live(grant.sessionId);
      return grant.sessionId;
    },
  };
}
