import { create } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { FileReadRequestSchema, FileUploadSchema, MediaService } from "../../gen/pf/media/v1/media_pb.js";
import { ProblemSchema } from "../../gen/pf/v1/problem_pb.js";
import { fieldRulesOf } from "../../services/kit/rpc/field-rules.js";
import { KEY_PATTERN } from "../../services/media/domain/files.js";
import { usePlatform } from "../support/platform.js";
import { appClaims, rowCount } from "./support.js";

const t = usePlatform({ services: ["media"] });

describe("media's input rules, declared in the contract", () => {
  it("report every rule a request breaks, each naming its field, over the gateway and over RPC", async () => {
    const read = await t.http("GET", "/media/api/v1/.app/files/short");
    expect(read.body).toMatchObject({ status: 400, code: "request.invalid", field: "app" });
    expect(read.body.errors.map((fault: { field: string }) => fault.field)).toEqual(["app", "key"]);

    const client = t.client(MediaService, await t.token(appClaims()));
    const rows = await rowCount(t);
    async function* parts() {
      yield create(FileUploadSchema, { app: "app 1", name: "n".repeat(256), contentType: "text/plain" });
      yield create(FileUploadSchema, { chunk: new Uint8Array(10) });
    }
    const refusal = await client.uploadFile(parts()).then(
      () => undefined,
      (error: unknown) => ConnectError.from(error).findDetails(ProblemSchema)[0],
    );
    expect(refusal).toMatchObject({ status: 400, code: "request.invalid" });
    expect((refusal!.extensions!.errors as { field: string }[]).map((fault) => fault.field)).toEqual(["app", "name"]);
    expect(await rowCount(t)).toBe(rows);
  });

  it("hold the keys reads name to the shape keys are made in", () => {
    const rules = fieldRulesOf(FileReadRequestSchema.field.key);
    expect(rules?.type.case === "string" && rules.type.value.pattern).toBe(KEY_PATTERN.source);
  });
});
