import { create, createRegistry, setExtension, getExtension } from "@bufbuild/protobuf";
import { createRouterTransport, type HandlerContext } from "@connectrpc/connect";
import Fastify, { type FastifyInstance } from "fastify";
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bindingsOf } from "../../gateway/bindings.js";
import { registerBindings } from "../../gateway/routes.js";
import { FileReadResultSchema, MediaService, type FileReadRequest } from "../../gen/pf/media/v1/media_pb.js";
import { success_statuses as successStatuses } from "../../gen/pf/v1/options_pb.js";
import { answerDocument, preferredType } from "../../services/kit/feeds/answer.js";
import { renderFeed, type FeedModel } from "../../services/kit/feeds/feed.js";
import { answerRedirect } from "../../services/kit/handler/status.js";
import { createLogger } from "../../services/kit/runtime/logger.js";
import { admitEveryone, withService } from "../gateway/support.js";

const NASTY = 'Fish & <chips> ]]> "quoted" \u0001\u0008\u000b\uFFFE end';

const model: FeedModel = {
  title: `Forum ${NASTY}`,
  description: "Everything public",
  siteLink: "https://pf.example/s",
  feedLink: "https://pf.example/s/feed.xml",
  items: [
    {
      id: "thr_1",
      title: `Thread ${NASTY}`,
      link: "https://pf.example/s/general/t/thr_1",
      date: new Date("2026-11-20T10:00:00Z"),
      updated: new Date("2026-11-21T10:00:00Z"),
      summary: `Summary ${NASTY}`,
      contentHtml: "<p>Body ]]&gt; with <strong>markup</strong></p>",
      author: "Ada <admin>",
      categories: ["general"],
    },
    {
      id: "thr_2",
      title: "Second",
      link: "https://pf.example/s/general/t/thr_2",
      date: new Date("2026-11-19T08:30:00Z"),
    },
  ],
};

const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "@", cdataPropName: false as never });
const RFC_822 =
  /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} (GMT|[+-]\d{4})$/;
const RFC_3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
/** What XML 1.0 forbids: a document holding one is not well-formed. */
// eslint-disable-next-line no-control-regex -- control characters are what is looked for
const NOT_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/;

function parsed(body: string): any {
  expect(XMLValidator.validate(body)).toBe(true);
  expect(body).not.toMatch(NOT_XML);
  return xml.parse(body);
}

describe("renderFeed", () => {
  it("writes RSS 2.0 with every required channel and item element, RFC 822 dates and text kept exactly", () => {
    const { contentType, body } = renderFeed(model, "rss");
    expect(contentType).toBe("application/rss+xml; charset=utf-8");
    const rss = parsed(body).rss;
    expect(rss["@version"]).toBe("2.0");
    const channel = rss.channel;
    expect(channel.title).toBe('Forum Fish & <chips> ]]> "quoted"  end');
    expect(channel.link).toBe("https://pf.example/s");
    expect(channel.description).toBe("Everything public");
    expect(channel["atom:link"]["@href"]).toBe("https://pf.example/s/feed.xml");
    expect(channel.lastBuildDate).toMatch(RFC_822);
    const [first, second] = channel.item;
    // Escaped text, as Atom's: readers that take the title as HTML decode it to the literal title, never to markup.
    expect(first.title).toBe("Thread Fish &amp; &lt;chips&gt; ]]&gt; &quot;quoted&quot;  end");
    expect(first.link).toBe("https://pf.example/s/general/t/thr_1");
    expect(first.guid["#text"]).toBe("thr_1");
    expect(first.pubDate).toBe("Fri, 20 Nov 2026 10:00:00 GMT");
    expect(first["dc:creator"]).toBe("Ada <admin>");
    expect(first.author).toBeUndefined();
    expect(first["content:encoded"]).toBe("<p>Body ]]&gt; with <strong>markup</strong></p>");
    expect(second.pubDate).toMatch(RFC_822);
  });

  it("writes Atom 1.0 with RFC 3339 dates, titles escaped as the html they are typed", () => {
    const feed = parsed(renderFeed(model, "atom").body).feed;
    expect(feed["@xmlns"]).toBe("http://www.w3.org/2005/Atom");
    expect(feed.id).toBe("https://pf.example/s");
    expect(feed.updated).toMatch(RFC_3339);
    const [first] = feed.entry;
    expect(first.title["@type"]).toBe("html");
    // type="html": a reader decodes this to the literal title, never to a <chips> element.
    expect(first.title["#text"]).toBe("Thread Fish &amp; &lt;chips&gt; ]]&gt; &quot;quoted&quot;  end");
    expect(first.updated).toBe("2026-11-21T10:00:00.000Z");
    expect(first.published).toMatch(RFC_3339);
    expect(first.author.name).toBe("Ada <admin>");
  });

  it("never lets a title make markup or break the XML: two ]]> and a <script> stay text in RSS and Atom", () => {
    const title = "A ]]> B ]]> <script>alert(1)</script> & C";
    const hostile: FeedModel = { ...model, items: [{ ...model.items[1]!, title }] };
    const escaped = "A ]]&gt; B ]]&gt; &lt;script&gt;alert(1)&lt;/script&gt; &amp; C";
    const rss = renderFeed(hostile, "rss").body;
    const atom = renderFeed(hostile, "atom").body;
    for (const body of [rss, atom]) expect(body).not.toContain("<script>");
    expect(parsed(rss).rss.channel.item.title).toBe(escaped);
    expect(parsed(atom).feed.entry.title["#text"]).toBe(escaped);
  });

  it("writes JSON Feed 1.1", () => {
    const { contentType, body } = renderFeed(model, "json");
    expect(contentType).toBe("application/feed+json; charset=utf-8");
    const feed = JSON.parse(body);
    expect(feed.version).toBe("https://jsonfeed.org/version/1.1");
    expect(feed.feed_url).toBe("https://pf.example/s/feed.xml");
    expect(feed.items[0]).toMatchObject({
      id: "thr_1",
      url: "https://pf.example/s/general/t/thr_1",
      date_published: "2026-11-20T10:00:00.000Z",
      authors: [{ name: "Ada <admin>" }],
      tags: ["general"],
    });
  });

  it("never changes by itself (the ETag depends on it) and refuses relative links", () => {
    expect(renderFeed(model, "rss").body).toBe(renderFeed(model, "rss").body);
    expect(() => renderFeed({ ...model, feedLink: "/s/feed.xml" }, "rss")).toThrow(/absolute/);
    expect(() => renderFeed({ ...model, siteLink: "javascript:alert(1)" }, "atom")).toThrow(/absolute/);
  });
});

/**
 * Media's ServeFile made unary (a feed read's shape: a unary RPC whose response_body is an HttpBody) and its ReadFile
 * made a unary JSON read that may answer 301: the gateway's real routes over real HTTP, the RPC over a Connect
 * router transport.
 */
const Edited = withService(MediaService, (declaration) => {
  for (const method of declaration.method) {
    if (method.name === "ServeFile") method.serverStreaming = false;
    if (method.name === "ReadFile") {
      method.serverStreaming = false;
      const statuses = getExtension(method.options!, successStatuses);
      setExtension(method.options!, successStatuses, [...statuses, 301]);
    }
  }
});

describe("documents and redirects through the gateway", () => {
  let app: FastifyInstance;
  let base: string;
  beforeAll(async () => {
    app = Fastify();
    const transport = createRouterTransport((router) =>
      router.service(Edited, {
        serveFile: (request: FileReadRequest, call: HandlerContext) => {
          if (request.key === "raw") {
            const paste = answerDocument(call, {
              contentType: "text/plain; charset=utf-8",
              body: "<script>alert(1)</script>",
              maxAgeSeconds: 30,
            });
            return create(FileReadResultSchema, { body: paste });
          }
          const type = preferredType(call, ["application/rss+xml", "application/json"]);
          const feed = renderFeed(model, type === "application/json" ? "json" : "rss");
          return create(FileReadResultSchema, { body: answerDocument(call, { ...feed, maxAgeSeconds: 60 }) });
        },
        readFile: (request: FileReadRequest, call: HandlerContext) => {
          if (request.key !== "current") answerRedirect(call, `/media/api/v1/${request.app}/files/current`);
          return create(FileReadResultSchema, {});
        },
      } as never),
    );
    const bindings = bindingsOf(Edited).filter((b) => ["ServeFile", "ReadFile"].includes(b.method.name));
    const context = {
      transport,
      admission: admitEveryone,
      timeoutMs: 2000,
      registry: createRegistry(),
      logger: createLogger("silent"),
    };
    // ReadFile's JSON read: no response_body, so the JSON path serves it.
    registerBindings(
      app,
      bindings.map((b) => (b.method.name === "ReadFile" ? { ...b, responseField: undefined } : b)),
      {},
      context,
    );
    await app.listen({ port: 0, host: "127.0.0.1" });
    const address = app.server.address();
    base = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  });
  afterAll(() => app?.close());

  it("answers a unary RPC's document with its content type, a strong ETag, Cache-Control and nosniff", async () => {
    const answer = await fetch(`${base}/media/f/feed.xml`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toBe("application/rss+xml; charset=utf-8");
    expect(answer.headers.get("etag")).toMatch(/^"[A-Za-z0-9_-]{32}"$/);
    expect(answer.headers.get("cache-control")).toBe("public, max-age=60");
    expect(answer.headers.get("x-content-type-options")).toBe("nosniff");
    const body = await answer.text();
    expect(body).toBe(renderFeed(model, "rss").body);
    expect(parsed(body).rss.channel.item).toHaveLength(2);
  });

  it("answers 304 without a body when If-None-Match names the ETag (weakly compared), 200 otherwise", async () => {
    const etag = (await fetch(`${base}/media/f/feed.xml`)).headers.get("etag")!;
    for (const sent of [etag, `W/${etag}`, `"other", ${etag}`, "*"]) {
      const again = await fetch(`${base}/media/f/feed.xml`, { headers: { "if-none-match": sent } });
      expect(again.status, sent).toBe(304);
      expect(again.headers.get("etag")).toBe(etag);
      expect(await again.text()).toBe("");
    }
    const changed = await fetch(`${base}/media/f/feed.xml`, { headers: { "if-none-match": '"stale"' } });
    expect(changed.status).toBe(200);
  });

  it("answers JSON when Accept prefers it, the feed otherwise", async () => {
    const json = await fetch(`${base}/media/f/feed.xml`, { headers: { accept: "application/json" } });
    expect(json.headers.get("content-type")).toBe("application/feed+json; charset=utf-8");
    expect(((await json.json()) as { version: string }).version).toBe("https://jsonfeed.org/version/1.1");
    for (const accept of [
      "application/rss+xml, application/json;q=0.5",
      "*/*",
      "text/html",
      "application/xml,*/*;q=0.8",
    ]) {
      const rss = await fetch(`${base}/media/f/feed.xml`, { headers: { accept } });
      expect(rss.headers.get("content-type"), accept).toBe("application/rss+xml; charset=utf-8");
    }
    const preferred = await fetch(`${base}/media/f/feed.xml`, {
      headers: { accept: "application/rss+xml;q=0.4, application/json;q=0.9" },
    });
    expect(preferred.headers.get("content-type")).toBe("application/feed+json; charset=utf-8");
    // Two representations, two ETags: a cache never answers one for the other.
    expect(preferred.headers.get("etag")).not.toBe((await fetch(`${base}/media/f/feed.xml`)).headers.get("etag"));
  });

  it("answers a raw paste as text/plain, never sniffed as HTML", async () => {
    const raw = await fetch(`${base}/media/f/raw`);
    expect(raw.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(raw.headers.get("x-content-type-options")).toBe("nosniff");
    expect(await raw.text()).toBe("<script>alert(1)</script>");
  });

  it("answers a declared 301 with Location and no body (answerRedirect)", async () => {
    const moved = await fetch(`${base}/media/api/v1/app_x/files/old`, { redirect: "manual" });
    expect(moved.status).toBe(301);
    expect(moved.headers.get("location")).toBe("/media/api/v1/app_x/files/current");
    expect(await moved.text()).toBe("");
    const current = await fetch(`${base}/media/api/v1/app_x/files/current`, { redirect: "manual" });
    expect(current.status).toBe(200);
  });
});
