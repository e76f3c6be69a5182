import { create } from "@bufbuild/protobuf";
import { WireType } from "@bufbuild/protobuf/wire";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import { DealsService } from "../../gen/pf/deals/v1/deals_pb.js";
import { VoteRequestSchema } from "../../gen/pf/deals/v1/votes_pb.js";
import { qualified } from "../../services/kit/db/orm.js";
import { problemOf } from "../../services/kit/handler/problem.js";
import { usePlatform } from "../support/platform.js";
import { untilBlockedBy } from "../support/row-lock.js";
import { DATABASE_SERVER, itWith } from "../support/skips.js";
import { actingFor, ALL_DEALS, dealsOf, person, submit } from "./support.js";

const t = usePlatform({ services: ["deals"], env: { PF_DEALS_VOTE_RING_THRESHOLD: "2" } });
let web: string;
let as: ReturnType<typeof actingFor>;

beforeAll(async () => {
  web = await t.token({ kind: "service", svc: "web", caps: ALL_DEALS });
  as = actingFor(t, () => web);
});

const vote = (offer: string, who: string, value: number) => as("PUT", `/offers/${offer}/vote`, who, { value });

describe("votes", () => {
  it("are server-authoritative: weight and hotness sent by a client are refused by name", async () => {
    const offer = (await submit(t, web, person())).offer;
    for (const field of ["weight", "hotness"]) {
      const answer = await as("PUT", `/offers/${offer.id}/vote`, person(), { value: 1, [field]: 5 });
      expect(answer.status).toBe(400);
      expect(answer.body.code).toBe("request.invalid");
      expect(answer.body.detail).toContain(field);
    }
    const bad = await vote(offer.id, person(), 2);
    expect(bad.body).toMatchObject({ status: 400, field: "value" });
  });

  it("weight and hotness sent by a direct RPC caller (binary, as unknown fields) are refused, never dropped", async () => {
    const offer = (await submit(t, web, person())).offer;
    const headers = { authorization: `Bearer ${web}`, "x-pf-subject": person() };
    // Fields 3 and 4 stand for a client's weight and hotness: the contract names neither.
    for (const no of [3, 4]) {
      // create() keeps only the fields the schema names: the unknown ones are set on the message itself.
      const request = create(VoteRequestSchema, { id: offer.id, value: 1 });
      request.$unknown = [{ no, wireType: WireType.Varint, data: new Uint8Array([5]) }];
      const inMemory = t.client(DealsService, web);
      const refused = await inMemory
        .setVote(request, { headers: { "x-pf-subject": headers["x-pf-subject"] } })
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(ConnectError);
      expect(problemOf(refused)).toMatchObject({
        status: 400,
        code: "request.invalid",
        extensions: { field: `#${no}` },
      });
      // And on the wire: gRPC on the RPC port carries them as bytes the handler never sees.
      const grpc = createClient(DealsService, createGrpcTransport({ baseUrl: t.platform.rpcUrl }));
      await expect(grpc.setVote(request, { headers })).rejects.toMatchObject({ code: Code.InvalidArgument });
    }
    const grpc = createClient(DealsService, createGrpcTransport({ baseUrl: t.platform.rpcUrl }));
    const counted = await grpc.setVote({ id: offer.id, value: 1 }, { headers });
    expect(counted.vote).toMatchObject({ value: 1, weight: 1 });
  });

  it("one per person and offer, weight and hot@1 by the service; none on one's own offer; a removed vote stays a removed row", async () => {
    const owner = person();
    const offer = (await submit(t, web, owner)).offer;
    const own = await vote(offer.id, owner, 1);
    expect(own.body).toMatchObject({ status: 403, code: "vote.own_offer" });
    const voter = person();
    const up = await vote(offer.id, voter, 1);
    expect(up.status).toBe(200);
    expect(up.body.vote).toMatchObject({ voter, value: 1, weight: 1 });
    expect(up.body.tally).toMatchObject({ score: 1, up: 1, down: 0, voters: 1 });
    expect(typeof up.body.tally.hotness).toBe("number");
    const again = await vote(offer.id, voter, 1);
    expect(again.body.vote.id).toBe(up.body.vote.id);
    const down = await vote(offer.id, voter, -1);
    expect(down.body.tally).toMatchObject({ score: -1, up: 0, down: 1, voters: 1 });
    const guest = await vote(offer.id, "gst_g1", 1);
    expect(guest.body.vote.weight).toBe(0.5);
    const removed = await as("DELETE", `/offers/${offer.id}/vote`, voter);
    expect(removed.body.vote.removed_at).toBeDefined();
    expect(removed.body.tally).toMatchObject({ score: 0.5, voters: 1 });
    const none = await as("DELETE", `/offers/${offer.id}/vote`, voter);
    expect(none.body).toMatchObject({ status: 404, code: "vote.not_found" });
  });

  it("vote-ring detection flags moderators, never changing votes or the offer", async () => {
    const [a, b] = [person("ra"), person("rb")];
    const offersOfA = [(await submit(t, web, a)).offer, (await submit(t, web, a)).offer];
    const offersOfB = [(await submit(t, web, b)).offer, (await submit(t, web, b)).offer];
    for (const offer of offersOfB) await vote(offer.id, a, 1);
    for (const offer of offersOfA) await vote(offer.id, b, 1);
    const flags = await t.http(
      "GET",
      `/deals/api/v1/flags?flag_reason=FLAG_REASON_VOTE_RING&offer_id=${offersOfA[1].id}`,
      { token: web },
    );
    expect(flags.status).toBe(200);
    expect(flags.body.flags.flags).toHaveLength(1);
    expect(flags.body.flags.flags[0]).toMatchObject({ reporter: "svc:deals", reason: "FLAG_REASON_VOTE_RING" });
  });
});

describe("merge and unmerge", () => {
  it("nothing copied or deleted; the canonical reads across the group with a voter counted once; unmerge restores every tally exactly", async () => {
    const canonical = (await submit(t, web, person())).offer;
    const duplicate = (await submit(t, web, person())).offer;
    const [both, onlyDup, onlyCanon] = [person(), person(), person()];
    await vote(canonical.id, both, 1);
    await vote(duplicate.id, both, 1);
    await vote(duplicate.id, onlyDup, -1);
    await vote(canonical.id, onlyCanon, 1);
    await as("POST", `/offers/${duplicate.id}/observations`, person(), {
      observation: { price: { minor_units: 5, currency: "EUR" } },
    });

    const merged = await t.http("POST", `/deals/api/v1/offers/${duplicate.id}/merge`, {
      token: web,
      body: { into: canonical.id, reason: "same deal" },
    });
    expect(merged.status).toBe(200);
    const m = merged.body.merge;
    expect(m).toMatchObject({ action: "merge", offer_id: duplicate.id, canonical_id: canonical.id, actor: "svc:web" });
    expect(m.canonical_before).toMatchObject({ up: 2, down: 0, voters: 2, observations: 1 });
    expect(m.offer_before).toMatchObject({ up: 1, down: 1, voters: 2, observations: 2 });
    // `both` counts once across the group.
    expect(m.canonical_after).toMatchObject({ score: 1, up: 2, down: 1, voters: 3, observations: 3 });
    expect(merged.body.offer).toMatchObject({ id: canonical.id, merged: [duplicate.id] });
    expect(merged.body.offer.latest_observation.offer_id).toBe(duplicate.id);

    const onMerged = await vote(duplicate.id, person(), 1);
    expect(onMerged.body).toMatchObject({ status: 409, code: "offer.not_active", merged_into: canonical.id });
    const again = await t.http("POST", `/deals/api/v1/offers/${duplicate.id}/merge`, {
      token: web,
      body: { into: canonical.id },
    });
    expect(again.body.code).toBe("offer.merged");

    const unmerged = await t.http("POST", `/deals/api/v1/offers/${duplicate.id}/unmerge`, { token: web, body: {} });
    expect(unmerged.status).toBe(200);
    expect(unmerged.body.merge.canonical_after).toEqual(m.canonical_before);
    expect(unmerged.body.merge.offer_after).toEqual(m.offer_before);
    expect(unmerged.body.offer).toMatchObject({ id: duplicate.id, status: "OFFER_STATUS_ACTIVE", merged_into: "" });
    const twice = await t.http("POST", `/deals/api/v1/offers/${duplicate.id}/unmerge`, { token: web, body: {} });
    expect(twice.body).toMatchObject({ status: 409, code: "offer.not_merged" });
  });

  it("a submitter's vote on a duplicate never counts for their own canonical offer, and counts again after unmerge", async () => {
    const owner = person();
    const canonical = (await submit(t, web, owner)).offer;
    const duplicate = (await submit(t, web, person())).offer;
    await vote(duplicate.id, owner, 1);
    await vote(duplicate.id, person(), -1);
    const merged = await t.http("POST", `/deals/api/v1/offers/${duplicate.id}/merge`, {
      token: web,
      body: { into: canonical.id },
    });
    expect(merged.body.merge.offer_before).toMatchObject({ up: 1, down: 1, voters: 2 });
    expect(merged.body.merge.canonical_after).toMatchObject({ up: 0, down: 1, voters: 1, score: -1 });
    const unmerged = await t.http("POST", `/deals/api/v1/offers/${duplicate.id}/unmerge`, { token: web, body: {} });
    expect(unmerged.body.merge.offer_after).toEqual(merged.body.merge.offer_before);
    expect(unmerged.body.merge.canonical_after).toMatchObject({ up: 0, down: 0, voters: 0 });
  });

  it("refuses merging into itself, into a merged offer, and people who are not stated staff", async () => {
    const [a, b, c] = [
      (await submit(t, web, person())).offer,
      (await submit(t, web, person())).offer,
      (await submit(t, web, person())).offer,
    ];
    const self = await t.http("POST", `/deals/api/v1/offers/${a.id}/merge`, { token: web, body: { into: a.id } });
    expect(self.body).toMatchObject({ status: 400, field: "into" });
    await t.http("POST", `/deals/api/v1/offers/${b.id}/merge`, { token: web, body: { into: a.id } });
    const intoMerged = await t.http("POST", `/deals/api/v1/offers/${c.id}/merge`, { token: web, body: { into: b.id } });
    expect(intoMerged.body.code).toBe("offer.merge_target_merged");
    const canonicalWithMembers = await t.http("POST", `/deals/api/v1/offers/${a.id}/merge`, {
      token: web,
      body: { into: c.id },
    });
    expect(canonicalWithMembers.body.code).toBe("offer.has_merged");
    const notStaff = await as("POST", `/offers/${c.id}/merge`, person(), { into: a.id });
    expect(notStaff.body).toMatchObject({ status: 403, code: "auth.staff_required" });
    const missing = await t.http("POST", `/deals/api/v1/offers/off_none/merge`, { token: web, body: { into: a.id } });
    expect(missing.body.code).toBe("offer.not_found");
  });
});

describe("flags", () => {
  it("one open report per person and offer; never changing the offer; moderators read and resolve (audited)", async () => {
    const offer = (await submit(t, web, person())).offer;
    const reporter = person();
    const flagged = await as("POST", `/offers/${offer.id}/flags`, reporter, {
      reason: "FLAG_REASON_EXPIRED",
      note: "ended yesterday",
    });
    expect(flagged.status).toBe(201);
    expect(flagged.body.flag).toMatchObject({ reporter, reason: "FLAG_REASON_EXPIRED", offer_id: offer.id });
    const twice = await as("POST", `/offers/${offer.id}/flags`, reporter, { reason: "FLAG_REASON_SPAM" });
    expect(twice.body).toMatchObject({ status: 409, code: "flag.duplicate" });
    expect(twice.body.flag.id).toBe(flagged.body.flag.id);
    const ring = await as("POST", `/offers/${offer.id}/flags`, person(), { reason: "FLAG_REASON_VOTE_RING" });
    expect(ring.body).toMatchObject({ status: 400, field: "reason" });
    // The offer is untouched: still active, still open to observations.
    const observed = await as("POST", `/offers/${offer.id}/observations`, person(), {});
    expect(observed.body.offer.status).toBe("OFFER_STATUS_ACTIVE");

    const user = await t.token({ kind: "user", sub: person() });
    expect((await t.http("GET", "/deals/api/v1/flags", { token: user })).body.code).toBe("auth.staff_required");
    const open = await as("GET", `/flags?offer_id=${offer.id}`, person("staff"), undefined, { "x-pf-staff": "1" });
    const noPage = await t.http("GET", `/deals/api/v1/flags?offer_id=${offer.id}&limit=0`, { token: web });
    expect(noPage.body).toMatchObject({ status: 400, code: "request.invalid", field: "limit" });
    const noState = await t.http("GET", `/deals/api/v1/flags?offer_id=${offer.id}&state=9`, { token: web });
    expect(noState.body).toMatchObject({ status: 400, code: "request.invalid", field: "state" });
    expect(open.body.flags.flags.map((f: { id: string }) => f.id)).toEqual([flagged.body.flag.id]);
    const resolved = await t.http("POST", `/deals/api/v1/flags/${flagged.body.flag.id}/resolve`, {
      token: web,
      body: { outcome: "FLAG_OUTCOME_DISMISSED", reason: "still on" },
    });
    expect(resolved.body.flag.flag).toMatchObject({
      outcome: "FLAG_OUTCOME_DISMISSED",
      resolved_by: "svc:web",
      resolution: "still on",
    });
    expect(resolved.body.flag.audit).toMatchObject({ action: "resolve_flag", flag_id: flagged.body.flag.id });
    const repeat = await t.http("POST", `/deals/api/v1/flags/${flagged.body.flag.id}/resolve`, {
      token: web,
      body: { outcome: "FLAG_OUTCOME_ACTIONED" },
    });
    expect(repeat.body).toMatchObject({ status: 409, code: "flag.resolved" });
    const noOutcome = await t.http("POST", `/deals/api/v1/flags/${flagged.body.flag.id}/resolve`, {
      token: web,
      body: {},
    });
    expect(noOutcome.body).toMatchObject({ status: 400, field: "outcome" });
    const reopened = await as("POST", `/offers/${offer.id}/flags`, reporter, { reason: "FLAG_REASON_OTHER" });
    expect(reopened.status).toBe(201);
  });

  it("two reports by one person on one offer at once: one 201 and one 409 flag.duplicate, never a 500", async () => {
    for (let round = 0; round < 3; round++) {
      const offer = (await submit(t, web, person())).offer;
      const reporter = person();
      const answers = await Promise.all(
        ["FLAG_REASON_SPAM", "FLAG_REASON_OTHER"].map((reason) =>
          as("POST", `/offers/${offer.id}/flags`, reporter, { reason }),
        ),
      );
      expect(answers.map((answer) => answer.status).sort()).toEqual([201, 409]);
      const [made, refused] = answers[0].status === 201 ? answers : [answers[1], answers[0]];
      expect(refused.body).toMatchObject({ code: "flag.duplicate", flag: { id: made.body.flag.id } });
    }
  });

  // A second session holds an open report of the same person, not yet committed: the call's insert waits on
  // flags_one_open and, once it commits, fails as a unique violation. That is 409 flag.duplicate, never a 500.
  // The embedded database is one session (it queues other connections' statements while one is in a
  // transaction), so nothing races the index there: this needs a PostgreSQL server, which CI always has.
  itWith(DATABASE_SERVER, "a report racing one the index catches answers 409 flag.duplicate", async () => {
    const offer = (await submit(t, web, person())).offer;
    const reporter = person();
    const ctx = dealsOf(t);
    const holder = new pg.Client({ connectionString: t.platform.databaseUrl });
    await holder.connect();
    try {
      await holder.query("begin");
      await holder.query(
        `insert into ${qualified(ctx.orm.em, "flags")} (id, offer_id, reporter, reason, note, created_at) values ('flg_held', $1, $2, 'spam', '', now())`,
        [offer.id, reporter],
      );
      const call = as("POST", `/offers/${offer.id}/flags`, reporter, { reason: "FLAG_REASON_OTHER" });
      await untilBlockedBy(holder);
      await holder.query("commit");
      const answer = await call;
      expect(answer.body).toMatchObject({ status: 409, code: "flag.duplicate", flag: { id: "flg_held" } });
    } finally {
      await holder.end();
    }
  });
});
