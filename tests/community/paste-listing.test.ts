import { beforeAll, describe, expect, it } from "vitest";
import { markdownRendering } from "../../services/kit/rich-text/rendering.js";
import { MARKDOWN_MAX_CHARS } from "../../services/kit/rich-text/markdown.js";
import { usePlatform } from "../support/platform.js";
import { createPaste, expectStatus, fresh, person, serviceToken } from "./support.js";

/**
 * Issue 24, finding 1: a 512 KiB paste cost 1.3–2 s per anonymous read, and a listing of 200 of them would hold
 * hundreds of MB. A listing answers no text (the paste's read has it); a text past the Markdown size budget is
 * shown escaped, never parsed.
 */
const t = usePlatform({ services: ["community"] });
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
