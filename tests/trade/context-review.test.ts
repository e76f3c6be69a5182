import { describe, expect, it } from "vitest";
import { TradeAdminService } from "../../gen/pf/trade/v1/admin_pb.js";
import { outboxEvents } from "../support/outbox.js";
import { usePlatform } from "../support/platform.js";
import { AI, as, contextKit, decision, WORKFLOW } from "./context-support.js";
import { EDITORS, person, TRADE_ENV } from "./support.js";

/**
 * Market context, part two: drafts are published only after a person on the
 * market-context editor list approves them (who and when recorded), all=1 for
 * editors and services only, the editor list managed through TradeAdminService.
 */
const t = usePlatform({ services: ["trade", "ai"], env: TRADE_ENV });
const { tokens, contextCall, withInput, proposed } = contextKit(t);
const EDITOR = EDITORS[0];

describe("review and publishing", () => {
  it("publishes only after a person on the editor list approves, recording who and when", async () => {
    const { symbol, input } = await withInput();
    const draft = await proposed(symbol, input.input_id);
    const n = draft.revision;

    // Not publishable as a draft.
    expect((await contextCall("POST", symbol, { body: decision("publish", n) })).body).toMatchObject({
      status: 409,
      code: "context.not_approved",
    });
    // AI output never approves, even naming a listed editor; nor does a service alone.
    expect(
      (
        await contextCall("POST", symbol, {
          token: tokens.ai,
          headers: { ...AI, ...as(EDITOR) },
          body: decision("approve", n),
        })
      ).body,
    ).toMatchObject({
      status: 403,
      code: "auth.person_required",
    });
    expect((await contextCall("POST", symbol, { body: decision("approve", n) })).body).toMatchObject({
      status: 403,
      code: "auth.person_required",
    });
    // A person not on the list, with their own token or named by a service.
    const stranger = person();
    expect(
      (await contextCall("POST", symbol, { headers: as(stranger), body: decision("approve", n) })).body,
    ).toMatchObject({
      status: 403,
      code: "auth.editor_required",
    });
    const strangerToken = await t.token({ kind: "user", sub: stranger });
    expect(
      (await contextCall("POST", symbol, { token: strangerToken, body: decision("approve", n) })).body,
    ).toMatchObject({
      code: "auth.editor_required",
    });

    const before = Date.now();
    const approved = await contextCall("POST", symbol, {
      headers: as(EDITOR),
      body: decision("approve", n, "checked the filing"),
    });
    expect(approved.status).toBe(200);
    expect(approved.body.revision).toMatchObject({
      status: "CONTEXT_STATUS_APPROVED",
      approval: { approver: EDITOR, verdict: "APPROVAL_VERDICT_APPROVED", note: "checked the filing" },
    });
    expect(Date.parse(approved.body.revision.approval.at)).toBeGreaterThanOrEqual(before - 1000);
    expect(
      (await contextCall("POST", symbol, { headers: as(EDITOR), body: decision("approve", n) })).body,
    ).toMatchObject({
      status: 409,
      code: "context.not_draft",
    });
    expect(
      (await contextCall("POST", symbol, { headers: as(EDITOR), body: decision("reject", n) })).body,
    ).toMatchObject({
      code: "context.not_draft",
    });
    // AI output does not publish either.
    expect(
      (await contextCall("POST", symbol, { token: tokens.ai, headers: AI, body: decision("publish", n) })).body,
    ).toMatchObject({
      status: 403,
      code: "auth.editor_required",
    });

    const published = await contextCall("POST", symbol, { headers: as(EDITOR), body: decision("publish", n) });
    expect(published.status).toBe(200);
    // One trade.context.proposed when proposed, one trade.context.published now (the outbox, same transaction).
    const events = await outboxEvents(t, "trade", published.body.revision.id);
    expect(events.map((event) => event.subject)).toEqual(["trade.context.proposed", "trade.context.published"]);
    expect(JSON.parse(events[1].payload)).toMatchObject({ symbol, superseded: 0, revision: { revision: n } });
    const read = (await contextCall("GET", symbol, { token: tokens.ai })).body.context;
    expect(read.published).toMatchObject({
      revision: n,
      status: "CONTEXT_STATUS_PUBLISHED",
      text: "Shares rose to 190.50 USD [1].",
    });
    expect(read.published.citations).toMatchObject([{ number: 1, kind: "observation", value: "190.50", unit: "USD" }]);
    expect(read.published.disclosure).toMatch(
      new RegExp(
        `${WORKFLOW} \\(run air_[0-9a-z]+, with a stub provider standing in for a model\\).*Approved by ${EDITOR}.*Not investment advice`,
      ),
    );
    expect(read.published.published_at).toBeDefined();

    // A later approved revision replaces it; the earlier one is superseded.
    const next = await proposed(symbol, input.input_id, {
      text: "Shares were 187.12 USD on 1 December [2].",
      citations: [2],
    });
    await contextCall("POST", symbol, { headers: as(EDITOR), body: decision("approve", next.revision) });
    const replaced = await contextCall("POST", symbol, { body: decision("publish", next.revision) });
    expect(replaced.status).toBe(200);
    const now = (await contextCall("GET", symbol)).body.context;
    expect(now.published.revision).toBe(next.revision);
    expect((await contextCall("POST", symbol, { body: decision("publish", n) })).body).toMatchObject({
      status: 409,
      code: "context.not_approved",
    });
  });

  it("never publishes a rejected draft, and answers 404 context.not_found for a revision that does not exist", async () => {
    const { symbol, input } = await withInput();
    const draft = await proposed(symbol, input.input_id);
    const rejected = await contextCall("POST", symbol, {
      headers: as(EDITOR),
      body: decision("reject", draft.revision, "thin"),
    });
    expect(rejected.body.revision).toMatchObject({
      status: "CONTEXT_STATUS_REJECTED",
      approval: { verdict: "APPROVAL_VERDICT_REJECTED" },
    });
    expect((await contextCall("POST", symbol, { body: decision("publish", draft.revision) })).body).toMatchObject({
      code: "context.not_approved",
    });
    expect(
      (await contextCall("POST", symbol, { headers: as(EDITOR), body: decision("approve", 99) })).body,
    ).toMatchObject({
      status: 404,
      code: "context.not_found",
    });
  });
});

describe("drafts with all=1 and the editor list", () => {
  it("shows drafts to editors and services, and refuses anyone else", async () => {
    const { symbol, input } = await withInput();
    await proposed(symbol, input.input_id);
    const editorToken = await t.token({ kind: "user", sub: EDITOR });
    for (const reader of [{ token: tokens.web }, { token: tokens.web, headers: as(EDITOR) }, { token: editorToken }]) {
      const read = await contextCall("GET", symbol, reader);
      expect(read.body.context.drafts).toEqual([]);
      const all = await t.http("GET", `/trade/api/v1/instruments/${symbol}/context?all=1`, reader);
      expect(all.body.context.drafts.map((d: { status: string }) => d.status)).toEqual(["CONTEXT_STATUS_DRAFT"]);
    }
    const stranger = person();
    const refused = await t.http("GET", `/trade/api/v1/instruments/${symbol}/context?all=1`, {
      token: tokens.web,
      headers: as(stranger),
    });
    expect(refused.body).toMatchObject({ status: 403, code: "auth.editor_required" });
    const aiAll = await t.http("GET", `/trade/api/v1/instruments/${symbol}/context?all=1`, {
      token: tokens.ai,
      headers: AI,
    });
    expect(aiAll.body).toMatchObject({ status: 403, code: "auth.editor_required" });
  });

  it("an editor set through TradeAdminService approves; once removed they are refused", async () => {
    const { symbol, input } = await withInput();
    const first = await proposed(symbol, input.input_id);
    const second = await proposed(symbol, input.input_id);
    const newcomer = person();
    const adminClient = t.client(TradeAdminService, tokens.admin);
    expect(
      (await contextCall("POST", symbol, { headers: as(newcomer), body: decision("approve", first.revision) })).body
        .code,
    ).toBe("auth.editor_required");
    expect(await adminClient.setEditor({ subject: newcomer })).toMatchObject({ subject: newcomer, addedBy: "svc:ops" });
    expect((await adminClient.listEditors({})).editors.map((e) => e.subject)).toContain(newcomer);
    const approved = await contextCall("POST", symbol, {
      headers: as(newcomer),
      body: decision("approve", first.revision),
    });
    expect(approved.body.revision.approval.approver).toBe(newcomer);
    expect((await adminClient.removeEditor({ subject: newcomer })).removed).toBe(true);
    expect(
      (await contextCall("POST", symbol, { headers: as(newcomer), body: decision("approve", second.revision) })).body
        .code,
    ).toBe("auth.editor_required");
  });
});
