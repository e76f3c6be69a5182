import { create, type DescField } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { FileReadRequestSchema, FileUploadSchema, MediaService } from "../../gen/pf/media/v1/media_pb.js";
import { ProblemSchema } from "../../gen/pf/v1/problem_pb.js";
import { fieldRulesOf, patternOf } from "../../services/kit/rpc/field-rules.js";
import { KEY_PATTERN } from "../../services/media/domain/files.js";
import { usePlatform } from "../support/platform.js";
import { appClaims, postUpload, rowCount } from "./support.js";

const t = usePlatform({ services: ["media"] });

describe("media's input rules, declared in the contract", () => {
  it("report every rule a request breaks, each naming its field, over the gateway and over RPC", async () => {
    const read = await t.http("GET", "/media/api/v1/.app/files/short");
    expect(read.body).toMatchObject({ status: 400, code: "request.invalid", field: "app" });
    expect(read.body.errors.map((fault: { field: string }) => fault.field)).toEqual(["app", "key"]);

    const client = t.client(MediaService, await t.token(appClaims()));
    const rows = await rowCount(t);
    async function* parts() {
      yield create(FileUploadSchema, { app: "app 1", name: "n".repeat(256), contentType: "text" });
      yield create(FileUploadSchema, { chunk: new Uint8Array(10) });
    }
    const refusal = await client.uploadFile(parts()).then(
      () => undefined,
      (error: unknown) => ConnectError.from(error).findDetails(ProblemSchema)[0],
    );
    expect(refusal).toMatchObject({ status: 400, code: "request.invalid" });
    expect((refusal!.extensions!.errors as { field: string }[]).map((fault) => fault.field)).toEqual([
      "app",
      "name",
      "content_type",
    ]);

    const token = await t.token(appClaims());
    const sent = await postUpload(t, "app1", Buffer.from("x"), {
      token,
      type: "application/octet-stream",
      query: "?name=..%2Fx&content_type=nonsense",
    });
    expect(sent.body).toMatchObject({ status: 400, code: "request.invalid", field: "name" });
    expect(sent.body.errors.map((fault: { field: string }) => fault.field)).toEqual(["name", "content_type"]);
    expect(await rowCount(t)).toBe(rows);
  });

  it("hold the keys reads name to the shape keys are made in", () => {
    const rules = fieldRulesOf(FileReadRequestSchema.field.key);
    expect(rules?.type.case === "string" && rules.type.value.pattern).toBe(KEY_PATTERN.source);
  });

  it("hold a file's name to a plain name and its media type to type/subtype", () => {
    const takes = (field: DescField) => {
      const rules = fieldRulesOf(field);
      const pattern = patternOf(rules?.type.case === "string" ? rules.type.value.pattern! : "");
      return (value: string) => pattern.test(value);
    };
    const name = takes(FileUploadSchema.field.name);
    for (const bad of ["../x", "a/b", "a\\b", ".", "..", "line\nbreak", "tab\t", "del\u007f"])
      expect(name(bad), JSON.stringify(bad)).toBe(false);
    for (const good of ["photo.png", "..hidden", "...", ".env", "café ☕.txt"]) expect(name(good), good).toBe(true);
    const type = takes(FileUploadSchema.field.contentType);
    for (const bad of ["nonsense", "text/", "a/b\r\nx: y", "a/b; c", 'a/b; c="\\"'])
      expect(type(bad), JSON.stringify(bad)).toBe(false);
    for (const good of ["image/png", " Text/Plain ", "text/plain;charset=utf-8", 'a/b ; c="x y"'])
      expect(type(good), good).toBe(true);
  });
});
