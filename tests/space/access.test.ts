import { getOption, hasOption } from "@bufbuild/protobuf";
import { http as httpOption } from "../../gen/google/api/annotations_pb.js";
import type { ConnectError } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { SpaceAdminService } from "../../gen/pf/space/v1/admin_pb.js";
import { SpaceContentService } from "../../gen/pf/space/v1/content_pb.js";
import { SpaceInternalService } from "../../gen/pf/space/v1/internal_pb.js";
import { SpaceService } from "../../gen/pf/space/v1/space_pb.js";
import { Actor, designed } from "../../gen/pf/v1/options_pb.js";
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
import { describeContentAccess } from "../support/content-access.js";
import { usePlatform } from "../support/platform.js";
import { makeSpace } from "./support.js";

/** One valid call per route; the refusals vary only the caller. */
const calls: Record<string, RouteCall> = {
  editPost: { method: "PUT", path: "/space/api/v1/posts/pst_1", body: { body: "Edited" } },
  deletePost: { method: "DELETE", path: "/space/api/v1/posts/pst_1" },
  listSpaces: { method: "GET", path: "/space/api/v1/spaces" },
  getSpace: { method: "GET", path: "/space/api/v1/spaces/general" },
  listThreads: { method: "GET", path: "/space/api/v1/spaces/general/threads" },
  createThread: { method: "POST", path: "/space/api/v1/spaces/general/threads", body: { title: "Hi", body: "Text" } },
  getThread: { method: "GET", path: "/space/api/v1/spaces/general/threads/hi" },
  deleteThread: { method: "DELETE", path: "/space/api/v1/spaces/general/threads/hi" },
  replyToThread: { method: "POST", path: "/space/api/v1/spaces/general/threads/hi/posts", body: { body: "Reply" } },
  voteOnThread: { method: "POST", path: "/space/api/v1/spaces/general/threads/hi/votes", body: { value: 1 } },
  readForumFeed: { method: "GET", path: "/space/s/feed.xml" },
  readSpaceFeed: { method: "GET", path: "/space/s/general/feed.xml" },
};

const routes = routesOf(SpaceService);
const t = usePlatform({ services: ["space"] });
beforeAll(() => makeSpace(t, "general"));

describe("every forum route", () => {
  it("has a call here (12 RPCs serving the 15 documented routes)", () => {
    expect(routes).toHaveLength(12);
    expect(Object.keys(calls).sort()).toEqual(routes.map((route) => route.name).sort());
  });

  itWithSpec("matches routes.tsv exactly (15 routes: method, path, capability, visibility)", "space", (documented) => {
    expect(documented).toHaveLength(15);
    const bound = routes.flatMap((route) => {
      const { caps, visibility } = bindingOf(route);
      const rule = getOption(route.method, httpOption);
      return [rule, ...rule.additionalBindings].map((each) => ({
        verb: each.pattern.case?.toUpperCase(),
        template: each.pattern.value as string,
        // Thread creation also takes the named space.thread.write (analysis §0.3); the spec's column is the first.
        caps: caps.split(",")[0],
        visibility,
      }));
    });
    expect(bound).toHaveLength(15);
    for (const [, verb, path, caps, visibility] of documented) {
      expect(bound, `${verb} ${path}`).toContainEqual({ verb, template: path, caps, visibility });
    }
  });
});

describe("whom each forum route admits, as declared", () => {
  it("reads are public and anonymous; writes act for a person or are AI output (votes: people only)", () => {
    for (const route of routes) {
      const read = route.rule.anonymous;
      if (read) {
        expect(route.rules, route.name).toHaveLength(1);
        continue;
      }
      const actors = route.rules.map((rule) => Actor[rule.actor]);
      expect(actors, route.name).toEqual(route.name === "voteOnThread" ? ["PERSON"] : ["AI_OUTPUT", "PERSON"]);
      expect(route.rules.every((rule) => rule.actingSubject === (rule.actor === Actor.PERSON))).toBe(true);
    }
    expect(
      routes
        .filter((route) => route.rule.anonymous)
        .map((route) => route.name)
        .sort(),
    ).toEqual(["getSpace", "getThread", "listSpaces", "listThreads", "readForumFeed", "readSpaceFeed"].sort());
  });

  it("reads answer a caller without a token", async () => {
    expect((await t.http("GET", "/space/api/v1/spaces")).status).toBe(200);
    expect((await t.http("GET", "/space/s")).status).toBe(200);
    expect((await t.http("GET", "/space/api/v1/spaces/general/threads")).status).toBe(200);
  });
});

describeRefusals(t, routes, calls);
describeMalformedInput(t, routes, calls);

/** The auth.* code an RPC without a route answers a caller; "ok" when it succeeded, "passed" for the handler's own problem. */
async function outcome(
  service: typeof SpaceInternalService | typeof SpaceAdminService,
  rpc: string,
  request: object,
  claims: TokenClaims | undefined,
  headers: Record<string, string> = {},
): Promise<string> {
  const token = claims ? await t.token(claims) : undefined;
  const client = t.client(service, token) as unknown as Record<string, (r: object, o: object) => Promise<unknown>>;
  try {
    await client[rpc](request, { headers });
    return "ok";
  } catch (error) {
    const [problem] = (error as ConnectError).findDetails(ProblemSchema);
    return problem?.code?.startsWith("auth.") ? problem.code : "passed";
  }
}

const internal: Record<string, object> = {
  createThread: { space: "general", title: "T", body: "B", idempotencyKey: "k" },
  replyToThread: { threadId: "thr_1", body: "B", idempotencyKey: "k" },
  voteOnThread: { threadId: "thr_1", value: 1, idempotencyKey: "k" },
  editPost: { postId: "pst_1", body: "B", idempotencyKey: "k" },
  deletePost: { postId: "pst_1", idempotencyKey: "k" },
  pinThread: { threadId: "thr_1", pinned: true, idempotencyKey: "k" },
  lockThread: { threadId: "thr_1", locked: true, idempotencyKey: "k" },
};

describe.each(SpaceInternalService.methods.map((method) => method.localName))("the internal RPC %s", (rpc) => {
  const caps = ["space.post.write", "space.post.moderate"];
  const community: TokenClaims = { kind: "service", svc: "community", caps };
  const request = internal[rpc];

  it("is designed and has no HTTP route", () => {
    const method = SpaceInternalService.methods.find((each) => each.localName === rpc)!;
    expect(getOption(method, designed)).toBe(true);
    expect(hasOption(method, httpOption)).toBe(false);
  });

  it("refuses every caller but community: other services holding its capabilities, apps, people, mods, no token", async () => {
    expect(await outcome(SpaceInternalService, rpc, request, undefined)).toBe("auth.required");
    expect(await outcome(SpaceInternalService, rpc, request, { kind: "service", svc: "blog", caps })).toBe(
      "auth.service_not_allowed",
    );
    expect(await outcome(SpaceInternalService, rpc, request, { kind: "user", sub: "usr_a1" })).toBe(
      "auth.internal_only",
    );
    expect(await outcome(SpaceInternalService, rpc, request, { kind: "app", app_id: "a", fp: true, caps })).toBe(
      "auth.internal_only",
    );
    expect(await outcome(SpaceInternalService, rpc, request, { ...community, mod: "mod_1" })).toBe(
      "auth.never_to_mods",
    );
  });

  it("lets community through as the rule it forwards: a person, AI output, or a moderator", async () => {
    const subject = { "x-pf-subject": "usr_a1" };
    const passed = (answer: string) => (answer === "ok" ? "passed" : answer);
    const answers = {
      person: passed(await outcome(SpaceInternalService, rpc, request, community, subject)),
      ai: passed(await outcome(SpaceInternalService, rpc, request, community, { "x-pf-origin": "ai" })),
      moderator: passed(await outcome(SpaceInternalService, rpc, request, community)),
      staffPerson: passed(
        await outcome(SpaceInternalService, rpc, request, community, { ...subject, "x-pf-staff": "1" }),
      ),
    };
    const expected: Record<string, Record<string, string>> = {
      createThread: { person: "passed", ai: "passed", moderator: "auth.person_required", staffPerson: "passed" },
      replyToThread: { person: "passed", ai: "passed", moderator: "auth.person_required", staffPerson: "passed" },
      voteOnThread: {
        person: "passed",
        ai: "auth.person_required",
        moderator: "auth.person_required",
        staffPerson: "passed",
      },
      editPost: { person: "passed", ai: "passed", moderator: "passed", staffPerson: "passed" },
      deletePost: { person: "passed", ai: "passed", moderator: "passed", staffPerson: "passed" },
      pinThread: { person: "auth.staff_required", ai: "passed", moderator: "passed", staffPerson: "passed" },
      lockThread: { person: "auth.staff_required", ai: "passed", moderator: "passed", staffPerson: "passed" },
    };
    expect(answers).toEqual(expected[rpc]);
  });
});

describe("the admin RPC upsertSpace", () => {
  const admin: TokenClaims = { kind: "service", svc: "ops", caps: ["space.admin"] };
  const request = { key: "x-admin", title: "X", visibility: 1 };
  it("is designed, internal, never to apps, people or mods", async () => {
    expect(getOption(SpaceAdminService.methods[0], designed)).toBe(true);
    expect(await outcome(SpaceAdminService, "upsertSpace", request, undefined)).toBe("auth.required");
    expect(await outcome(SpaceAdminService, "upsertSpace", request, { ...admin, caps: ["space.post.write"] })).toBe(
      "auth.capability_missing",
    );
    expect(await outcome(SpaceAdminService, "upsertSpace", request, { kind: "user", sub: "usr_a1" })).toBe(
      "auth.internal_only",
    );
    expect(await outcome(SpaceAdminService, "upsertSpace", request, { ...admin, mod: "mod_1" })).toBe(
      "auth.never_to_mods",
    );
    expect(await outcome(SpaceAdminService, "upsertSpace", request, admin)).toBe("ok");
  });
});

// The content access community asks about this service's objects for their comment threads.
describeContentAccess(t, SpaceContentService, "space.content.check", {
  kind: "thread",
  id: "thr_01jd0000000000000000000000",
});
