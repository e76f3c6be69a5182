import { getOption, type DescField, type DescMessage } from "@bufbuild/protobuf";
import type { Interceptor } from "@connectrpc/connect";
import { markdown_of as markdownOf } from "../../../gen/pf/v1/options_pb.js";
import { markdownRendering } from "./rendering.js";

/** Of one message type: its HTML fields with their Markdown sources, and the fields that may hold more. */
interface Plan {
  rendered: { html: string; source: string }[];
  nested: DescField[];
}

const plans = new WeakMap<DescMessage, Plan | "walking">();

/**
 * Fills the fields declared `(pf.v1.markdown_of)` in every answer (README "Rich text"): once the handler has
 * answered, so after its transaction, each such field becomes the sanitised HTML of its source field, rendered
 * off the event loop and cached (rendering.ts). Whatever a handler put in such a field is replaced, so HTML
 * leaves a service only as the kit renders it. Streams have each message filled as it passes.
 */
export function renderedFields(): Interceptor {
  return (next) => async (request) => {
    const response = await next(request);
    const output = request.method.output;
    if (!holds(output)) return response;
    if (!response.stream) {
      await fill(output, response.message);
      return response;
    }
    const messages = response.message;
    return {
      ...response,
      message: (async function* () {
        for await (const message of messages) {
          await fill(output, message);
          yield message;
        }
      })(),
    };
  };
}

/** Renders every declared HTML field of a message and the messages it holds, all at once. */
export async function fill(schema: DescMessage, message: object): Promise<void> {
  const work: Promise<void>[] = [];
  collect(schema, message as Record<string, unknown>, work);
  await Promise.all(work);
}

function collect(schema: DescMessage, message: Record<string, unknown>, work: Promise<void>[]): void {
  const plan = planOf(schema);
  for (const { html, source } of plan.rendered)
    work.push(
      markdownRendering()
        .html((message[source] as string | undefined) ?? "")
        .then((text) => void (message[html] = text)),
    );
  for (const field of plan.nested) {
    const inner = field.message!;
    const value = valueOf(message, field);
    if (value === undefined || value === null) continue;
    const each =
      field.fieldKind === "list" ? (value as object[]) : field.fieldKind === "map" ? Object.values(value) : [value];
    for (const item of each) collect(inner, item as Record<string, unknown>, work);
  }
}

/** A field's value, inside its oneof when it is a member of one. */
function valueOf(message: Record<string, unknown>, field: DescField): unknown {
  if (!field.oneof) return message[field.localName];
  const chosen = message[field.oneof.localName] as { case?: string; value?: unknown } | undefined;
  return chosen?.case === field.localName ? chosen.value : undefined;
}

/** Whether a message of this type may hold a declared HTML field (a type being planned counts: cycles). */
function holds(schema: DescMessage): boolean {
  if (plans.get(schema) === "walking") return true;
  const plan = planOf(schema);
  return plan.rendered.length > 0 || plan.nested.length > 0;
}

function planOf(schema: DescMessage): Plan {
  const known = plans.get(schema);
  if (known && known !== "walking") return known;
  plans.set(schema, "walking");
  const rendered: Plan["rendered"] = [];
  const nested: DescField[] = [];
  for (const field of schema.fields) {
    const source = getOption(field, markdownOf);
    if (source !== "") {
      const from = schema.fields.find((each) => each.name === source);
      if (!from || from.fieldKind !== "scalar")
        throw new Error(`${schema.typeName}.${field.name}: markdown_of names no string field "${source}"`);
      rendered.push({ html: field.localName, source: from.localName });
    }
    const inner = messageOf(field);
    // google.protobuf types are held as JSON values or primitives, not messages, and hold no Markdown.
    if (inner && !inner.typeName.startsWith("google.protobuf.") && holds(inner)) nested.push(field);
  }
  const plan = { rendered, nested };
  plans.set(schema, plan);
  return plan;
}

function messageOf(field: DescField): DescMessage | undefined {
  if (field.fieldKind === "message") return field.message;
  if (field.fieldKind === "list" && field.listKind === "message") return field.message;
  if (field.fieldKind === "map" && field.mapKind === "message") return field.message;
  return undefined;
}
