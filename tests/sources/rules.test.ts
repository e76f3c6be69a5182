import { beforeAll, describe, expect, it } from "vitest";
import type { HttpAnswer } from "../support/platform.js";
import { usePlatform } from "../support/platform.js";
import { ALL_SOURCES, caller, freshKey, manualSource, QUIET_WORKERS } from "./support.js";

const t = usePlatform({ services: ["sources"], env: QUIET_WORKERS });
let call: ReturnType<typeof caller>;

beforeAll(async () => {
  const news = await t.token({ kind: "service", svc: "news", caps: ALL_SOURCES });
  call = caller(t, () => news);
});

/** The fields a 400 request.invalid lists in `errors`, in order. */
function faultFields(answer: HttpAnswer): string[] {
  expect(answer.body, JSON.stringify(answer.body)).toMatchObject({ status: 400, code: "request.invalid" });
  return (answer.body.errors as { field: string }[]).map((fault) => fault.field);
}

const long = (length: number) => "x".repeat(length);
const longUrl = `https://example.com/${long(1990)}`;

describe("sources' input rules, declared in the contract", () => {
  it("create and change report every rule a request breaks, each naming its field", async () => {
    expect(faultFields(await call("POST", "/sources", {}))).toEqual(["key", "kind"]);

    const create = await call("POST", "/sources", {
      key: "Bad Key",
      kind: 99,
      url: longUrl,
      terms_note: long(2001),
      robots_note: long(2001),
      credential: { variable: "DATABASE_URL", scheme: 9, header: "X Key" },
      fetch_interval_seconds: 59,
      title: long(201),
    });
    expect(create.body.field).toBe("key");
    expect(faultFields(create)).toEqual([
      "key",
      "kind",
      "url",
      "terms_note",
      "robots_note",
      "credential.variable",
      "credential.scheme",
      "credential.header",
      "fetch_interval_seconds",
      "title",
    ]);

    // Rule faults come before the source is looked up: an unknown key is not 404 here.
    const change = await call("PATCH", `/sources/${freshKey()}`, {
      url: longUrl,
      robots_note: long(2001),
      credential: { variable: "PF_SOURCE_CRED_lower", scheme: "CREDENTIAL_SCHEME_BEARER" },
      fetch_interval_seconds: 604801,
      // Lengths count the text as sent, spaces included.
      title: ` ${long(199)} `,
    });
    expect(faultFields(change)).toEqual([
      "url",
      "robots_note",
      "credential.variable",
      "fetch_interval_seconds",
      "title",
    ]);
  });

  it("a path's source key is a key on every route naming one", async () => {
    for (const [method, path] of [
      ["GET", "/sources/-bad"],
      ["PATCH", "/sources/-bad"],
      ["DELETE", "/sources/-bad"],
      ["POST", "/sources/-bad/fetch"],
    ])
      expect(
        faultFields(await call(method, path, method === "GET" || method === "DELETE" ? undefined : {})),
        path,
      ).toEqual(["key"]);
  });

  it("manual items: the list's size and each item's fields, by their place in the list", async () => {
    expect(faultFields(await call("POST", "/sources/Bad/items", { items: [] }))).toEqual(["key", "items"]);
    const key = await manualSource(call);
    const many = Array.from({ length: 101 }, (_, n) => ({ evidence_url: `https://e.example.com/${n}`, title: "t" }));
    expect(faultFields(await call("POST", `/sources/${key}/items`, { items: many }))).toEqual(["items"]);

    const items = await call("POST", `/sources/${key}/items`, {
      items: [
        {
          evidence_url: "https://e.example.com/1",
          title: " \t",
          summary: long(5001),
          content: long(200_001),
          filing_type: long(33),
        },
        { evidence_url: longUrl, canonical_url: longUrl, title: long(501) },
        { evidence_url: "https://e.example.com/3" },
      ],
    });
    expect(faultFields(items)).toEqual([
      "items[0].title",
      "items[0].summary",
      "items[0].content",
      "items[0].filing_type",
      "items[1].evidence_url",
      "items[1].canonical_url",
      "items[1].title",
      "items[2].title",
    ]);
  });

  it("removing an item needs a reason that is not blank, of at most 500 characters", async () => {
    expect(faultFields(await call("DELETE", "/items/itm_NOPE?reason=%20"))).toEqual(["id", "reason"]);
    expect(faultFields(await call("DELETE", "/items/itm_nothing"))).toEqual(["reason"]);
    // Before the item is looked up: an unknown item is not 404 here.
    expect(faultFields(await call("DELETE", `/items/itm_nothing?reason=${long(501)}`))).toEqual(["reason"]);
  });

  it("list filters and page sizes", async () => {
    const cases: [string, string[]][] = [
      ["/items?source_key=BAD&after=-1&limit=0", ["source_key", "after", "limit"]],
      ["/runs?source_key=BAD&state=42&limit=201", ["source_key", "state", "limit"]],
      ["/sources/BAD/runs?state=7&limit=0", ["key", "state", "limit"]],
      ["/sources?kind=99&limit=201", ["kind", "limit"]],
      ["/health?limit=0", ["limit"]],
    ];
    for (const [path, fields] of cases) expect(faultFields(await call("GET", path)), path).toEqual(fields);
  });
});
