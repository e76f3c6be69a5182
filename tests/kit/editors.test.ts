import { expect, it } from "vitest";
import { editorsSetting, requireEditor, seededEditors } from "../../services/kit/editors/editors.js";
import { editorHandlers } from "../../services/kit/editors/handlers.js";
import { problemOf } from "../../services/kit/handler/problem.js";
import { loadConfig } from "../../services/kit/runtime/config.js";
import type { ServiceContext } from "../../services/kit/runtime/module.js";
import { describeWith, DATABASE_SERVER } from "../support/skips.js";
import { usePlatform } from "../support/platform.js";
import { asService, asServiceFor, asUser, callAs } from "../support/callers.js";

/**
 * The kit's editor lists (analysis K7) on a real service schema: every service
 * has an `editors` table; deals stands in for any of them here. The routes that
 * call requireEditor (trade's) test it again through enforcement.
 */
let n = 0;
const person = () => `usr_ed${Date.now().toString(36)}${(n++).toString(36)}`;
const SEEDED = "usr_seedededitor";

describeWith(DATABASE_SERVER, "editor lists", () => {
  const t = usePlatform({ services: ["deals"], env: { PF_DEALS_EDITORS: ` ${SEEDED} , ` } });
  const ctx = () => t.platform.contexts.get("deals") as ServiceContext;
  const admin = () => editorHandlers(ctx());
  /** The problem code a call fails with ("answered" when it does not fail). */
  const codeOf = (work: Promise<unknown>) =>
    work.then(
      () => "answered",
      (error: unknown) => problemOf(error).code,
    );

  it("admits a listed person acting directly or named by a service, and answers who acts", async () => {
    const editor = person();
    await admin().setEditor({ subject: editor } as never, asService());
    expect(await requireEditor(ctx(), asUser(editor))).toBe(editor);
    expect(await requireEditor(ctx(), asServiceFor(editor))).toBe(editor);
    expect(await requireEditor(ctx(), asServiceFor(editor), { person: true })).toBe(editor);
  });

  it("admits the people the seed setting names", async () => {
    expect(await requireEditor(ctx(), asUser(SEEDED), { person: true })).toBe(SEEDED);
    expect(await requireEditor(ctx(), asServiceFor(SEEDED))).toBe(SEEDED);
  });

  it("refuses a person not on the list, whatever their token", async () => {
    const stranger = person();
    expect(await codeOf(requireEditor(ctx(), asUser(stranger)))).toBe("auth.editor_required");
    expect(await codeOf(requireEditor(ctx(), asServiceFor(stranger)))).toBe("auth.editor_required");
    expect(await codeOf(requireEditor(ctx(), asServiceFor(stranger, { staff: true })))).toBe("auth.editor_required");
    expect(await codeOf(requireEditor(ctx(), asUser("gst_visitor")))).toBe("auth.editor_required");
  });

  it("admits a service or first-party app acting for nobody, unless a person is asked for", async () => {
    expect(await requireEditor(ctx(), asService())).toBeUndefined();
    expect(await requireEditor(ctx(), callAs({ kind: "app", sub: "app:web", fp: true }))).toBeUndefined();
    expect(await codeOf(requireEditor(ctx(), asService(), { person: true }))).toBe("auth.editor_required");
    expect(await codeOf(requireEditor(ctx(), callAs({ kind: "app", sub: "app:x", fp: false })))).toBe(
      "auth.editor_required",
    );
    expect(await codeOf(requireEditor(ctx(), callAs({})))).toBe("auth.editor_required");
  });

  it("never takes AI output for an editor, even naming a listed person", async () => {
    const editor = person();
    await admin().setEditor({ subject: editor } as never, asService());
    expect(await codeOf(requireEditor(ctx(), asServiceFor(editor, { origin: "ai" })))).toBe("auth.editor_required");
    expect(await codeOf(requireEditor(ctx(), asService({ origin: "ai" })))).toBe("auth.editor_required");
  });

  it("never takes a mod for an editor: not as the listed person its token names, nor as a service acting for nobody", async () => {
    const editor = person();
    await admin().setEditor({ subject: editor } as never, asService());
    expect(await codeOf(requireEditor(ctx(), callAs({ kind: "user", sub: editor, mod: "mod_1" })))).toBe(
      "auth.editor_required",
    );
    expect(await codeOf(requireEditor(ctx(), asService({ mod: "mod_1" })))).toBe("auth.editor_required");
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
    expect(await codeOf(requireEditor(ctx(), asUser(editor)))).toBe("auth.editor_required");
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
