import { createRegistry, type DescMessage, type JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { applyQuery, pathTarget, queryTargets, setField } from "../../gateway/fields.js";
import { decode } from "../../gateway/decode.js";
import {
  CoinsChangeRequestSchema,
  ModuleWriteRequestSchema,
  ResolveRequestSchema,
  StaffEntrySchema,
  StaffRole,
} from "../../gen/pf/network/v1/network_pb.js";
import { AccessSchema, Visibility } from "../../gen/pf/v1/options_pb.js";
import { problemOf } from "../../services/kit/handler/problem.js";

const registry = createRegistry();

function fromQuery(schema: DescMessage, query: Record<string, string | string[]>, excluded: string[] = []): JsonObject {
  const json: JsonObject = {};
  applyQuery(json, queryTargets(schema, new Set(excluded)), query);
  return json;
}

/** The problem a mapping step throws, as the gateway would render it. */
function refusal(run: () => unknown) {
  try {
    run();
  } catch (error) {
    const found = problemOf(error);
    return { status: found.status, code: found.code, field: found.extensions?.field, detail: found.detail };
  }
  throw new Error("expected a refusal");
}

describe("query parameters to request JSON, by field type", () => {
  it("keeps 64-bit integers as JSON strings and strings as they are", () => {
    const json = fromQuery(CoinsChangeRequestSchema, {
      subject: "usr_1",
      amount: "9007199254740993",
      idempotency_key: "k1",
    });
    expect(json).toEqual({ subject: "usr_1", amount: "9007199254740993", idempotency_key: "k1" });
    expect(decode(CoinsChangeRequestSchema, json, registry)).toMatchObject({
      amount: 9007199254740993n,
      idempotencyKey: "k1",
    });
  });

  it("accepts the proto name and the lowerCamel name, stored under the proto name", () => {
    expect(fromQuery(ResolveRequestSchema, { local_id: "42", service: "space" })).toEqual({
      local_id: "42",
      service: "space",
    });
    expect(fromQuery(ResolveRequestSchema, { localId: "42" })).toEqual({ local_id: "42" });
  });

  it("converts bools (true/false/1/0), enums by name or number, and repeated keys", () => {
    const json = fromQuery(AccessSchema, {
      never_to_apps: "true",
      anonymous: "1",
      no_people: "0",
      visibility: "VISIBILITY_PARTNER",
      capabilities: ["tips.goal.create", "tips.goal.update"],
      only_services: "billing",
    });
    expect(json).toEqual({
      never_to_apps: true,
      anonymous: true,
      no_people: false,
      visibility: "VISIBILITY_PARTNER",
      capabilities: ["tips.goal.create", "tips.goal.update"],
      only_services: ["billing"],
    });
    expect(decode(AccessSchema, json, registry)).toMatchObject({
      neverToApps: true,
      visibility: Visibility.PARTNER,
      onlyServices: ["billing"],
    });
    expect(fromQuery(AccessSchema, { visibility: "3" })).toEqual({ visibility: 3 });
  });

  it("reaches nested messages by dotted names and takes timestamps as RFC 3339 text", () => {
    const json = fromQuery(StaffEntrySchema, {
      "subject.id": "usr_1",
      "subject.display.displayName": "Ada",
      role: "STAFF_ROLE_ADMIN",
      updated_at: "2024-05-01T10:00:00Z",
    });
    expect(json).toEqual({
      subject: { id: "usr_1", display: { display_name: "Ada" } },
      role: "STAFF_ROLE_ADMIN",
      updated_at: "2024-05-01T10:00:00Z",
    });
    expect(decode(StaffEntrySchema, json, registry)).toMatchObject({
      subject: { id: "usr_1", display: { displayName: "Ada" } },
      role: StaffRole.ADMIN,
      updatedAt: timestampFromDate(new Date("2024-05-01T10:00:00Z")),
    });
  });

  it("offers only scalar-like fields, never those the path or body sets", () => {
    const names = [...queryTargets(ResolveRequestSchema, new Set(["subject"])).keys()];
    expect(names).toEqual(["service", "local_id", "localId"]);
    expect([...queryTargets(ModuleWriteRequestSchema, new Set()).keys()]).not.toContain("record");
  });

  it("refuses unknown parameters and repeated values of a single field, naming them", () => {
    expect(refusal(() => fromQuery(ResolveRequestSchema, { subjekt: "usr_1" }))).toMatchObject({
      status: 400,
      code: "request.invalid",
      field: "subjekt",
    });
    expect(refusal(() => fromQuery(ResolveRequestSchema, { "queries.subject": "usr_1" }))).toMatchObject({
      field: "queries.subject",
    });
    expect(refusal(() => fromQuery(ResolveRequestSchema, { subject: ["a", "b"] }))).toMatchObject({
      status: 400,
      field: "subject",
    });
  });

  it("leaves malformed values to fromJson, which is refused naming the field", () => {
    for (const [name, value] of [
      ["amount", "abc"],
      ["amount", "1.5"],
      ["amount", ""],
    ]) {
      const json = fromQuery(CoinsChangeRequestSchema, { [name]: value });
      expect(refusal(() => decode(CoinsChangeRequestSchema, json, registry))).toMatchObject({
        status: 400,
        code: "request.invalid",
        field: name,
      });
    }
    const flags = fromQuery(AccessSchema, { anonymous: "yes", visibility: "VISIBILITY_NOPE" });
    expect(refusal(() => decode(AccessSchema, flags, registry))).toMatchObject({
      status: 400,
      code: "request.invalid",
    });
    expect(
      refusal(() => decode(StaffEntrySchema, fromQuery(StaffEntrySchema, { updated_at: "yesterday" }), registry)),
    ).toMatchObject({ field: "updated_at" });
  });

  it("names nested and list-item fields by their dotted path", () => {
    expect(refusal(() => decode(StaffEntrySchema, { subject: { display: { handle: 5 } } }, registry))).toMatchObject({
      field: "subject.display.handle",
    });
    expect(refusal(() => decode(StaffEntrySchema, { subject: { nick: "x" } }, registry))).toMatchObject({
      field: "subject.nick",
      detail: "Field subject.nick is not part of this request.",
    });
    expect(
      refusal(() => decode(ResolveRequestSchema, { queries: [{ subject: "a" }, { localId: 7 }] }, registry)),
    ).toMatchObject({ field: "queries[1].local_id" });
  });
});

describe("path variables onto the request JSON", () => {
  it("binds singular scalar fields, nested ones included", () => {
    expect(pathTarget(ModuleWriteRequestSchema, "namespace")).toMatchObject({ path: "namespace", repeated: false });
    expect(pathTarget(StaffEntrySchema, "subject.display.handle").steps.map((s) => s.name)).toEqual([
      "subject",
      "display",
      "handle",
    ]);
    expect(() => pathTarget(ModuleWriteRequestSchema, "record")).toThrow("cannot be bound");
    expect(() => pathTarget(ResolveRequestSchema, "queries")).toThrow("cannot be bound");
    expect(() => pathTarget(ResolveRequestSchema, "nope")).toThrow("has no field nope");
  });

  it("replaces a body's value in either spelling and builds the messages on the way", () => {
    const body: JsonObject = { expectedRevision: "2", namespace: "other" };
    setField(body, pathTarget(ModuleWriteRequestSchema, "namespace"), "games");
    expect(body).toEqual({ expectedRevision: "2", namespace: "games" });

    const staff: JsonObject = { subject: { display: { displayName: "Ada" } } };
    setField(staff, pathTarget(StaffEntrySchema, "subject.display.display_name"), "Grace");
    setField(staff, pathTarget(StaffEntrySchema, "subject.id"), "usr_1");
    expect(staff).toEqual({ subject: { display: { display_name: "Grace" }, id: "usr_1" } });

    const wrong: JsonObject = { subject: "usr_1" };
    expect(refusal(() => setField(wrong, pathTarget(StaffEntrySchema, "subject.id"), "usr_2"))).toMatchObject({
      status: 400,
      field: "subject.id",
    });
  });
});
