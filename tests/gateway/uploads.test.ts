import { describe, expect, it } from "vitest";
import { BODY_HOOKS } from "../../gateway/bodies.js";
import { bindingsOf } from "../../gateway/bindings.js";
import { openApiDocument } from "../../gateway/openapi.js";
import { MediaService } from "../../gen/pf/media/v1/media_pb.js";
import { BillingService } from "../../gen/pf/billing/v1/billing_pb.js";

const claimed = (service: typeof MediaService | typeof BillingService, name: string) =>
  BODY_HOOKS.filter((hook) => hook.claims(bindingsOf(service).find((b) => b.method.name === name)!)).map(
    (hook) => hook.name,
  );

describe("the upload and byte-answer hooks", () => {
  it("claim client-streaming uploads and HttpBody streams, before the event-stream hook, and nothing else", () => {
    expect(claimed(MediaService, "UploadFile")[0]).toBe("streamed-upload");
    expect(claimed(MediaService, "ServeFile")[0]).toBe("byte-answers");
    expect(claimed(MediaService, "ReadFile")[0]).toBe("byte-answers");
    expect(claimed(BillingService, "CreateIntent")).toEqual([]);
  });

  it("document an upload's body as a form or raw bytes with its limit, and byte answers as binary or JSON", () => {
    const document = openApiDocument(bindingsOf(MediaService), { title: "media", basePath: "/media" }) as any;
    const upload = document.paths["/api/v1/{app}/files"].post;
    expect(Object.keys(upload.requestBody.content)).toEqual(["multipart/form-data", "application/octet-stream"]);
    expect(upload.requestBody.content["multipart/form-data"].schema.properties.file).toEqual({
      type: "string",
      format: "binary",
    });
    expect(upload["x-pf-max-bytes"]).toBe(4294967296);
    expect(Object.keys(upload.responses)).toContain("201");
    const serve = document.paths["/f/{key}"].get;
    expect(Object.keys(serve.responses["200"].content)).toEqual(["*/*", "application/json"]);
    expect(serve.responses["206"].content["*/*"].schema.format).toBe("binary");
    expect(serve.responses["304"].content).toBeUndefined();
  });
});
