import { Parser } from "@asyncapi/parser";
import { fromJsonString, getOption, type DescMessage } from "@bufbuild/protobuf";
import { connect, type Msg, type NatsConnection } from "@nats-io/transport-node";
import { Ajv } from "ajv";
import addFormats from "ajv-formats";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { asyncApiDocument } from "../../gateway/asyncapi.js";
import { componentName } from "../../gateway/schemas.js";
import { eventMessages } from "../../gen/pf/events.js";
import { ModEventSchema } from "../../gen/pf/games/v1/events_pb.js";
import { event_subjects, schema as schemaId } from "../../gen/pf/v1/options_pb.js";
import { modules } from "../../platform/registry.js";
import { recordEvent } from "../../services/kit/events/outbox.js";
import { gamesCall, installed, managerToken } from "../games/support.js";
import { startTestPlatform, type TestPlatform } from "../support/platform.js";
import { describeWith, NATS } from "../support/skips.js";
import { until } from "../support/until.js";

interface Message {
  name: string;
  headers: { properties: Record<string, { const?: string; pattern?: string }>; required: string[] };
  payload: { $ref: string };
}
interface Document {
  asyncapi: string;
  servers?: Record<string, { host: string; protocol: string }>;
  channels: Record<string, { address: string; messages: Record<string, { $ref: string }> }>;
  operations: Record<string, { action: string; channel: { $ref: string }; messages: { $ref: string }[] }>;
  components: { messages: Record<string, Message>; schemas: Record<string, { properties: Record<string, unknown> }> };
}

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const KEYS = modules.map((module) => module.key);
const document = (scope: Partial<Parameters<typeof asyncApiDocument>[0]> = {}) =>
  asyncApiDocument({ title: "pf platform events", keys: KEYS, ...scope }) as unknown as Document;
const whole = document({ natsUrl: "nats://relay:secret@nats.internal:4222" });

/** The message a channel carries, as its component. */
const messageOf = (doc: Document, subject: string) => {
  const [ref] = Object.values(doc.channels[subject].messages);
  return doc.components.messages[ref.$ref.split("/").pop()!];
};

/** A payload checker for one message of a document: its schema, the document's components beside it. */
function payloadCheck(doc: Document, message: Message) {
  const ajv = new Ajv({ allErrors: true, strict: false });
  addFormats.default(ajv);
  for (const format of ["int32", "int64", "uint64", "float", "double"]) ajv.addFormat(format, true);
  return ajv.compile({ ...message.payload, components: { schemas: doc.components.schemas } });
}

describe("AsyncAPI of the event messages", () => {
  it("parses with @asyncapi/parser without an error or a warning", async () => {
    const { document: parsed, diagnostics } = await new Parser().parse(whole as never);
    // Severity 0 is an error, 1 a warning (2 and 3 are hints, as "3.1.0 is out").
    expect(diagnostics.filter((each) => each.severity <= 1).map((each) => `${each.code} ${each.message}`)).toEqual([]);
    expect(parsed?.channels().length).toBe(Object.keys(whole.channels).length);
  }, 60_000);

  it("the parser finds a broken document's faults, so the check above means something", async () => {
    const broken = structuredClone(whole);
    broken.operations["receive.games.mod.enabled"].channel = { $ref: "#/channels/games.mod.exploded" };
    const { diagnostics } = await new Parser().parse(broken as never);
    expect(diagnostics.some((each) => each.severity === 0)).toBe(true);
  }, 60_000);

  it("has a channel and a receive operation for every subject the services' events.ts name", () => {
    const named = new Set<string>();
    const prefixes = new Set<string>();
    for (const key of KEYS) {
      let source: string;
      try {
        source = readFileSync(`${ROOT}services/${key}/events.ts`, "utf8");
      } catch {
        continue; // A service without events (docs/conventions.md lists it).
      }
      for (const [, subject] of source.matchAll(/["'`]([a-z_]+\.[a-z_]+\.[a-z_]+)["'`]/g))
        if (subject.startsWith(`${key}.`)) named.add(subject);
      // Subjects written as `blog.post.${action}`: some channel carries each such prefix.
      for (const [, prefix] of source.matchAll(/`([a-z_]+\.[a-z_]+\.)\$\{/g)) prefixes.add(prefix);
    }
    expect(named.size).toBeGreaterThan(60);
    expect([...named].filter((subject) => !whole.channels[subject])).toEqual([]);
    expect(prefixes).toEqual(
      new Set(["blog.post.", "reviews.entity.", "reviews.summary.", "space.thread.", "space.post."]),
    );
    for (const prefix of prefixes)
      expect(Object.keys(whole.channels).filter((subject) => subject.startsWith(prefix)).length).toBeGreaterThan(2);
    for (const [subject, channel] of Object.entries(whole.channels)) {
      expect(channel.address).toBe(subject);
      const [id] = Object.keys(channel.messages);
      expect(whole.operations[`receive.${subject}`]).toEqual({
        action: "receive",
        summary: `Receive ${subject}`,
        channel: { $ref: `#/channels/${subject}` },
        messages: [{ $ref: `#/channels/${subject}/messages/${id}` }],
      });
    }
  });

  it("documents each event message once: the relay's headers and the proto message's fields by their proto names", () => {
    const subjects = eventMessages.flatMap((message: DescMessage) => getOption(message, event_subjects));
    expect(Object.keys(whole.channels).sort()).toEqual([...subjects].sort());
    for (const message of eventMessages as readonly DescMessage[]) {
      const documented = whole.components.messages[componentName(message)];
      const id = getOption(message, schemaId) || message.typeName;
      expect(documented.name).toBe(id);
      expect(documented.headers.properties["Pf-Schema"].const).toBe(id);
      expect(documented.headers.properties["Content-Type"].const).toBe("application/json");
      expect(documented.headers.required).toEqual(["Nats-Msg-Id", "Pf-Schema", "Content-Type"]);
      const schema = whole.components.schemas[documented.payload.$ref.split("/").pop()!];
      expect(Object.keys(schema.properties)).toEqual(message.fields.map((field) => field.name));
      for (const subject of getOption(message, event_subjects)) expect(messageOf(whole, subject)).toBe(documented);
    }
    expect(Object.keys(whole.components.schemas[componentName(ModEventSchema)].properties)).toContain(
      "active_capabilities",
    );
  });

  it("names the NATS server by its host alone, none without NATS, and one service's events under a namespace", () => {
    expect(whole.servers).toEqual({ nats: expect.objectContaining({ host: "nats.internal:4222", protocol: "nats" }) });
    expect(JSON.stringify(whole)).not.toContain("secret");
    expect(document().servers).toBeUndefined();
    const games = document({ keys: ["games"], namespace: "staging" });
    expect(Object.keys(games.channels)).toEqual(getOption(ModEventSchema, event_subjects));
    expect(games.channels["games.mod.enabled"].address).toBe("staging.games.mod.enabled");
    expect(Object.keys(games.components.messages)).toEqual([componentName(ModEventSchema)]);
  });
});

describeWith(NATS, "AsyncAPI served by the gateway, as NATS carries the events", () => {
  let t: TestPlatform;
  let nc: NatsConnection;
  beforeAll(async () => {
    nc = await connect({ servers: process.env.NATS_URL });
    t = await startTestPlatform({ services: ["games"] });
  });
  afterAll(async () => {
    await t?.stop();
    await nc?.close();
  });

  it("serves /asyncapi.json and /games/asyncapi.json: the routed services' events, at their subjects on the wire", async () => {
    for (const path of ["/asyncapi.json", "/games/asyncapi.json"]) {
      const answer = await fetch(t.gatewayUrl + path);
      expect(answer.status).toBe(200);
      expect(answer.headers.get("content-type")).toMatch(/^application\/json/);
      const served = (await answer.json()) as Document;
      expect(Object.keys(served.channels)).toEqual(getOption(ModEventSchema, event_subjects));
      expect(served.channels["games.mod.installed"].address).toBe(t.events!.subject("games.mod.installed"));
      expect(served.servers?.nats.host).toBe(new URL(process.env.NATS_URL!).host);
    }
  });

  it("a games.mod.* subscriber gets what the document says: its headers, and a payload its schema takes and ModEventSchema decodes", async () => {
    const served = (await (await fetch(`${t.gatewayUrl}/games/asyncapi.json`)).json()) as Document;
    const received: Msg[] = [];
    const subscription = nc.subscribe(t.events!.subject("games.mod.*"), { callback: (_, m) => void received.push(m) });
    await nc.flush();
    try {
      const install = await installed(t, await managerToken(t));
      await gamesCall(t, await managerToken(t))("POST", `/mods/${install.id}/grants`, { capability: "world.read" });
      await until(() => received.length === 2);
      for (const [index, m] of received.entries()) {
        const subject = index === 0 ? "games.mod.installed" : "games.mod.granted";
        expect(m.subject).toBe(served.channels[subject].address);
        const message = messageOf(served, subject);
        for (const [name, header] of Object.entries(message.headers.properties)) {
          if (header.const !== undefined) expect(m.headers?.get(name)).toBe(header.const);
          if (header.pattern !== undefined) expect(m.headers?.get(name)).toMatch(new RegExp(header.pattern));
        }
        const check = payloadCheck(served, message);
        const payload = m.json<Record<string, unknown>>();
        expect(check(payload), JSON.stringify(check.errors)).toBe(true);
        // Every field is written, zero values too: the schema's properties are all there.
        expect(Object.keys(payload).sort()).toEqual(
          Object.keys(served.components.schemas[componentName(ModEventSchema)].properties).sort(),
        );
        const event = fromJsonString(ModEventSchema, m.string(), { ignoreUnknownFields: true });
        expect(event).toMatchObject({ installId: install.id, action: subject.split(".").pop() });
      }
    } finally {
      subscription.unsubscribe();
    }
  });

  it("the outbox refuses a subject its event message does not declare", async () => {
    const games = t.platform.contexts.get("games")!;
    await expect(
      games.transaction((em) => recordEvent(em, "games.mod.exploded", ModEventSchema, { action: "exploded" })),
    ).rejects.toThrow("pf.games.v1.ModEvent does not declare games.mod.exploded in its (pf.v1.event_subjects)");
  });
});
