import { getOption, type DescMethod, type JsonObject } from "@bufbuild/protobuf";
import { http } from "../gen/google/api/annotations_pb.js";
import { rpcName, type Binding } from "./bindings.js";
import { parseTemplate, type PathTemplate } from "./template.js";

/**
 * How the OpenAPI documents name operations and group them. An operation is
 * named by its RPC (`SpaceService.ListSpaces`); an RPC's additional bindings
 * add their place among its bindings (`SpaceService.ListSpaces_2` is
 * `GET /s`), so ids are unique and stay as they are while the proto keeps its
 * bindings' order. Operations are tagged by the resource their path names
 * (`/api/pastes/{slug}/fork` is "Pastes"), an additional binding by its main
 * binding's (`/s` is "Spaces", like `/api/v1/spaces`).
 */
export function operationId(binding: Binding): string {
  const index = boundRoutes(binding.method).indexOf(routeOf(binding.verb, binding.template.source));
  return index > 0 ? `${rpcName(binding.method)}_${index + 1}` : rpcName(binding.method);
}

/** A resource's tag, and the paths its routes lie under (for its description). */
interface Resource {
  readonly name: string;
  readonly key: string;
  readonly under: Set<string>;
}

/**
 * The tags of a document's operations, by binding, and their declarations for
 * `tags`: in a document of several services (no base path) each name says its
 * service too, "Pastes (community)", as two services may both have plans.
 */
export function resourceTags(
  bindings: readonly Binding[],
  qualified: boolean,
): { tagOf: (binding: Binding) => string; tags: JsonObject[] } {
  const resources = new Map<string, Resource>();
  const byBinding = new Map<Binding, string>();
  for (const binding of bindings) {
    const main = mainTemplate(binding);
    const [word, under] = resourceOf(main) ?? [binding.key, main.source];
    const name = qualified ? `${words(word)} (${binding.key})` : words(word);
    const resource = resources.get(name) ?? { name, key: binding.key, under: new Set<string>() };
    resource.under.add((qualified ? `/${binding.key}` : "") + under);
    resources.set(name, resource);
    byBinding.set(binding, name);
  }
  const tags = [...resources.values()].map(({ name, key, under }) => ({
    name,
    description: `Routes under ${[...under].map((path) => `\`${path}\``).join(" and ")}${qualified ? `, in the ${key} service` : ""}.`,
  }));
  return { tagOf: (binding) => byBinding.get(binding)!, tags };
}

/** Segments that say where a route is, not what it is about. */
const PLACES = /^(api|internal|v\d+)$/;

/**
 * The first literal segment of a path that names something (`pastes`, `feed`
 * of `feed.xml`), after the places, with the path up to it; undefined for a
 * path of variables and one-letter short forms only (`/f/{key}`: the service).
 */
function resourceOf(template: PathTemplate): [string, string] | undefined {
  const passed: string[] = [];
  for (const segment of template.segments) {
    const text = segment.kind === "literal" ? segment.text : `{${segment.field}}`;
    passed.push(text);
    if (segment.kind !== "literal" || PLACES.test(text)) continue;
    const word = text.replace(/\.[a-z]+$/, "");
    if (/^[a-z][a-z0-9-]+$/.test(word)) return [word, `/${passed.join("/")}`];
  }
  return undefined;
}

/** `media-requests` as a tag: "Media requests". */
function words(resource: string): string {
  const spaced = resource.replace(/-/g, " ");
  return spaced[0].toUpperCase() + spaced.slice(1);
}

/** The template of the RPC's main binding (the binding's own when it is the main one). */
function mainTemplate(binding: Binding): PathTemplate {
  const [main] = boundRoutes(binding.method);
  const path = main.slice(main.indexOf(" ") + 1);
  return path === binding.template.source ? binding.template : parseTemplate(path);
}

/** `<VERB> <path>` of each of an RPC's bindings, the main rule first, as its http option lists them. */
function boundRoutes(method: DescMethod): string[] {
  const rule = getOption(method, http);
  return [rule, ...rule.additionalBindings].map(({ pattern }) =>
    pattern.case === "custom"
      ? routeOf(pattern.value.kind.toUpperCase(), pattern.value.path)
      : routeOf(String(pattern.case).toUpperCase(), String(pattern.value)),
  );
}

const routeOf = (verb: string, path: string) => `${verb} ${path}`;
