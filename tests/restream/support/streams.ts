import type { TestPlatform } from "../../support/platform.js";

let people = 0;

/** A streamer of their own: a user token, and calls to restream's routes through the gateway as them. */
export async function streamer(t: TestPlatform) {
  const sub = `usr_st${++people}${Date.now()}`;
  const token = await t.token({ kind: "user", sub });
  const call = (method: string, path: string, body?: unknown) =>
    t.http(method, `/restream/api/v1${path}`, { token, body });
  return {
    sub,
    token,
    call,
    /** A stream of theirs: its id and its ingest key (answered once). */
    async stream(body: Record<string, unknown> = {}): Promise<{ id: string; key: string; body: any }> {
      const created = await call("POST", "/streams", { title: "Evening show", ...body });
      if (created.status !== 201) throw new Error(`create stream: ${created.status} ${JSON.stringify(created.body)}`);
      return { id: created.body.stream.id, key: created.body.ingest_key, body: created.body };
    },
  };
}

/** A service acting for nobody (reaches every stream), or for `subject` (X-PF-Subject), holding every restream capability. */
export async function service(t: TestPlatform, subject?: string) {
  const token = await t.token({
    kind: "service",
    svc: "live",
    caps: [
      "restream.stream.read",
      "restream.stream.write",
      "restream.output.read",
      "restream.output.write",
      "restream.session.read",
      "restream.session.end",
      "restream.key.rotate",
    ],
  });
  const headers: Record<string, string> = subject ? { "x-pf-subject": subject } : {};
  return (method: string, path: string, body?: unknown) =>
    t.http(method, `/restream/api/v1${path}`, { token, body, headers });
}

/** A first-party app acting for nobody: it owns no stream and reaches none. */
export async function app(t: TestPlatform) {
  const token = await t.token({
    kind: "app",
    app_id: "app_restream",
    fp: true,
    caps: ["restream.stream.read", "restream.session.read", "restream.session.end"],
  });
  return (method: string, path: string, body?: unknown) => t.http(method, `/restream/api/v1${path}`, { token, body });
}
