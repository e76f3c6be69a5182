import { create, fromJson, type JsonObject } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DispatchRequestSchema, JobFrameSchema, NetPolicy } from "../../gen/pf/bot/v1/jobs_pb.js";
import { DeviceCapsSchema } from "../../gen/pf/bot/v1/link_pb.js";
import { afterReport, appendBounded } from "../../services/bot/domain/dispatch.js";
import { checkFrame, dispatchHash, enforcesNet, stricterTtl } from "../../services/bot/domain/frames.js";
import { formatPairingCode, normalizePairingCode } from "../../services/bot/domain/pairing.js";
import { allowed, roleOf, takeTurn } from "../../services/bot/domain/roles.js";
import { problemOf } from "../../services/kit/handler/problem.js";

describe("a dispatched job's states", () => {
  it("move dispatched → received → running → ended, and never change once ended", () => {
    expect(afterReport("dispatched", "ack")).toBe("received");
    expect(afterReport("received", "ack")).toBeUndefined();
    expect(afterReport("received", "started")).toBe("running");
    expect(afterReport("dispatched", "started")).toBe("running");
    expect(afterReport("running", "started")).toBeUndefined();
    expect(afterReport("running", "output")).toBe("running");
    expect(afterReport("dispatched", "exit")).toBe("ended");
    for (const report of ["ack", "started", "output", "exit"] as const)
      expect(afterReport("ended", report)).toBeUndefined();
  });

  it("keep the first bytes of output, cut at a character, whatever the chunks", () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: "grapheme" })), fc.integer({ min: 0, max: 64 }), (chunks, max) => {
        let seen = 0;
        const kept = chunks.reduce((captured, chunk) => {
          const next = appendBounded(captured, seen, chunk, max);
          seen += Buffer.byteLength(chunk);
          return next;
        }, "");
        expect(Buffer.byteLength(kept)).toBeLessThanOrEqual(max);
        expect(chunks.join("").startsWith(kept)).toBe(true);
      }),
    );
    expect(appendBounded("ab", 2, "cé", 4)).toBe("abc");
    // After a cut, a chunk that would fit is not kept: what is kept stays the stream's beginning.
    expect(appendBounded("abc", 4, "d", 4)).toBe("abc");
  });
});

describe("the job frame", () => {
  const frame = (extra: Parameters<typeof create<typeof JobFrameSchema>>[1] = {}) =>
    create(JobFrameSchema, { class: "function", artifact: "echo", ttlMs: 1000n, ...extra });
  const fault = (run: () => void) => {
    try {
      run();
    } catch (error) {
      return problemOf(error).extensions?.field;
    }
    return undefined;
  };

  it("needs an artifact for function and code, not for another class", () => {
    expect(fault(() => checkFrame(frame({ artifact: "" })))).toBe("job.artifact");
    expect(fault(() => checkFrame(frame({ class: "code", artifact: "" })))).toBe("job.artifact");
    expect(fault(() => checkFrame(frame({ class: "lidar", artifact: "" })))).toBeUndefined();
  });

  it("takes inputs with unique file names and media keys, never a URL or credential", () => {
    const input = (name: string, mediaKey = "AbCdEfGhIjKlMnOpQrStUvWx") => ({ name, mediaKey, sha256: "a".repeat(64) });
    expect(fault(() => checkFrame(frame({ inputs: [input("a"), input("b")] })))).toBeUndefined();
    expect(fault(() => checkFrame(frame({ inputs: [input("a"), input("a")] })))).toBe("job.inputs[1].name");
    expect(fault(() => checkFrame(frame({ inputs: [input(".")] })))).toBe("job.inputs[0].name");
    for (const key of ["https://x.example/a", "//x.example/a", "AbCdEfGhIjKlMnOpQrSt?sig=1", "a@b:c"])
      expect(
        fault(() => checkFrame(frame({ inputs: [input("a", key)] }))),
        key,
      ).toBe("job.inputs[0].media_key");
  });

  it("is the same dispatch whatever the order of its args' keys", () => {
    const request = (args: JsonObject) =>
      create(DispatchRequestSchema, { id: "job_1", projectId: "p", job: frame({ args: fromJson(ValueSchema, args) }) });
    expect(dispatchHash(request({ a: 1, b: 2 }))).toBe(dispatchHash(request({ b: 2, a: 1 })));
    expect(dispatchHash(request({ a: 1, b: 2 }))).not.toBe(dispatchHash(request({ a: 2, b: 1 })));
  });

  it("runs for the stricter ttl of the job and the device, and goes where its network policy can be enforced", () => {
    expect(stricterTtl(60_000, 0)).toBe(60_000);
    expect(stricterTtl(60_000, 30_000)).toBe(30_000);
    expect(stricterTtl(10_000, 30_000)).toBe(10_000);
    const caps = create(DeviceCapsSchema, { net: [NetPolicy.NONE] });
    expect(enforcesNet(NetPolicy.UNSPECIFIED, caps)).toBe(true);
    expect(enforcesNet(NetPolicy.PUBLIC, caps)).toBe(false);
    expect(enforcesNet(NetPolicy.NONE, undefined)).toBe(false);
  });
});

describe("pairing codes", () => {
  it("are 16 Crockford characters in four groups, read back however they are typed", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 10, maxLength: 10 }), (bytes) => {
        const code = formatPairingCode(bytes);
        expect(code).toMatch(/^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){3}$/);
        const typed = code.toLowerCase().replace(/-/g, " ").replace(/1/g, "l").replace(/0/g, "o");
        expect(normalizePairingCode(typed)).toBe(normalizePairingCode(code));
      }),
    );
  });
});

describe("roles on a robot", () => {
  it("are the owner's, or an operator entry's", () => {
    expect(roleOf({ owner: "usr_a" }, "usr_a", "viewer")).toBe("owner");
    expect(roleOf({ owner: "usr_a" }, "usr_b", "queue")).toBe("queue");
    expect(roleOf({ owner: "usr_a" }, "usr_b", undefined)).toBeUndefined();
    expect(allowed([], "anything")).toBe(true);
    expect(allowed(["drive"], "drive")).toBe(true);
    expect(allowed(["drive"], "jump")).toBe(false);
  });

  it("give a `queue` operator the turn when nobody else holds it now, for the turn's length from the command", () => {
    const now = new Date("2030-01-01T00:00:00Z");
    const free = { holder: "", until: null };
    expect(takeTurn(free, "usr_q", now, 60_000)).toEqual({ holder: "usr_q", until: new Date(now.getTime() + 60_000) });
    const held = { holder: "usr_r", until: new Date(now.getTime() + 1) };
    expect(takeTurn(held, "usr_q", now, 60_000)).toBeUndefined();
    expect(takeTurn(held, "usr_r", now, 60_000)?.holder).toBe("usr_r");
    expect(takeTurn({ holder: "usr_r", until: now }, "usr_q", now, 60_000)?.holder).toBe("usr_q");
  });
});
