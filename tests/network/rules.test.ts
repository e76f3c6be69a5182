import { ConnectError } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { NetworkAdminService } from "../../gen/pf/network/v1/admin_pb.js";
import { StaffRole } from "../../gen/pf/network/v1/network_pb.js";
import { ProblemSchema } from "../../gen/pf/v1/problem_pb.js";
import type { HttpAnswer } from "../support/platform.js";
import { usePlatform } from "../support/platform.js";

const t = usePlatform({ services: ["network"] });
let coins: string;
let resolver: string;
let space: string;
let pusher: string;
let admin: ReturnType<typeof adminClient>;
const adminClient = (token: string) => t.client(NetworkAdminService, token);

beforeAll(async () => {
  const caps = ["network.coins.credit", "network.coins.debit", "network.coins.transfer"];
  coins = await t.token({ kind: "service", svc: "community", caps, app_id: "app_main" });
  resolver = await t.token({ kind: "service", svc: "tips", caps: ["identity.subject.resolve", "network.blocks.read"] });
  space = await t.token({ kind: "service", svc: "space", caps: ["network.modules.read", "network.modules.write"] });
  pusher = await t.token({ kind: "service", svc: "space", caps: ["network.notifications.push"] });
  admin = adminClient(await t.token({ kind: "service", svc: "network", caps: ["network.admin"] }));
});

type Fault = { field: string; rule: string };

/** The faults a 400 request.invalid lists in `errors`, as `field rule`, in order. */
function faults(answer: HttpAnswer): string[] {
  expect(answer.body, JSON.stringify(answer.body)).toMatchObject({ status: 400, code: "request.invalid" });
  return (answer.body.errors as Fault[]).map(({ field, rule }) => `${field} ${rule}`);
}

/** The same, of a call on the RPC port. */
async function rpcFaults(call: Promise<unknown>): Promise<string[]> {
  const refusal = await call.then(
    () => undefined,
    (error: unknown) => ConnectError.from(error).findDetails(ProblemSchema)[0],
  );
  expect(refusal).toMatchObject({ status: 400, code: "request.invalid" });
  return (refusal!.extensions!.errors as Fault[]).map(({ field, rule }) => `${field} ${rule}`);
}

describe("network's input rules, declared in the contract", () => {
  it("report every rule a coin change or transfer breaks, each naming its field", async () => {
    const credit = await t.http("POST", "/network/internal/coins/credit", {
      token: coins,
      body: { subject: "gst_1", amount: 0, idempotency_key: "k", reason: "r".repeat(201) },
    });
    expect(credit.body.field).toBe("subject");
    expect(faults(credit)).toEqual(["subject id_prefix", "amount required", "reason string.max_len"]);

    const debit = await t.http("POST", "/network/internal/coins/debit", {
      token: coins,
      body: { amount: "1000000000000001" },
    });
    expect(faults(debit)).toEqual(["subject required", "amount int64.gte_lte"]);

    const transfer = await t.http("POST", "/network/internal/coins/transfer", {
      token: coins,
      body: { from_subject: "bob", amount: -1, reason: "r".repeat(201) },
    });
    expect(faults(transfer)).toEqual([
      "from_subject id_prefix",
      "to_subject required",
      "amount int64.gte_lte",
      "reason string.max_len",
    ]);
  });

  it("hold the block read's and identity resolve's queries, and the batch's size and items", async () => {
    const blocks = (query: string) => t.http("GET", `/network/internal/blocks${query}`, { token: resolver });
    expect(faults(await blocks(""))).toEqual(["subject required"]);
    expect(faults(await blocks("?subject=gst_1"))).toEqual(["subject id_prefix"]);

    const resolve = await t.http("GET", `/network/internal/identity/resolve?subject=bob&local_id=${"x".repeat(129)}`, {
      token: resolver,
    });
    expect(faults(resolve)).toEqual(["subject string.pattern", "local_id id.max_len"]);

    const batch = (queries: object[]) =>
      t.http("POST", "/network/internal/identity/resolve-batch", { token: resolver, body: { queries } });
    expect(faults(await batch([]))).toEqual(["queries required"]);
    const many = [{ subject: "bob" }, ...Array.from({ length: 200 }, () => ({ subject: "usr_a1" }))];
    expect(faults(await batch(many))).toEqual(["queries repeated.max_items", "queries[0].subject string.pattern"]);
  });

  it("hold a module's address and revision before the namespace's owner is asked", async () => {
    const read = await t.http("GET", "/network/internal/modules/Space!/bob", { token: space });
    expect(faults(read)).toEqual(["namespace string.pattern", "subject string.pattern"]);
    // Not space's namespace either: the rules answer first.
    const write = await t.http("PUT", `/network/internal/modules/${"a".repeat(65)}/usr_m1`, {
      token: space,
      body: { record: {}, expected_revision: -1 },
    });
    expect(faults(write)).toEqual(["namespace string.max_len", "expected_revision int64.gte"]);
  });

  it("hold a notification push's kind, recipients, texts and actor", async () => {
    const push = (kind: string, body: object) =>
      t.http("POST", `/network/internal/notifications/${kind}`, { token: pusher, body });
    const everything = await push("Bad%20Kind", {
      recipients: ["usr_n1", "legacy-42"],
      title: "t".repeat(201),
      body: "b".repeat(4001),
      link: `https://example.com/${"l".repeat(2000)}`,
      actor: "gst_1",
    });
    expect(faults(everything)).toEqual([
      "kind string.pattern",
      "recipients[1] id_prefix",
      "title string.max_len",
      "body string.max_len",
      "link string.max_len",
      "actor id_prefix",
    ]);
    const crowd = Array.from({ length: 501 }, (_, i) => `usr_n${i}`);
    expect(faults(await push("k".repeat(101), { recipients: crowd, title: "x" }))).toEqual([
      "kind string.max_len",
      "recipients repeated.max_items",
    ]);
    expect(faults(await push("mention", { title: "x" }))).toEqual(["recipients required"]);
  });

  it("hold the admin side's requests on the RPC port", async () => {
    expect(await rpcFaults(admin.setStaff({ subject: "gst_1", role: 9 as StaffRole }))).toEqual([
      "subject id_prefix",
      "role enum.defined_only",
    ]);
    expect(await rpcFaults(admin.setStaff({ role: StaffRole.UNSPECIFIED }))).toEqual([
      "subject required",
      "role required",
    ]);
    expect(await rpcFaults(admin.removeStaff({}))).toEqual(["subject required"]);
    expect(await rpcFaults(admin.setBlock({ blocker: "gst_1", blocked: "bob" }))).toEqual([
      "blocker id_prefix",
      "blocked string.pattern",
    ]);
    expect(await rpcFaults(admin.removeBlock({}))).toEqual(["blocker required", "blocked required"]);
    expect(await rpcFaults(admin.linkLegacyId({ service: "Tips", subject: "bob" }))).toEqual([
      "service string.pattern",
      "local_id required",
      "subject string.pattern",
    ]);
  });
});
