import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { modules } from "../../platform/registry.js";
import { BROWSER, launchChromium } from "../support/chromium.js";
import { usePlatform } from "../support/platform.js";
import { describeWith, itWith } from "../support/skips.js";

/** Generous: the page parses a 1.7 MB bundle and a service's document, on a shared two-core machine. */
const BROWSER_TEST_MS = 120_000;

const t = usePlatform();
const SERVICE_KEYS = modules.map((module) => module.key).sort();

describeWith(BROWSER, "/docs, the API reference, in a real browser", () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  }, 30_000);
  afterAll(() => browser?.close());

  /**
   * The page showing one service's routes, loaded (its resource `tag` shown); with every request it made, those
   * that failed, and the console's errors (CSP refusals too).
   */
  async function openDocs(service: string, tag: string) {
    const page = await browser.newPage();
    page.setDefaultTimeout(60_000);
    const requested: string[] = [];
    const failed: string[] = [];
    const errors: string[] = [];
    page.on("request", (request) => requested.push(request.url()));
    page.on("requestfailed", (request) => failed.push(`${request.url()}: ${request.failure()?.errorText ?? "failed"}`));
    page.on("response", (response) => {
      // The calls the page is asked to make may be refused (a 401 before "Authorize"); the page's own files may not.
      if (response.status() >= 400 && !response.url().includes("/api/"))
        failed.push(`${response.url()}: ${response.status()}`);
    });
    page.on("console", (message) => {
      if (message.type() === "error") errors.push(message.text());
    });
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(`${t.gatewayUrl}/docs?service=${service}`);
    await page.locator(`.opblock-tag-section h3.opblock-tag[data-tag="${tag}"]`).waitFor();
    return { page, requested, failed, errors };
  }

  /** One operation's block, by its method and path as the page shows them. */
  const operation = (page: Page, verb: string, path: string) =>
    page.locator(`.opblock.opblock-${verb}`, { has: page.locator(`.opblock-summary-path[data-path="${path}"]`) });

  /**
   * Expands an operation, presses "Try it out", fills in path variables, presses "Execute", folds it again and
   * answers the status the page showed. The body is the one the page offers.
   */
  async function tryIt(
    page: Page,
    verb: string,
    path: string,
    variables: Record<string, string> = {},
  ): Promise<string> {
    const block = operation(page, verb, path);
    await block.locator(".opblock-summary").first().click();
    // The page keeps an operation in "try it out" once pressed (the button then says Cancel).
    const tryOut = block.locator("button.try-out__btn");
    if ((await tryOut.textContent())?.trim() === "Try it out") await tryOut.click();
    for (const [name, value] of Object.entries(variables))
      await block.locator(`tr[data-param-name="${name}"] input`).fill(value);
    await block.locator("button.execute").click();
    const status = block.locator(".live-responses-table .response .response-col_status").first();
    const shown = (await status.textContent())?.trim() ?? "";
    await block.locator("button.btn-clear").click();
    await block.locator(".opblock-summary").first().click();
    return shown;
  }

  itWith(
    BROWSER,
    "loads from the gateway alone and picks among every service; a service shows its routes' access and problems; a public route's 'Try it out' answers 200",
    async () => {
      const { page, requested, failed, errors } = await openDocs("vip", "Plans");
      try {
        const picked = await page
          .locator("select#service option")
          .evaluateAll((options) => options.map((option) => option.getAttribute("value")));
        expect(picked).toEqual(SERVICE_KEYS);
        expect(await page.locator("select#service").inputValue()).toBe("vip");
        expect(requested.filter((url) => !url.startsWith(`${t.gatewayUrl}/`) && !url.startsWith("data:"))).toEqual([]);
        expect(requested).toContain(`${t.gatewayUrl}/vip/openapi.json`);

        // Each operation shows its access (x-pf-capabilities) and the problems it answers.
        const listPlans = operation(page, "get", "/api/v1/plans");
        await listPlans.locator(".opblock-summary").first().click();
        await listPlans.locator(".opblock-body").waitFor();
        const shown = await listPlans.textContent();
        expect(shown).toContain("x-pf-capabilities");
        expect(shown).toContain("vip.plan.list");
        expect(shown).toContain("auth.header_refused");
        await listPlans.locator(".opblock-summary").first().click();

        // A public read, no token: the call goes from the page to the gateway and answers.
        expect(await tryIt(page, "get", "/api/v1/plans")).toBe("200");

        // Another service, picked in the page.
        await page.locator("select#service").selectOption("network");
        await page.locator(`.opblock-tag-section h3.opblock-tag[data-tag="Staff"]`).waitFor();
        expect(requested).toContain(`${t.gatewayUrl}/network/openapi.json`);
        expect(new URL(page.url()).searchParams.get("service")).toBe("network");
        expect(failed).toEqual([]);
        expect(errors).toEqual([]);
      } finally {
        await page.close();
      }
    },
    BROWSER_TEST_MS,
  );

  itWith(
    BROWSER,
    "a token pasted in 'Authorize' is sent: a route that needs one answers 200, and the internal routes show",
    async () => {
      const { page, failed, errors } = await openDocs("network", "Staff");
      try {
        expect(await tryIt(page, "get", "/api/v1/staff/moderators")).toBe("401");
        expect(await operation(page, "post", "/internal/coins/credit").count()).toBe(0);

        const token = await t.token({ kind: "service", svc: "space", caps: ["network.staff.read"] });
        await page.locator(".auth-wrapper button.authorize").click();
        const dialog = page.locator(".modal-ux");
        await dialog.locator("input#auth-bearer-value").fill(token);
        await dialog.locator("button.authorize").click();
        await dialog.locator("button.btn-done").click();

        // A service token reads the whole document: the page fetches it again with the token.
        await operation(page, "post", "/internal/coins/credit").waitFor();
        expect(await tryIt(page, "get", "/api/v1/staff/moderators")).toBe("200");
        expect(failed).toEqual([]);
        // The browser logs the 401 it was asked to make.
        expect(errors.filter((error) => !error.includes("status of 401"))).toEqual([]);
      } finally {
        await page.close();
      }
    },
    BROWSER_TEST_MS,
  );

  itWith(
    BROWSER,
    "'Try it out' on a POST with a path variable sends the body the page offers, and the route takes it",
    async () => {
      const owner = `usr_docs${Date.now().toString(36)}`;
      const service = await t.token({ kind: "service", svc: "web", caps: ["community.paste.create"] });
      const created = await t.http("POST", "/community/api/pastes", {
        token: service,
        body: { title: "Shown in the docs", body: "hello" },
        headers: { "x-pf-subject": owner },
      });
      expect(created.status).toBe(201);
      const { page, failed, errors } = await openDocs("community", "Pastes");
      try {
        await page.locator(".auth-wrapper button.authorize").click();
        const dialog = page.locator(".modal-ux");
        await dialog.locator("input#auth-bearer-value").fill(await t.token({ kind: "user", sub: `${owner}f` }));
        await dialog.locator("button.authorize").click();
        await dialog.locator("button.btn-done").click();
        expect(await tryIt(page, "post", "/api/pastes/{slug}/fork", { slug: created.body.paste.slug })).toBe("201");
        expect(failed).toEqual([]);
        expect(errors).toEqual([]);
      } finally {
        await page.close();
      }
    },
    BROWSER_TEST_MS,
  );
});

describe("/docs over HTTP", () => {
  it("GET / redirects to /docs", async () => {
    const answer = await fetch(`${t.gatewayUrl}/`, { redirect: "manual" });
    expect(answer.status).toBe(302);
    expect(answer.headers.get("location")).toBe("/docs");
  });

  it("the page is revalidated each time; its assets, named by version, are cached for good", async () => {
    const page = await fetch(`${t.gatewayUrl}/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("cache-control")).toBe("no-cache");
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
    const assets = [...(await page.text()).matchAll(/(?:href|src)="(\/docs\/assets\/[^"]+)"/g)].map(
      (match) => match[1],
    );
    expect(assets.map((asset) => asset.split("/").pop())).toEqual([
      "swagger-ui.css",
      "swagger-ui-bundle.js",
      "init.js",
    ]);
    for (const asset of assets) {
      const answer = await fetch(t.gatewayUrl + asset);
      expect(answer.status, asset).toBe(200);
      expect(answer.headers.get("cache-control"), asset).toBe("public, max-age=31536000, immutable");
      expect(answer.headers.get("content-type"), asset).toMatch(/^text\/(css|javascript); charset=utf-8$/);
      await answer.arrayBuffer();
    }
    // Another version's asset, or a file the page does not load, is not served.
    const stale = await fetch(`${t.gatewayUrl}/docs/assets/000000000000/swagger-ui-bundle.js`);
    expect(stale.status).toBe(404);
    const other = await fetch(t.gatewayUrl + assets[0].replace("swagger-ui.css", "index.html"));
    expect(other.status).toBe(404);
  });

  it("every service the page lists answers its own document", async () => {
    for (const key of SERVICE_KEYS) {
      const answer = await fetch(`${t.gatewayUrl}/${key}/openapi.json`);
      expect(answer.status, key).toBe(200);
      const document = (await answer.json()) as { servers: { url: string }[]; paths: object };
      expect(document.servers, key).toEqual([{ url: `/${key}` }]);
      expect(Object.keys(document.paths).length, key).toBeGreaterThan(0);
    }
  });

  it("other routes keep their headers: no CSP on the API", async () => {
    const answer = await t.http("GET", "/vip/api/v1/plans");
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-security-policy")).toBeNull();
  });
});
