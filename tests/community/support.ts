import type { TestPlatform } from "../support/platform.js";

/** Every community capability: the first-party web service's token (moderation included). */
export const ALL_COMMUNITY = [
  "community.paste.create",
  "community.paste.write",
  "community.paste.read",
  "community.paste.moderate",
  "community.comment.write",
  "community.comment.moderate",
  "community.post.create",
  "community.pulse.read",
  "community.pulse.write",
  "community.relay.manage",
];

/** The writing capabilities without moderation: a service that only writes for people. */
export const WRITER = ALL_COMMUNITY.filter((cap) => !cap.endsWith(".moderate") && cap !== "community.relay.manage");

let n = 0;
/** A fresh person id. */
export const person = (tag = "p") => `usr_${tag}${Date.now().toString(36)}${(n++).toString(36)}`;

/** A fresh suffix for names. */
export const fresh = () => `${Date.now().toString(36)}${(n++).toString(36)}`;

/** A service token for `svc` holding `caps`. */
export const serviceToken = (t: TestPlatform, caps = ALL_COMMUNITY, svc = "web") =>
  t.token({ kind: "service", svc, caps });

/** Throws with the answer when its status is not the one expected; answers it. */
export function expectStatus<T extends { status: number; body: unknown }>(answer: T, status: number): T {
  if (answer.status !== status)
    throw new Error(`expected ${status}, got ${answer.status}: ${JSON.stringify(answer.body)}`);
  return answer;
}

/** Calls community's gateway as a service acting for `who` (X-PF-Subject), with more headers when given. */
export function as(t: TestPlatform, token: () => string) {
  return (method: string, path: string, who: string | undefined, body?: unknown, extra: Record<string, string> = {}) =>
    t.http(method, `/community${path}`, {
      token: token(),
      body,
      headers: { ...(who ? { "x-pf-subject": who } : {}), ...extra },
    });
}

/** Creates a text paste for a person; answers the paste. */
export async function createPaste(
  t: TestPlatform,
  token: string,
  who: string,
  body: Record<string, unknown> = {},
): Promise<{ id: string; slug: string; [key: string]: unknown }> {
  const answer = await t.http("POST", "/community/api/pastes", {
    token,
    body: { title: `Paste ${fresh()}`, body: "hello", ...body },
    headers: { "x-pf-subject": who },
  });
  return expectStatus(answer, 201).body.paste;
}
