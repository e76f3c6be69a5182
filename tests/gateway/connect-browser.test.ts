import { build } from "esbuild";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect } from "vitest";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { BROWSER, launchChromium } from "../support/chromium.js";
import { startTestPlatform, type TestPlatform } from "../support/platform.js";
import { describeWith, itWith } from "../support/skips.js";
import { person } from "../community/support.js";
import type { Outcome } from "./connect-page/page.js";

/** Generous: chromium starts and the page calls four RPCs, on a shared two-core machine. */
const BROWSER_TEST_MS = 60_000;

describeWith(BROWSER, "Connect and gRPC-Web on the gateway's port, from a page in chromium", () => {
  let pages: Server;
  let origin: string;
  let t: TestPlatform;
  let browser: Browser;

  beforeAll(async () => {
    // The page is served from an origin of its own, so every call is cross-origin and CORS must let it through.
    const bundle = await build({
      entryPoints: ["tests/gateway/connect-page/page.ts"],
      bundle: true,
      write: false,
      format: "esm",
      platform: "browser",
      logLevel: "silent",
    });
    const script = bundle.outputFiles[0].contents;
    pages = createServer((request, response) => {
      if (request.url === "/page.js") return response.writeHead(200, { "content-type": "text/javascript" }).end(script);
      response.writeHead(200, { "content-type": "text/html" });
      response.end(`<!doctype html><title>pf over Connect</title><script type="module" src="/page.js"></script>`);
    });
    await new Promise<void>((resolve) => pages.listen(0, "127.0.0.1", resolve));
    origin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
    t = await startTestPlatform({
      services: ["community"],
      env: { PF_CORS_ORIGINS: origin },
      // Standing still: the anonymous reads count in windows aligned to the minute.
      clock: new ManualClock(new Date("2026-11-28T12:00:10Z")),
    });
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await t?.stop();
    await new Promise((resolve) => pages?.close(resolve));
  });

  itWith(
    BROWSER,
    "the page calls a public and an authenticated RPC over each protocol, and sees a refusal's code",
    async () => {
      const owner = person("web");
      const token = await t.token({ kind: "user", sub: owner });
      const page = await browser.newPage();
      const errors: string[] = [];
      page.on("pageerror", (error) => errors.push(error.message));
      try {
        await page.goto(`${origin}/#${new URLSearchParams({ gateway: t.gatewayUrl, token }).toString()}`);
        await page.waitForFunction(() => "outcomes" in globalThis);
        const outcomes = await page.evaluate(
          () => (globalThis as unknown as { outcomes: Promise<Record<string, Outcome>> }).outcomes,
        );
        const expected: Outcome = { owner, read: true, refused: "Unauthenticated" };
        expect(outcomes).toEqual({ connect: expected, grpcWeb: expected });
        expect(errors).toEqual([]);
      } finally {
        await page.close();
      }
    },
    BROWSER_TEST_MS,
  );
});
