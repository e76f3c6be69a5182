import {
  create,
  createFileRegistry,
  createRegistry,
  ScalarType,
  toJson,
  type DescField,
  type DescFile,
  type DescMessage,
  type Message,
  type Registry,
} from "@bufbuild/protobuf";
import {
  anyPack,
  FileDescriptorProtoSchema,
  file_google_protobuf_duration,
  file_google_protobuf_struct,
  file_google_protobuf_timestamp,
  file_google_protobuf_wrappers,
  FieldDescriptorProto_Label as Label,
  FieldDescriptorProto_Type as Type,
  isWrapperDesc,
  TimestampSchema,
} from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { bindingsOf } from "../../gateway/bindings.js";
import { fieldJsonWriter, jsonWriter } from "../../gateway/json-writer.js";
import { modules } from "../../platform/registry.js";

/** Every binding the gateway serves, and the registry it renders with (the services' files and their imports). */
const services = modules.flatMap((module) => module.protos);
const bindings = services.flatMap(bindingsOf);
const registry = createRegistry(...filesOf(services.map((service) => service.file)));

function filesOf(roots: DescFile[]): DescFile[] {
  const files = new Set<DescFile>();
  const add = (file: DescFile) => {
    if (files.has(file)) return;
    files.add(file);
    file.dependencies.forEach(add);
  };
  roots.forEach(add);
  return [...files];
}

/** What the gateway answered before the writer: toJson, then JSON.stringify. */
const options = (registry: Registry) => ({ useProtoFieldName: true, alwaysEmitImplicit: true, registry });
const viaToJson = (schema: DescMessage, message: Message, with_ = registry) =>
  JSON.stringify(toJson(schema, message, options(with_)));

/** Texts that need escaping, numbers at the edges of their kinds: each variant of a sample takes the next. */
const STRINGS = ["plain", 'quote " back\\slash', "line\nbreak\ttab\u0001", "ünïcødé 💡 \u2028\u2029", ""];
const INT32 = [7, -2147483648, 0, 2147483647];
const UINT32 = [7, 4294967295, 0];
const DOUBLES = [0.1, -0, NaN, Infinity, -Infinity, 1e21, -1.5e-7, 0];
const INT64 = [9007199254740993n, -9223372036854775808n, 0n, 9223372036854775807n];
const UINT64 = [18446744073709551615n, 0n, 42n];
const BYTES = [new Uint8Array([0, 1, 2, 250, 251, 255]), new Uint8Array([]), new Uint8Array([104, 105])];

const pick = <T>(values: readonly T[], variant: number) => values[variant % values.length];

function scalarSample(scalar: ScalarType, variant: number): unknown {
  switch (scalar) {
    case ScalarType.STRING:
      return pick(STRINGS, variant);
    case ScalarType.BOOL:
      return variant % 2 === 0;
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return pick(DOUBLES, variant);
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      return pick(INT64, variant);
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return pick(UINT64, variant);
    case ScalarType.BYTES:
      return pick(BYTES, variant);
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return pick(UINT32, variant);
    default:
      return pick(INT32, variant);
  }
}

/** Map keys as a record holds them: integers out of order (an object lists those first), words, bools. */
function mapKeys(scalar: ScalarType, variant: number): string[] {
  if (scalar === ScalarType.BOOL) return ["true", "false"];
  if (scalar === ScalarType.STRING) return variant % 2 === 0 ? ["b", "10", "a", "2", 'q"k'] : ["only"];
  if (scalar === ScalarType.INT64 || scalar === ScalarType.SINT64 || scalar === ScalarType.SFIXED64)
    return ["-9223372036854775808", "3", "12"];
  return ["12", "3", "0"];
}

/**
 * A message of `desc` with every field set to a sample (one oneof case per variant, an enum number the enum does not
 * name on odd variants), nested messages to `depth`.
 */
function sample(desc: DescMessage, variant: number, depth: number): Message {
  const init: Record<string, unknown> = {};
  const oneofCases = new Map(desc.oneofs.map((oneof) => [oneof, oneof.fields[variant % oneof.fields.length]]));
  for (const field of desc.fields) {
    if (field.oneof) {
      if (oneofCases.get(field.oneof) === field) {
        const value = valueOf(field, variant, depth, false);
        if (value !== undefined) init[field.oneof.localName] = { case: field.localName, value };
      }
      continue;
    }
    if (field.fieldKind === "list") {
      const items = [0, 1].map((i) => valueOf(field, variant + i, depth, false)).filter((v) => v !== undefined);
      init[field.localName] = items;
    } else if (field.fieldKind === "map") {
      const entries = mapKeys(field.mapKey, variant).map((key, i) => [key, valueOf(field, variant + i, depth, false)]);
      if (entries.every(([, value]) => value !== undefined)) init[field.localName] = Object.fromEntries(entries);
    } else {
      const value = valueOf(field, variant, depth, true);
      if (value !== undefined) init[field.localName] = value;
    }
  }
  return create(desc, init as never);
}

/** A sample value for one field (its item or map value); undefined past the depth. */
function valueOf(field: DescField, variant: number, depth: number, singular: boolean): unknown {
  if (field.scalar !== undefined) return scalarSample(field.scalar, variant);
  if (field.enum !== undefined)
    return variant % 2 === 1 ? 99 : field.enum.values[variant % field.enum.values.length].number;
  const message = field.message!;
  switch (message.typeName) {
    case "google.protobuf.Timestamp":
      return {
        seconds: pick([1_700_000_000n, 0n, -62135596800n], variant),
        nanos: pick([123_000_000, 0, 5, 120_500_000], variant),
      };
    case "google.protobuf.Duration":
      return { seconds: pick([90n, 0n, -3n], variant), nanos: pick([500_000_000, 0, -1_000], variant) };
    case "google.protobuf.Struct":
      return { name: pick(STRINGS, variant), list: [1, true, null, { deep: "x" }] };
    case "google.protobuf.Any":
      return variant % 2 === 0 ? anyPack(TimestampSchema, create(TimestampSchema, { seconds: 5n })) : { typeUrl: "" };
  }
  // A singular wrapper field outside a oneof holds its scalar.
  if (singular && !field.oneof && isWrapperDesc(message)) return scalarSample(message.fields[0].scalar!, variant);
  if (depth === 0) return undefined;
  return sample(message, variant, depth - 1);
}

/** The writer's text against toJson's for empty and filled messages of a type, and of each response field. */
function expectSameText(schema: DescMessage, with_ = registry, field?: DescField) {
  const write = field ? fieldJsonWriter(schema, field, with_) : jsonWriter(schema, with_);
  const reference = (message: Message) => {
    if (!field) return viaToJson(schema, message, with_);
    const json = toJson(schema, message, options(with_)) as Record<string, unknown>;
    return JSON.stringify(json[field.name] ?? null);
  };
  for (const message of [create(schema), ...[0, 1, 2, 3, 4, 5].map((variant) => sample(schema, variant, 3))]) {
    const expected = outcome(() => reference(message));
    // What toJson refuses (a NaN in a google.protobuf.Value, an Any of a type not in the registry), the writer too.
    expect(
      outcome(() => write(message)),
      schema.typeName,
    ).toEqual(expected);
  }
}

function outcome(render: () => string): { text: string } | { error: string } {
  try {
    return { text: render() };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

describe("JSON writer", () => {
  it("writes every route's response type as toJson and JSON.stringify did", () => {
    const seen = new Set<DescMessage>();
    for (const binding of bindings) {
      expectSameText(binding.method.output);
      if (binding.responseField) expectSameText(binding.method.output, registry, binding.responseField);
      seen.add(binding.method.output);
    }
    // Sanity: the platform's routes answer many types.
    expect(seen.size).toBeGreaterThan(100);
  });

  /** A proto3 message with every field kind the routes could use, some of which no route answers yet. */
  const everyKind = createFileRegistry(
    create(FileDescriptorProtoSchema, {
      name: "every_kind.proto",
      package: "test.v1",
      syntax: "proto3",
      dependency: [
        "google/protobuf/timestamp.proto",
        "google/protobuf/duration.proto",
        "google/protobuf/wrappers.proto",
        "google/protobuf/struct.proto",
      ],
      enumType: [
        {
          name: "Color",
          value: [
            { name: "COLOR_UNSPECIFIED", number: 0 },
            { name: "COLOR_RED", number: 1 },
          ],
        },
      ],
      messageType: [
        {
          name: "EveryKind",
          field: [
            ...Object.entries(Type)
              .filter(([name, number]) => typeof number === "number" && !["GROUP", "MESSAGE", "ENUM"].includes(name))
              .map(([name, number], i) => ({
                name: `f_${name.toLowerCase()}`,
                number: i + 1,
                type: number as Type,
                label: Label.OPTIONAL,
              })),
            ...[Type.INT64, Type.DOUBLE, Type.BYTES, Type.STRING].map((type, i) => ({
              name: `list_${i}`,
              number: 30 + i,
              type,
              label: Label.REPEATED,
            })),
            { name: "color", number: 40, type: Type.ENUM, typeName: ".test.v1.Color", label: Label.OPTIONAL },
            { name: "colors", number: 41, type: Type.ENUM, typeName: ".test.v1.Color", label: Label.REPEATED },
            { name: "maybe", number: 42, type: Type.INT32, label: Label.OPTIONAL, proto3Optional: true, oneofIndex: 1 },
            { name: "child", number: 43, type: Type.MESSAGE, typeName: ".test.v1.EveryKind", label: Label.OPTIONAL },
            { name: "children", number: 44, type: Type.MESSAGE, typeName: ".test.v1.EveryKind", label: Label.REPEATED },
            {
              name: "at",
              number: 45,
              type: Type.MESSAGE,
              typeName: ".google.protobuf.Timestamp",
              label: Label.OPTIONAL,
            },
            {
              name: "took",
              number: 46,
              type: Type.MESSAGE,
              typeName: ".google.protobuf.Duration",
              label: Label.OPTIONAL,
            },
            {
              name: "label",
              number: 47,
              type: Type.MESSAGE,
              typeName: ".google.protobuf.StringValue",
              label: Label.OPTIONAL,
            },
            {
              name: "count",
              number: 48,
              type: Type.MESSAGE,
              typeName: ".google.protobuf.Int64Value",
              label: Label.OPTIONAL,
            },
            { name: "text", number: 50, type: Type.STRING, label: Label.OPTIONAL, oneofIndex: 0 },
            {
              name: "nested",
              number: 51,
              type: Type.MESSAGE,
              typeName: ".test.v1.EveryKind",
              label: Label.OPTIONAL,
              oneofIndex: 0,
            },
            {
              name: "hue",
              number: 52,
              type: Type.ENUM,
              typeName: ".test.v1.Color",
              label: Label.OPTIONAL,
              oneofIndex: 0,
            },
            {
              name: "wrapped",
              number: 53,
              type: Type.MESSAGE,
              typeName: ".google.protobuf.BoolValue",
              label: Label.OPTIONAL,
              oneofIndex: 0,
            },
            {
              name: "by_name",
              number: 60,
              type: Type.MESSAGE,
              typeName: ".test.v1.EveryKind.ByNameEntry",
              label: Label.REPEATED,
            },
            {
              name: "by_number",
              number: 61,
              type: Type.MESSAGE,
              typeName: ".test.v1.EveryKind.ByNumberEntry",
              label: Label.REPEATED,
            },
            {
              name: "by_flag",
              number: 62,
              type: Type.MESSAGE,
              typeName: ".test.v1.EveryKind.ByFlagEntry",
              label: Label.REPEATED,
            },
            {
              name: "by_big",
              number: 63,
              type: Type.MESSAGE,
              typeName: ".test.v1.EveryKind.ByBigEntry",
              label: Label.REPEATED,
            },
          ],
          oneofDecl: [{ name: "choice" }, { name: "_maybe" }],
          nestedType: [
            mapEntry("ByNameEntry", Type.STRING, { type: Type.MESSAGE, typeName: ".test.v1.EveryKind" }),
            mapEntry("ByNumberEntry", Type.INT32, { type: Type.BYTES }),
            mapEntry("ByFlagEntry", Type.BOOL, { type: Type.ENUM, typeName: ".test.v1.Color" }),
            mapEntry("ByBigEntry", Type.INT64, { type: Type.STRING }),
          ],
        },
        {
          name: "WithStruct",
          field: [
            { name: "id", number: 1, type: Type.STRING, label: Label.OPTIONAL },
            { name: "doc", number: 2, type: Type.MESSAGE, typeName: ".google.protobuf.Struct", label: Label.OPTIONAL },
          ],
        },
        {
          name: "HoldsStruct",
          field: [
            { name: "inner", number: 1, type: Type.MESSAGE, typeName: ".test.v1.WithStruct", label: Label.OPTIONAL },
            { name: "n", number: 2, type: Type.UINT64, label: Label.OPTIONAL },
          ],
        },
      ],
    }),
    (name) =>
      [
        file_google_protobuf_timestamp,
        file_google_protobuf_duration,
        file_google_protobuf_wrappers,
        file_google_protobuf_struct,
      ].find((file) => file.proto.name === name),
  );
  const kindsRegistry = createRegistry(everyKind);

  it("writes every field kind as toJson did: scalars, enums, oneofs, maps, lists, well-known types, Struct", () => {
    for (const name of ["test.v1.EveryKind", "test.v1.HoldsStruct"]) {
      const schema = everyKind.getMessage(name)!;
      expectSameText(schema, kindsRegistry);
      for (const field of schema.fields) expectSameText(schema, kindsRegistry, field);
    }
  });

  it("writes timestamps as toJson did, across the whole range it writes", () => {
    const schema = everyKind.getMessage("test.v1.EveryKind")!;
    const write = fieldJsonWriter(
      schema,
      schema.fields.find((field) => field.name === "at")!,
      kindsRegistry,
    );
    const edges = [-62135596800, -62135596801, 253402300799, 253402300800, 0, -1, 951782400, 951868800, -2203891200];
    // A fixed pseudo-random walk over the range: the same seconds every run.
    let seed = 33;
    const walk = Array.from({ length: 3000 }, () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return Math.floor(-62135596800 + (seed / 2147483648) * (253402300799 + 62135596800));
    });
    const nanos = [0, 1, 999_999_999, 5_000_000, 120_000, 100_000_000];
    [...edges, ...walk].forEach((seconds, i) => {
      const message = create(schema, { at: { seconds: BigInt(seconds), nanos: nanos[i % nanos.length] } });
      const expected = outcome(() =>
        JSON.stringify((toJson(schema, message, options(kindsRegistry)) as { at: string }).at),
      );
      expect(
        outcome(() => write(message)),
        String(seconds),
      ).toEqual(expected);
    });
  });

  it("leaves what toJson refuses to toJson: the same error, not a different text", () => {
    const schema = everyKind.getMessage("test.v1.EveryKind")!;
    const write = jsonWriter(schema, kindsRegistry);
    const wrong = [
      { fInt32: "7" },
      { fInt64: 1.5 },
      { fBool: 1 },
      { at: { seconds: 253402300800n, nanos: 0 } },
      { child: create(TimestampSchema) },
    ];
    for (const init of wrong) {
      const message = create(schema, {});
      Object.assign(message, init);
      const expected = outcome(() => viaToJson(schema, message, kindsRegistry));
      expect(expected, Object.keys(init)[0]).toHaveProperty("error");
      expect(outcome(() => write(message))).toEqual(expected);
    }
  });
});

function mapEntry(name: string, key: Type, value: { type: Type; typeName?: string }) {
  return {
    name,
    options: { mapEntry: true },
    field: [
      { name: "key", number: 1, type: key, label: Label.OPTIONAL },
      { name: "value", number: 2, label: Label.OPTIONAL, ...value },
    ],
  };
}
