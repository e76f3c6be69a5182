import { getOption, type DescMessage, type JsonObject } from "@bufbuild/protobuf";
import type { FastifyInstance } from "fastify";
import { protoComments } from "../gen/pf/docs.js";
import { eventMessages } from "../gen/pf/events.js";
import { event_subjects as eventSubjects, schema as schemaOption } from "../gen/pf/v1/options_pb.js";
import { streamName } from "../services/kit/events/jetstream-bus.js";
import { idPattern } from "../services/kit/handler/ids.js";
import { OPEN_TO_ANY_ORIGIN } from "./cors.js";
import { mountPoints } from "./routes.js";
import { componentName, SchemaComponents } from "./schemas.js";

export interface EventScope {
  readonly title: string;
  /** The services whose events are documented (a subject's first token is its service's key). */
  readonly keys: readonly string[];
  /** NATS_URL: the server documented, by its host alone (never its credentials). Unset: the in-process bus. */
  readonly natsUrl?: string;
  /** PF_NATS_NAMESPACE: every subject travels as `<namespace>.<subject>`. */
  readonly namespace?: string;
}

/**
 * AsyncAPI 3.0 of the events the services publish, read from the event
 * messages (`pf.v1.event_subjects`; the outbox publishes no other subject):
 * one channel per subject, one `receive` operation each (what a subscriber
 * does), one message per event message with the headers the outbox relay sets
 * and its payload's JSON Schema as OpenAPI writes it (schemas.ts).
 */
export function asyncApiDocument(scope: EventScope, messages: readonly DescMessage[] = eventMessages): JsonObject {
  const components = new SchemaComponents();
  const eventMessagesById: Record<string, JsonObject> = {};
  const channels: Record<string, JsonObject> = {};
  const operations: Record<string, JsonObject> = {};
  for (const message of messages) {
    const subjects = getOption(message, eventSubjects).filter((subject) => scope.keys.includes(keyOf(subject)));
    if (subjects.length === 0) continue;
    const id = componentName(message);
    eventMessagesById[id] = messageOf(message, components);
    for (const subject of subjects) {
      channels[subject] = {
        address: scope.namespace ? `${scope.namespace}.${subject}` : subject,
        title: subject,
        description: wildcards(subject, scope.namespace),
        messages: { [id]: { $ref: `#/components/messages/${id}` } },
      };
      operations[`receive.${subject}`] = {
        action: "receive",
        summary: `Receive ${subject}`,
        channel: { $ref: `#/channels/${subject}` },
        messages: [{ $ref: `#/channels/${subject}/messages/${id}` }],
      };
    }
  }
  const host = scope.natsUrl && hostOf(scope.natsUrl);
  return {
    asyncapi: "3.0.0",
    info: { title: scope.title, version: "v1", description: about(scope) },
    ...(host && {
      servers: {
        nats: { host, protocol: "nats", description: "NATS with JetStream: one stream per service's subjects." },
      },
    }),
    defaultContentType: "application/json",
    channels,
    operations,
    components: { messages: eventMessagesById, schemas: components.schemas },
  };
}

/**
 * `/asyncapi.json` of the events of every service the gateway routes, and `/<key>/asyncapi.json` of one service's
 * (also at the root of its routed hosts), beside the OpenAPI documents: the same to every caller, of any origin.
 */
export function serveAsyncApi(
  app: FastifyInstance,
  keys: readonly string[],
  context: { hostRouting: Record<string, string>; natsUrl?: string; natsNamespace?: string },
): void {
  const serve = (scope: EventScope) => {
    // Made at the first request, as the OpenAPI documents are.
    let document: string | undefined;
    return () => (document ??= JSON.stringify(asyncApiDocument(scope)));
  };
  const nats = { natsUrl: context.natsUrl, namespace: context.natsNamespace };
  const whole = serve({ title: "pf platform events", keys, ...nats });
  app.get("/asyncapi.json", { config: OPEN_TO_ANY_ORIGIN }, (_request, reply) =>
    reply.type("application/json").send(whole()),
  );
  for (const key of keys) {
    const own = serve({ title: `pf ${key} events`, keys: [key], ...nats });
    for (const point of mountPoints(key, context.hostRouting))
      app.route({
        method: "GET",
        url: `${point.prefix}/asyncapi.json`,
        config: OPEN_TO_ANY_ORIGIN,
        handler: (_request, reply) => reply.type("application/json").send(own()),
        ...(point.constraints && { constraints: point.constraints }),
      });
  }
}

/** An event message: its proto comment, the headers the relay sets (outbox.ts) and its payload as proto JSON. */
function messageOf(message: DescMessage, components: SchemaComponents): JsonObject {
  const schemaId = getOption(message, schemaOption) || message.typeName;
  const comment = protoComments[message.typeName];
  return {
    name: schemaId,
    title: message.typeName,
    ...(comment && { description: comment }),
    contentType: "application/json",
    headers: {
      type: "object",
      properties: {
        "Nats-Msg-Id": {
          type: "string",
          pattern: idPattern("evt").source,
          description: "The event's id: JetStream drops a resend of it, and consumers apply each id once.",
        },
        "Pf-Schema": { type: "string", const: schemaId, description: "The payload's schema id." },
        "Content-Type": { type: "string", const: "application/json" },
        traceparent: {
          type: "string",
          description: "W3C trace context of the change that wrote the event, when tracing is on.",
        },
      },
      required: ["Nats-Msg-Id", "Pf-Schema", "Content-Type"],
    },
    payload: components.message(message),
  };
}

/** The subject's service key: its first token. */
function keyOf(subject: string): string {
  return subject.split(".")[0];
}

/** Which wildcard subscriptions take a subject, and the JetStream stream that keeps it. */
function wildcards(subject: string, namespace?: string): string {
  const wire = (each: string) => `\`${namespace ? `${namespace}.` : ""}${each}\``;
  const tokens = subject.split(".");
  return (
    `Also taken by ${wire(`${tokens.slice(0, -1).join(".")}.*`)} (\`*\`: one token) and by ` +
    `${wire(`${tokens[0]}.>`)} (\`>\`: the rest: every ${tokens[0]} event). ` +
    `Kept in the JetStream stream \`${streamName(tokens[0], namespace)}\`.`
  );
}

/** The host (and port) of the first server of NATS_URL, without credentials. */
function hostOf(natsUrl: string): string | undefined {
  try {
    return new URL(natsUrl.split(",")[0].trim()).host || undefined;
  } catch {
    return undefined;
  }
}

function about(scope: EventScope): string {
  return [
    "Events the services publish on NATS, each written in the transaction of the change it tells (an outbox) " +
      "and published to JetStream once that commits: delivered at least once, in the order written per service.",
    "The payload is the event message as proto JSON: proto field names, every field without explicit presence " +
      "written (zero values too), 64-bit integers as strings, enums by name, timestamps as RFC 3339. Decode it " +
      "with the generated type (`fromJsonString(ModEventSchema, text, { ignoreUnknownFields: true })`): newer " +
      "producers may add fields.",
    "Subjects are `<service>.<resource>.<verb-past>`: `*` matches one token and `>` the rest, so " +
      "`games.mod.*` takes every games.mod event.",
    scope.namespace
      ? `This deployment shares its NATS server: every subject travels as \`${scope.namespace}.<subject>\`.`
      : "",
    scope.natsUrl ? "" : "NATS_URL is unset here: events stay in the platform's process and reach no subscriber.",
  ]
    .filter(Boolean)
    .join("\n\n");
}
