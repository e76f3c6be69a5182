import { create } from "@bufbuild/protobuf";
import { expect } from "vitest";
import { SpaceAdminService } from "../../gen/pf/space/v1/admin_pb.js";
import { SpaceInternalService } from "../../gen/pf/space/v1/internal_pb.js";
import { SpaceSchema, SpaceVisibility } from "../../gen/pf/space/v1/forum_pb.js";
import type { HttpAnswer, TestPlatform } from "../support/platform.js";

let seq = 0;
/** A fresh usr_ person. */
export const person = (tag = "p") => `usr_${tag}${++seq}x${Date.now().toString(36)}`;
/** A fresh space key. */
export const spaceKey = (tag = "s") => `${tag}-${++seq}-${Date.now().toString(36)}`;

/** Community's service token, holding what its forum routes forward with. */
export const communityToken = (t: TestPlatform) =>
  t.token({ kind: "service", svc: "community", caps: ["space.post.write", "space.post.moderate"] });

/** Space's internal RPCs as community calls them (as itself: a moderator; X-PF-* headers per call). */
export const communityClient = async (t: TestPlatform) => t.client(SpaceInternalService, await communityToken(t));

/** A first-party service's token holding the forum's capabilities (it writes for people or as AI, and reads). */
export const writerService = (t: TestPlatform, svc = "blog") =>
  t.token({
    kind: "service",
    svc,
    caps: ["space.post.write", "space.thread.write", "space.forum.read", "space.thread.read"],
  });

/** Creates (or replaces) a space through the admin RPC. */
export async function makeSpace(
  t: TestPlatform,
  key: string,
  options: { visibility?: SpaceVisibility; membersOnly?: boolean; vipCreator?: string; title?: string } = {},
) {
  const admin = t.client(SpaceAdminService, await t.token({ kind: "service", svc: "ops", caps: ["space.admin"] }));
  await admin.upsertSpace(
    create(SpaceSchema, {
      key,
      title: options.title ?? `Space ${key}`,
      visibility: options.visibility ?? SpaceVisibility.PUBLIC,
      membersOnly: options.membersOnly ?? false,
      vipCreator: options.vipCreator ?? "",
    }),
  );
  return key;
}

export function expectStatus(answer: HttpAnswer, status: number, code?: string): HttpAnswer {
  expect(answer.status, JSON.stringify(answer.body)).toBe(status);
  if (code) expect(answer.body.code).toBe(code);
  return answer;
}

/** Starts a thread as a person (their own token) and answers the result's thread. */
export async function startThread(t: TestPlatform, space: string, who: string, title = "Hello", body = "First post") {
  const answer = await t.http("POST", `/space/api/v1/spaces/${space}/threads`, {
    token: await t.token({ kind: "user", sub: who }),
    body: { title, body },
  });
  return expectStatus(answer, 201).body;
}
