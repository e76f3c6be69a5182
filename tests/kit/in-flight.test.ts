import { create, getOption, setExtension, type DescService, type MessageInitShape } from "@bufbuild/protobuf";
import { MethodOptionsSchema, ServiceOptionsSchema } from "@bufbuild/protobuf/wkt";
import { ConnectError, createContextValues, type StreamRequest, type UnaryRequest } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { in_flight, in_flight_limits, InFlightLimitSchema, service_key } from "../../gen/pf/v1/options_pb.js";
import { ProblemSchema } from "../../gen/pf/v1/problem_pb.js";
import { InFlightLimits, Turns } from "../../services/kit/rpc/in-flight.js";
import { modules } from "../../platform/registry.js";
import { probeService } from "../support/probe-service.js";

type Limit = MessageInitShape<typeof InFlightLimitSchema>;

const FEEDS: Limit = { name: "feeds", calls: 2, setting: "PF_PROBE_FEEDS_IN_FLIGHT", waiting: 1 };

/** A real service descriptor (`probe`): `Read` and `Stream` name the limit `named`, `Other` names none. */
function probeWith(limits: Limit[] = [FEEDS], named = "feeds"): DescService {
  const bound = create(MethodOptionsSchema);
  setExtension(bound, in_flight, named);
  const serviceOptions = create(ServiceOptionsSchema);
  setExtension(serviceOptions, service_key, "probe");
  setExtension(
    serviceOptions,
    in_flight_limits,
    limits.map((limit) => create(InFlightLimitSchema, limit)),
  );
  return probeService(
    [{ name: "Read", options: bound }, { name: "Stream", options: bound, serverStreaming: true }, { name: "Other" }],
    serviceOptions,
  );
}

/** A handler whose calls each wait until the test answers them: what runs is observable, nothing is timed. */
function heldHandler() {
  const running: { method: string; answer: () => void; fail: (error: Error) => void }[] = [];
  const handler = (req: UnaryRequest | StreamRequest) =>
    new Promise((resolve, reject) => {
      running.push({
        method: req.method.name,
        answer: () =>
          resolve(
            req.method.methodKind === "server_streaming"
              ? { stream: true, message: (async function* () {})() }
              : { stream: false, message: {} },
          ),
        fail: reject,
      });
    });
  return { running, handler };
}

function serve(env: Record<string, string> = {}) {
  const service = probeWith();
  const held = heldHandler();
  const chain = new InFlightLimits([service], env).interceptor()(held.handler as never);
  const call = (name: string) =>
    chain({
      method: service.methods.find((each) => each.name === name)!,
      header: new Headers(),
      contextValues: createContextValues(),
    } as unknown as UnaryRequest);
  return { ...held, call };
}

/** Lets every settled promise's continuations run: the interceptor's bookkeeping is all promise reactions. */
const settled = () => new Promise<void>((resolve) => setImmediate(resolve));

const problemOf = (error: unknown) => ConnectError.from(error).findDetails(ProblemSchema)[0];

describe("Turns", () => {
  it("runs `calls` at once, queues `waiting` first come first served, refuses past them, and frees a turn once", async () => {
    const turns = new Turns(1, 2);
    const first = await turns.take()!;
    const order: string[] = [];
    const second = turns.take()!.then((release) => (order.push("second"), release));
    const third = turns.take()!.then((release) => (order.push("third"), release));
    expect(turns.take()).toBeUndefined();
    expect(turns.waitingNow).toBe(2);
    first();
    first();
    const releaseSecond = await second;
    expect(order).toEqual(["second"]);
    expect(turns.waitingNow).toBe(1);
    releaseSecond();
    (await third)();
    expect(order).toEqual(["second", "third"]);
    // Everything released: two more run at once again (and one waits).
    const again = await turns.take()!;
    expect(turns.take()).toBeDefined();
    again();
  });
});

describe("declared in-flight limits", () => {
  it("let `calls` calls run at once; the next waits its turn and runs when one answers", async () => {
    const probe = serve();
    const answers = [probe.call("Read"), probe.call("Read"), probe.call("Read")];
    await settled();
    expect(probe.running).toHaveLength(2);
    probe.running[0].answer();
    await answers[0];
    await settled();
    expect(probe.running).toHaveLength(3);
    probe.running[1].answer();
    probe.running[2].answer();
    await Promise.all(answers);
  });

  it("refuse a call past the waiting ones 429 service.busy with retry_after_seconds, before its handler runs", async () => {
    const probe = serve();
    const admitted = [probe.call("Read"), probe.call("Read"), probe.call("Read")];
    const refused = await probe.call("Read").then(() => undefined, problemOf);
    expect(refused).toMatchObject({ status: 429, code: "service.busy" });
    expect(refused?.extensions).toMatchObject({ rule: "probe.feeds", retry_after_seconds: 1 });
    await settled();
    expect(probe.running).toHaveLength(2);
    // A route naming no limit is never held.
    const other = probe.call("Other");
    await settled();
    expect(probe.running.map((each) => each.method)).toEqual(["Read", "Read", "Other"]);
    for (const each of probe.running) each.answer();
    await settled();
    probe.running[3].answer();
    await Promise.all([...admitted, other]);
  });

  it("free the turn of a call that failed, and of a stream only when it ends", async () => {
    const probe = serve({ PF_PROBE_FEEDS_IN_FLIGHT: "1" });
    const failing = probe.call("Read").catch(problemOf);
    const streaming = probe.call("Stream");
    await settled();
    expect(probe.running).toHaveLength(1);
    probe.running[0].fail(new Error("the handler failed"));
    await failing;
    await settled();
    expect(probe.running.map((each) => each.method)).toEqual(["Read", "Stream"]);
    probe.running[1].answer();
    const stream = (await streaming) as { message: AsyncIterable<unknown> };
    const waiting = probe.call("Read");
    await settled();
    // The stream answered but is not read to its end: it still holds the one turn.
    expect(probe.running).toHaveLength(2);
    for await (const _ of stream.message) void _;
    await settled();
    expect(probe.running).toHaveLength(3);
    probe.running[2].answer();
    await waiting;
  });

  it("refuse to start on a route naming a limit its service does not declare, or a limit without calls or setting", () => {
    expect(() => new InFlightLimits([probeWith([FEEDS], "reads")], {})).toThrow(/does not declare/);
    expect(() => new InFlightLimits([probeWith([{ name: "feeds", calls: 2 }])], {})).toThrow(/setting/);
  });

  it("are declared on the costly public reads: feeds and paste reads, and every name resolves", () => {
    const services = modules.flatMap((module) => module.protos);
    expect(() => new InFlightLimits(services, {})).not.toThrow();
    const bound = services.flatMap((service) =>
      service.methods
        .filter((method) => getOption(method, in_flight) !== "")
        .map((method) => `${service.typeName}.${method.name}`),
    );
    expect(bound.sort()).toEqual([
      "pf.blog.v1.BlogService.GetFeed",
      "pf.blog.v1.BlogService.GetPublicFeed",
      "pf.community.v1.PasteService.GetPaste",
      "pf.community.v1.PasteService.GetRawPaste",
      "pf.community.v1.PasteService.ListPastes",
      "pf.search.v1.SearchService.GetDocument",
      "pf.search.v1.SearchService.Search",
      "pf.search.v1.SearchService.Suggest",
      "pf.space.v1.SpaceService.ReadForumFeed",
      "pf.space.v1.SpaceService.ReadSpaceFeed",
    ]);
  });
});
