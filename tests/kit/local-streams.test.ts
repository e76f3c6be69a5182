import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createClient,
  createRouterTransport,
  type HandlerContext,
  type Interceptor,
  type Transport,
} from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { BotLinkService, type ControlFrame } from "../../gen/pf/bot/v1/link_service_pb.js";
import { LinkFrameSchema, type LinkFrame } from "../../gen/pf/bot/v1/link_pb.js";
import { MediaService, type FileReadRequest, type FileUpload } from "../../gen/pf/media/v1/media_pb.js";
import { problem, problemOf } from "../../services/kit/handler/problem.js";
import type { Implementation } from "../../services/kit/rpc/implementation.js";
import { CallGuard } from "../../services/kit/rpc/guard.js";
import { LocalServices } from "../../services/kit/rpc/local-transport.js";
import { streamsEndOnCancel } from "../../services/kit/rpc/streams.js";
import { callScope } from "../../services/kit/runtime/call.js";
import { createLogger } from "../../services/kit/runtime/logger.js";
import { testEnforcement } from "../gateway/support.js";
import { until } from "../support/until.js";

/**
 * The in-process transport's streaming calls (services/kit/rpc/local-stream.ts): the three stream kinds through the
 * caller's interceptors, then the service's (the call scope, the guard, admission), to the handler; run alike over
 * Connect's router transport (the network path, encoded), so each expectation holds for both.
 */
const frame = (init: MessageInitShape<typeof LinkFrameSchema>["frame"]) => create(LinkFrameSchema, { frame: init });
const ack = (jobId: string) => frame({ case: "ack", value: { jobId } });

/** What the handlers and interceptors saw, per call (by the x-call header). */
interface Seen {
  order: string[];
  received: LinkFrame[];
  aborted: boolean;
  requestError?: ConnectError;
  finished: boolean;
}
const seen = new Map<string, Seen>();
const seenBy = (context: HandlerContext) => seen.get(context.requestHeader.get("x-call") ?? "")!;

const linkService: Implementation = {
  service: BotLinkService,
  impl: streamsEndOnCancel(BotLinkService, {
    async *link(requests: AsyncIterable<LinkFrame>, context: HandlerContext) {
      const mine = seenBy(context);
      mine.order.push("handler");
      context.signal.addEventListener("abort", () => (mine.aborted = true));
      try {
        context.responseHeader.set("x-answer", context.requestHeader.get("x-ask") ?? "");
        yield frame({ case: "welcome", value: { deviceId: "dev_1", robotId: "rbt_1" } });
        for await (const request of requests) {
          mine.received.push(request);
          const asked = request.frame.case === "ack" ? request.frame.value.jobId : "";
          if (asked === "fail") throw problem(409, "bot.test_conflict", "The job was taken meanwhile.");
          if (asked === "crash") throw new Error("a bug with internals");
          if (asked === "end") {
            context.responseTrailer.set("x-trailer", "ended");
            return;
          }
          yield frame({ case: "command", value: { id: "cmd_1", name: "ack", argsJson: asked } });
        }
      } catch (error) {
        mine.requestError = ConnectError.from(error);
        throw error;
      } finally {
        mine.finished = true;
      }
    },
    // eslint-disable-next-line require-yield
    async *control(_requests: AsyncIterable<ControlFrame>, context: HandlerContext) {
      seenBy(context).order.push("handler");
    },
  }),
};

const mediaService: Implementation = {
  service: MediaService,
  impl: streamsEndOnCancel(MediaService, {
    async uploadFile(requests: AsyncIterable<FileUpload>, context: HandlerContext) {
      seenBy(context).order.push("handler");
      let name = "";
      for await (const request of requests) name += request.name;
      context.responseHeader.set("x-answer", "header");
      context.responseTrailer.set("x-trailer", "trailer");
      return { key: "k", app: "app_x", name };
    },
    async *readFile(request: FileReadRequest, context: HandlerContext) {
      seenBy(context).order.push("handler");
      context.responseHeader.set("x-answer", request.key);
      for (const part of ["a", "b", "c"]) yield { file: { key: request.key, name: part } };
      context.responseTrailer.set("x-trailer", "trailer");
    },
  }),
};

const enforcement = await testEnforcement();
const recorded =
  (where: string): Interceptor =>
  (next) =>
  (req) => {
    seen.get(req.header.get("x-call") ?? "")?.order.push(where);
    return next(req);
  };
const guard = new CallGuard(createLogger("silent")).interceptor();
/** The platform's outer interceptors, and admission for bot's link (anonymous with a credential) and control. */
const mediaInterceptors = [callScope(10_000), guard, recorded("service")];
const linkInterceptors = [callScope(10_000), guard, enforcement.admission.interceptor(), recorded("service")];
const served = [
  { implementation: linkService, interceptors: linkInterceptors },
  { implementation: mediaService, interceptors: mediaInterceptors },
];
const clientInterceptors = [recorded("caller")];

function local(): Transport {
  const services = new LocalServices();
  for (const { implementation, interceptors } of served) services.add(implementation, interceptors);
  return services.transport(clientInterceptors);
}

function overRouter(): Transport {
  return createRouterTransport(
    (router) => {
      for (const { implementation, interceptors } of served)
        router.service(implementation.service, implementation.impl, { interceptors });
    },
    { transport: { interceptors: clientInterceptors } },
  );
}

let calls = 0;
/** A new call's id and what it will see. */
function newCall(): { id: string; seen: Seen } {
  const id = `call_${++calls}`;
  const mine: Seen = { order: [], received: [], aborted: false, finished: false };
  seen.set(id, mine);
  return { id, seen: mine };
}

/** A request stream the test writes as it goes. */
function requestStream<T>() {
  const queue: T[] = [];
  let wake: (() => void) | undefined;
  let ended = false;
  return {
    push(item: T) {
      queue.push(item);
      wake?.();
    },
    end() {
      ended = true;
      wake?.();
    },
    async *[Symbol.asyncIterator]() {
      for (;;) {
        const item = queue.shift();
        if (item !== undefined) yield item;
        else if (ended) return;
        else await new Promise<void>((resolve) => (wake = resolve));
      }
    },
  };
}

describe.each([
  ["in memory (LocalServices)", local],
  ["over Connect's router (encoded)", overRouter],
])("a streaming call %s", (_name, transportOf) => {
  const transport = transportOf();
  const link = createClient(BotLinkService, transport);
  const media = createClient(MediaService, transport);

  it("carries a bidi stream both ways in order, with the caller's headers, the answer's with it and its trailers at the end", async () => {
    const { id, seen: mine } = newCall();
    const requests = requestStream<LinkFrame>();
    let header: Headers | undefined;
    let trailer: Headers | undefined;
    const answers = link.link(requests, {
      headers: { "x-call": id, "x-ask": "asked" },
      onHeader: (h) => (header = h),
      onTrailer: (t) => (trailer = t),
    });
    const reader = answers[Symbol.asyncIterator]();
    expect((await reader.next()).value).toMatchObject({ frame: { case: "welcome" } });
    expect(header?.get("x-answer")).toBe("asked");
    requests.push(ack("one"));
    expect((await reader.next()).value).toMatchObject({ frame: { case: "command", value: { argsJson: "one" } } });
    requests.push(ack("two"));
    requests.push(ack("end"));
    expect((await reader.next()).value).toMatchObject({ frame: { case: "command", value: { argsJson: "two" } } });
    expect((await reader.next()).done).toBe(true);
    expect(trailer?.get("x-trailer")).toBe("ended");
    expect(mine.received.map((r) => (r.frame.case === "ack" ? r.frame.value.jobId : ""))).toEqual([
      "one",
      "two",
      "end",
    ]);
    // The caller's interceptors, then the service's, then the handler: once.
    expect(mine.order).toEqual(["caller", "service", "handler"]);
    await until(() => mine.aborted && mine.finished);
  });

  it("serves a server stream: its one request, its messages, its headers and trailers", async () => {
    const { id, seen: mine } = newCall();
    let header: Headers | undefined;
    let trailer: Headers | undefined;
    const names: string[] = [];
    for await (const result of media.readFile(
      { app: "app_x", key: "k1" },
      { headers: { "x-call": id }, onHeader: (h) => (header = h), onTrailer: (t) => (trailer = t) },
    ))
      names.push(result.file!.name);
    expect(names).toEqual(["a", "b", "c"]);
    expect(header?.get("x-answer")).toBe("k1");
    expect(trailer?.get("x-trailer")).toBe("trailer");
    expect(mine.order).toEqual(["caller", "service", "handler"]);
  });

  it("serves a client stream: every request read, one answer, its headers and trailers", async () => {
    const { id, seen: mine } = newCall();
    let header: Headers | undefined;
    let trailer: Headers | undefined;
    async function* parts() {
      for (const name of ["x", "y", "z"]) yield { name };
    }
    const file = await media.uploadFile(parts(), {
      headers: { "x-call": id },
      onHeader: (h) => (header = h),
      onTrailer: (t) => (trailer = t),
    });
    expect(file).toMatchObject({ key: "k", name: "xyz" });
    expect(header?.get("x-answer")).toBe("header");
    expect(trailer?.get("x-trailer")).toBe("trailer");
    expect(mine.order).toEqual(["caller", "service", "handler"]);
  });

  it("answers a problem as the handler raised it, after messages already sent, and a bug as a bare 500", async () => {
    for (const [asked, status, code] of [
      ["fail", 409, "bot.test_conflict"],
      ["crash", 500, "internal"],
    ] as const) {
      const { id, seen: mine } = newCall();
      const requests = requestStream<LinkFrame>();
      const reader = link.link(requests, { headers: { "x-call": id } })[Symbol.asyncIterator]();
      await reader.next();
      requests.push(ack(asked));
      const failure = await reader.next().then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(ConnectError);
      expect(problemOf(failure)).toMatchObject({ status, code });
      // Nothing of the bug's own message reaches the caller.
      expect((failure as ConnectError).message).not.toContain("internals");
      await until(() => mine.finished);
    }
  });

  it("refuses in the service's interceptors before the handler runs (admission: no token for the control channel)", async () => {
    const { id, seen: mine } = newCall();
    const answers = link.control(requestStream<ControlFrame>(), { headers: { "x-call": id } });
    const failure = await answers[Symbol.asyncIterator]()
      .next()
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(problemOf(failure)).toMatchObject({ status: 401 });
    expect(mine.order).toEqual(["caller"]);
  });

  it("cancels the call when the caller aborts: the caller's read fails Canceled and the handler's signal aborts", async () => {
    const { id, seen: mine } = newCall();
    const cancel = new AbortController();
    const answers = link.link(requestStream<LinkFrame>(), { headers: { "x-call": id }, signal: cancel.signal });
    const reader = answers[Symbol.asyncIterator]();
    await reader.next();
    // The handler now waits for a request, the caller for an answer.
    const pending = reader.next().then(
      () => undefined,
      (error: unknown) => error,
    );
    cancel.abort();
    expect(await pending).toMatchObject({ code: Code.Canceled });
    await until(() => mine.aborted);
  });

  it("ends the call at its deadline: the caller's read fails DeadlineExceeded and the handler's signal aborts", async () => {
    const { id, seen: mine } = newCall();
    const answers = link.link(requestStream<LinkFrame>(), { headers: { "x-call": id }, timeoutMs: 300 });
    const reader = answers[Symbol.asyncIterator]();
    await reader.next();
    const failure = await reader.next().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toMatchObject({ code: Code.DeadlineExceeded });
    await until(() => mine.aborted);
  });
});

describe("a streaming call in memory", () => {
  const transport = local();

  it("hands the handler the caller's own messages, never an encoded copy", async () => {
    const { id, seen: mine } = newCall();
    const sent = ack("end");
    async function* requests() {
      yield sent;
    }
    const answers = createClient(BotLinkService, transport).link(requests(), { headers: { "x-call": id } });
    for await (const _ of answers);
    expect(mine.received[0]).toBe(sent);
  });

  it("fails the handler's waiting request read when the caller aborts, so the handler ends (the router leaves it parked)", async () => {
    const { id, seen: mine } = newCall();
    const cancel = new AbortController();
    const client = createClient(BotLinkService, transport);
    const answers = client.link(requestStream<LinkFrame>(), { headers: { "x-call": id }, signal: cancel.signal });
    const reader = answers[Symbol.asyncIterator]();
    await reader.next();
    // Asked for its next message, the handler waits for the caller's next request.
    const pending = reader.next().catch(() => undefined);
    cancel.abort();
    await pending;
    await until(() => mine.finished);
    expect(mine.requestError).toMatchObject({ code: Code.Canceled });
  });

  it("ends the handler's stream when the caller stops reading, without aborting its own signal", async () => {
    const { id, seen: mine } = newCall();
    const answer = await transport.stream(
      BotLinkService.method.link,
      undefined,
      undefined,
      { "x-call": id },
      requestStream<LinkFrame>(),
    );
    const reader = answer.message[Symbol.asyncIterator]();
    await reader.next();
    await reader.return!();
    await until(() => mine.aborted && mine.finished);
  });
});
