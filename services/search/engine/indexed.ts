import type { Logger } from "../../kit/runtime/logger.js";
import { changedPage, feedMark, type FeedMark, livePage } from "../db/feed.js";
import { foldedOf, shownDocuments, shownKey, wordsOf } from "../db/queries.js";
import type { Tables } from "../db/sql.js";
import type { Position, Query } from "../domain/query.js";
import type { Viewer } from "../domain/visibility.js";
import { Answers, type IndexedPage } from "../memory/answers.js";
import { Store } from "../memory/store.js";
import type { FoundDocument, SearchEngine, SuggestPage } from "./engine.js";

/** Rows read a statement, building or catching up. */
const PAGE = 5000;
/** How often an instance looks for other instances' writes (its own are looked for as they answer). */
const LOOK_EVERY_MS = 1000;
/** How long an instance past `maxDocuments` waits before it counts again. */
const REST_MS = 60_000;
/** Query words and folded q kept, PostgreSQL's answers to them (cleared when full). */
const REMEMBERED = 10_000;
/** Shown documents kept by number: a page's rows without a statement when the page was shown before. */
const SHOWN = 20_000;

/** The engine with its in-memory index, and the index's life: built at `start`, caught up at every look. */
export interface IndexedEngine extends SearchEngine {
  start(): void;
  stop(): Promise<void>;
  /** Live documents the index holds, or undefined while queries go to PostgreSQL. */
  documents(): number | undefined;
}

/**
 * PostgreSQL stays the source of truth and answers every write; an in-memory index per instance answers queries
 * once built (memory/). Built at start from the documents table, in pages, then kept current by reading the rows
 * written since its watermark (`db/feed.ts`): after each write this instance answers, and every second for other
 * instances'. Until it is built, past `maxDocuments`, or for what it does not answer (phrases, prefixes, the typo
 * tier, the one-document read) the PostgreSQL path answers, unchanged.
 */
export function indexedEngine(
  tables: Tables,
  postgres: SearchEngine,
  settings: { maxDocuments: number },
  logger: Logger,
): IndexedEngine {
  let store: Store | undefined;
  let answers: Answers | undefined;
  let from: FeedMark | undefined;
  let shown = new Map<number, FoundDocument>();
  let pass: Promise<void> | undefined;
  let queued: Promise<void> | undefined;
  /**
   * The look every query waits for: the first query after this instance's writes asks for it, so a burst of writes
   * (an owner's relay) costs one look when read, or one a second, not one a batch.
   */
  let settled: Promise<void> = Promise.resolve();
  let unseen = false;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  /** Writes answered so far: a build catches up again when one landed while it caught up. */
  let written = 0;
  const words = new Map<string, Promise<string>>();
  const folded = new Map<string, Promise<string>>();
  const typos = new Map<string, { version: number; page: Promise<SuggestPage> }>();

  const remembered = (cache: Map<string, Promise<string>>, key: string, ask: () => Promise<string>) => {
    let answer = cache.get(key);
    if (!answer) {
      if (cache.size >= REMEMBERED) cache.clear();
      answer = ask();
      cache.set(key, answer);
      answer.catch(() => cache.delete(key));
    }
    return answer;
  };

  /** Past the bound, builds are tried again only this much later (a build reads every live document). */
  let restUntil = 0;
  const tooMany = (held: Store) => {
    if (held.live <= settings.maxDocuments) return false;
    restUntil = Date.now() + REST_MS;
    logger.warn(
      { documents: held.live, max: settings.maxDocuments },
      "search index: too many documents, queries stay on PostgreSQL",
    );
    return true;
  };

  async function build(): Promise<void> {
    const mark = await feedMark(tables);
    const building = new Store();
    let after: [string, string, string] = ["", "", ""];
    for (;;) {
      const rows = await livePage(tables, after, PAGE);
      for (const row of rows) building.apply(row);
      if (tooMany(building)) return;
      if (rows.length < PAGE) break;
      const last = rows[rows.length - 1];
      after = [last.owner, last.type, last.id];
    }
    let since = mark;
    for (let seen = -1; seen !== written;) ((seen = written), (since = await catchUp(building, since)));
    if (stopped || tooMany(building)) return;
    // Published with its own mark: a rebuild that fails leaves the index served and its mark as they were.
    from = since;
    store = building;
    answers = new Answers(building);
    shown = new Map();
    typos.clear();
    logger.info({ documents: building.live }, "search index built");
  }

  /** Rows written by the transactions `since` had not seen; answers this look's mark, taken before it reads. */
  async function catchUp(held: Store, since: FeedMark): Promise<FeedMark> {
    const mark = await feedMark(tables);
    let after = { writtenBy: 0n, owner: "", type: "", id: "" };
    for (;;) {
      const rows = await changedPage(tables, since, after, PAGE);
      for (const row of rows) if (!held.holds(row)) held.apply(row);
      if (rows.length < PAGE) break;
      const last = rows[rows.length - 1];
      after = { writtenBy: last.writtenBy, owner: last.owner, type: last.type, id: last.id };
    }
    return mark;
  }

  async function run(): Promise<void> {
    try {
      if (!store) return Date.now() < restUntil ? undefined : await build();
      from = await catchUp(store, from!);
      if (tooMany(store)) ((store = undefined), (answers = undefined));
      // Replaced versions stay in posting lists until a rebuild: once they outnumber the live ones.
      else if (store.dead > store.live && store.dead > 100_000) await build();
    } catch (error) {
      logger.warn({ err: error }, "search index: a look failed, the next one retries");
    }
  }

  /** One look at a time; asked during one, one more after it. */
  function look(): Promise<void> {
    if (!pass) return (pass = run().finally(() => (pass = undefined)));
    return (queued ??= pass.then(() => ((queued = undefined), look())));
  }

  /** The index when it answers, caught up with this instance's writes. */
  async function current(): Promise<Answers | undefined> {
    if (unseen && store) ((unseen = false), (settled = look()));
    await settled;
    return answers;
  }

  /** The page's rows as shown, from the kept ones or one statement; rows gone since are left out. */
  async function rowsOf(viewer: Viewer, page: IndexedPage): Promise<FoundDocument[]> {
    const held = store!;
    const missing = page.rows.filter((row) => !shown.has(row.number)).map((row) => held.doc(row.number)!);
    const fetched = await shownDocuments(tables, viewer, missing);
    if (shown.size + fetched.size > SHOWN) shown = new Map();
    for (const row of page.rows) {
      const doc = held.doc(row.number);
      const found = doc && fetched.get(shownKey(doc));
      if (found) shown.set(row.number, found);
    }
    return page.rows.flatMap((row) => {
      const found = shown.get(row.number);
      return found ? [{ ...found, score: row.score }] : [];
    });
  }

  /**
   * PostgreSQL's suggestions where the index has none (the typo tier: every title scored alike, 500 ms at 200,000),
   * one statement for all who ask alike while the index is unchanged: they read the same documents.
   */
  const typoTier = (viewer: Viewer, query: Query, after: Position | undefined): Promise<SuggestPage> => {
    const key = JSON.stringify([viewer.keys, query, after]);
    const version = store!.version;
    const held = typos.get(key);
    if (held?.version === version) return held.page;
    if (typos.size >= REMEMBERED) typos.clear();
    const page = postgres.suggest(viewer, query, after);
    typos.set(key, { version, page });
    page.catch(() => typos.delete(key));
    return page;
  };

  const wordsFor = (query: Query) => remembered(words, `${query.config}\u0000${query.q}`, () => wordsOf(tables, query));

  return {
    ...postgres,
    async write(owner, writes, at) {
      const answered = await postgres.write(owner, writes, at);
      written++;
      // Before the index answers, PostgreSQL does: nothing to wait for (a build catches up on its own).
      unseen = true;
      return answered;
    },
    async search(viewer, query, after, at) {
      const index = await current();
      if (!index) return postgres.search(viewer, query, after, at);
      const tsquery = query.q === "" ? undefined : await wordsFor(query);
      const page = index.search(viewer, query, tsquery, after, at);
      if (!page) return postgres.search(viewer, query, after, at);
      return { ...page, rows: await rowsOf(viewer, page) };
    },
    async suggest(viewer, query, after) {
      const index = await current();
      if (!index) return postgres.suggest(viewer, query, after);
      const f = await remembered(folded, query.q, () => foldedOf(tables, query.q).then((each) => each.f));
      const page = index.suggest(viewer, query, f, after);
      if (!page) return typoTier(viewer, query, after);
      const rows = await rowsOf(viewer, page);
      return {
        ...page,
        rows: rows.map(({ owner, type, id, title, url, score }) => ({ owner, type, id, title, url, score })),
      };
    },
    start() {
      if (settings.maxDocuments === 0) return;
      void look();
      timer = setInterval(() => void look(), LOOK_EVERY_MS);
      timer.unref();
    },
    async stop() {
      stopped = true;
      clearInterval(timer);
      await pass;
    },
    documents: () => store?.live,
  };
}
