import { beforeAll, describe, expect, it } from "vitest";
import { qualified } from "../../services/kit/db/orm.js";
import { aiRun } from "../support/ai-runs.js";
import { outboxEvents } from "../support/outbox.js";
import { usePlatform } from "../support/platform.js";
import { until } from "../support/until.js";
import {
  ALL_NEWS,
  EDITOR,
  NEWS_ENV,
  newsCaller,
  openStory,
  person,
  removeUpstream,
  saveRevision,
  sourceItem,
} from "./support.js";

const t = usePlatform({ services: ["news", "ai"], env: NEWS_ENV });
let as: ReturnType<typeof newsCaller>;
let ai: ReturnType<typeof newsCaller>;
let anonymous: ReturnType<typeof newsCaller>;
beforeAll(async () => {
  const web = await t.token({ kind: "service", svc: "web", caps: ALL_NEWS });
  const writer = await t.token({ kind: "service", svc: "ai", caps: [...ALL_NEWS, "ai.run.create"] });
  aiRevision.run_id = (await aiRun(t, { token: writer, workflow: "news.draft_story" })).runId;
  as = newsCaller(t, () => web);
  ai = newsCaller(t, () => writer);
  anonymous = newsCaller(t, () => "");
});

const cited = (text: string, citations: number[]) => ({ text, citations });
const AI = { "x-pf-origin": "ai" };
/** AI output naming a real run of the AI service's stub provider (the route verifies it). */
const aiRevision = { headline: cited("AI headline", [1]), workflow: "news.draft_story", run_id: "" };

async function searchDocument(story: string) {
  const em = t.platform.contexts.get("news")!.orm.em;
  const [row] = await em
    .getConnection()
    .execute<{ deleted: boolean; revision: string }[]>(
      `select deleted, revision from ${qualified(em, "search_documents")} where type = 'story' and id = ?`,
      [story],
    );
  return row;
}

describe("the publish gate, against current state", () => {
  it("refuses a revision citing nothing, and publishes one citing an attached source", async () => {
    const { story } = await openStory(t, as);
    expect((await saveRevision(as, story, EDITOR, { headline: cited("No sources", []) })).status).toBe(201);
    const refused = await as("POST", `/stories/${story}/publish`, EDITOR, {});
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: "story.not_publishable", problems: ["no_source"] });
    await saveRevision(as, story, EDITOR, { headline: cited("Cited", [1]), paragraphs: [cited("Body *text*", [2])] });
    const published = await as("POST", `/stories/${story}/publish`, EDITOR, {});
    expect(published.status).toBe(200);
    expect(published.body.story).toMatchObject({ state: "published", published_revision: 2, in_sitemap: true });
    expect(published.body.story.published.paragraphs[0].html).toBe("<p>Body <em>text</em></p>\n");
    expect((await searchDocument(story)).deleted).toBe(false);
  });

  it("refuses a revision whose source was removed upstream after the save, changing nothing", async () => {
    const { story, items } = await openStory(t, as);
    await saveRevision(as, story, EDITOR, { headline: cited("Rests on source 1", [1]) });
    await removeUpstream(t, as, items[0]);
    const refused = await as("POST", `/stories/${story}/publish`, EDITOR, {});
    expect(refused.status).toBe(409);
    expect(refused.body.problems).toEqual(["source_removed_upstream"]);
    const read = await as("GET", `/stories/${story}`, EDITOR);
    expect(read.body.story).toMatchObject({
      state: "draft",
      published_revision: 0,
      problems: ["source_removed_upstream"],
    });
    expect(read.body.story.flags).toMatchObject([
      { kind: "source_removed_upstream", item_id: items[0], source_number: 1 },
    ]);
    expect(await searchDocument(story)).toBeUndefined();
    // A new revision citing a live source answers the flag and publishes; the flag is resolved by it.
    const flag = read.body.story.flags[0].id;
    await saveRevision(as, story, EDITOR, { headline: cited("Rests on source 2", [2]), answers_flags: [flag] });
    expect((await as("POST", `/stories/${story}/publish`, EDITOR, {})).status).toBe(200);
    const after = await as("GET", `/stories/${story}`, EDITOR);
    expect(after.body.story.flags[0]).toMatchObject({ id: flag, resolved_by_revision: 2 });
  });

  it("refuses a revision resting on a detached source (citation or timeline)", async () => {
    const { story, items } = await openStory(t, as);
    await as("POST", `/stories/${story}/timeline`, EDITOR, { date: "27 Nov 2026", text: "Began", source_number: 2 });
    await saveRevision(as, story, EDITOR, { headline: cited("Headline", [1]) });
    expect((await as("DELETE", `/stories/${story}/sources/${items[1]}`, EDITOR)).status).toBe(200);
    const refused = await as("POST", `/stories/${story}/publish`, EDITOR, {});
    expect(refused.status).toBe(409);
    expect(refused.body.problems).toEqual(["source_detached"]);
  });

  it("refuses an AI-generated revision until a person on the editor list approves it; AI never approves", async () => {
    const { story } = await openStory(t, as);
    const saved = await saveRevision(ai, story, undefined, aiRevision, AI);
    expect(saved.status).toBe(201);
    expect(saved.body.revision.authorship).toEqual({
      ai: { workflow: "news.draft_story", run_id: aiRevision.run_id, stub_provider: true, service: "svc:ai" },
    });
    const refused = await as("POST", `/stories/${story}/publish`, EDITOR, {});
    expect(refused.body).toMatchObject({ code: "story.not_publishable", problems: ["ai_approval_required"] });
    const byAi = await ai("POST", `/stories/${story}/revisions/1/approve`, EDITOR, {}, AI);
    expect(byAi.status).toBe(403);
    const byOutsider = await as("POST", `/stories/${story}/revisions/1/approve`, person("x"), {});
    expect(byOutsider.body.code).toBe("auth.editor_required");
    const approved = await as("POST", `/stories/${story}/revisions/1/approve`, "usr_editor2", { note: "Checked" });
    expect(approved.status).toBe(200);
    expect(approved.body.revision.approval).toMatchObject({
      approver: "usr_editor2",
      verdict: "APPROVAL_VERDICT_APPROVED",
    });
    expect((await as("POST", `/stories/${story}/publish`, EDITOR, {})).status).toBe(200);
  });

  it("news answers an AI draft request itself: a run of news.draft_story on the stub provider, saved as its revision", async () => {
    const { story } = await openStory(t, as);
    const requested = await as("POST", `/stories/${story}/ai-drafts`, EDITOR, { ai_draft: { instructions: "Short" } });
    expect(requested.status).toBe(202);
    const draft = requested.body.ai_draft;
    expect(draft).toMatchObject({ state: "requested", sources: [{ number: 1 }, { number: 2 }] });
    let revisions: { n: number; ai_draft_id?: string; authorship: { ai?: Record<string, unknown> } }[] = [];
    await until(async () => {
      revisions = (await as("GET", `/stories/${story}/revisions`, EDITOR)).body.revisions.revisions;
      return revisions.length > 0;
    });
    expect(revisions).toHaveLength(1);
    const [revision] = revisions;
    expect(revision.ai_draft_id).toBe(draft.id);
    expect(revision.authorship.ai).toEqual({
      workflow: "news.draft_story",
      run_id: expect.stringMatching(/^air_/),
      stub_provider: true,
      service: "svc:news",
    });
    // The run is the AI service's, news's own, of the workflow; its answer is the draft's text.
    const reader = await t.token({ kind: "service", svc: "audit", caps: ["ai.run.read"] });
    const run = await t.http("GET", `/ai/api/v1/runs/${String(revision.authorship.ai!.run_id)}`, { token: reader });
    expect(run.body.run).toMatchObject({ workflow: "news.draft_story", caller: "svc:news", state: "succeeded" });
    const full = (await as("GET", `/stories/${story}/revisions/${revision.n}`, EDITOR)).body.revision;
    expect(full.paragraphs[0].text).toBe(run.body.run.output.text);
    // AI output: a person approves it before it is published.
    const refused = await as("POST", `/stories/${story}/publish`, EDITOR, {});
    expect(refused.body).toMatchObject({ code: "story.not_publishable", problems: ["ai_approval_required"] });
  });

  it("refuses AI output naming a run the AI service does not vouch for (422 revision.workflow_required)", async () => {
    const { story } = await openStory(t, as);
    const other = await t.token({ kind: "service", svc: "other", caps: ["ai.run.create"] });
    for (const run_id of [
      "air_00000000000000000000000000",
      (await aiRun(t, { token: other, workflow: "news.draft_story" })).runId,
      (await aiRun(t, { token: other, workflow: "blog.draft_post" })).runId,
    ]) {
      const refused = await saveRevision(ai, story, undefined, { ...aiRevision, run_id }, AI);
      expect(refused.body, run_id).toMatchObject({ status: 422, code: "revision.workflow_required" });
    }
  });

  it("an AI-assisted person's revision needs approval too; an AI revision must name the workflow", async () => {
    const { story } = await openStory(t, as);
    await saveRevision(as, story, EDITOR, { headline: cited("Assisted", [1]), ai_assisted: true });
    expect((await as("POST", `/stories/${story}/publish`, EDITOR, {})).body.problems).toEqual(["ai_approval_required"]);
    const unnamed = await saveRevision(ai, story, undefined, { headline: cited("AI", [1]) }, AI);
    expect(unnamed).toMatchObject({ status: 422, body: { code: "revision.workflow_required" } });
    const posing = await saveRevision(as, story, EDITOR, aiRevision);
    expect(posing).toMatchObject({ status: 400, body: { field: "revision.workflow" } });
  });

  it("a person's revision resting on an unapproved AI revision is AI-assisted whatever it says, as in blog", async () => {
    const { story } = await openStory(t, as);
    expect((await saveRevision(ai, story, undefined, aiRevision, AI)).status).toBe(201);
    // Over the newest (an unapproved AI draft), then over that one: both AI-assisted though the editor says not.
    for (const based_on of [0, 2]) {
      const saved = await saveRevision(as, story, EDITOR, {
        headline: cited(`Edited ${based_on}`, [1]),
        ai_assisted: false,
        based_on,
      });
      expect(saved.status).toBe(201);
      expect(saved.body.revision).toMatchObject({ ai_assisted: true });
      const refused = await as("POST", `/stories/${story}/publish`, EDITOR, {});
      expect(refused.body).toMatchObject({ code: "story.not_publishable", problems: ["ai_approval_required"] });
    }
    // Once a person approved the AI draft, an edit of it is the editor's own.
    expect((await as("POST", `/stories/${story}/revisions/1/approve`, "usr_editor2", {})).status).toBe(200);
    const own = await saveRevision(as, story, EDITOR, { headline: cited("Edited", [1]), based_on: 1 });
    expect(own.body.revision.ai_assisted ?? false).toBe(false);
    expect((await as("POST", `/stories/${story}/publish`, EDITOR, {})).status).toBe(200);
  });

  it("publish and retract are for an editor person: a service alone, or a person off the list, is refused", async () => {
    const { story } = await openStory(t, as);
    await saveRevision(as, story, EDITOR, { headline: cited("Headline", [1]) });
    expect((await as("POST", `/stories/${story}/publish`, undefined, {})).body.code).toBe("auth.member_required");
    expect((await as("POST", `/stories/${story}/publish`, person("o"), {})).body.code).toBe("auth.editor_required");
    const create = await as("POST", "/stories", person("o"), { cluster_id: "ncl_1" });
    expect(create.body.code).toBe("auth.editor_required");
  });
});

describe("text and size", () => {
  it("Markdown comes back sanitised; a 5 MB revision is 413 before any handler runs", async () => {
    const { story } = await openStory(t, as, 1);
    const saved = await saveRevision(as, story, EDITOR, {
      headline: cited("<script>alert(1)</script> **Bold**", [1]),
      paragraphs: [cited("[x](javascript:alert(1)) <img src=x onerror=alert(1)>", [1])],
    });
    expect(saved.status).toBe(201);
    expect(saved.body.revision.headline.html).toBe(
      "<p>&lt;script&gt;alert(1)&lt;/script&gt; <strong>Bold</strong></p>\n",
    );
    expect(saved.body.revision.paragraphs[0].html).not.toMatch(/href="javascript|<img|<script/);
    const huge = await saveRevision(as, story, EDITOR, { headline: cited("x".repeat(5 * 1024 * 1024), [1]) });
    expect(huge).toMatchObject({ status: 413, body: { code: "request.too_large" } });
    expect((await as("GET", `/stories/${story}/revisions`, EDITOR)).body.revisions.revisions).toHaveLength(1);
  });
});

describe("retraction is final; published stories are read anonymously", () => {
  it("anonymous readers see published stories only; unpublished answers 404", async () => {
    const { story } = await openStory(t, as);
    expect((await anonymous("GET", `/stories/${story}`)).status).toBe(404);
    await saveRevision(as, story, EDITOR, { headline: cited("Public", [1]) });
    await as("POST", `/stories/${story}/publish`, EDITOR, {});
    const read = await anonymous("GET", `/stories/${story}`);
    expect(read.status).toBe(200);
    expect(read.body.story).toMatchObject({ state: "published", noindex: false, published: { n: 1 } });
    expect(read.body.story.sources ?? []).toEqual([]);
    expect(read.body.story.flags ?? []).toEqual([]);
    expect((await anonymous("GET", `/stories/${story}/revisions/1`)).status).toBe(200);
    expect((await anonymous("GET", `/stories/${story}/revisions`)).status).toBe(401);
    const unpublished = await as("POST", `/stories/${story}/publish`, EDITOR, { unpublish: true });
    expect(unpublished.body.story.state).toBe("unpublished");
    expect((await anonymous("GET", `/stories/${story}`)).status).toBe(404);
    expect((await searchDocument(story)).deleted).toBe(true);
  });

  it("a retracted story keeps its URL with the notice and noindex, leaves search, and refuses every write", async () => {
    const { story, items } = await openStory(t, as);
    await saveRevision(as, story, EDITOR, { headline: cited("Soon retracted", [1]) });
    expect((await as("POST", `/stories/${story}/retract`, EDITOR, { note: "Early" })).body.code).toBe(
      "story.not_published",
    );
    await as("POST", `/stories/${story}/publish`, EDITOR, {});
    expect((await searchDocument(story)).deleted).toBe(false);
    const noNote = await as("POST", `/stories/${story}/retract`, EDITOR, { note: " " });
    expect(noNote).toMatchObject({ status: 400, body: { field: "note" } });
    const retracted = await as("POST", `/stories/${story}/retract`, EDITOR, { note: "The *claim* was false." });
    expect(retracted.status).toBe(200);
    const read = await anonymous("GET", `/stories/${story}`);
    expect(read.body.story).toMatchObject({
      state: "retracted",
      noindex: true,
      in_sitemap: false,
      retraction: { note: "The *claim* was false.", note_html: "<p>The <em>claim</em> was false.</p>\n", by: EDITOR },
    });
    expect((await searchDocument(story)).deleted).toBe(true);
    for (const [method, path, body] of [
      ["POST", `/stories/${story}/publish`, {}],
      ["POST", `/stories/${story}/retract`, { note: "again" }],
      ["POST", `/stories/${story}/revisions`, { revision: { headline: cited("x", [1]) } }],
      ["DELETE", `/stories/${story}/sources/${items[0]}`, undefined],
    ] as const) {
      expect((await as(method, path, EDITOR, body)).body.code, path).toBe("story.retracted");
    }
    const events = (await outboxEvents(t, "news", story)).map((e) => e.subject);
    expect(events).toEqual([
      "news.story.created",
      "news.story.revised",
      "news.story.published",
      "news.story.retracted",
    ]);
  });
});

describe("the source table: numbers only grow", () => {
  it("never renumbers nor reuses a number after a detach, even under concurrent attaches", async () => {
    const { story, items } = await openStory(t, as, 2);
    expect((await as("DELETE", `/stories/${story}/sources/${items[1]}`, EDITOR)).status).toBe(200);
    const extra = [];
    for (let i = 0; i < 6; i++) extra.push(await sourceItem(t, as));
    const answers = await Promise.all(extra.map((item) => as("POST", `/stories/${story}/sources`, EDITOR, { item })));
    expect(answers.map((a) => a.status)).toEqual(extra.map(() => 201));
    const numbers = answers.map((a) => a.body.entry.number).sort((a, b) => a - b);
    expect(numbers).toEqual([3, 4, 5, 6, 7, 8]);
    // Re-attaching the detached item takes a new number; 2 stays detached.
    const again = await as("POST", `/stories/${story}/sources`, EDITOR, { item: items[1] });
    expect(again.body.entry.number).toBe(9);
    const table = again.body.sources.map((s: any) => [s.number, s.item_id, s.detached ?? false]);
    expect(table.slice(0, 2)).toEqual([
      [1, items[0], false],
      [2, items[1], true],
    ]);
    expect((await as("POST", `/stories/${story}/sources`, EDITOR, { item: items[0] })).body.code).toBe(
      "source.already_attached",
    );
  });

  it("refuses citations of numbers never given, detached, or removed upstream, naming the field", async () => {
    const { story, items } = await openStory(t, as, 3);
    await as("DELETE", `/stories/${story}/sources/${items[1]}`, EDITOR);
    await removeUpstream(t, as, items[2]);
    for (const [citations, number] of [
      [[9], 9],
      [[2], 2],
      [[3], 3],
    ] as const) {
      const answer = await saveRevision(as, story, EDITOR, {
        headline: cited("H", [1]),
        paragraphs: [cited("P", [...citations])],
      });
      expect(answer).toMatchObject({
        status: 422,
        body: { code: "citation.unknown_source", field: "revision.paragraphs[0].citations", number },
      });
    }
    const other = await openStory(t, as, 1);
    const foreign = await as("POST", `/stories/${other.story}/timeline`, EDITOR, {
      date: "x",
      text: "t",
      source_number: 2,
    });
    expect(foreign.body).toMatchObject({ code: "citation.unknown_source", field: "source_number" });
  });
});

describe("revisions freeze the source table, timeline and perspectives", () => {
  it("later attaches, detaches, perspective and timeline edits never change what revision n shows", async () => {
    const { story, items } = await openStory(t, as, 2);
    const group = await as("POST", `/stories/${story}/perspectives`, EDITOR, { label: "Officials" });
    const pid = group.body.perspective.id;
    await as("PUT", `/stories/${story}/sources/${items[0]}/perspective`, EDITOR, { perspective_id: pid });
    const entry = await as("POST", `/stories/${story}/timeline`, EDITOR, {
      date: "2026-11",
      text: "Began",
      source_number: 1,
    });
    await saveRevision(as, story, EDITOR, { headline: cited("One", [1]), paragraphs: [cited("P", [2])] });
    const before = (await as("GET", `/stories/${story}/revisions/1`, EDITOR)).body.revision;

    await as("DELETE", `/stories/${story}/sources/${items[1]}`, EDITOR);
    await as("POST", `/stories/${story}/sources`, EDITOR, { item: await sourceItem(t, as) });
    await as("DELETE", `/stories/${story}/perspectives/${pid}`, EDITOR);
    await as("DELETE", `/stories/${story}/timeline/${entry.body.entry.id}`, EDITOR);
    await as("POST", `/stories/${story}/perspectives`, EDITOR, { label: "Witnesses" });
    await saveRevision(as, story, EDITOR, { headline: cited("Two", [1, 3]) });

    const after = (await as("GET", `/stories/${story}/revisions/1`, EDITOR)).body.revision;
    expect(after).toEqual(before);
    expect(before.sources.map((s: any) => s.number)).toEqual([1, 2]);
    expect(before.perspectives).toMatchObject([{ label: "Officials", source_numbers: [1] }]);
    expect(before.timeline).toMatchObject([{ date: "2026-11", source_number: 1 }]);
    const two = (await as("GET", `/stories/${story}/revisions/2`, EDITOR)).body.revision;
    expect(two.perspectives).toMatchObject([{ label: "Witnesses", source_numbers: [] }]);
    expect(two.timeline ?? []).toEqual([]);
    const diff = await as("GET", `/stories/${story}/diff`, EDITOR);
    expect(diff.body.diff).toMatchObject({ sources_added: [3], sources_detached: [2] });
    expect(diff.body.diff.text.fields[0]).toMatchObject({ field: "headline", changed: true });
  });

  it("the revision table refuses UPDATE and DELETE", async () => {
    const { story } = await openStory(t, as, 1);
    await saveRevision(as, story, EDITOR, { headline: cited("Fixed", [1]) });
    const em = t.platform.contexts.get("news")!.orm.em;
    const table = qualified(em, "story_revisions");
    await expect(
      em.getConnection().execute(`update ${table} set headline = '{}' where story_id = ?`, [story]),
    ).rejects.toThrow(/immutable/);
    await expect(em.getConnection().execute(`delete from ${table} where story_id = ?`, [story])).rejects.toThrow(
      /immutable/,
    );
  });

  it("an expected_revision behind the newest is 412; notes publish with the next publish", async () => {
    const { story } = await openStory(t, as, 1);
    await saveRevision(as, story, EDITOR, { headline: cited("One", [1]), expected_revision: 0 });
    const stale = await saveRevision(as, story, EDITOR, { headline: cited("Late", [1]), expected_revision: 0 });
    expect(stale).toMatchObject({ status: 412, body: { code: "revision.conflict", revision: "1" } });
    await as("POST", `/stories/${story}/publish`, EDITOR, {});
    await saveRevision(as, story, EDITOR, {
      headline: cited("Two", [1]),
      note: { kind: "correction", text: "An earlier version misnamed the city." },
    });
    expect((await anonymous("GET", `/stories/${story}`)).body.story.notes ?? []).toEqual([]);
    await as("POST", `/stories/${story}/publish`, EDITOR, {});
    expect((await anonymous("GET", `/stories/${story}`)).body.story.notes).toMatchObject([{ kind: "correction" }]);
  });
});

describe("input rules declared in the contract", () => {
  it("reports every rule a request breaks, each naming its field", async () => {
    const { story } = await openStory(t, as);
    const fields = (answer: { body: { errors?: { field: string }[] } }) => answer.body.errors?.map((e) => e.field);
    const revision = await saveRevision(as, story, EDITOR, {
      headline: cited(
        " ",
        Array.from({ length: 51 }, () => 1),
      ),
      paragraphs: [cited("", [1])],
      based_on: -1,
      note: { kind: "erratum", text: "x".repeat(2001) },
    });
    expect(revision).toMatchObject({ status: 400, body: { code: "request.invalid", field: "revision.headline.text" } });
    expect(fields(revision)).toEqual([
      "revision.headline.text",
      "revision.headline.citations",
      "revision.paragraphs[0].text",
      "revision.based_on",
      "revision.note.kind",
      "revision.note.text",
    ]);
    const entry = await as("POST", `/stories/${story}/timeline`, EDITOR, { date: "", text: " ", source_number: 1 });
    expect(fields(entry)).toEqual(["date", "text"]);
  });
});
