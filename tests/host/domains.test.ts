import DNS from "dns2";
import { afterAll, describe, expect, it } from "vitest";
import { reverifyDomains } from "../../services/host/workers/reverify.js";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { usePlatform } from "../support/platform.js";
import {
  addMember,
  asPerson,
  fresh,
  HOST_ENV,
  hostContext,
  hostEvents,
  hostSql,
  projectOf,
  seedStaff,
  siteOf,
  StaffRole,
  type HostCall,
} from "./support.js";

/**
 * A real DNS server on loopback (UDP, a free port) with a zone the tests write: the TXT strings of a name, `[]` for
 * a name without TXT records, "silent" for a name it never answers; any other name does not exist (NXDOMAIN).
 */
const zone = new Map<string, string[] | "silent">();
const dns = DNS.createServer({
  udp: true,
  handle(request, send) {
    const response = DNS.Packet.createResponseFromRequest(request) as DNS.DnsResponse & { header: { rcode: number } };
    const name = request.questions[0].name.toLowerCase();
    const found = zone.get(name);
    if (found === "silent") return;
    if (found === undefined) response.header.rcode = 3;
    else
      for (const data of found)
        response.answers.push({ name, type: DNS.Packet.TYPE.TXT, class: DNS.Packet.CLASS.IN, ttl: 1, data });
    send(response);
  },
});
await dns.listen({ udp: { port: 0, address: "127.0.0.1" } });
const { udp } = dns.addresses();
afterAll(() => dns.close());

const TIMEOUT_MS = 600;
const clock = new ManualClock(new Date("2027-02-01T12:00:00Z"));
/** The clock's time as answered (whole seconds: no fraction). */
const now = () => clock.now().toISOString().replace(".000Z", "Z");
const t = usePlatform({
  services: ["host", "network"],
  clock,
  env: {
    ...HOST_ENV,
    PF_HOST_DNS_SERVERS: `127.0.0.1:${udp!.port}`,
    PF_HOST_DNS_TIMEOUT_MS: String(TIMEOUT_MS),
    PF_HOST_SITES_DOMAIN: "sites.pf-test.net",
    PF_HOST_PLATFORM_DOMAINS: "pf-test.net",
    PF_HOST_EDGE_ADDRESSES: "192.0.2.10,2001:db8::10",
  },
});

/** A fresh owner's project and site, and calls as that owner. */
async function ownedSite(): Promise<{
  as: HostCall;
  owner: string;
  projectId: string;
  site: { id: string; slug: string };
}> {
  const owner = `usr_${fresh("o")}`;
  const as = await asPerson(t, owner);
  const projectId = await projectOf(as);
  return { as, owner, projectId, site: await siteOf(as, projectId) };
}

/** A fresh domain name under a registrable domain of its own (`shop.<fresh>.com`). */
const freshHostname = () => `shop.${fresh("d")}.com`;

/** Publishes a domain's TXT verification record as its answer says, beside any other strings at that name. */
function publish(domain: { verification: { name: string; value: string } }, ...others: string[]): void {
  zone.set(domain.verification.name, [...others, domain.verification.value]);
}

/** Adds a domain to a site; answers the domain. */
async function added(as: HostCall, siteId: string, hostname = freshHostname()) {
  const answer = await as("POST", `/sites/${siteId}/domains`, { hostname });
  if (answer.status !== 201) throw new Error(`domain add: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body.domain;
}

describe("add (POST /sites/{id}/domains)", () => {
  it("201 pending, with its TXT verification record and a CNAME to the site's host; the same name again is the same domain", async () => {
    const { as, site } = await ownedSite();
    const hostname = freshHostname();
    const answer = await as("POST", `/sites/${site.id}/domains`, { hostname: `${hostname.toUpperCase()}.` });
    expect(answer.status).toBe(201);
    const { domain } = answer.body;
    expect(answer.body.changed).toBe(true);
    expect(domain).toMatchObject({
      site_id: site.id,
      hostname,
      status: "DOMAIN_STATUS_PENDING",
      verification: { type: "TXT", name: `_pf-verify.${hostname}` },
      routing: [{ type: "CNAME", name: hostname, value: `${site.slug}.sites.pf-test.net` }],
    });
    expect(domain.id).toMatch(/^dom_[0-9a-z]{26}$/);
    // 128 random bits, hex.
    expect(domain.verification.value).toMatch(/^pf-verify=[0-9a-f]{32}$/);
    expect(domain.verified_at).toBeUndefined();
    const again = await as("POST", `/sites/${site.id}/domains`, { hostname });
    expect(again.status).toBe(200);
    expect(again.body.changed ?? false).toBe(false);
    expect(again.body.domain).toEqual(domain);
  });

  it("routes an apex domain by A and AAAA records of the edge; an IDN is stored in punycode", async () => {
    const { as, site } = await ownedSite();
    const apex = `${fresh("a")}.co.uk`;
    expect((await added(as, site.id, apex)).routing).toEqual([
      { type: "A", name: apex, value: "192.0.2.10" },
      { type: "AAAA", name: apex, value: "2001:db8::10" },
    ]);
    const idn = `www.bücher-${fresh("i")}.de`;
    expect((await added(as, site.id, idn)).hostname).toBe(new URL(`http://${idn}`).hostname);
  });

  it("refuses a platform domain or a name under one, a public suffix, an IP address and special-use names (403 host.domain_refused)", async () => {
    const { as, site } = await ownedSite();
    for (const hostname of [
      "pf-test.net",
      "evil.pf-test.net",
      `${site.slug}.sites.pf-test.net`,
      "github.io",
      "co.uk",
      "192.0.2.1",
      "[2001:db8::1]",
      "shop.localhost",
      "intranet",
    ]) {
      const answer = await as("POST", `/sites/${site.id}/domains`, { hostname });
      expect(answer.body, hostname).toMatchObject({ status: 403, code: "host.domain_refused" });
    }
    expect((await as("GET", `/sites/${site.id}/domains`)).body.domains ?? []).toEqual([]);
  });

  it("refuses any domain in a sandbox project (403 host.domain_refused)", async () => {
    const owner = `usr_${fresh("o")}`;
    const as = await asPerson(t, owner, "sandbox");
    const site = await siteOf(as, await projectOf(as, { environment: "ENVIRONMENT_SANDBOX" }));
    const answer = await as("POST", `/sites/${site.id}/domains`, { hostname: freshHostname() });
    expect(answer.body).toMatchObject({ status: 403, code: "host.domain_refused" });
  });

  it("409 host.domain_taken when another site has verified the name; another site may add a pending one", async () => {
    const first = await ownedSite();
    const second = await ownedSite();
    const hostname = freshHostname();
    const domain = await added(first.as, first.site.id, hostname);
    // Pending on one site, anyone may add it too: the TXT record decides.
    const pending = await added(second.as, second.site.id, hostname);
    publish(domain);
    expect((await first.as("POST", `/domains/${domain.id}/verify`)).body.domain.status).toBe("DOMAIN_STATUS_VERIFIED");
    const third = await ownedSite();
    const taken = await third.as("POST", `/sites/${third.site.id}/domains`, { hostname });
    expect(taken.body).toMatchObject({ status: 409, code: "host.domain_taken" });
    // The pending one cannot verify either, even with its own record published; the reason is kept.
    publish(pending, domain.verification.value);
    const verify = await second.as("POST", `/domains/${pending.id}/verify`);
    expect(verify.body).toMatchObject({ status: 409, code: "host.domain_taken" });
    const read = await second.as("GET", `/domains/${pending.id}`);
    expect(read.body.domain).toMatchObject({ status: "DOMAIN_STATUS_PENDING" });
    expect(read.body.domain.last_error).toContain("another site verified");
  });
});

describe("verify (POST /domains/{id}/verify)", () => {
  it("stays pending with the reason while the record is missing or wrong (200), then verifies once found: published", async () => {
    const { as, site, projectId } = await ownedSite();
    const domain = await added(as, site.id);
    const verify = () => as("POST", `/domains/${domain.id}/verify`);

    const nxdomain = await verify();
    expect(nxdomain.status).toBe(200);
    expect(nxdomain.body.changed ?? false).toBe(false);
    expect(nxdomain.body.domain).toMatchObject({ status: "DOMAIN_STATUS_PENDING", checked_at: now() });
    expect(nxdomain.body.domain.last_error).toContain("NXDOMAIN");

    zone.set(domain.verification.name, []);
    expect((await verify()).body.domain.last_error).toContain("has no TXT record");

    zone.set(domain.verification.name, ["v=spf1 -all", "pf-verify=0123456789abcdef0123456789abcdef"]);
    expect((await verify()).body.domain.last_error).toContain(`do not include "${domain.verification.value}"`);
    expect((await hostEvents(t, domain.hostname)).map((event) => event.subject)).toEqual([]);

    publish(domain, "v=spf1 -all");
    const verified = await verify();
    expect(verified.status).toBe(200);
    expect(verified.body).toMatchObject({
      changed: true,
      domain: { status: "DOMAIN_STATUS_VERIFIED", last_error: "", verified_at: now() },
    });
    expect(await hostEvents(t, domain.hostname)).toMatchObject([
      { subject: "host.domain.verified", project_id: projectId, site_id: site.id, hostname: domain.hostname },
    ]);
    const again = await verify();
    expect(again.body.changed ?? false).toBe(false);
    expect(again.body.domain.status).toBe("DOMAIN_STATUS_VERIFIED");
    expect(await hostEvents(t, domain.hostname)).toHaveLength(1);
  });

  it("a DNS server that never answers leaves it pending with the reason (200)", async () => {
    const { as, site } = await ownedSite();
    const domain = await added(as, site.id);
    zone.set(domain.verification.name, "silent");
    const answer = await as("POST", `/domains/${domain.id}/verify`);
    expect(answer.status).toBe(200);
    expect(answer.body.domain.status).toBe("DOMAIN_STATUS_PENDING");
    expect(answer.body.domain.last_error).toBe(
      `no DNS server answered for ${domain.verification.name} within ${TIMEOUT_MS} ms`,
    );
  });

  it("two sites verifying one name at once: one verifies, the other is 409 host.domain_taken", async () => {
    const one = await ownedSite();
    const two = await ownedSite();
    const hostname = freshHostname();
    const first = await added(one.as, one.site.id, hostname);
    const second = await added(two.as, two.site.id, hostname);
    zone.set(first.verification.name, [first.verification.value, second.verification.value]);
    const answers = await Promise.all([
      one.as("POST", `/domains/${first.id}/verify`),
      two.as("POST", `/domains/${second.id}/verify`),
    ]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409]);
    expect(answers.find((answer) => answer.status === 409)!.body.code).toBe("host.domain_taken");
    const verified = await hostSql<{ n: string }>(
      t,
      `select count(*) as n from {domains} where hostname = ? and status = 'verified'`,
      [hostname],
    );
    expect(Number(verified[0].n)).toBe(1);
  });
});

describe("read, list and roles", () => {
  it("any member reads and lists; a viewer or deployer adds, verifies and removes nothing (403 auth.role_required)", async () => {
    const { as, projectId, site } = await ownedSite();
    const domain = await added(as, site.id);
    const other = await added(as, site.id);
    const viewer = `usr_${fresh("v")}`;
    const deployer = `usr_${fresh("d")}`;
    await addMember(as, projectId, viewer, "viewer");
    await addMember(as, projectId, deployer, "deployer");
    for (const member of [viewer, deployer]) {
      const call = await asPerson(t, member);
      const read = await call("GET", `/domains/${domain.id}`);
      expect(read.status, member).toBe(200);
      expect(read.body.domain).toEqual(domain);
      const listed = await call("GET", `/sites/${site.id}/domains`);
      expect(listed.body.domains.map((each: { id: string }) => each.id)).toEqual([domain.id, other.id]);
      for (const [method, path] of [
        ["POST", `/sites/${site.id}/domains`],
        ["POST", `/domains/${domain.id}/verify`],
        ["DELETE", `/domains/${domain.id}`],
      ]) {
        const refused = await call(method, path, path.endsWith("/domains") ? { hostname: freshHostname() } : undefined);
        expect(refused.body, `${member} ${method} ${path}`).toMatchObject({ status: 403, code: "auth.role_required" });
      }
    }
  });

  it("someone with no role in the project is answered the domain's or site's 404", async () => {
    const { as, site } = await ownedSite();
    const domain = await added(as, site.id);
    const stranger = await asPerson(t, `usr_${fresh("x")}`);
    expect((await stranger("GET", `/domains/${domain.id}`)).body).toMatchObject({
      status: 404,
      code: "host.domain.not_found",
    });
    expect((await stranger("DELETE", `/domains/${domain.id}`)).body.code).toBe("host.domain.not_found");
    expect((await stranger("GET", `/sites/${site.id}/domains`)).body.code).toBe("host.site.not_found");
  });
});

describe("remove (DELETE /domains/{id})", () => {
  it("removes a verified domain (published, so no instance serves it); a second remove is 404; the name is free again", async () => {
    const { as, site, projectId } = await ownedSite();
    const domain = await added(as, site.id);
    publish(domain);
    await as("POST", `/domains/${domain.id}/verify`);
    const removed = await as("DELETE", `/domains/${domain.id}`);
    expect(removed.status).toBe(200);
    expect(removed.body).toMatchObject({ changed: true, domain: { id: domain.id, status: "DOMAIN_STATUS_VERIFIED" } });
    expect((await hostEvents(t, domain.hostname)).map((event) => event.subject)).toEqual([
      "host.domain.verified",
      "host.domain.removed",
    ]);
    expect(await hostEvents(t, domain.hostname)).toMatchObject([{}, { project_id: projectId, site_id: site.id }]);
    expect((await as("DELETE", `/domains/${domain.id}`)).body).toMatchObject({
      status: 404,
      code: "host.domain.not_found",
    });
    expect((await as("GET", `/domains/${domain.id}`)).body.code).toBe("host.domain.not_found");
    // Another tenant may now take it, with a record of its own.
    const next = await ownedSite();
    const taken = await added(next.as, next.site.id, domain.hostname);
    publish(taken);
    expect((await next.as("POST", `/domains/${taken.id}/verify`)).body.domain.status).toBe("DOMAIN_STATUS_VERIFIED");
  });

  it("409 host.under_review while its site or project is taken down", async () => {
    await seedStaff(t, { usr_domstaff1: StaffRole.ADMIN });
    const staff = await asPerson(t, "usr_domstaff1");
    const { as, site, projectId } = await ownedSite();
    const domain = await added(as, site.id);
    expect((await staff("POST", `/sites/${site.id}/takedown`, { reason: "review" })).status).toBe(200);
    expect((await as("DELETE", `/domains/${domain.id}`)).body).toMatchObject({
      status: 409,
      code: "host.under_review",
    });
    await staff("DELETE", `/sites/${site.id}/takedown`);
    await staff("POST", `/projects/${projectId}/takedown`, { reason: "review" });
    expect((await as("DELETE", `/domains/${domain.id}`)).body.code).toBe("host.under_review");
    await staff("DELETE", `/projects/${projectId}/takedown`);
    expect((await as("DELETE", `/domains/${domain.id}`)).status).toBe(200);
  });
});

describe("re-verification (workers/reverify.ts)", () => {
  it("unverifies a domain whose record is gone on 3 checks in a row (published); no answer and a record back count for nothing", async () => {
    const { as, site } = await ownedSite();
    const verified = async () => {
      const domain = await added(as, site.id);
      publish(domain);
      await as("POST", `/domains/${domain.id}/verify`);
      return domain;
    };
    const gone = await verified();
    const silent = await verified();
    const back = await verified();
    zone.delete(gone.verification.name);
    zone.set(silent.verification.name, "silent");
    zone.set(back.verification.name, []);
    const read = async (domain: { id: string }) => (await as("GET", `/domains/${domain.id}`)).body.domain;
    const pass = async () => {
      clock.advance(hostContext(t).settings.reverifyEveryMs);
      await reverifyDomains(hostContext(t));
    };

    await pass();
    expect(await read(gone)).toMatchObject({ status: "DOMAIN_STATUS_VERIFIED", checked_at: now() });
    expect((await read(gone)).last_error).toContain("NXDOMAIN");
    expect((await read(back)).last_error).toContain("has no TXT record");
    publish(back);
    await pass();
    expect(await read(back)).toMatchObject({ status: "DOMAIN_STATUS_VERIFIED", last_error: "" });
    expect(await read(gone)).toMatchObject({ status: "DOMAIN_STATUS_VERIFIED" });
    zone.set(back.verification.name, []);
    await pass();
    // Gone three times in a row: pending again, and every instance told to stop serving it.
    const unverified = await read(gone);
    expect(unverified).toMatchObject({ status: "DOMAIN_STATUS_PENDING" });
    expect(unverified.verified_at).toBeUndefined();
    expect(unverified.last_error).toContain("3 checks in a row");
    expect((await hostEvents(t, gone.hostname)).map((event) => event.subject)).toEqual([
      "host.domain.verified",
      "host.domain.removed",
    ]);
    // Three checks without an answer, and one miss after a found record, leave them served.
    expect(await read(silent)).toMatchObject({ status: "DOMAIN_STATUS_VERIFIED" });
    expect((await read(silent)).last_error).toContain("no DNS server answered");
    expect(await read(back)).toMatchObject({ status: "DOMAIN_STATUS_VERIFIED" });
    expect((await hostEvents(t, silent.hostname)).map((event) => event.subject)).toEqual(["host.domain.verified"]);
  });
});
