import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { InteractionSchema } from "../../gen/pf/tips/v1/interactions_pb.js";
import { qualified } from "../../services/kit/db/orm.js";
import { interactionChanged, subjects } from "../../services/tips/events.js";
import { usePlatform } from "../support/platform.js";
import { openEventStream, type EventStreamReader } from "../support/sse.js";
import { until } from "../support/until.js";
import { creatorId, mintOverlayToken, recordExternalTip, streamUrl } from "./overlay-support.js";

/** Last-Event-ID resume: the replay reads the overlays' alert view, kept by a durable consumer. */
const t = usePlatform({ services: ["tips"] });

async function opened(secret: string, headers: Record<string, string> = {}): Promise<EventStreamReader> {
  const answer = await openEventStream(streamUrl(t, secret), headers);
  expect(answer.status, JSON.stringify(answer.problem)).toBe(200);
  return answer.stream!;
}

/** Waits until the alert view holds `count` alerts of the creator. */
async function projected(creator: string, count: number): Promise<void> {
  const em = t.platform.contexts.get("tips")!.orm.em;
  await until(async () => {
    const [row] = await em
      .getConnection()
      .execute<{ n: string }[]>(`select count(*) as n from ${qualified(em, "overlay_alerts")} where creator = ?`, [
        creator,
      ]);
    return Number(row.n) >= count;
  });
}

describe("a reconnecting overlay (Last-Event-ID)", () => {
  it("gets the opening snapshot, then the alerts shown after that event (oldest first, with their ids), never hidden ones", async () => {
    const creator = creatorId();
    const { secret } = await mintOverlayToken(t, creator, ["OVERLAY_SCOPE_ALERTS"]);
    const live = await opened(secret);
    expect((await live.next())?.event).toBe("opened");
    const seen = await recordExternalTip(t, creator, { message: "seen live" });
    const first = await live.next();
    expect(first).toMatchObject({ event: "alert", data: { alert: { interaction_id: seen.id } } });
    await live.close();

    // While the overlay is away: two alerts, and a third that is hidden before it comes back.
    const missed1 = await recordExternalTip(t, creator, { message: "missed 1" });
    const missed2 = await recordExternalTip(t, creator, { message: "missed 2" });
    const hidden = await recordExternalTip(t, creator, { message: "hidden" });
    const tips = t.platform.contexts.get("tips")!;
    await tips.transaction((em) =>
      interactionChanged(
        em,
        subjects.interactionHidden,
        create(InteractionSchema, { id: hidden.id, creator, hidden: true }),
        tips.clock.now(),
      ),
    );
    await projected(creator, 4);
    const em = t.platform.contexts.get("tips")!.orm.em;
    await until(async () => {
      const [row] = await em
        .getConnection()
        .execute<{ hidden: boolean }[]>(
          `select hidden from ${qualified(em, "overlay_alerts")} where interaction_id = ?`,
          [hidden.id],
        );
      return row?.hidden === true;
    });

    const resumed = await opened(secret, { "last-event-id": first!.id! });
    expect((await resumed.next())?.event).toBe("opened");
    const replay1 = await resumed.next();
    const replay2 = await resumed.next();
    expect([replay1?.data.alert.interaction_id, replay2?.data.alert.interaction_id]).toEqual([missed1.id, missed2.id]);
    expect(replay1?.id! > first!.id!).toBe(true);
    expect(replay2?.id! > replay1?.id!).toBe(true);
    // Nothing else was replayed (the hidden one neither): the next event is the next live alert.
    const live2 = await recordExternalTip(t, creator, { message: "live after the replay" });
    const newest = await resumed.next();
    expect(newest).toMatchObject({ event: "alert", data: { alert: { interaction_id: live2.id } } });
    await resumed.close();

    // Resuming from the newest event replays nothing; an id that is not ours resumes nothing: the next event after
    // the opening is the next live alert.
    for (const lastEventId of [newest!.id!, "not-an-event-id"]) {
      const again = await opened(secret, { "last-event-id": lastEventId });
      expect((await again.next())?.event).toBe("opened");
      const next = await recordExternalTip(t, creator, { message: "live after resuming" });
      expect(await again.next()).toMatchObject({ event: "alert", data: { alert: { interaction_id: next.id } } });
      await again.close();
    }
  });

  it("of a goals-only token replays no alerts", async () => {
    const creator = creatorId();
    const { secret } = await mintOverlayToken(t, creator, ["OVERLAY_SCOPE_GOALS"]);
    await recordExternalTip(t, creator);
    await projected(creator, 1);
    const stream = await opened(secret, { "last-event-id": "evt_00000000000000000000000000" });
    expect((await stream.next())?.event).toBe("opened");
    await expect(stream.next(300)).rejects.toThrow("no event");
    await stream.close();
  });
});
