import { beforeAll, describe, expect, it } from "vitest";
import { fund } from "../billing/support.js";
import { createPlan, expectStatus, userToken } from "../vip/support.js";
import { useBeside } from "../support/beside.js";
import { ALL_BLOG, newBlog, newPost, person, webCaller } from "./support.js";

// Vip (with billing) in a platform of its own, asked by blog over gRPC through a proxy the test cuts. A fan holds a
// membership of the blog owner bought through vip's checkout: members-only posts are theirs to read while vip says
// so, and no one's but the blog's members while vip cannot answer ("unknown never authorizes").
const split = useBeside("blog", { callees: ["vip"], alongside: ["billing"] });
let web = "";
beforeAll(async () => {
  web = await split.service.token({ kind: "service", svc: "web", caps: ALL_BLOG });
});
const call = webCaller(split.service, () => web);

/** A fan of `creator` holding a membership bought from credit through vip's checkout. */
async function memberOf(creator: string): Promise<string> {
  const vip = split.callees;
  const plan = await createPlan(vip, await userToken(vip, creator), { publish: true });
  const fan = person("fan");
  await fund(vip, fan, 10_000n);
  const bought = await vip.http("POST", "/vip/api/v1/checkout", {
    token: await userToken(vip, fan),
    body: { plan_id: plan.id, paid_via: "PAID_VIA_CREDIT", idempotency_key: `k-${fan}` },
  });
  expectStatus(bought, 201);
  return fan;
}

describe("members-only posts", () => {
  it("are read by the owner's vip members and blog members, 404 to anyone else, and no one else's while vip is unreachable", async () => {
    const { owner, handle } = await newBlog(call);
    const fan = await memberOf(owner);
    const post = await newPost(call, handle, owner, { visibility: "members-only" });
    expect((await call("POST", `/api/v1/posts/${post.id}/publish`, owner, {})).status).toBe(200);
    const read = (who?: string) => call("GET", `/api/v1/posts/${post.id}`, who);
    const notFound = { status: 404, code: "post.not_found" };

    expect((await read(fan)).body.post).toMatchObject({ id: post.id, visibility: "members-only" });
    expect((await read(owner)).status).toBe(200);
    expect((await read(person("stranger"))).body).toMatchObject(notFound);
    expect((await read()).body).toMatchObject(notFound);
    expect((await split.service.http("GET", `/blog/api/v1/posts/${post.id}`)).body).toMatchObject(notFound);

    await split.reachable(["vip"], false);
    try {
      // Unknown never authorizes: the fan gets what anyone not entitled gets; the blog's members still read it.
      expect((await read(fan)).body).toMatchObject(notFound);
      expect((await read(owner)).status).toBe(200);
    } finally {
      await split.reachable(["vip"], true);
    }
    expect((await read(fan)).status).toBe(200);
  });

  it("keep their revisions and diff to blog members: 404 as a missing post to anyone who may not read the post", async () => {
    const { owner, handle } = await newBlog(call);
    const fan = await memberOf(owner);
    const post = await newPost(call, handle, owner, { visibility: "members-only" });
    expect((await call("POST", `/api/v1/posts/${post.id}/publish`, owner, {})).status).toBe(200);
    const notFound = { status: 404, code: "post.not_found" };
    const missing = "pst_00000000000000000000000000";
    for (const path of ["revisions", "revisions/1", "diff"]) {
      const read = (id: string, who?: string) => call("GET", `/api/v1/posts/${id}/${path}`, who);
      expect((await read(post.id, owner)).status, path).toBe(200);
      // The owner's vip member may read the post, so is told only that revisions are for members.
      expect((await read(post.id, fan)).body, path).toMatchObject({ status: 403, code: "blog.member_required" });
      // Anyone else gets exactly what a missing post answers.
      expect((await read(post.id, person("stranger"))).body, path).toMatchObject(notFound);
      expect((await read(post.id)).body, path).toMatchObject(notFound);
      expect((await read(missing, person("stranger"))).body, path).toMatchObject(notFound);
    }
  });
});
