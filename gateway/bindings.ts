import {
  getOption,
  hasOption,
  type DescField,
  type DescMessage,
  type DescMethod,
  type DescService,
} from "@bufbuild/protobuf";
import { http } from "../gen/google/api/annotations_pb.js";
import type { HttpRule } from "../gen/google/api/http_pb.js";
import { keyOf } from "../services/kit/rpc/clients.js";
import { parseTemplate, type PathTemplate } from "./template.js";

/** One HTTP route of an RPC, as its google.api.http rule (or one of its additional bindings) declares it. */
export interface Binding {
  /** The service key: the base path `/<key>` and the host-routing target. */
  readonly key: string;
  readonly service: DescService;
  readonly method: DescMethod;
  /** Upper-case HTTP method. */
  readonly verb: string;
  readonly template: PathTemplate;
  /** "" (no body), "*" (the body is the whole message) or the name of the top-level field the body fills. */
  readonly body: string;
  /** That input field, when the body fills one. */
  readonly bodyField?: DescField;
  /** The output field sent as the body (response_body); unset sends the whole output message. */
  readonly responseField?: DescField;
}

/** Whether a binding is served as a WebSocket (websocket.ts): a bidirectional-streaming RPC bound to GET. */
export function servedAsWebSocket(binding: Pick<Binding, "method" | "verb">): boolean {
  return binding.method.methodKind === "bidi_streaming" && binding.verb === "GET";
}

/** `<Service>.<Rpc>`: the operation id and the name in build errors. */
export function rpcName(method: DescMethod): string {
  return `${method.parent.name}.${method.name}`;
}

/** The bindings of every http-annotated RPC of a service; RPCs without the option get none. */
export function bindingsOf(service: DescService): Binding[] {
  const key = keyOf(service);
  return service.methods.flatMap((method) => {
    if (!hasOption(method, http)) return [];
    const rule = getOption(method, http);
    return [rule, ...rule.additionalBindings].map((each) => binding(key, service, method, each));
  });
}

function binding(key: string, service: DescService, method: DescMethod, rule: HttpRule): Binding {
  try {
    const { pattern } = rule;
    if (pattern.case === undefined) throw new Error("google.api.http rule without a method and path");
    const [verb, path] =
      pattern.case === "custom"
        ? [pattern.value.kind.toUpperCase(), pattern.value.path]
        : [pattern.case.toUpperCase(), pattern.value];
    if (rule.body !== "" && (verb === "GET" || verb === "HEAD"))
      throw new Error(`a ${verb} binding cannot take a body`);
    return {
      key,
      service,
      method,
      verb,
      template: parseTemplate(path),
      body: rule.body,
      bodyField: rule.body === "*" ? undefined : fieldNamed(method.input, rule.body),
      responseField: fieldNamed(method.output, rule.responseBody),
    };
  } catch (error) {
    throw new Error(`${rpcName(method)}: ${(error as Error).message}`, { cause: error });
  }
}

function fieldNamed(message: DescMessage, name: string): DescField | undefined {
  if (name === "") return undefined;
  const field = message.fields.find((f) => f.name === name);
  if (!field) throw new Error(`${message.typeName} has no field ${name}`);
  return field;
}
