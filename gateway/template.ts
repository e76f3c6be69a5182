/**
 * Path templates of google.api.http bindings, the subset the platform uses:
 * literal segments, `{field}` (= `{field=*}`, one segment) and a last
 * `{field=**}` (the rest of the path, slashes included). Field paths may be
 * dotted (`{page.cursor}`) to reach into nested messages.
 */

export type TemplateSegment =
  | { readonly kind: "literal"; readonly text: string }
  | { readonly kind: "variable"; readonly field: string; readonly rest: boolean };

export interface PathTemplate {
  /** The template as the binding writes it. */
  readonly source: string;
  readonly segments: readonly TemplateSegment[];
  /** The variables in path order. */
  readonly variables: readonly Extract<TemplateSegment, { kind: "variable" }>[];
}

const FIELD_PATH = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;
const LITERAL = /^[A-Za-z0-9\-._~!$&'+,;=@]+$/;

/** Parses a binding's path; anything outside the supported subset is an error naming the template. */
export function parseTemplate(source: string): PathTemplate {
  const fail = (why: string): never => {
    throw new Error(`path template ${JSON.stringify(source)}: ${why}`);
  };
  if (!source.startsWith("/")) fail("must start with /");
  const segments: TemplateSegment[] = [];
  const variables: Extract<TemplateSegment, { kind: "variable" }>[] = [];
  // Split on the slashes outside braces, so `{name=shelves/*}` stays one (refused) segment.
  const parts = source === "/" ? [] : source.slice(1).split(/\/(?![^{]*\})/);
  parts.forEach((part, index) => {
    if (part.startsWith("{")) {
      const match = /^\{([^}=]+)(?:=([^}]*))?\}$/.exec(part);
      if (!match) return fail(`segment ${JSON.stringify(part)} is not a {field} variable`);
      const [, field, pattern = "*"] = match;
      if (!FIELD_PATH.test(field)) fail(`${JSON.stringify(field)} is not a field path`);
      if (pattern !== "*" && pattern !== "**")
        fail(`only {field=*} and {field=**} are supported, not ${JSON.stringify(part)}`);
      const rest = pattern === "**";
      if (rest && index !== parts.length - 1) fail("{field=**} must be the last segment");
      if (variables.some((v) => v.field === field)) fail(`${field} is bound twice`);
      const variable = { kind: "variable", field, rest } as const;
      segments.push(variable);
      variables.push(variable);
    } else {
      // Custom verbs (`:cancel`) and bare wildcards are not used by the spec's routes.
      if (!LITERAL.test(part)) fail(`segment ${JSON.stringify(part)} is not a plain literal`);
      segments.push({ kind: "literal", text: part });
    }
  });
  return { source, segments, variables };
}

/**
 * The template in the router's syntax (find-my-way): variables become `:p<i>`
 * (positional names, since field paths contain dots the router would split on)
 * and a rest variable the router's trailing `*`.
 */
export function routerPath(template: PathTemplate): string {
  let index = 0;
  const parts = template.segments.map((segment) => {
    if (segment.kind === "literal") return segment.text;
    return segment.rest ? "*" : `:p${index++}`;
  });
  return `/${parts.join("/")}`;
}

/** The router parameter holding each variable's value, in variable order. */
export function routerParams(template: PathTemplate): string[] {
  let index = 0;
  return template.variables.map((variable) => (variable.rest ? "*" : `p${index++}`));
}

/** The template as an OpenAPI path: `{field=**}` becomes `{field}` (its value may hold slashes). */
export function openApiPath(template: PathTemplate): string {
  const parts = template.segments.map((segment) => (segment.kind === "literal" ? segment.text : `{${segment.field}}`));
  return `/${parts.join("/")}`;
}
