import type { JsonSchema, ToolDescriptor } from "./descriptor.js";

/**
 * What every network probe shares: run by the API for app and service principals holding the partner capability
 * tools.net.probe only, the `probe` quota class, and egress to any public host (never an inside one).
 */
const PROBE: Pick<
  ToolDescriptor,
  "family" | "execution" | "api" | "catalogue" | "auth" | "quotaClass" | "egress" | "hosts" | "docs"
> = {
  family: "net",
  execution: "inline",
  api: true,
  catalogue: "available",
  auth: { capability: "tools.net.probe", anonymous: false },
  quotaClass: "probe",
  egress: true,
  hosts: ["*"],
  docs: "services/tools/README.md#network-probes",
};

/** The largest JSON input of a probe: a host or a URL and a few numbers. */
const MAX_INPUT_BYTES = 4_096;

const LABEL = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?";

/** A host: a DNS name (IDN in its xn-- form), an IPv4 address, or an IPv6 one (bare or in brackets). */
const host: JsonSchema = {
  type: "string",
  minLength: 1,
  maxLength: 253,
  pattern: `^(?:\\[[0-9A-Fa-f:.]+\\]|[0-9A-Fa-f.]*:[0-9A-Fa-f:.]*|${LABEL}(?:\\.${LABEL})*\\.?)$`,
  description:
    "A public host: a name, an IPv4 or an IPv6 address. A name is resolved once and every address it has must be public; loopback, private, link-local, CGNAT and metadata addresses are refused.",
};

const port = (description: string, byDefault?: number): JsonSchema => ({
  type: "integer",
  minimum: 1,
  maximum: 65_535,
  description,
  ...(byDefault === undefined ? {} : { default: byDefault }),
});

const milliseconds = (description: string, maximum: number, byDefault: number): JsonSchema => ({
  type: "integer",
  minimum: 100,
  maximum,
  default: byDefault,
  description,
});

/** The address a probe connected to: the first the host resolved to, all of them public. */
const address: JsonSchema = { type: "string", description: "The address probed (the host's first, all public)." };

/** A value or null (no union types: the kit's ajv is strict). */
const orNull = (schema: JsonSchema, description: string): JsonSchema => ({
  anyOf: [schema, { type: "null" }],
  description,
});

/** A time in ms, to 0.01 ms; null where nothing answered. */
const ms = (description: string): JsonSchema => orNull({ type: "number", minimum: 0 }, description);

const object = (properties: Record<string, JsonSchema>, optional: string[] = []): JsonSchema => ({
  type: "object",
  additionalProperties: false,
  required: Object.keys(properties).filter((name) => !optional.includes(name)),
  properties,
});

/** The catalogue's net tools: partner probes that never reach inside, throttled per target across all callers. */
export const netCatalogue: readonly ToolDescriptor[] = [
  {
    ...PROBE,
    id: "net.port",
    name: "TCP port check",
    summary: "Whether a TCP port of a host is open, closed or filtered, and how long it took to answer.",
    input: object(
      {
        host,
        port: port("The TCP port."),
        timeout_ms: milliseconds("How long to wait for an answer before calling the port filtered.", 5_000, 3_000),
      },
      ["timeout_ms"],
    ),
    output: object({
      host: { type: "string", description: "The host as probed (a name lower-cased, an address canonical)." },
      port: port("The TCP port."),
      address,
      state: {
        enum: ["open", "closed", "filtered"],
        description: "open: connected; closed: refused; filtered: no answer in time, or unreachable.",
      },
      ms: ms("How long the answer took; null when filtered."),
    }),
    limits: { timeoutMs: 8_000, maxInputBytes: MAX_INPUT_BYTES, perTargetPerMinute: 30 },
    cost: 1,
  },
  {
    ...PROBE,
    id: "net.latency",
    name: "TCP latency",
    summary: "Round trips to a host measured by TCP connects to a port: each one, and their minimum, mean and maximum.",
    input: object(
      {
        host,
        port: port("The TCP port connected to.", 443),
        count: {
          type: "integer",
          minimum: 1,
          maximum: 5,
          default: 3,
          description: "How many connects, one after the other.",
        },
        timeout_ms: milliseconds("How long each connect may wait for an answer.", 1_500, 1_000),
      },
      ["port", "count", "timeout_ms"],
    ),
    output: object({
      host: { type: "string" },
      port: port("The TCP port connected to."),
      address,
      sent: { type: "integer", minimum: 1, description: "Connects tried." },
      answered: {
        type: "integer",
        minimum: 0,
        description: "Connects answered in time (accepted or refused: both are a round trip).",
      },
      min_ms: ms("The fastest answer."),
      avg_ms: ms("The mean of the answers."),
      max_ms: ms("The slowest answer."),
      samples_ms: { type: "array", items: ms("One connect's answer; null when none came in time.") },
    }),
    limits: { timeoutMs: 9_000, maxInputBytes: MAX_INPUT_BYTES, perTargetPerMinute: 10 },
    cost: 2,
  },
  {
    ...PROBE,
    id: "net.tls",
    name: "TLS certificate check",
    summary:
      "The certificate a TLS server shows for a host: subject, issuer, alternative names, validity and days left, and whether it is trusted.",
    input: object(
      {
        host,
        port: port("The TLS port.", 443),
        timeout_ms: milliseconds("How long the handshake may take.", 5_000, 5_000),
      },
      ["port", "timeout_ms"],
    ),
    output: object({
      host: {
        type: "string",
        description: "The host as probed; a name is sent as SNI and checked against the certificate.",
      },
      port: port("The TLS port."),
      address,
      protocol: { type: "string", description: "The protocol negotiated (TLSv1.3, TLSv1.2…)." },
      cipher: { type: "string" },
      authorized: {
        type: "boolean",
        description: "Whether the chain leads to a trusted root and the certificate is valid for the host.",
      },
      authorization_error: orNull(
        { type: "string" },
        "Why it is not (DEPTH_ZERO_SELF_SIGNED_CERT, CERT_HAS_EXPIRED, ERR_TLS_CERT_ALTNAME_INVALID…).",
      ),
      subject: { type: "object", additionalProperties: { type: "string" }, description: "CN, O, OU… of the subject." },
      issuer: { type: "object", additionalProperties: { type: "string" }, description: "CN, O, OU… of the issuer." },
      subject_alt_names: { type: "array", items: { type: "string" }, description: "DNS:…, IP Address:… entries." },
      valid_from: { type: "string", description: "ISO 8601." },
      valid_to: { type: "string", description: "ISO 8601." },
      days_left: { type: "integer", description: "Whole days until it expires (negative once it has)." },
      serial_number: { type: "string" },
      fingerprint_sha256: { type: "string" },
      handshake_ms: { type: "number", minimum: 0 },
    }),
    limits: { timeoutMs: 8_000, maxInputBytes: MAX_INPUT_BYTES, perTargetPerMinute: 10 },
    cost: 2,
  },
  {
    ...PROBE,
    id: "net.headers",
    name: "HTTP headers",
    summary:
      "The status and headers a URL answers with (HEAD or GET, redirects followed and each checked again); the body is never read.",
    input: object(
      {
        url: {
          type: "string",
          maxLength: 2_048,
          pattern: "^[Hh][Tt][Tt][Pp][Ss]?://",
          description: "An http or https URL of a public host, port 80 or 443, without a user name or password.",
        },
        method: { enum: ["HEAD", "GET"], default: "HEAD", description: "GET for servers that answer HEAD badly." },
      },
      ["method"],
    ),
    output: object({
      url: { type: "string", description: "The URL asked for." },
      host: { type: "string" },
      final_url: { type: "string", description: "The URL that answered, after redirects." },
      status: { type: "integer", minimum: 100, maximum: 599 },
      headers: {
        type: "object",
        additionalProperties: { type: "string" },
        description: "The answer's headers, names lower-cased, repeats joined with commas.",
      },
    }),
    limits: { timeoutMs: 9_000, maxInputBytes: MAX_INPUT_BYTES, perTargetPerMinute: 10 },
    cost: 2,
  },
  {
    ...PROBE,
    id: "net.ping",
    name: "Ping",
    summary: "ICMP echo requests to a host: how many were answered and the round trips.",
    input: object(
      {
        host,
        count: { type: "integer", minimum: 1, maximum: 10, default: 4, description: "Echo requests, 0.2 s apart." },
      },
      ["count"],
    ),
    output: object({
      host: { type: "string" },
      address,
      sent: { type: "integer", minimum: 0 },
      received: { type: "integer", minimum: 0 },
      loss_percent: { type: "number", minimum: 0, maximum: 100 },
      min_ms: ms("The fastest reply."),
      avg_ms: ms("The mean of the replies."),
      max_ms: ms("The slowest reply."),
      times_ms: { type: "array", items: { type: "number", minimum: 0 } },
    }),
    limits: { timeoutMs: 8_000, maxInputBytes: MAX_INPUT_BYTES, perTargetPerMinute: 10 },
    cost: 2,
  },
  {
    ...PROBE,
    id: "net.traceroute",
    name: "Traceroute",
    summary:
      "The routers on the path to a host, hop by hop, with each one's time; routers in private ranges are shown without their address.",
    input: object(
      {
        host,
        max_hops: { type: "integer", minimum: 1, maximum: 30, default: 20, description: "The most hops followed." },
      },
      ["max_hops"],
    ),
    output: object({
      host: { type: "string" },
      address,
      reached: { type: "boolean", description: "Whether the last hop that answered is the host." },
      complete: { type: "boolean", description: "False when the run's time ran out first: the hops so far." },
      hops: {
        type: "array",
        items: object({
          hop: { type: "integer", minimum: 1 },
          answered: { type: "boolean" },
          address: orNull(
            { type: "string" },
            "The router's address; null when none answered, or when it is not a public one.",
          ),
          ms: ms("The round trip to it."),
        }),
      },
    }),
    limits: { timeoutMs: 9_000, maxInputBytes: MAX_INPUT_BYTES, perTargetPerMinute: 4 },
    cost: 5,
  },
];
