import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { diffRevisions, diffText, paragraphsOf } from "../../services/kit/revisions/diff.js";
import { immutableTriggerSql, nextRevisionNumber } from "../../services/kit/revisions/immutable.js";
import { qualified } from "../../services/kit/db/orm.js";
import { usePlatform } from "../support/platform.js";

const t = usePlatform({ services: ["network"] });
const ctx = () => t.platform.contexts.get("network")!;
const tables = { parent: "kit_test_docs", revisions: "kit_test_doc_revisions", parentColumn: "doc_id" };
/** A revision table whose review state changes in place (as reviews' summaries). */
const reviewed = "kit_test_reviewed_revisions";

/** A parent table and an insert-only revision table of the test's own, in network's schema, dropped after. */
beforeAll(async () => {
  await ctx().transaction(async (em) => {
    const run = (sql: string) => em.getConnection().execute(sql, [], "run", em.getTransactionContext());
    await run(`create table ${qualified(em, tables.parent)} (id text primary key)`);
    await run(`create table ${qualified(em, tables.revisions)} (
      doc_id text not null, n integer not null, body text not null, primary key (doc_id, n))`);
    await run(`set local search_path to ${String(em.config.get("schema"))}`);
    for (const sql of immutableTriggerSql(tables.revisions)) await run(sql);
    await run(`create table ${qualified(em, reviewed)} (id text primary key, body text not null, state text not null)`);
    for (const sql of immutableTriggerSql(reviewed, { mutable: ["state"] })) await run(sql);
  });
});
afterAll(async () => {
  await ctx().transaction(async (em) => {
    const run = (sql: string) => em.getConnection().execute(sql, [], "run", em.getTransactionContext());
    await run(`drop table ${qualified(em, tables.revisions)}`);
    await run(`drop function ${qualified(em, `${tables.revisions}_${tables.revisions}_immutable_fn`)}`);
    await run(`drop table ${qualified(em, reviewed)}`);
    await run(`drop function ${qualified(em, `${reviewed}_${reviewed}_immutable_fn`)}`);
    await run(`drop table ${qualified(em, tables.parent)}`);
  });
});

/** Saves a revision the way a service does: the next number under the parent's lock, then the insert. */
const save = (docId: string, body: string) =>
  ctx().transaction(async (em) => {
    const n = await nextRevisionNumber(em, tables, docId);
    if (n === undefined) return undefined;
    await em
      .getConnection()
      .execute(
        `insert into ${qualified(em, tables.revisions)} (doc_id, n, body) values (?, ?, ?)`,
        [docId, n, body],
        "run",
        em.getTransactionContext(),
      );
    return n;
  });
const sql = (text: string, params: unknown[] = []) =>
  ctx().transaction((em) =>
    em
      .getConnection()
      .execute(
        text.replaceAll("{r}", qualified(em, tables.revisions)).replaceAll("{reviewed}", qualified(em, reviewed)),
        params,
        "run",
        em.getTransactionContext(),
      ),
  );

describe("numbered immutable revisions", () => {
  it("numbers 1, 2, … per parent, without gaps or collisions under 12 concurrent saves", async () => {
    await ctx().transaction((em) =>
      em
        .getConnection()
        .execute(
          `insert into ${qualified(em, tables.parent)} (id) values ('doc_a'), ('doc_b')`,
          [],
          "run",
          em.getTransactionContext(),
        ),
    );
    expect(await save("doc_a", "first")).toBe(1);
    const numbers = await Promise.all(Array.from({ length: 12 }, (_, i) => save("doc_a", `v${i}`)));
    expect([...numbers].sort((a, b) => a! - b!)).toEqual(Array.from({ length: 12 }, (_, i) => i + 2));
    expect(await save("doc_b", "other parent")).toBe(1);
    expect(await save("doc_missing", "no parent")).toBeUndefined();
  });

  it("refuses to update or delete a revision (the trigger), as a check violation", async () => {
    await expect(sql(`update {r} set body = 'changed' where doc_id = 'doc_a' and n = 1`)).rejects.toThrow(/immutable/);
    await expect(sql(`delete from {r} where doc_id = 'doc_a'`)).rejects.toThrow(/immutable/);
  });

  it("with state columns named: the state changes in place, the content and the row stay", async () => {
    await sql(`insert into {reviewed} (id, body, state) values ('rev_1', 'pros and cons', 'proposed')`);
    await sql(`update {reviewed} set state = 'approved' where id = 'rev_1'`);
    await expect(sql(`update {reviewed} set body = 'changed' where id = 'rev_1'`)).rejects.toThrow(/immutable/);
    await expect(sql(`update {reviewed} set body = 'changed', state = 'published' where id = 'rev_1'`)).rejects.toThrow(
      /immutable/,
    );
    await expect(sql(`delete from {reviewed} where id = 'rev_1'`)).rejects.toThrow(/immutable/);
    const rows = await ctx().transaction((em) =>
      em
        .getConnection()
        .execute(`select body, state from ${qualified(em, reviewed)}`, [], "all", em.getTransactionContext()),
    );
    expect(rows).toEqual([{ body: "pros and cons", state: "approved" }]);
  });
});

describe("diffRevisions", () => {
  it("splits paragraphs at blank lines, any line ending, trailing spaces dropped", () => {
    expect(paragraphsOf("a\r\n\r\nb  \nc\n \n\n\nd\n")).toEqual(["a", "b\nc", "d"]);
    expect(paragraphsOf("")).toEqual([]);
  });

  it("answers kept, inserted, deleted and changed paragraphs, a changed one line by line", () => {
    const before = "Intro\n\nSame line\nold line\n\nGone";
    const after = "Intro\n\nSame line\nnew line\n\nAdded";
    expect(diffText(before, after)).toEqual([
      { op: "equal", text: "Intro", lines: [] },
      {
        op: "change",
        text: "",
        lines: [
          { op: "equal", text: "Same line" },
          { op: "delete", text: "old line" },
          { op: "insert", text: "new line" },
        ],
      },
      {
        op: "change",
        text: "",
        lines: [
          { op: "delete", text: "Gone" },
          { op: "insert", text: "Added" },
        ],
      },
    ]);
    expect(diffText("a", "a\n\nb")).toEqual([
      { op: "equal", text: "a", lines: [] },
      { op: "insert", text: "b", lines: [] },
    ]);
    expect(diffText("a\n\nb", "b")).toEqual([
      { op: "delete", text: "a", lines: [] },
      { op: "equal", text: "b", lines: [] },
    ]);
  });

  it("is deterministic and field by field, unchanged fields marked so", () => {
    const from = { n: 1, text: { title: "T", body: "x\n\ny" } };
    const to = { n: 3, text: { title: "T", body: "x\n\nz" } };
    const once = diffRevisions(from, to, ["title", "body"]);
    expect(diffRevisions(from, to, ["title", "body"])).toEqual(once);
    expect(once.from).toBe(1);
    expect(once.to).toBe(3);
    expect(once.fields.map((f) => [f.field, f.changed])).toEqual([
      ["title", false],
      ["body", true],
    ]);
  });
});
