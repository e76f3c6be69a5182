import { describe, expect, it } from "vitest";
import { usePlatform } from "../support/platform.js";
import { streamer } from "./support/streams.js";
import { FakeWorker } from "./support/worker.js";

const t = usePlatform({ services: ["restream"] });

const ROUNDS = 12;
const PUBLISHES = 6;

describe("races on a stream's lock", () => {
  it("archive against parallel publishes: never an open session on an archived stream, never two open", async () => {
    const owner = await streamer(t);
    const worker = await FakeWorker.of(t);
    await worker.register();
    const outcomes = { archived: 0, refused: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      const { id, key } = await owner.stream({ title: `Race ${round}` });
      const publishes = [...Array(PUBLISHES).keys()].map(() => worker.authorize(key));
      // The archive goes out among the publishes: before, between or after them.
      const archive = owner.call("DELETE", `/streams/${id}`);
      const [grants, archived] = await Promise.all([Promise.all(publishes), archive]);
      const granted = grants.filter((grant) => grant.granted);
      expect(granted.length, `round ${round}`).toBeLessThanOrEqual(1);
      for (const grant of grants.filter((each) => !each.granted))
        expect(["session_open", "stream_archived"]).toContain(grant.reason);

      const stream = (await owner.call("GET", `/streams/${id}`)).body.stream;
      const open = (await owner.call("GET", `/sessions?stream_id=${id}&state=open`)).body.sessions ?? [];
      if (archived.status === 200) {
        outcomes.archived++;
        expect(stream.archived, `round ${round}`).toBe(true);
        expect(open, `round ${round}`).toEqual([]);
      } else {
        outcomes.refused++;
        expect(archived.body.code, `round ${round}`).toBe("restream.session_open");
        expect(stream.archived ?? false, `round ${round}`).toBe(false);
        expect(open.map((s: { id: string }) => s.id)).toEqual(granted.map((grant) => grant.sessionId));
      }
    }
    expect(outcomes.archived + outcomes.refused).toBe(ROUNDS);
  });

  it("an immediate rotation with end_sessions against a publish with the old key: no session of the old key stays open", async () => {
    const owner = await streamer(t);
    const worker = await FakeWorker.of(t);
    await worker.register();
    for (let round = 0; round < ROUNDS; round++) {
      const { id, key } = await owner.stream({ title: `Rotation ${round}` });
      const [grant, rotated] = await Promise.all([
        worker.authorize(key),
        owner.call("POST", `/streams/${id}/keys/rotate`, { end_sessions: true }),
      ]);
      expect(rotated.status).toBe(200);
      if (grant.granted) expect(rotated.body.ended_session_ids, `round ${round}`).toEqual([grant.sessionId]);
      else expect(grant.reason, `round ${round}`).toBe("key_revoked");
      const open = (await owner.call("GET", `/sessions?stream_id=${id}&state=open`)).body.sessions ?? [];
      expect(open, `round ${round}`).toEqual([]);
      expect((await worker.authorize(key)).reason).toBe("key_revoked");
    }
  });
});
