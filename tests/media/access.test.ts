import { describe, expect, it } from "vitest";
import { MediaService } from "../../gen/pf/media/v1/media_pb.js";
import {
  bindingOf,
  describeMalformedInput,
  describeRefusals,
  itWithSpec,
  routesOf,
  type RouteCall,
} from "../support/access.js";
import { usePlatform } from "../support/platform.js";

const KEY = "AAAAAAAAAAAAAAAAAAAAAAAA";

/** One valid call per route; the refusals vary only the caller (an upload without a body reaches the gateway's checks). */
const calls: Record<string, RouteCall> = {
  uploadFile: { method: "POST", path: "/media/api/v1/app1/files" },
  readFile: { method: "GET", path: `/media/api/v1/app1/files/${KEY}` },
  serveFile: { method: "GET", path: `/media/f/${KEY}` },
};

const routes = routesOf(MediaService);
const t = usePlatform({ services: ["media"] });

describe("media access", () => {
  it("lists one call per route", () => {
    expect(Object.keys(calls).sort()).toEqual(routes.map((route) => route.name).sort());
  });

  describeRefusals(t, routes, calls);
  describeMalformedInput(t, routes, calls);

  itWithSpec("matches routes.tsv exactly (3 routes: method, path, capability, visibility)", "media", (documented) => {
    expect(documented).toHaveLength(3);
    const bound = routes.map(bindingOf);
    expect(bound).toHaveLength(documented.length);
    for (const [, verb, path, caps, visibility] of documented) {
      expect(bound, `${verb} ${path}`).toContainEqual({ verb, template: path, caps, visibility });
    }
  });

  it("reads need no token; uploads take apps and services, never people", () => {
    const rule = (name: string) => routes.find((route) => route.name === name)!.rule;
    expect(rule("readFile").anonymous).toBe(true);
    expect(rule("serveFile").anonymous).toBe(true);
    expect(rule("uploadFile").anonymous).toBe(false);
    expect(rule("uploadFile").noPeople).toBe(true);
  });
});
