/**
 * The words stored for a proto enum's values: `INSTRUMENT_KIND_EQUITY` is
 * stored `equity`, so tables and checks read in the spec's words.
 */
type ProtoEnum = Record<string, string | number>;

/** The stored word of an enum value (`equity`), "" for UNSPECIFIED. */
export function wordOf(protoEnum: ProtoEnum, value: number): string {
  const name = protoEnum[value];
  return typeof name === "string" && name !== "UNSPECIFIED" ? name.toLowerCase() : "";
}

/** The enum value of a stored word; UNSPECIFIED (0) for one it does not know. */
export function valueOf(protoEnum: ProtoEnum, word: string): number {
  const value = protoEnum[word.toUpperCase()];
  return typeof value === "number" ? value : 0;
}
