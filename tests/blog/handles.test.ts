import { beforeAll, describe, expect, it } from "vitest";
import { NetworkAdminService } from "../../gen/pf/network/v1/admin_pb.js";
import { useBeside } from "../support/beside.js";
import { ALL_BLOG, fresh, person, webCaller } from "./support.js";

// "handle (defaults to the network username unless another free handle is given)": network in a platform of its
// own, asked by blog over gRPC through a proxy the test cuts.
const split = useBeside("blog", { callees: ["network"] });
let web = "";
beforeAll(async () => {
  web = await split.service.token({ kind: "service", svc: "web", caps: ALL_BLOG });
});
const call = webCaller(split.service, () => web);

/** A person network knows by this username. */
async function known(username: string): Promise<string> {
  const token = await split.callees.token({ kind: "service", svc: "network", caps: ["network.admin"] });
  const subject = person("u");
  await split.callees
    .client(NetworkAdminService, token)
    .upsertSubject({ id: subject, display: { displayName: "Someone", handle: username } });
  return subject;
}

const create = (who: string, handle?: string) =>
  call("POST", "/api/v1/blogs", who, { title: "My blog", ...(handle === undefined ? {} : { handle }) });

describe("a blog's handle", () => {
  it("defaults to the network username, made into a handle", async () => {
    const name = fresh("Ada.Lovelace_");
    const subject = await known(name);
    const created = await create(subject);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const handle = name.toLowerCase().replace(/[._]+/g, "-");
    expect(created.body.blog).toMatchObject({ handle, created_for: subject });
    expect((await call("GET", `/api/v1/blogs/${handle}/feed`)).status).toBe(200);
  });

  it("is another handle when a free one is given, and a taken one is refused", async () => {
    const subject = await known(fresh("grace"));
    const given = fresh("pick");
    const created = await create(subject, given);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.blog.handle).toBe(given);
    const other = await known(fresh("linus"));
    expect((await create(other, given)).body).toMatchObject({ status: 409, code: "blog.handle_taken" });
    // Nothing was made for the refused one: a free handle then works.
    expect((await create(other, fresh("free"))).status).toBe(201);
  });

  it("is refused when the username's handle is taken, or nothing of the username is a handle", async () => {
    const name = fresh("alan");
    const first = await known(name);
    expect((await create(first)).body.blog.handle).toBe(name);
    // Another person's blog already took the handle their username would give.
    const second = await create(await known(name));
    expect(second.body).toMatchObject({ status: 409, code: "blog.handle_taken" });
    expect((await create(await known("__"))).body).toMatchObject({ status: 422, code: "blog.handle_required" });
    // A person network has no username for.
    expect((await create(person("nobody"))).body).toMatchObject({ status: 422, code: "blog.handle_required" });
  });

  it("while network is unreachable: 503 network.unavailable without a handle, nothing made; a given one works", async () => {
    const subject = await known(fresh("edsger"));
    await split.reachable(["network"], false);
    try {
      expect((await create(subject)).body).toMatchObject({ status: 503, code: "network.unavailable" });
      const given = fresh("own");
      const created = await create(subject, given);
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect(created.body.blog.handle).toBe(given);
    } finally {
      await split.reachable(["network"], true);
    }
  });
});
