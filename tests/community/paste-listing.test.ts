import { beforeAll, describe, expect, it } from "vitest";
import { markdownRendering } from "../../services/kit/rich-text/rendering.js";
import { MARKDOWN_MAX_CHARS } from "../../services/kit/rich-text/markdown.js";
import { usePlatform } from "../support/platform.js";
import { statementsDuring } from "../support/statements.js";
import { as, createPaste, expectStatus, fresh, person, serviceToken } from "./support.js";

/**
 * Issue 24, finding 1: a 512 KiB paste cost 1.3–2 s per anonymous read, and a listing of 200 of them would hold
 * hundreds of MB. A listing answers no text (the paste's read has it); a text past the Markdown size budget is
 * shown escaped, never parsed.
 */
// Pages of 50 pastes of one person: the per-person paste limit is raised out of the way.
const t = usePlatform({ services: ["community"], env: { PF_COMMUNITY_PASTES_PER_10_MINUTES: "1000" } });
let web = "";
beforeAll(async () => {
  web = await serviceToken(t);
});

describe("pastes under the rendering budgets (issue 24)", () => {
  it("a person's pastes are listed without their text or HTML, and the listing renders nothing", async () => {
    const owner = person("lst");
    const word = `w${fresh()}`;
    for (const n of [1, 2]) await createPaste(t, web, owner, { title: `P${n}`, body: `**${word}** ${n}` });
    const before = markdownRendering().stats();
    const listing = expectStatus(await t.http("GET", `/community/api/pastes?owner=${owner}`), 200).body;
    expect(listing.pastes.map((paste: { title: string }) => paste.title)).toEqual(["P2", "P1"]);
    for (const paste of listing.pastes) {
      expect(paste.body ?? "").toBe("");
      expect(paste.body_html ?? "").toBe("");
    }
    expect(markdownRendering().stats()).toEqual(before);
    const read = expectStatus(await t.http("GET", `/community/api/pastes/${listing.pastes[0].slug}`), 200).body;
    expect(read.paste).toMatchObject({ body: `**${word}** 2`, body_html: `<p><strong>${word}</strong> 2</p>\n` });
  });

  it("a text past the Markdown size budget is shown escaped in <pre>, never parsed", async () => {
    const body = `**big${fresh()}** <b>${"x".repeat(MARKDOWN_MAX_CHARS)}`;
    const paste = await createPaste(t, web, person("big"), { title: "Big", body });
    const read = expectStatus(await t.http("GET", `/community/api/pastes/${paste.slug}`), 200).body;
    expect(read.paste.body_html).toBe(`<pre>${body.replace("<b>", "&lt;b&gt;")}</pre>`);
  });
});

describe("a paste listing's cost (issue 24)", () => {
  it("a page of 50 pastes costs the statements a page of 5 does, each with its comments and the reader's like", async () => {
    const call = as(t, () => web);
    const reader = person("rdr");
    /** An owner's pastes, oldest first; the reader likes the first, someone comments on the second. */
    const pastesOf = async (owner: string, count: number) => {
      const made = [];
      // One after the other: the listing's order is the order they were made in.
      for (let i = 0; i < count; i++) made.push(await createPaste(t, web, owner, { title: `N${i}` }));
      expectStatus(await call("POST", `/api/pastes/${made[0]!.slug}/like`, reader, {}), 200);
      expectStatus(await call("POST", `/api/pastes/${made[1]!.slug}/comments`, person("c"), { body: "hi" }), 201);
      return made;
    };
    const [few, many] = [person("few"), person("many")];
    const made = { [few]: await pastesOf(few, 5), [many]: await pastesOf(many, 50) };
    type Listed = { id: string; comments: string; liked: boolean };
    const list = async (owner: string, limit: number, cursor = "") =>
      expectStatus(await call("GET", `/api/pastes?owner=${owner}&limit=${limit}&cursor=${cursor}`, reader), 200)
        .body as { pastes: Listed[]; next_cursor?: string };

    for (const [owner, size] of [
      [few, 5],
      [many, 50],
    ] as const) {
      const pastes = (await list(owner, size)).pastes;
      const ids = made[owner]!.map((paste) => paste.id).reverse();
      expect(pastes.map((paste) => paste.id)).toEqual(ids);
      expect(pastes.map((paste) => [paste.liked ?? false, paste.comments ?? "0"])).toEqual(
        ids.map((id) => [id === made[owner]![0]!.id, id === made[owner]![1]!.id ? "1" : "0"]),
      );
    }
    const anonymous = expectStatus(await t.http("GET", `/community/api/pastes?owner=${few}`), 200).body;
    expect(anonymous.pastes.map((paste: Listed) => paste.liked ?? false)).toEqual([false, false, false, false, false]);

    // Before: one statement for the page, then each paste's thread and the reader's like (11 against 101).
    const PASTES = /paste|threads/;
    const ofFive = await statementsDuring(PASTES, () => list(few, 5));
    const ofFifty = await statementsDuring(PASTES, () => list(many, 50));
    expect(ofFifty).toBe(ofFive);
    expect(ofFive).toBeLessThanOrEqual(2);

    // The cursor walks the same pastes in pages; one that is not a (time, id) this service issued is 400.
    const paged: string[] = [];
    let cursor = "";
    do {
      const next = await list(many, 20, cursor);
      paged.push(...next.pastes.map((paste) => paste.id));
      cursor = next.next_cursor ?? "";
    } while (cursor);
    expect(paged).toEqual(made[many]!.map((paste) => paste.id).reverse());
    const forged = Buffer.from(JSON.stringify(["yesterday", "pas_x"])).toString("base64url");
    const refused = expectStatus(await call("GET", `/api/pastes?owner=${many}&cursor=${forged}`, reader), 400).body;
    expect(refused).toMatchObject({ code: "request.invalid", field: "cursor" });
  });
});
