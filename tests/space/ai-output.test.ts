import { ConnectError } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { SpaceVisibility } from "../../gen/pf/space/v1/forum_pb.js";
import { ProblemSchema } from "../../gen/pf/v1/problem_pb.js";
import { usePlatform } from "../support/platform.js";
import { communityClient, expectStatus, makeSpace, person, spaceKey, startThread, writerService } from "./support.js";

/**
 * Issue 24, finding 3: AI output sent with a person's X-PF-Subject was stored
 * as that person's post, and AI posts relayed through community were all
 * credited to svc:community. Forum rule 3: "as X-PF-Subject or with origin ai
 * (no author, labelled as AI)".
 */
const t = usePlatform({ services: ["space"] });
const keys = { pub: spaceKey("aip"), staff: spaceKey("ais") };
const ai = { "x-pf-origin": "ai" };

beforeAll(async () => {
  await makeSpace(t, keys.pub);
  await makeSpace(t, keys.staff, { visibility: SpaceVisibility.STAFF });
});

/** The problem code an internal call answers, or "ok". */
async function codeOf(work: Promise<unknown>): Promise<string> {
  try {
    await work;
    return "ok";
  } catch (error) {
    return ConnectError.from(error).findDetails(ProblemSchema)[0]?.code ?? "none";
  }
}

describe("AI output naming a person is AI output, never the person's post", () => {
  it("is labelled AI and credited to the service that sent it; the person named owns nothing", async () => {
    const asker = person("asker");
    const service = await writerService(t);
    const answer = await t.http("POST", `/space/api/v1/spaces/${keys.pub}/threads`, {
      token: service,
      headers: { ...ai, "x-pf-subject": asker },
      body: { title: "Summary", body: "AI text" },
    });
    const { thread } = expectStatus(answer, 201).body;
    expect(thread).toMatchObject({ ai: true, author: { ai: { service: "svc:blog" } } });
    expect(JSON.stringify(thread)).not.toContain(asker);
    const byAsker = await t.http("PUT", `/space/api/v1/posts/${thread.first_post_id}`, {
      token: await t.token({ kind: "user", sub: asker }),
      body: { body: "mine now" },
    });
    expectStatus(byAsker, 403, "post.not_author");
  });

  it("lands only where the person named may write: a staff space stays 404 to it", async () => {
    const answer = await t.http("POST", `/space/api/v1/spaces/${keys.staff}/threads`, {
      token: await writerService(t),
      headers: { ...ai, "x-pf-subject": person("asker") },
      body: { title: "Summary", body: "AI text" },
    });
    expectStatus(answer, 404, "space.not_found");
  });

  it("never votes as the person (403 auth.person_required)", async () => {
    const { thread } = await startThread(t, keys.pub, person(), "Vote here");
    const answer = await t.http("POST", `/space/api/v1/spaces/${keys.pub}/threads/${thread.slug}/votes`, {
      token: await writerService(t),
      headers: { ...ai, "x-pf-subject": person("voter") },
      body: { value: 1 },
    });
    expectStatus(answer, 403, "auth.person_required");
  });
});

describe("AI output community forwards is credited to the service that sent it (ai_service)", () => {
  it("stores the sender, not community, and only the sender's AI output changes the post", async () => {
    const internal = await communityClient(t);
    const created = await internal.createThread(
      { space: keys.pub, title: "Digest", body: "AI", idempotencyKey: `c-${person()}`, aiService: "svc:news" },
      { headers: ai },
    );
    expect(created.thread?.author?.author).toEqual({
      case: "ai",
      value: expect.objectContaining({ service: "svc:news" }),
    });
    const postId = created.thread!.firstPostId;
    const edit = (aiService: string) =>
      codeOf(internal.editPost({ postId, body: "x", idempotencyKey: `e-${person()}`, aiService }, { headers: ai }));
    expect(await edit("svc:blog")).toBe("post.not_author");
    expect(
      await codeOf(
        internal.deletePost({ postId, idempotencyKey: `d-${person()}`, aiService: "svc:blog" }, { headers: ai }),
      ),
    ).toBe("post.not_author");
    expect(await edit("svc:news")).toBe("ok");
  });

  it("is required from AI output and refused from anyone else (400 naming ai_service)", async () => {
    const internal = await communityClient(t);
    const thread = (aiService: string, headers: Record<string, string>) =>
      codeOf(
        internal.createThread(
          { space: keys.pub, title: "T", body: "B", idempotencyKey: `k-${person()}`, aiService },
          { headers },
        ),
      );
    expect(await thread("", ai)).toBe("request.invalid");
    expect(await thread("community", ai)).toBe("request.invalid");
    expect(await thread("svc:news", { "x-pf-subject": person() })).toBe("request.invalid");
  });
});
