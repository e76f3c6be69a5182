import { invalid } from "../../kit/handler/problem.js";

/**
 * The proto enums of this service name their values as the database's text does, upper-cased (`json_feed` is
 * `SOURCE_KIND_JSON_FEED`, generated as `SourceKind.JSON_FEED`): one mapping both ways for all of them.
 */
type ProtoEnum = Record<string, string | number>;

/** The enum value of a text value ("rss" → SourceKind.RSS); UNSPECIFIED (0) for none. */
export function enumOf<E extends ProtoEnum>(e: E, text: string | null | undefined): E[keyof E] {
  return (text ? e[text.toUpperCase()] : 0) as E[keyof E];
}

/** The text of an enum value (SourceKind.RSS → "rss"); undefined for UNSPECIFIED. */
export function textOf(e: ProtoEnum, value: number): string | undefined {
  const name = e[value];
  return value === 0 || typeof name !== "string" ? undefined : name.toLowerCase();
}

/** A filter's text (undefined for UNSPECIFIED, no filter); 400 naming `field` for a number no value has. */
export function filterOf(e: ProtoEnum, value: number, field: string): string | undefined {
  const text = textOf(e, value);
  if (value !== 0 && text === undefined) throw invalid(field, `${field} is not one of its values.`);
  return text;
}
