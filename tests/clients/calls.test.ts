import { ConnectError, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-web";
import { beforeAll, describe, expect, it } from "vitest";
import { createPlatformClient, createPlatformFetch, PlatformError, problemOf } from "../../clients/ts/src/index.js";
import { usePlatform } from "../support/platform.js";
import { unspentMinuteEndingIn, type ShiftedClock } from "./support.js";

// One anonymous search a minute, so the second is refused 429 until the minute's window ends.
const clock: ShiftedClock = { offsetMs: 0, now: () => new Date(Date.now() + clock.offsetMs) };
const t = usePlatform({ services: ["community", "search"], clock, env: { PF_SEARCH_ANONYMOUS_PER_MINUTE: "1" } });

let web: string;
beforeAll(async () => {
  web = await t.token({ kind: "service", svc: "web", caps: ["community.paste.create", "community.paste.read"] });
});

/** Each try a client makes, as its innermost interceptor sees it: when it started, and how it failed. */
function recordTries() {
  const tries: { at: number; error?: ConnectError }[] = [];
  const interceptor: Interceptor = (next) => async (req) => {
    const at = Date.now();
    try {
      const answer = await next(req);
      tries.push({ at });
      return answer;
    } catch (error) {
      tries.push({ at, error: ConnectError.from(error) });
      throw error;
    }
  };
  return { tries, interceptor };
}

describe("the platform's Connect clients, on the RPC port", () => {
  it("write for the person a service token names (token and X-PF-Subject wired), and read anonymously", async () => {
    const owner = `usr_client${Date.now().toString(36)}`;
    const pf = createPlatformClient({ baseUrl: t.platform.rpcUrl, token: web, subject: owner });
    const { paste } = await pf.paste.createPaste({ title: "From the client", body: "hello" });
    expect(paste).toMatchObject({ owner, authorship: { author: { case: "person", value: owner } }, state: "active" });

    const anonymous = createPlatformClient({ baseUrl: t.platform.rpcUrl });
    const read = await anonymous.paste.getPaste({ slug: paste!.slug });
    expect(read.paste).toMatchObject({ id: paste!.id, body: "hello", owner });
  });

  it("call the gateway's port through a browser's transports (Connect and gRPC-Web over fetch)", async () => {
    const owner = `usr_web${Date.now().toString(36)}`;
    const pf = createPlatformClient({
      baseUrl: t.gatewayUrl,
      token: web,
      subject: owner,
      transport: createGrpcWebTransport,
    });
    const { paste } = await pf.paste.createPaste({ title: "From a browser", body: "hello" });
    expect(paste).toMatchObject({ owner });
    const anonymous = createPlatformClient({ baseUrl: t.gatewayUrl, transport: createConnectTransport });
    expect((await anonymous.paste.getPaste({ slug: paste!.slug })).paste).toMatchObject({ owner, body: "hello" });
  });

  it("answer a refusal as a PlatformError carrying its problem", async () => {
    // X-PF-Subject is a service's to send: a person's own token sending it is refused.
    const person = await t.token({ kind: "user", sub: "usr_clientself" });
    const pf = createPlatformClient({ baseUrl: t.platform.rpcUrl, token: person, subject: "usr_someoneelse" });
    const refused = await pf.paste.createPaste({ title: "Not mine", body: "x" }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(PlatformError);
    expect(refused).toBeInstanceOf(ConnectError);
    expect((refused as PlatformError).problem).toMatchObject({ code: "auth.header_refused", status: 403 });
    // A ConnectError without a problem is no PlatformError.
    expect(new ConnectError("plain")).not.toBeInstanceOf(PlatformError);
  });

  it("try a read again after the Retry-After of its 429, and answer it at once when that is past their longest wait", async () => {
    clock.offsetMs += unspentMinuteEndingIn(5_000, clock.now().getTime());
    const { tries, interceptor } = recordTries();
    const anonymous = createPlatformClient({ baseUrl: t.platform.rpcUrl, interceptors: [interceptor] });
    await anonymous.search.search({ q: "" }); // the minute's one search
    await anonymous.search.search({ q: "" }); // refused until the minute ends, then answered
    expect(tries.map((each) => each.error && problemOf(each.error)?.code)).toEqual([
      undefined,
      "rate.limited",
      undefined,
    ]);
    const told = problemOf(tries[1].error!)!.extensions!.retry_after_seconds as number;
    expect(told).toBeGreaterThanOrEqual(1);
    expect(tries[2].at - tries[1].at).toBeGreaterThanOrEqual(told * 1000);

    // The new minute's search is spent: the next is told to wait past a second, longer than this client waits.
    tries.length = 0;
    const impatient = createPlatformClient({
      baseUrl: t.platform.rpcUrl,
      interceptors: [interceptor],
      retries: { maxWaitMs: 500 },
    });
    const refused = await impatient.search.search({ q: "" }).catch((error: unknown) => error);
    expect((refused as PlatformError).problem).toMatchObject({ code: "rate.limited", status: 429 });
    expect(tries).toHaveLength(1);
  }, 30_000);
});

describe("the platform's fetch helpers, on the gateway's JSON routes", () => {
  it("call a route with its typed path, body and params (token and X-PF-Subject wired), and read anonymously", async () => {
    const owner = `usr_fetch${Date.now().toString(36)}`;
    const api = createPlatformFetch({ baseUrl: t.gatewayUrl, token: web, subject: owner });
    const created = await api.POST("/community/api/pastes", { body: { title: "Typed", body: "hello" } });
    expect(created.response.status).toBe(201);
    expect(created.data?.paste).toMatchObject({ owner, authorship: { person: owner } });

    const anonymous = createPlatformFetch({ baseUrl: t.gatewayUrl });
    const slug = created.data!.paste!.slug!;
    const read = await anonymous.GET("/community/api/pastes/{slug}", { params: { path: { slug } } });
    expect(read.data?.paste).toMatchObject({ slug, body: "hello", owner });
  });

  it("answer a refusal as the route's problem", async () => {
    const person = await t.token({ kind: "user", sub: "usr_fetchself" });
    const api = createPlatformFetch({ baseUrl: t.gatewayUrl, token: person, subject: "usr_someoneelse" });
    const refused = await api.POST("/community/api/pastes", { body: { title: "Not mine", body: "x" } });
    expect(refused.response.status).toBe(403);
    expect(refused.error).toMatchObject({ code: "auth.header_refused", status: 403 });
  });

  it("try a GET again after the Retry-After of its 429", async () => {
    clock.offsetMs += unspentMinuteEndingIn(5_000, clock.now().getTime());
    const answers: { at: number; status: number; retryAfter: string | null }[] = [];
    const api = createPlatformFetch({
      baseUrl: t.gatewayUrl,
      fetch: async (request) => {
        const at = Date.now();
        const response = await fetch(request);
        answers.push({ at, status: response.status, retryAfter: response.headers.get("retry-after") });
        return response;
      },
    });
    await api.GET("/search/api/v1/search", { params: { query: { q: "" } } }); // the minute's one search
    const searched = await api.GET("/search/api/v1/search", { params: { query: { q: "" } } });
    expect(searched.response.status).toBe(200);
    expect(answers.map((answer) => answer.status)).toEqual([200, 429, 200]);
    const told = Number(answers[1].retryAfter);
    expect(told).toBeGreaterThanOrEqual(1);
    expect(answers[2].at - answers[1].at).toBeGreaterThanOrEqual(told * 1000);
  }, 30_000);
});
