import { describe, expect, it } from "vitest";
import { HeardEvents } from "../../services/run/domain/stream.js";

/** Events as wakes hand them: only their SSE id (seq) matters here. */
const events = (...seqs: number[]) => seqs.map((seq) => ({ id: String(seq) }));
const ids = (run: { id: string }[] | undefined) => run?.map((event) => Number(event.id));

describe("the stream events an open stream was handed", () => {
  it("answer the run after what was sent, in seq order, whatever order and copies they came in", () => {
    const heard = new HeardEvents(100);
    heard.add(events(4, 3));
    heard.add(events(3, 5, 4));
    expect(ids(heard.after(2))).toEqual([3, 4, 5]);
    expect(ids(heard.after(5))).toEqual([]);
  });

  it("leave out what was already sent: a copy of it is no news", () => {
    const heard = new HeardEvents(100);
    heard.add(events(1, 2, 3));
    expect(ids(heard.after(3))).toEqual([]);
    heard.add(events(2, 4));
    expect(ids(heard.after(3))).toEqual([4]);
  });

  it("say a read is needed when an event is missing, before or between those handed", () => {
    const heard = new HeardEvents(100);
    heard.add(events(5));
    expect(heard.after(3)).toBeUndefined();
    heard.add(events(4, 6));
    expect(heard.after(3)).toBeUndefined();
    // What the read then sent is left behind: the next run follows it.
    heard.add(events(7));
    expect(ids(heard.after(6))).toEqual([7]);
  });

  it("hold at most their bound: past it the stream reads, and starts afresh", () => {
    const heard = new HeardEvents(3);
    heard.add(events(1, 2, 3, 4));
    expect(heard.after(0)).toBeUndefined();
    heard.add(events(5));
    expect(ids(heard.after(4))).toEqual([5]);
  });
});
