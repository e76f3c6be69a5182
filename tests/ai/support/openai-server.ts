import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A request the server received. */
export interface Received {
  method: string;
  /** The path below the base URL: `/chat/completions`, `/embeddings`. */
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body (undefined when not JSON). */
  body: Record<string, unknown> | undefined;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
}

/** What the server does with one request. */
export type Behaviour =
  /** A completion whose message is `content` (default: "Loopback answer."), with usage unless `usage: null`. */
  | { kind: "answer"; content?: string; usage?: Usage | null }
  /**
   * A streamed completion: each string a delta chunk, each promise a pause until it settles. Then `end`: "done"
   * (default) sends the usage chunk (unless `usage: null`) and [DONE]; "close" ends the response without [DONE];
   * "cut" destroys the socket.
   */
  | { kind: "stream"; chunks: (string | Promise<unknown>)[]; usage?: Usage | null; end?: "done" | "close" | "cut" }
  /** Embeddings: `vectors`, else a small deterministic vector per input. */
  | { kind: "embed"; vectors?: number[][] }
  /** Waits for `until` (never, without it), then does `then` (default: answer): a held, late answer. */
  | { kind: "stall"; until?: Promise<unknown>; then?: Behaviour }
  /** A status with a JSON body (default: an OpenAI error object) and headers, e.g. 429 with retry-after. */
  | { kind: "status"; status: number; body?: unknown; headers?: Record<string, string>; message?: string }
  /** Destroys the socket without answering. */
  | { kind: "cut" };

export interface OpenAiServer {
  /** The base URL, as a provider's base_url: `http://127.0.0.1:<port>/v1`. */
  url: string;
  /** `127.0.0.1:<port>`, as PF_AI_PROVIDER_HOSTS lists it. */
  host: string;
  received: Received[];
  /**
   * The received requests whose caller closed the connection before the answer was complete (a call aborted while it
   * stalled or streamed), in the order they were closed. Connections the server cuts itself, or close() drops, are not.
   */
  abandoned: Received[];
  /** Behaviours for the next requests, in order; past them, `script` or the default (answer / embed). */
  enqueue(...behaviours: Behaviour[]): void;
  /** The behaviour for each request the queue does not cover (undefined: the default). */
  script(choose: ((request: Received) => Behaviour) | undefined): void;
  close(): Promise<void>;
}

const DEFAULT_USAGE: Usage = { prompt_tokens: 11, completion_tokens: 7 };

/** A small unit vector standing for a text: the same text, the same vector. */
function vectorOf(text: string): number[] {
  const vector = [1, 0, 0, 0];
  for (let index = 0; index < text.length; index++) vector[index % 4] += text.charCodeAt(index);
  const length = Math.hypot(...vector);
  return vector.map((value) => value / length);
}

const json = (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  response.writeHead(status, { "content-type": "application/json", ...headers });
  response.end(JSON.stringify(body));
};

const chunkOf = (model: unknown, delta: Record<string, unknown>, usage: Usage | null = null) => ({
  id: "chatcmpl-loopback",
  object: "chat.completion.chunk",
  model,
  choices: Object.keys(delta).length > 0 ? [{ index: 0, delta, finish_reason: null }] : [],
  usage,
});

/** Sockets the server destroyed itself (a cut, a failure): their requests were not abandoned by the caller. */
const cutByServer = new WeakSet<ServerResponse>();

const cut = (response: ServerResponse) => {
  cutByServer.add(response);
  response.socket?.destroy();
};

async function perform(behaviour: Behaviour, request: Received, response: ServerResponse): Promise<void> {
  const model = request.body?.model;
  switch (behaviour.kind) {
    case "answer": {
      const content = behaviour.content ?? "Loopback answer.";
      const usage = behaviour.usage === undefined ? DEFAULT_USAGE : behaviour.usage;
      const message = { role: "assistant", content };
      const choices = [{ index: 0, message, finish_reason: "stop" }];
      return json(response, 200, {
        id: "chatcmpl-loopback",
        object: "chat.completion",
        model,
        choices,
        ...(usage ? { usage } : {}),
      });
    }
    case "stream": {
      response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      const send = (data: unknown) =>
        response.write(`data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`);
      send(chunkOf(model, { role: "assistant", content: "" }));
      for (const chunk of behaviour.chunks) {
        if (typeof chunk === "string") send(chunkOf(model, { content: chunk }));
        else await chunk;
      }
      if (behaviour.end === "cut") {
        // What was written reaches the client first: the stream breaks after its chunks, not before them.
        await new Promise((flushed) => response.write("", flushed));
        return cut(response);
      }
      if (behaviour.end !== "close") {
        const usage = behaviour.usage === undefined ? DEFAULT_USAGE : behaviour.usage;
        if (usage) send(chunkOf(model, {}, usage));
        send("[DONE]");
      }
      return void response.end();
    }
    case "embed": {
      const input = request.body?.input;
      const texts = (Array.isArray(input) ? input : [input]).map((text) => (typeof text === "string" ? text : ""));
      const vectors = behaviour.vectors ?? texts.map(vectorOf);
      const data = vectors.map((embedding, index) => ({ object: "embedding", index, embedding }));
      const tokens = Math.ceil(texts.join("").length / 4);
      return json(response, 200, {
        object: "list",
        data,
        model,
        usage: { prompt_tokens: tokens, total_tokens: tokens },
      });
    }
    case "stall":
      // Without `until` the request waits until close() drops the connection.
      await (behaviour.until ?? new Promise<never>(() => undefined));
      return perform(behaviour.then ?? { kind: "answer" }, request, response);
    case "status": {
      const error = {
        message: behaviour.message ?? `loopback status ${behaviour.status}`,
        type: "loopback",
        code: null,
      };
      return json(response, behaviour.status, behaviour.body ?? { error }, behaviour.headers);
    }
    case "cut":
      return cut(response);
  }
}

/**
 * A real HTTP server on 127.0.0.1 speaking the OpenAI wire format, scripted per request; it records each request, and
 * the ones whose caller gave up on them.
 */
export async function startOpenAiServer(): Promise<OpenAiServer> {
  const queue: Behaviour[] = [];
  let choose: ((request: Received) => Behaviour) | undefined;
  let closing = false;
  const server = createServer((incoming, response) => {
    const parts: Buffer[] = [];
    incoming.on("data", (part: Buffer) => parts.push(part));
    incoming.on("end", () => {
      let body: Record<string, unknown> | undefined;
      try {
        body = JSON.parse(Buffer.concat(parts).toString("utf8")) as Record<string, unknown>;
      } catch {
        body = undefined;
      }
      const path = (incoming.url ?? "/").replace(/^\/v1/, "");
      const request: Received = { method: incoming.method ?? "GET", path, headers: incoming.headers, body };
      received.push(request);
      response.on("close", () => {
        if (!response.writableFinished && !cutByServer.has(response) && !closing) abandoned.push(request);
      });
      const fallback: Behaviour = path === "/embeddings" ? { kind: "embed" } : { kind: "answer" };
      const behaviour = queue.shift() ?? choose?.(request) ?? fallback;
      perform(behaviour, request, response).catch(() => cut(response));
    });
  });
  const received: Received[] = [];
  const abandoned: Received[] = [];
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    host: `127.0.0.1:${port}`,
    received,
    abandoned,
    enqueue: (...behaviours) => queue.push(...behaviours),
    script: (next) => {
      choose = next;
    },
    close: () =>
      new Promise<void>((done) => {
        closing = true;
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
