import { beforeAll, describe, expect, it } from "vitest";
import { NetworkAdminService } from "../../gen/pf/network/v1/admin_pb.js";
import { NetworkService, StaffRole } from "../../gen/pf/network/v1/network_pb.js";
import { startTestPlatform, usePlatform, type TestPlatform } from "../support/platform.js";
import { itWith, NATS } from "../support/skips.js";
import { until } from "../support/until.js";

const t = usePlatform({ services: ["network"] });
let admin: ReturnType<typeof adminClient>;
const adminClient = (token: string) => t.client(NetworkAdminService, token);

beforeAll(async () => {
  admin = adminClient(await t.token({ kind: "service", svc: "network", caps: ["network.admin"] }));
  await admin.upsertSubject({ id: "usr_owner1", display: { displayName: "Olga", handle: "olga" } });
  await admin.upsertSubject({ id: "usr_mod1", display: { displayName: "Mo", handle: "mo" } });
  await admin.setStaff({ subject: "usr_mod1", role: StaffRole.GLOBAL_MODERATOR, capabilities: ["reports.route"] });
  await admin.setStaff({ subject: "usr_owner1", role: StaffRole.OWNER });
  await admin.setStaff({ subject: "usr_adm1", role: StaffRole.ADMIN });
});

describe("staff list", () => {
  it("lists owner, admins and global moderators with roles, capabilities and display", async () => {
    const token = await t.token({ kind: "service", svc: "space", caps: ["network.staff.read"] });
    const answer = await t.http("GET", "/network/api/v1/staff/moderators", { token });
    expect(answer.status).toBe(200);
    // Other tests of this file add staff of their own: the seeded three, in rank order.
    const seeded = ["usr_owner1", "usr_adm1", "usr_mod1"];
    const staff = answer.body.staff.filter((s: { subject: { id: string } }) => seeded.includes(s.subject.id));
    expect(staff.map((s: { subject: { id: string }; role: string }) => [s.subject.id, s.role])).toEqual([
      ["usr_owner1", "STAFF_ROLE_OWNER"],
      ["usr_adm1", "STAFF_ROLE_ADMIN"],
      ["usr_mod1", "STAFF_ROLE_GLOBAL_MODERATOR"],
    ]);
    expect(staff[2]).toMatchObject({
      capabilities: ["reports.route"],
      subject: { display: { display_name: "Mo", handle: "mo" } },
    });
  });

  it("is read by a first-party service acting for a person (X-PF-Subject), as every first-party route is", async () => {
    const token = await t.token({ kind: "service", svc: "space", caps: ["network.staff.read"] });
    const headers = { "x-pf-subject": "usr_viewer1" };
    const answer = await t.http("GET", "/network/api/v1/staff/moderators", { token, headers });
    expect(answer.status).toBe(200);
    expect(answer.body.staff.map((s: { subject: { id: string } }) => s.subject.id)).toContain("usr_mod1");
  });

  it("is for services, never people or guests (staff capabilities are not theirs to read)", async () => {
    for (const sub of ["usr_any1", "gst_any1"]) {
      const answer = await t.http("GET", "/network/api/v1/staff/moderators", {
        token: await t.token({ kind: "user", sub }),
      });
      expect(answer.body).toMatchObject({ status: 403, code: "auth.people_refused" });
    }
  });

  it("keeps one owner (409 staff.owner_exists) and refuses a bad role (400)", async () => {
    await expect(admin.setStaff({ subject: "usr_other1", role: StaffRole.OWNER })).rejects.toThrow(/one owner/);
    await expect(admin.setStaff({ subject: "usr_other1", role: StaffRole.UNSPECIFIED })).rejects.toThrow(/role/);
  });

  it("answers races with a clear 409, never a 500", async () => {
    await admin.removeStaff({ subject: "usr_owner1" });
    const candidates = ["usr_race1", "usr_race2", "usr_race3"];
    const owners = await Promise.allSettled(
      candidates.map((subject) => admin.setStaff({ subject, role: StaffRole.OWNER })),
    );
    expect(owners.filter((o) => o.status === "fulfilled")).toHaveLength(1);
    expect(
      owners
        .filter((o) => o.status === "rejected")
        .every((o) => /one owner/.test(String((o as PromiseRejectedResult).reason))),
    ).toBe(true);
    for (const subject of candidates) await admin.removeStaff({ subject });
    await admin.setStaff({ subject: "usr_owner1", role: StaffRole.OWNER });
    const links = await Promise.allSettled(
      ["usr_l1", "usr_l2", "usr_l1", "usr_l3"].map((subject) =>
        admin.linkLegacyId({ service: "deals", localId: "race-7", subject }),
      ),
    );
    const winners = links.filter((l) => l.status === "fulfilled") as PromiseFulfilledResult<{
      subject?: { id: string };
    }>[];
    const losers = links.filter((l) => l.status === "rejected") as PromiseRejectedResult[];
    expect(new Set(winners.map((w) => w.value.subject?.id)).size).toBe(1);
    expect(losers.every((l) => /another subject/.test(String(l.reason)))).toBe(true);
  });

  it("the admin RPCs are internal: a user or app token is refused", async () => {
    const user = adminClient(await t.token({ kind: "user", sub: "usr_owner1" }));
    await expect(user.setStaff({ subject: "usr_x1", role: StaffRole.ADMIN })).rejects.toThrow(/internal/);
    const app = adminClient(await t.token({ kind: "app", app_id: "a", fp: true, caps: ["network.admin"] }));
    await expect(app.removeStaff({ subject: "usr_mod1" })).rejects.toThrow(/internal/);
  });
});

describe("staff list freshness", () => {
  const list = async (target: TestPlatform) => {
    const token = await target.token({ kind: "service", svc: "space", caps: ["network.staff.read"] });
    const answer = await target.http("GET", "/network/api/v1/staff/moderators", { token });
    return answer.body.staff as { subject: { id: string; display?: { display_name: string } } }[];
  };

  it("is one frozen answer: an in-process caller cannot change it for the others", async () => {
    const network = t.client(
      NetworkService,
      await t.token({ kind: "service", svc: "space", caps: ["network.staff.read"] }),
    );
    const first = await network.listStaff({});
    expect(() => first.staff.splice(0)).toThrow(TypeError);
    expect((await network.listStaff({})).staff.length).toBeGreaterThan(0);
  });

  it("shows this instance's staff and display changes at once", async () => {
    await list(t);
    await admin.setStaff({ subject: "usr_fresh1", role: StaffRole.GLOBAL_MODERATOR });
    expect((await list(t)).map((s) => s.subject.id)).toContain("usr_fresh1");
    await admin.upsertSubject({ id: "usr_fresh1", display: { displayName: "Fresh" } });
    expect((await list(t)).find((s) => s.subject.id === "usr_fresh1")?.subject.display?.display_name).toBe("Fresh");
    await admin.removeStaff({ subject: "usr_fresh1" });
    expect((await list(t)).map((s) => s.subject.id)).not.toContain("usr_fresh1");
  });

  // Two instances share events only through NATS (each in-process bus stays in its own platform).
  itWith(NATS, "shows another instance's staff changes once its event arrives", async () => {
    const other = await startTestPlatform({
      services: ["network"],
      env: { DATABASE_URL: t.platform.databaseUrl, PF_NATS_NAMESPACE: t.events!.namespace },
    });
    try {
      await list(other);
      await admin.setStaff({ subject: "usr_fresh2", role: StaffRole.ADMIN });
      await until(async () => (await list(other)).some((s) => s.subject.id === "usr_fresh2"), 10_000);
    } finally {
      await other.stop();
    }
  });
});

describe("block read", () => {
  it("answers who a person blocked and who blocked them", async () => {
    await admin.setBlock({ blocker: "usr_b1", blocked: "usr_b2" });
    await admin.setBlock({ blocker: "usr_b1", blocked: "usr_b3" });
    await admin.setBlock({ blocker: "usr_b4", blocked: "usr_b1" });
    await admin.setBlock({ blocker: "usr_b1", blocked: "usr_b2" }); // idempotent
    const token = await t.token({ kind: "service", svc: "community", caps: ["network.blocks.read"] });
    const answer = await t.http("GET", "/network/internal/blocks?subject=usr_b1", { token });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ subject: "usr_b1", blocked: ["usr_b2", "usr_b3"], blocked_by: ["usr_b4"] });
    await admin.removeBlock({ blocker: "usr_b1", blocked: "usr_b3" });
    const after = await t.http("GET", "/network/internal/blocks?subject=usr_b1", { token });
    expect(after.body.blocked).toEqual(["usr_b2"]);
  });

  it("takes usr_ subjects only (400 naming subject)", async () => {
    const token = await t.token({ kind: "service", svc: "community", caps: ["network.blocks.read"] });
    for (const query of ["", "?subject=gst_1", "?subject=app:x", "?subject=usr_a&subject=usr_b", "?nope=1"]) {
      const answer = await t.http("GET", `/network/internal/blocks${query}`, { token });
      expect(answer.status, query).toBe(400);
      expect(answer.body.code).toBe("request.invalid");
    }
  });

  it("is never answered to a person, not even about themselves (who blocked them stays hidden)", async () => {
    const own = await t.http("GET", "/network/internal/blocks?subject=usr_b1", {
      token: await t.token({ kind: "user", sub: "usr_b1" }),
    });
    expect(own.body).toMatchObject({ status: 403, code: "auth.people_refused" });
  });
});

describe("identity resolve", () => {
  let token: string;
  beforeAll(async () => {
    token = await t.token({ kind: "service", svc: "tips", caps: ["identity.subject.resolve"] });
    await admin.upsertSubject({
      id: "usr_id1",
      display: { displayName: "Ida", handle: "ida", avatarUrl: "https://img/ida.png" },
    });
    await admin.linkLegacyId({ service: "tips", localId: "4711", subject: "usr_id1" });
  });

  it("maps a subject to its canonical SubjectRef and display projection", async () => {
    const answer = await t.http("GET", "/network/internal/identity/resolve?subject=usr_id1", { token });
    expect(answer.status).toBe(200);
    expect(answer.body.results[0]).toMatchObject({
      found: true,
      subject: { id: "usr_id1", display: { display_name: "Ida", handle: "ida", avatar_url: "https://img/ida.png" } },
    });
  });

  it("maps a legacy service-local id to the same subject", async () => {
    const answer = await t.http("GET", "/network/internal/identity/resolve?service=tips&local_id=4711", { token });
    expect(answer.body.results[0]).toMatchObject({
      found: true,
      query: { service: "tips", local_id: "4711" },
      subject: { id: "usr_id1" },
    });
  });

  it("answers 404 identity.not_found for one unknown id, and found=false in a batch", async () => {
    const single = await t.http("GET", "/network/internal/identity/resolve?service=tips&local_id=nope", { token });
    expect(single.status).toBe(404);
    expect(single.body.code).toBe("identity.not_found");
    const batch = await t.http("POST", "/network/internal/identity/resolve-batch", {
      token,
      body: { queries: [{ subject: "usr_id1" }, { service: "tips", local_id: "4711" }, { subject: "usr_nobody1" }] },
    });
    expect(batch.status).toBe(200);
    expect(batch.body.results.map((r: { found: boolean }) => r.found)).toEqual([true, true, false]);
  });

  it("refuses a legacy id pointed at a second subject (409 identity.legacy_conflict)", async () => {
    await expect(admin.linkLegacyId({ service: "tips", localId: "4711", subject: "usr_other1" })).rejects.toThrow(
      /another subject/,
    );
  });

  it("refuses malformed queries with 400", async () => {
    for (const [method, path, body] of [
      ["GET", "/network/internal/identity/resolve", undefined],
      ["GET", "/network/internal/identity/resolve?subject=bob", undefined],
      ["GET", "/network/internal/identity/resolve?service=tips", undefined],
      ["GET", "/network/internal/identity/resolve?subject=usr_a1&service=tips&local_id=1", undefined],
      ["GET", "/network/internal/identity/resolve?service=tips&local_id=1&localId=2", undefined],
      ["POST", "/network/internal/identity/resolve-batch", { queries: [] }],
      [
        "POST",
        "/network/internal/identity/resolve-batch",
        { queries: Array.from({ length: 201 }, () => ({ subject: "usr_a1" })) },
      ],
      ["POST", "/network/internal/identity/resolve-batch", { queries: [{ subject: 5 }] }],
    ] as const) {
      const answer = await t.http(method, path, { token, body });
      expect(answer.status, path).toBe(400);
      expect(answer.body.code).toBe("request.invalid");
    }
  });
});
