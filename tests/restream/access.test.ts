import { getOption, hasOption } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { http as httpOption } from "../../gen/google/api/annotations_pb.js";
import { RestreamService } from "../../gen/pf/restream/v1/restream_pb.js";
import { RestreamWorkerService } from "../../gen/pf/restream/v1/worker_pb.js";
import { Actor, designed, Visibility } from "../../gen/pf/v1/options_pb.js";
import { ProblemSchema } from "../../gen/pf/v1/problem_pb.js";
import type { TokenClaims } from "../../services/kit/auth/tokens.js";
import {
  bindingOf,
  describeMalformedInput,
  describeRefusals,
  itWithSpec,
  routesOf,
  type RouteCall,
} from "../support/access.js";
import { usePlatform } from "../support/platform.js";
import { WORKER_CAPABILITY } from "./support/worker.js";

const NONE = "0".repeat(26);
const STREAM = `/restream/api/v1/streams/rst_${NONE}`;
const DESTINATION = `/restream/api/v1/destinations/rsd_${NONE}`;
const SESSION = `/restream/api/v1/sessions/rss_${NONE}`;

/**
 * One valid call per route; the refusals vary only the caller. Each names a stream, destination, session or output
 * nobody made (its 404), but for the create and the lists, which answer the caller's own.
 */
const calls: Record<string, RouteCall> = {
  createStream: { method: "POST", path: "/restream/api/v1/streams", body: { title: "Matrix" } },
  listStreams: { method: "GET", path: "/restream/api/v1/streams" },
  getStream: { method: "GET", path: STREAM },
  updateStream: { method: "PATCH", path: STREAM, body: { title: "Matrix" } },
  archiveStream: { method: "DELETE", path: STREAM },
  listKeys: { method: "GET", path: `${STREAM}/keys` },
  rotateKey: { method: "POST", path: `${STREAM}/keys/rotate`, body: { grace_seconds: 60 } },
  listDestinations: { method: "GET", path: `${STREAM}/destinations` },
  createDestination: {
    method: "POST",
    path: `${STREAM}/destinations`,
    body: { name: "Matrix", url: "rtmp://live.example.com/app", stream_key: "matrix-key" },
  },
  updateDestination: { method: "PATCH", path: DESTINATION, body: { name: "Matrix" } },
  deleteDestination: { method: "DELETE", path: DESTINATION },
  startOutput: { method: "POST", path: `${DESTINATION}/start`, body: {} },
  stopOutput: { method: "POST", path: `${DESTINATION}/stop`, body: {} },
  testDestination: { method: "POST", path: `${DESTINATION}/test`, body: {} },
  listDestinationLogs: { method: "GET", path: `${DESTINATION}/logs` },
  listOutputLogs: { method: "GET", path: `/restream/api/v1/outputs/rso_${NONE}/logs` },
  listSessions: { method: "GET", path: "/restream/api/v1/sessions" },
  getSession: { method: "GET", path: SESSION },
  endSession: { method: "POST", path: `${SESSION}/end`, body: {} },
  listSessionOutputs: { method: "GET", path: `${SESSION}/outputs` },
  getPlayback: { method: "GET", path: `${SESSION}/playback` },
  listWorkers: { method: "GET", path: "/restream/api/v1/workers" },
};

/** The writes that act for the stream's owner (ACTOR_PERSON); every other route names no actor. */
const PERSON_ROUTES = [
  "createStream",
  "updateStream",
  "archiveStream",
  "rotateKey",
  "createDestination",
  "updateDestination",
  "deleteDestination",
  "startOutput",
  "stopOutput",
  "testDestination",
];

const routes = routesOf(RestreamService);
const t = usePlatform({ services: ["restream"] });

describe("restream access", () => {
  it("lists one call per route (22)", () => {
    expect(routes).toHaveLength(22);
    expect(Object.keys(calls).sort()).toEqual(routes.map((route) => route.name).sort());
  });

  itWithSpec("matches routes.tsv (every route: method, path, capability, visibility)", "restream", (documented) => {
    expect(documented).toHaveLength(22);
    const bound = routes.map(bindingOf);
    for (const [, verb, path, caps, visibility] of documented)
      expect(bound, `${verb} ${path}`).toContainEqual({ verb, template: path, caps, visibility });
  });

  it("is all first-party, one rule each; writes act for a person; workers for services and apps acting for nobody", () => {
    for (const route of routes) {
      expect(route.rules, route.name).toHaveLength(1);
      expect(route.rule.visibility, route.name).toBe(Visibility.FIRST_PARTY);
      expect(route.rule.actingSubject, route.name).toBe(route.name !== "listWorkers");
      expect(route.rule.actor, route.name).toBe(PERSON_ROUTES.includes(route.name) ? Actor.PERSON : Actor.UNSPECIFIED);
      expect(route.rule.noPeople, route.name).toBe(route.name === "listWorkers");
    }
  });
});

describeRefusals(t, routes, calls);
describeMalformedInput(t, routes, calls);

/** The auth.* code a worker RPC answers a caller; "ok" when it succeeded, "passed" for the service's own problem. */
async function outcome(rpc: string, request: object, claims?: TokenClaims, headers: Record<string, string> = {}) {
  const token = claims ? await t.token(claims) : undefined;
  const client = t.client(RestreamWorkerService, token) as unknown as Record<
    string,
    (request: object, options: object) => unknown
  >;
  try {
    const answer = client[rpc](request, { headers });
    const method = RestreamWorkerService.method[rpc as keyof typeof RestreamWorkerService.method];
    if (method.methodKind === "server_streaming")
      await (answer as AsyncIterable<unknown>)[Symbol.asyncIterator]().next();
    else await answer;
    return "ok";
  } catch (error) {
    const [problem] = ConnectError.from(error).findDetails(ProblemSchema);
    return problem?.code?.startsWith("auth.") ? problem.code : "passed";
  }
}

/** One call per worker RPC, of a worker nobody registered (fenced: the service's 409), but the registration. */
const ref = { workerId: "matrix-none", generation: 1 };
const workerCalls: Record<string, object> = {
  registerWorker: { workerId: "matrix-worker", ingestUrl: "rtmp://127.0.0.1:1935/live" },
  heartbeat: ref,
  authorizeIngest: { ...ref, keyHash: "0".repeat(64) },
  reportSession: { ...ref, sessionId: `rss_${NONE}`, state: "live" },
  reportOutput: { ...ref, outputId: `rso_${NONE}`, state: "live" },
  appendLogs: { ...ref, outputId: `rso_${NONE}`, lines: ["matrix"] },
  watchCommands: ref,
};

describe("the worker API (designed, gRPC only)", () => {
  it("has one call here per RPC (7)", () => {
    expect(Object.keys(workerCalls).sort()).toEqual(RestreamWorkerService.methods.map((m) => m.localName).sort());
  });

  describe.each(RestreamWorkerService.methods.map((method) => method.localName))("%s", (rpc) => {
    const request = workerCalls[rpc]!;
    const worker: TokenClaims = { kind: "service", svc: "restream", caps: [WORKER_CAPABILITY] };

    it("is designed, internal, for services only, with no HTTP route", () => {
      const method = RestreamWorkerService.methods.find((each) => each.localName === rpc)!;
      expect(getOption(method, designed)).toBe(true);
      expect(hasOption(method, httpOption)).toBe(false);
      const [route] = routesOf(RestreamWorkerService).filter((each) => each.name === rpc);
      expect(route!.rule).toMatchObject({
        visibility: Visibility.INTERNAL,
        noPeople: true,
        capabilities: [WORKER_CAPABILITY],
      });
    });

    it("refuses no token, people, apps, other capabilities, mods and an acting subject", async () => {
      expect(await outcome(rpc, request)).toBe("auth.required");
      expect(await outcome(rpc, request, { kind: "user", sub: "usr_a1" })).toBe("auth.internal_only");
      expect(await outcome(rpc, request, { kind: "app", app_id: "a1", fp: true, caps: [WORKER_CAPABILITY] })).toBe(
        "auth.internal_only",
      );
      expect(await outcome(rpc, request, { ...worker, caps: ["restream.session.read"] })).toBe(
        "auth.capability_missing",
      );
      expect(await outcome(rpc, request, { ...worker, mod: "mod_1" })).toBe("auth.never_to_mods");
      expect(await outcome(rpc, request, worker, { "x-pf-subject": "usr_a1" })).toBe("auth.acting_subject_refused");
    });

    it("lets a service holding restream.worker.report through to the service", async () => {
      expect(["ok", "passed"]).toContain(await outcome(rpc, request, worker));
      expect(["ok", "passed"]).toContain(await outcome(rpc, request, { ...worker, svc: "live" }));
    });
  });
});
