import { beforeAll, describe, expect, it, vi } from "vitest";
import { outboxEvents } from "../support/outbox.js";
import { usePlatform } from "../support/platform.js";
import { addItem, ALL_SOURCES, caller, freshKey, manualSource, NOTES, QUIET_WORKERS } from "./support.js";

// No fetch ever runs here (the executor is off): these sources' hosts are not loopback.
const t = usePlatform({ services: ["sources"], env: QUIET_WORKERS });
let call: ReturnType<typeof caller>;

beforeAll(async () => {
  const news = await t.token({ kind: "service", svc: "news", caps: ALL_SOURCES });
  call = caller(t, () => news);
});

const rss = (key: string, extra: Record<string, unknown> = {}) => ({
  key,
  kind: "SOURCE_KIND_RSS",
  url: "https://feeds.example.com/rss.xml",
  ...extra,
});

describe("create", () => {
  it("registers a source disabled by default, with its health, and reads it back", async () => {
    const key = freshKey();
    const created = await call("POST", "/sources", rss(key, { title: "Example feed", fetch_interval_seconds: 600 }));
    expect(created.status).toBe(201);
    expect(created.body.source).toMatchObject({
      key,
      kind: "SOURCE_KIND_RSS",
      url: "https://feeds.example.com/rss.xml",
      enabled: false,
      title: "Example feed",
      fetch_interval_seconds: 600,
      health: { staleness: "STALENESS_NEVER_FETCHED", consecutive_failures: 0 },
    });
    const read = await call("GET", `/sources/${key}`);
    expect(read.body.source).toEqual(created.body.source);
    const listed = await call("GET", "/sources?kind=SOURCE_KIND_RSS&enabled=0&limit=200");
    expect(listed.body.sources.sources.map((s: { key: string }) => s.key)).toContain(key);
  });

  it("answers 409 source.exists for a key taken, and 400 naming key for a malformed one", async () => {
    const key = await manualSource(call);
    const again = await call("POST", "/sources", { key, kind: "SOURCE_KIND_MANUAL" });
    expect(again.body).toMatchObject({ status: 409, code: "source.exists" });
    for (const bad of ["A-upper", "x", "-leading", "has space", "a".repeat(65)]) {
      const answer = await call("POST", "/sources", { key: bad, kind: "SOURCE_KIND_MANUAL" });
      expect(answer.body, bad).toMatchObject({ status: 400, code: "request.invalid", field: "key" });
    }
  });

  it("needs a kind, and a URL (http or https, no userinfo) for fetched kinds only", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ key: freshKey() }, "kind"],
      [{ key: freshKey(), kind: "SOURCE_KIND_ATOM" }, "url"],
      [{ key: freshKey(), kind: "SOURCE_KIND_ATOM", url: "ftp://example.com/feed" }, "url"],
      [{ key: freshKey(), kind: "SOURCE_KIND_ATOM", url: "https://user:pw@example.com/feed" }, "url"],
      [{ key: freshKey(), kind: "SOURCE_KIND_MANUAL", url: "https://example.com/" }, "url"],
      [{ key: freshKey(), kind: "SOURCE_KIND_MANUAL", robots_note: "n/a" }, "robots_note"],
      [rss(freshKey(), { fetch_interval_seconds: 10 }), "fetch_interval_seconds"],
    ];
    for (const [body, field] of cases) {
      const answer = await call("POST", "/sources", body);
      expect(answer.body, JSON.stringify(body)).toMatchObject({ status: 400, code: "request.invalid", field });
    }
  });
});

describe("the enable gate, on every path that leaves a source enabled", () => {
  it("create enabled: a terms note always, a robots note for fetched kinds", async () => {
    const noTerms = await call("POST", "/sources", rss(freshKey(), { enabled: true, robots_note: NOTES.robots_note }));
    expect(noTerms.body).toMatchObject({ status: 409, code: "source.terms_note_required" });
    const noRobots = await call("POST", "/sources", rss(freshKey(), { enabled: true, terms_note: NOTES.terms_note }));
    expect(noRobots.body).toMatchObject({ status: 409, code: "source.robots_note_required" });
    const manual = await call("POST", "/sources", { key: freshKey(), kind: "SOURCE_KIND_MANUAL", enabled: true });
    expect(manual.body).toMatchObject({ status: 409, code: "source.terms_note_required" });
    const ok = await call("POST", "/sources", rss(freshKey(), { enabled: true, ...NOTES }));
    expect(ok.status).toBe(201);
    expect(ok.body.source.enabled).toBe(true);
  });

  it("PATCH enabling, and PATCH clearing a note of an enabled source, are refused without the notes", async () => {
    const key = freshKey();
    await call("POST", "/sources", rss(key));
    const enable = await call("PATCH", `/sources/${key}`, { enabled: true });
    expect(enable.body).toMatchObject({ status: 409, code: "source.terms_note_required" });
    const termsOnly = await call("PATCH", `/sources/${key}`, { enabled: true, terms_note: NOTES.terms_note });
    expect(termsOnly.body).toMatchObject({ status: 409, code: "source.robots_note_required" });
    expect((await call("GET", `/sources/${key}`)).body.source.enabled).toBe(false);
    const enabled = await call("PATCH", `/sources/${key}`, { enabled: true, ...NOTES });
    expect(enabled.body.source).toMatchObject({ enabled: true, ...NOTES });
    const clearRobots = await call("PATCH", `/sources/${key}`, { robots_note: "  " });
    expect(clearRobots.body).toMatchObject({ status: 409, code: "source.robots_note_required" });
    const clearTerms = await call("PATCH", `/sources/${key}`, { terms_note: "" });
    expect(clearTerms.body).toMatchObject({ status: 409, code: "source.terms_note_required" });
    // Disabling and clearing together leaves it disabled: allowed.
    const off = await call("PATCH", `/sources/${key}`, { enabled: false, terms_note: "" });
    expect(off.body.source).toMatchObject({ enabled: false, terms_note: "" });
  });
});

describe("credentials, by variable name only", () => {
  it("stores and answers the name, never a value, and refuses names outside PF_SOURCE_CRED_ (400 naming credential.variable)", async () => {
    const key = freshKey();
    const credential = { variable: "PF_SOURCE_CRED_EXAMPLE", scheme: "CREDENTIAL_SCHEME_BEARER" };
    const created = await call("POST", "/sources", rss(key, { credential }));
    expect(created.body.source.credential).toEqual({ ...credential, header: "" });
    for (const variable of [
      "PF_JWT_PRIVATE_KEY",
      "DATABASE_URL",
      "PF_SEAL_KEY",
      "pf_source_cred_x",
      "PF_SOURCE_CRED_",
    ]) {
      const answer = await call("PATCH", `/sources/${key}`, { credential: { ...credential, variable } });
      expect(answer.body, variable).toMatchObject({
        status: 400,
        code: "request.invalid",
        field: "credential.variable",
      });
    }
    const header = await call("PATCH", `/sources/${key}`, {
      credential: { variable: "PF_SOURCE_CRED_EXAMPLE", scheme: "CREDENTIAL_SCHEME_HEADER" },
    });
    expect(header.body).toMatchObject({ status: 400, field: "credential.header" });
    // A name a fetch would not send (an HTTP token, but with `_`) is refused when written, not at every fetch.
    const unsendable = await call("PATCH", `/sources/${key}`, {
      credential: { variable: "PF_SOURCE_CRED_EXAMPLE", scheme: "CREDENTIAL_SCHEME_HEADER", header: "X_Key" },
    });
    expect(unsendable.body).toMatchObject({ status: 400, field: "credential.header" });
    const named = await call("PATCH", `/sources/${key}`, {
      credential: { variable: "PF_SOURCE_CRED_EXAMPLE", scheme: "CREDENTIAL_SCHEME_HEADER", header: "X-Api-Key" },
    });
    expect(named.body.source.credential).toEqual({
      variable: "PF_SOURCE_CRED_EXAMPLE",
      scheme: "CREDENTIAL_SCHEME_HEADER",
      header: "X-Api-Key",
    });
    const removed = await call("PATCH", `/sources/${key}`, { credential: {} });
    expect(removed.body.source.credential).toBeUndefined();
  });

  it("no answer carries a credential's value, even when the variable is set", async () => {
    const value = `secret-${Date.now()}`;
    vi.stubEnv("PF_SOURCE_CRED_LEAK", value);
    try {
      const key = freshKey();
      const credential = { variable: "PF_SOURCE_CRED_LEAK", scheme: "CREDENTIAL_SCHEME_BASIC" };
      const answers = [
        await call("POST", "/sources", rss(key, { credential, ...NOTES, enabled: true })),
        await call("GET", `/sources/${key}`),
        await call("GET", "/sources?limit=200"),
        await call("GET", "/health"),
        await call("POST", `/sources/${key}/fetch`, {}),
        await call("GET", `/sources/${key}/runs`),
      ];
      for (const answer of answers) expect(JSON.stringify(answer.body)).not.toContain(value);
      expect(answers[0].body.source.credential.variable).toBe("PF_SOURCE_CRED_LEAK");
    } finally {
      vi.unstubAllEnvs();
    }
  });
});

describe("change and delete", () => {
  it("the key and kind are immutable: a PATCH cannot set the kind", async () => {
    const key = await manualSource(call);
    const answer = await call("PATCH", `/sources/${key}`, { kind: "SOURCE_KIND_RSS" });
    expect(answer.body).toMatchObject({ status: 400, code: "request.invalid", field: "kind" });
  });

  it("deletes a source without items; one with items (removed ones included) is 409 source.has_items", async () => {
    const empty = await manualSource(call);
    const deleted = await call("DELETE", `/sources/${empty}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body.source.key).toBe(empty);
    expect((await call("GET", `/sources/${empty}`)).body).toMatchObject({ status: 404, code: "source.not_found" });

    const full = await manualSource(call);
    const [item] = await addItem(call, full, { evidence_url: "https://example.com/e/1", title: "One" });
    expect((await call("DELETE", `/sources/${full}`)).body).toMatchObject({ status: 409, code: "source.has_items" });
    await call("DELETE", `/items/${item.id}?reason=wrong`);
    expect((await call("DELETE", `/sources/${full}`)).body).toMatchObject({ status: 409, code: "source.has_items" });
  });

  it("answers 404 source.not_found for a source that does not exist, on every route naming one", async () => {
    const key = freshKey("missing");
    const answers = [
      await call("GET", `/sources/${key}`),
      await call("PATCH", `/sources/${key}`, { title: "x" }),
      await call("DELETE", `/sources/${key}`),
      await call("POST", `/sources/${key}/fetch`, {}),
      await call("POST", `/sources/${key}/items`, { items: [{ evidence_url: "https://e.example/", title: "t" }] }),
      await call("GET", `/sources/${key}/runs`),
    ];
    for (const answer of answers) expect(answer.body).toMatchObject({ status: 404, code: "source.not_found" });
  });
});

describe("sources.source.changed", () => {
  it("tells each change with the source as it is (as it was, when deleted), in the change's transaction", async () => {
    const key = freshKey();
    await call("POST", "/sources", rss(key, NOTES));
    await call("PATCH", `/sources/${key}`, { title: "Renamed" });
    await call("PATCH", `/sources/${key}`, { enabled: true });
    // A refused change tells nothing.
    await call("PATCH", `/sources/${key}`, { terms_note: "" });
    await call("PATCH", `/sources/${key}`, { enabled: false });
    await call("DELETE", `/sources/${key}`);
    const told = (await outboxEvents(t, "sources", `"key":"${key}"`))
      .filter((event) => event.subject === "sources.source.changed")
      .map((event) => JSON.parse(event.payload));
    expect(told.map((event) => [event.change, event.source.enabled])).toEqual([
      ["created", false],
      ["changed", false],
      ["enabled", true],
      ["disabled", false],
      ["deleted", false],
    ]);
    expect(told[1].source.title).toBe("Renamed");
  });
});
