import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { expect, it } from "vitest";
import { InstrumentManageRequestSchema } from "../../gen/pf/trade/v1/instruments_pb.js";
import { TradeService } from "../../gen/pf/trade/v1/trade_pb.js";
import { routeAccessOf } from "../../services/kit/auth/enforce.js";
import { callerOf } from "../../services/kit/auth/principal.js";
import { editorRelation, editorsSetting, seededEditors } from "../../services/kit/editors/editors.js";
import { editorHandlers } from "../../services/kit/editors/handlers.js";
import { problem, problemOf } from "../../services/kit/handler/problem.js";
import { Relations } from "../../services/kit/rpc/relations.js";
import { loadConfig } from "../../services/kit/runtime/config.js";
import type { ServiceContext } from "../../services/kit/service/module.js";
import { describeWith, DATABASE_SERVER } from "../support/skips.js";
import { usePlatform } from "../support/platform.js";
import { asService, asServiceFor, asUser, callAs } from "../support/callers.js";

/**
 * The kit's editor lists (analysis K7) on a real service schema: every service
 * has an `editors` table; deals stands in for any of them here. The `editor`
 * relation is resolved as the kit's Relations interceptor does, on trade's
 * instrument manage rule (`relation: {name: "editor"}`); the routes declaring
 * it test it again through the gateway (their refusal matrices).
 */
let n = 0;
const person = () => `usr_ed${Date.now().toString(36)}${(n++).toString(36)}`;
const SEEDED = "usr_seedededitor";
const manage = TradeService.method.createInstrument;

describeWith(DATABASE_SERVER, "editor lists", () => {
  const t = usePlatform({ services: ["deals"], env: { PF_DEALS_EDITORS: ` ${SEEDED} , ` } });
  const ctx = () => t.platform.contexts.get("deals") as ServiceContext;
  const admin = () => editorHandlers(ctx());
  /** The kit's relations with `resolve` as trade's editor relation, on deals' editor list. */
  const relations = (resolve = editorRelation) => {
    const found = new Relations(ctx().logger);
    found.register([TradeService], { editor: resolve }, ctx());
    return found;
  };
  /** The call as the Relations interceptor admits it: the role it holds, or the problem code it is refused with. */
  const related = (call: HandlerContext, resolve = editorRelation) =>
    relations(resolve)
      .admit(
        manage,
        { ...callerOf(call), requires: routeAccessOf(manage).rules[0].relation },
        create(InstrumentManageRequestSchema),
      )
      .then(
        (caller) => caller.relation,
        (error: unknown) => problemOf(error).code,
      );
  const editorHeld = { name: "trade.editor", role: "editor" };
  /** The problem code a call fails with ("answered" when it does not fail). */
  const codeOf = (work: Promise<unknown>) =>
    work.then(
      () => "answered",
      (error: unknown) => problemOf(error).code,
    );

  it("admits a listed person acting directly or named by a service", async () => {
    const editor = person();
    await admin().setEditor({ subject: editor } as never, asService());
    expect(await related(asUser(editor))).toEqual(editorHeld);
    expect(await related(asServiceFor(editor))).toEqual(editorHeld);
  });

  it("admits the people the seed setting names", async () => {
    expect(await related(asUser(SEEDED))).toEqual(editorHeld);
    expect(await related(asServiceFor(SEEDED))).toEqual(editorHeld);
  });

  it("refuses a person not on the list, whatever their token", async () => {
    const stranger = person();
    expect(await related(asUser(stranger))).toBe("auth.editor_required");
    expect(await related(asServiceFor(stranger))).toBe("auth.editor_required");
    expect(await related(asServiceFor(stranger, { staff: true }))).toBe("auth.editor_required");
    expect(await related(asUser("gst_visitor"))).toBe("auth.editor_required");
  });

  it("admits a service or first-party app acting for nobody (acting_for_nobody), never a third-party app", async () => {
    expect(await related(asService())).toEqual({ name: "trade.editor", role: "" });
    expect(await related(callAs({ kind: "app", sub: "app:web", fp: true }))).toEqual({
      name: "trade.editor",
      role: "",
    });
    expect(await related(callAs({ kind: "app", sub: "app:x", fp: false }))).toBe("auth.editor_required");
    expect(await related(callAs({}))).toBe("auth.editor_required");
  });

  it("never takes AI output for an editor: naming a listed person it is no person's act (auth.person_required)", async () => {
    const editor = person();
    await admin().setEditor({ subject: editor } as never, asService());
    expect(await related(asServiceFor(editor, { origin: "ai" }))).toBe("auth.person_required");
    expect(await related(asService({ origin: "ai" }))).toBe("auth.editor_required");
  });

  it("never takes a mod for an editor: not as the listed person its token names, nor as a service acting for nobody", async () => {
    const editor = person();
    await admin().setEditor({ subject: editor } as never, asService());
    expect(await related(callAs({ kind: "user", sub: editor, mod: "mod_1" }))).toBe("auth.editor_required");
    expect(await related(asService({ mod: "mod_1" }))).toBe("auth.editor_required");
  });

  it("answers 503 relation.unavailable when the resolver cannot answer: never allowed, never a false no", async () => {
    const down = () => Promise.reject(problem(503, "dependency.unavailable", "The database cannot be reached."));
    expect(await related(asUser(SEEDED), down)).toBe("relation.unavailable");
    // A service acting for nobody asks no resolver.
    expect(await related(asService(), down)).toEqual({ name: "trade.editor", role: "" });
  });

  it("refuses at start a declared relation without a resolver, or a resolver serving none", () => {
    expect(() => new Relations(ctx().logger).register([TradeService], {}, ctx())).toThrow(/registers no resolver/);
    expect(() =>
      new Relations(ctx().logger).register([TradeService], { editor: editorRelation, other: editorRelation }, ctx()),
    ).toThrow(/serves no declared relation/);
  });

  it("sets idempotently, lists with the seeded, and removes", async () => {
    const editor = person();
    const first = await admin().setEditor({ subject: editor } as never, asService());
    expect(first).toMatchObject({ subject: editor, addedBy: "svc:web" });
    const again = await admin().setEditor({ subject: editor } as never, asService({ sub: "svc:other" }));
    expect(again).toEqual(first);

    const list = await admin().listEditors({} as never);
    expect(list.editors.map((e) => e.subject)).toContain(editor);
    expect(list.seeded).toEqual([SEEDED]);

    expect((await admin().removeEditor({ subject: editor } as never)).removed).toBe(true);
    expect((await admin().removeEditor({ subject: editor } as never)).removed).toBe(false);
    expect(await related(asUser(editor))).toBe("auth.editor_required");
    expect((await admin().listEditors({} as never)).editors.map((e) => e.subject)).not.toContain(editor);
  });

  it("refuses a subject that is not a person as 400 naming the field", async () => {
    for (const subject of ["", "gst_guest", "svc:web", "usr_UPPER"]) {
      expect(await codeOf(admin().setEditor({ subject } as never, asService()))).toBe("request.invalid");
      expect(await codeOf(admin().removeEditor({ subject } as never))).toBe("request.invalid");
    }
  });
});

it("reads the seed setting per service key and refuses a name that is not a person", () => {
  expect(editorsSetting("trade")).toBe("PF_TRADE_EDITORS");
  expect(seededEditors(loadConfig({ PF_TRADE_EDITORS: "usr_a, usr_b" }), "trade")).toEqual(["usr_a", "usr_b"]);
  expect(seededEditors(loadConfig({}), "trade")).toEqual([]);
  expect(() => seededEditors(loadConfig({ PF_TRADE_EDITORS: "usr_a,alice" }), "trade")).toThrow(/PF_TRADE_EDITORS/);
});
