import {
  ScalarType,
  toJson,
  type DescEnum,
  type DescField,
  type DescMessage,
  type Message,
  type Registry,
} from "@bufbuild/protobuf";
import { base64Encode } from "@bufbuild/protobuf/wire";
import { hasCustomJsonRepresentation, isWrapperDesc } from "@bufbuild/protobuf/wkt";

/**
 * The JSON text of a message, byte for byte `JSON.stringify(toJson(schema, message, options))` with the gateway's
 * options (proto field names, implicit fields always written), but written straight from the message: no JSON
 * object is built and walked again. A writer is compiled once per message type.
 */
export type JsonWriter = (message: Message) => string;

/** A value's JSON text; throws `deferred` for what it leaves to toJson. */
type Write = (value: unknown) => string;
/** A field's value text, or undefined when toJson leaves the field out. */
type WriteField = (message: Record<string, unknown>) => string | undefined;

// What the writer leaves to toJson, which answers it (or throws its own error): a value of the wrong type, an
// extension, a missing required field. Made once: thrown without a stack of its own.
const deferred = new Error("written by toJson");

// google.protobuf.FeatureSet.FieldPresence values (descriptors carry the numbers).
const IMPLICIT = 2;
const LEGACY_REQUIRED = 3;

const writersByRegistry = new WeakMap<Registry, JsonWriters>();

/** The writer of a message type's JSON text (JsonWriter). */
export function jsonWriter(schema: DescMessage, registry: Registry): JsonWriter {
  return writersOf(registry).writer(schema);
}

/** The JSON text of one field of a message: as `toJson(…)[field.name] ?? null`, stringified. */
export function fieldJsonWriter(schema: DescMessage, field: DescField, registry: Registry): JsonWriter {
  const writers = writersOf(registry);
  const write = writers.field(field);
  const typeName = schema.typeName;
  return (message) => {
    try {
      if (message.$typeName !== typeName || message.$unknown !== undefined) throw deferred;
      return write(message) ?? "null";
    } catch {
      return JSON.stringify((toJson(schema, message, writers.options) as Record<string, unknown>)[field.name] ?? null);
    }
  };
}

function writersOf(registry: Registry): JsonWriters {
  let writers = writersByRegistry.get(registry);
  if (!writers) writersByRegistry.set(registry, (writers = new JsonWriters(registry)));
  return writers;
}

class JsonWriters {
  readonly options;
  private readonly messages = new Map<DescMessage, Write>();

  constructor(registry: Registry) {
    this.options = { useProtoFieldName: true, alwaysEmitImplicit: true, registry } as const;
  }

  /** The top level: anything the compiled writer does not write is toJson's. */
  writer(schema: DescMessage): JsonWriter {
    const write = this.message(schema);
    return (message) => {
      try {
        return write(message);
      } catch {
        return JSON.stringify(toJson(schema, message, this.options));
      }
    };
  }

  /** A message's writer; registered before its fields are compiled, so recursive types end. */
  message(desc: DescMessage): Write {
    const known = this.messages.get(desc);
    if (known) return known;
    if (desc.typeName === "google.protobuf.Timestamp") {
      this.messages.set(desc, timestampWriter);
      return timestampWriter;
    }
    // Other well-known types with a JSON form of their own (Duration, Any, …) and messages holding a Struct
    // (kept as a plain JSON object, which toJson checks) are toJson's.
    if (hasCustomJsonRepresentation(desc) || desc.fields.some(holdsStruct)) {
      const write: Write = (value) => JSON.stringify(toJson(desc, value as Message, this.options));
      this.messages.set(desc, write);
      return write;
    }
    const fields: { key: string; write: WriteField }[] = [];
    const typeName = desc.typeName;
    const write: Write = (value) => {
      const message = value as Record<string, unknown>;
      if (message.$typeName !== typeName || message.$unknown !== undefined) throw deferred;
      let text = "";
      for (let i = 0; i < fields.length; i++) {
        const part = fields[i].write(message);
        if (part !== undefined) text += (text === "" ? fields[i].key : "," + fields[i].key) + part;
      }
      return "{" + text + "}";
    };
    this.messages.set(desc, write);
    // toJson writes fields in the order of their numbers.
    for (const field of [...desc.fields].sort((a, b) => a.number - b.number))
      fields.push({ key: JSON.stringify(field.name) + ":", write: this.field(field) });
    return write;
  }

  /** A field's value as toJson decides whether to write it (with implicit fields always written). */
  field(field: DescField): WriteField {
    const local = field.localName;
    if (field.fieldKind === "list") {
      const item = this.value(field, false);
      return (message) => {
        const items = message[local] as unknown[];
        let text = "";
        for (let i = 0; i < items.length; i++) text += (i === 0 ? "" : ",") + item(items[i]);
        return "[" + text + "]";
      };
    }
    if (field.fieldKind === "map") {
      const entry = this.value(field, false);
      return (message) => {
        const record = message[local] as Record<string, unknown>;
        let text = "";
        // In the record's own key order, which is the order of the object toJson builds.
        for (const key of Object.keys(record))
          text += (text === "" ? "" : ",") + JSON.stringify(key) + ":" + entry(record[key]);
        return "{" + text + "}";
      };
    }
    const value = this.value(field, field.oneof === undefined);
    if (field.oneof) {
      const group = field.oneof.localName;
      return (message) => {
        const chosen = message[group] as { case: string | undefined; value: unknown };
        return chosen.case === local ? value(chosen.value) : undefined;
      };
    }
    if (field.presence === IMPLICIT) return (message) => value(message[local]);
    const required = field.presence === LEGACY_REQUIRED;
    return (message) => {
      const set = message[local];
      // Explicit presence: a default read through the prototype is not set.
      if (set !== undefined && Object.prototype.hasOwnProperty.call(message, local)) return value(set);
      if (required) throw deferred;
      return undefined;
    };
  }

  /** A singular value, list item or map value of a field; `unwrapped`: a singular wrapper field holds its scalar. */
  private value(field: DescField, unwrapped: boolean): Write {
    if (field.scalar !== undefined) return scalarWriter(field.scalar);
    if (field.enum !== undefined) return enumWriter(field.enum);
    const message = field.message!;
    if (unwrapped && isWrapperDesc(message)) return scalarWriter(message.fields[0].scalar!);
    let write: Write | undefined;
    // Looked up at the first value: the message may be the one being compiled.
    return (value) => (write ??= this.message(message))(value);
  }
}

/** Struct fields hold a plain JSON object (singular, list or map), which only toJson checks and writes. */
function holdsStruct(field: DescField): boolean {
  return field.message?.typeName === "google.protobuf.Struct";
}

function enumWriter(desc: DescEnum): Write {
  if (desc.typeName === "google.protobuf.NullValue")
    return (value) => {
      if (typeof value !== "number") throw deferred;
      return "null";
    };
  // `desc.value`: an aliased number's first declared name, as toJson writes it.
  const names = new Map(Object.values(desc.value).map((each) => [each.number, JSON.stringify(each.jsonName)]));
  // A number the enum does not name is written as the number.
  return (value) => {
    if (typeof value !== "number") throw deferred;
    return names.get(value) ?? numberText(value);
  };
}

function scalarWriter(scalar: ScalarType): Write {
  switch (scalar) {
    case ScalarType.STRING:
      return (value) => {
        if (typeof value !== "string") throw deferred;
        return JSON.stringify(value);
      };
    case ScalarType.BOOL:
      return (value) => {
        if (typeof value !== "boolean") throw deferred;
        return value ? "true" : "false";
      };
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return (value) => {
        if (typeof value !== "number") throw deferred;
        if (Number.isNaN(value)) return '"NaN"';
        if (value === Infinity) return '"Infinity"';
        if (value === -Infinity) return '"-Infinity"';
        return String(value);
      };
    case ScalarType.INT64:
    case ScalarType.UINT64:
    case ScalarType.SINT64:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      // As a decimal string.
      return (value) => {
        if (typeof value === "bigint" || (typeof value === "number" && Number.isInteger(value)))
          return '"' + String(value) + '"';
        if (typeof value === "string") return JSON.stringify(value);
        throw deferred;
      };
    case ScalarType.BYTES:
      // Standard base64 with padding: nothing in it needs escaping.
      return (value) => {
        if (!(value instanceof Uint8Array)) throw deferred;
        return '"' + base64Encode(value) + '"';
      };
    default:
      // The 32-bit integers.
      return (value) => {
        if (typeof value !== "number") throw deferred;
        return numberText(value);
      };
  }
}

// The seconds of 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z, the range toJson writes.
const FIRST_SECOND = -62_135_596_800;
const LAST_SECOND = 253_402_300_799;

/**
 * A Timestamp as toJson writes it (RFC 3339 in UTC, the fraction in 0, 3, 6 or 9 digits), without a Date: the
 * calendar day from the day number (Howard Hinnant's civil_from_days). Out of range is toJson's (it refuses).
 */
const timestampWriter: Write = (value) => {
  const { $typeName, seconds, nanos } = value as { $typeName: string; seconds: unknown; nanos: unknown };
  if ($typeName !== "google.protobuf.Timestamp" || typeof seconds !== "bigint" || typeof nanos !== "number")
    throw deferred;
  const second = Number(seconds);
  if (second < FIRST_SECOND || second > LAST_SECOND || !Number.isInteger(nanos) || nanos < 0 || nanos > 999_999_999)
    throw deferred;
  const days = Math.floor(second / 86_400);
  const ofDay = second - days * 86_400;
  const shifted = days + 719_468;
  const era = Math.floor(shifted / 146_097);
  const ofEra = shifted - era * 146_097;
  const yearOfEra = Math.floor(
    (ofEra - Math.floor(ofEra / 1_460) + Math.floor(ofEra / 36_524) - Math.floor(ofEra / 146_096)) / 365,
  );
  const dayOfYear = ofEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const shiftedMonth = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * shiftedMonth + 2) / 5) + 1;
  const month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  let fraction = "";
  if (nanos > 0) {
    const digits = String(nanos + 1_000_000_000).slice(1);
    fraction =
      "." + (digits.endsWith("000000") ? digits.slice(0, 3) : digits.endsWith("000") ? digits.slice(0, 6) : digits);
  }
  return (
    '"' +
    String(year).padStart(4, "0") +
    "-" +
    two(month) +
    "-" +
    two(day) +
    "T" +
    two(Math.floor(ofDay / 3_600)) +
    ":" +
    two(Math.floor(ofDay / 60) % 60) +
    ":" +
    two(ofDay % 60) +
    fraction +
    'Z"'
  );
};

function two(value: number): string {
  return value < 10 ? "0" + value : String(value);
}

/** A number as JSON.stringify writes it: NaN and the infinities as null. */
function numberText(value: number): string {
  return Number.isFinite(value) ? String(value) : "null";
}
