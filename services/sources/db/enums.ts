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
