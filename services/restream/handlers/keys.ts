import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { RestreamService } from "../../../gen/pf/restream/v1/restream_pb.js";
import { KeyRotateResultSchema, StreamReadResultSchema } from "../../../gen/pf/restream/v1/streams_pb.js";
import { actingPerson } from "../../kit/auth/principal.js";
import { newId } from "../../kit/handler/ids.js";
import { newSecret, secretHash } from "../../kit/auth/secrets.js";
import type { RestreamContext } from "../context.js";
import { insertKey, keysOf, keyView, revokeKey } from "../db/keys.js";
import { openSessionOf } from "../db/sessions.js";
import { streamViews, streamWithin, writableStream } from "../db/streams.js";
import { ingestUrls } from "../db/workers.js";
import { keyHintOf, keyStatusAt, revokedAfterGrace } from "../domain/keys.js";
import { recordStreamEvent } from "../events.js";
import { reachOf } from "../owners.js";
import { closeSession } from "../sessions.js";

type KeyHandlers = Pick<ServiceImpl<typeof RestreamService>, "listKeys" | "rotateKey">;

/** A stream's ingest keys: their metadata, and rotation with a grace period. */
export function keyHandlers(ctx: RestreamContext): KeyHandlers {
  return {
    /** The stream's keys, newest first, each with its status now: hint and times, never a key. */
    async listKeys(request, call) {
      const em = ctx.orm.em.fork();
      const stream = await streamWithin(em, request.id, reachOf(call));
      const now = ctx.clock.now();
      return create(StreamReadResultSchema, { keys: (await keysOf(em, stream.id)).map((row) => keyView(row, now)) });
    },

    /**
     * A new key, answered this once. Every older key still working stops at now + grace_seconds (at once for 0; a
     * key already set to stop earlier keeps its moment). With end_sessions, the open session opened with an older
     * key ends (key_rotated) and its worker disconnects the encoder. Under the stream's lock, which the ingest
     * authorisation takes too: a publish racing the rotation sees the key before it or after it, never half.
     */
    async rotateKey(request, call) {
      const owner = actingPerson(call);
      const key = newSecret();
      return ctx.transaction(async (em) => {
        const stream = await writableStream(em, request.id, owner);
        const now = ctx.clock.now();
        const older = (await keysOf(em, stream.id)).filter((row) => keyStatusAt(row.revokedAt, now) !== "revoked");
        const stopsAt = revokedAfterGrace(now, request.graceSeconds);
        for (const row of older) await revokeKey(em, row, stopsAt);
        const fresh = await insertKey(em, {
          id: newId("rik"),
          streamId: stream.id,
          keyHash: secretHash(key),
          hint: keyHintOf(key),
          at: now,
        });
        const ended: string[] = [];
        const open = request.endSessions ? await openSessionOf(em, stream.id, true) : undefined;
        if (open) {
          await closeSession(ctx, em, open, { state: "ended", reason: "key_rotated", at: now, tellWorker: true });
          ended.push(open.id);
        }
        await recordStreamEvent(em, "keyRotated", {
          streamId: stream.id,
          owner: stream.owner,
          keyHint: fresh.hint,
          oldKeyRevokedAt: timestampFromDate(stopsAt),
          at: timestampFromDate(now),
        });
        const [view] = await streamViews(em, [stream], now, await ingestUrls(em, ctx.settings));
        return create(KeyRotateResultSchema, {
          stream: view,
          ingestKey: key,
          previousKey: older[0] ? keyView(older[0], now) : undefined,
          endedSessionIds: ended,
        });
      });
    },
  };
}
