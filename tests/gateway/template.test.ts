import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import { openApiPath, parseTemplate, routerParams, routerPath } from "../../gateway/template.js";

describe("path templates", () => {
  it("parses literals, {field}, {field=*}, {field=**} and nested field paths", () => {
    expect(parseTemplate("/internal/modules/{namespace}/{subject=*}")).toMatchObject({
      segments: [
        { kind: "literal", text: "internal" },
        { kind: "literal", text: "modules" },
        { kind: "variable", field: "namespace", rest: false },
        { kind: "variable", field: "subject", rest: false },
      ],
    });
    expect(parseTemplate("/internal/notifications/{kind=**}").variables).toEqual([
      { kind: "variable", field: "kind", rest: true },
    ]);
    expect(parseTemplate("/api/v1/{page.cursor}/items").variables).toEqual([
      { kind: "variable", field: "page.cursor", rest: false },
    ]);
    expect(parseTemplate("/s/feed.xml").segments).toEqual([
      { kind: "literal", text: "s" },
      { kind: "literal", text: "feed.xml" },
    ]);
  });

  it.each([
    ["api/v1", "must start with /"],
    ["/a/{rest=**}/b", "must be the last segment"],
    ["/a/{name=shelves/*}", "only {field=*} and {field=**}"],
    ["/a/{id}:cancel", "not a {field} variable"],
    ["/a/*", "not a plain literal"],
    ["/a//b", "not a plain literal"],
    ["/a/{1x}", "not a field path"],
    ["/a/{id}/{id}", "bound twice"],
  ])("refuses %s", (source, why) => {
    expect(() => parseTemplate(source)).toThrow(why);
  });

  it("becomes a router path with positional parameters and a trailing wildcard", () => {
    const modules = parseTemplate("/internal/modules/{namespace}/{page.subject}");
    expect(routerPath(modules)).toBe("/internal/modules/:p0/:p1");
    expect(routerParams(modules)).toEqual(["p0", "p1"]);
    const notifications = parseTemplate("/internal/notifications/{kind=**}");
    expect(routerPath(notifications)).toBe("/internal/notifications/*");
    expect(routerParams(notifications)).toEqual(["*"]);
    expect(openApiPath(notifications)).toBe("/internal/notifications/{kind}");
    expect(openApiPath(modules)).toBe("/internal/modules/{namespace}/{page.subject}");
  });

  it("matches one segment per {field} and the rest of the path, slashes included, for {field=**}", async () => {
    const app = Fastify();
    for (const source of ["/m/{namespace}/{subject}", "/n/{kind=**}", "/s/feed.xml", "/s/{space}"]) {
      const template = parseTemplate(source);
      const names = routerParams(template);
      app.get(routerPath(template), async (request) => {
        const params = request.params as Record<string, string>;
        return Object.fromEntries(template.variables.map((variable, i) => [variable.field, params[names[i]]]));
      });
    }
    const match = async (url: string) => {
      const response = await app.inject({ url });
      return response.statusCode === 200 ? response.json() : response.statusCode;
    };
    expect(await match("/m/pf.games/usr_1")).toEqual({ namespace: "pf.games", subject: "usr_1" });
    expect(await match("/m/a%2Fb/usr%201")).toEqual({ namespace: "a/b", subject: "usr 1" });
    expect(await match("/m/a/b/c")).toBe(404);
    expect(await match("/n/tips/received")).toEqual({ kind: "tips/received" });
    expect(await match("/n/mention")).toEqual({ kind: "mention" });
    expect(await match("/n")).toBe(404);
    expect(await match("/s/feed.xml")).toEqual({});
    expect(await match("/s/rust")).toEqual({ space: "rust" });
    await app.close();
  });
});
