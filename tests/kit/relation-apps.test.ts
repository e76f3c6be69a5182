import { create, setExtension, type DescMethod, type DescService, type Message } from "@bufbuild/protobuf";
import { MethodOptionsSchema, ServiceOptionsSchema } from "@bufbuild/protobuf/wkt";
import { ConnectError, createContextValues, type StreamRequest, type UnaryRequest } from "@connectrpc/connect";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  access,
  AccessSchema,
  relations as relationsOption,
  RelationSchema,
  service_key as serviceKey,
  Visibility,
} from "../../gen/pf/v1/options_pb.js";
import { ProblemSchema } from "../../gen/pf/v1/problem_pb.js";
import { Admission } from "../../services/kit/auth/enforce.js";
import { loadKeys, type PlatformKeys } from "../../services/kit/auth/keys.js";
import { callerKey, type Caller } from "../../services/kit/auth/principal.js";
import { mintToken, TokenVerifier, type TokenClaims } from "../../services/kit/auth/tokens.js";
import { problem } from "../../services/kit/handler/problem.js";
import { Relations, resolverDecision, type RelationAsked } from "../../services/kit/rpc/relations.js";
import { loadConfig } from "../../services/kit/runtime/config.js";
import { createLogger } from "../../services/kit/runtime/logger.js";
import { probeService } from "../support/probe-service.js";

let dataDir: string;
let keys: PlatformKeys;
let admission: Admission;
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "pf-relation-apps-"));
  keys = await loadKeys(loadConfig({ PF_DATA_DIR: dataDir }));
  admission = new Admission(new TokenVerifier(keys));
});
afterAll(() => rm(dataDir, { recursive: true, force: true }));

/**
 * A probe service declaring one relation `member` (held by apps or not), and two first-party RPCs taking the
 * deployer role: `Read` (scope: the service as a whole) and `Upload`, client-streamed, scoped by its messages' `id`.
 */
function probe(heldByApps: boolean): DescService {
  const serviceOptions = create(ServiceOptionsSchema);
  setExtension(serviceOptions, serviceKey, "probe");
  setExtension(serviceOptions, relationsOption, [
    create(RelationSchema, { name: "member", refusal: "auth.role_required", heldByApps }),
  ]);
  const ruled = (scopeField: string) => {
    const options = create(MethodOptionsSchema);
    const relation = { name: "member", scopeField, roles: ["deployer"] };
    setExtension(
      options,
      access,
      create(AccessSchema, { capabilities: ["probe.use"], visibility: Visibility.FIRST_PARTY, relation }),
    );
    return options;
  };
  return probeService(
    [
      { name: "Read", options: ruled("") },
      { name: "Upload", options: ruled("id"), upload: true },
    ],
    serviceOptions,
  );
}

/** The relations of a probe, with a resolver that records what it is asked: app:ci and usr_d1 deploy to prj_1. */
function resolving(service: DescService) {
  const asked: RelationAsked[] = [];
  const relations = new Relations(createLogger("silent"));
  relations.register(
    [service],
    {
      member: async (_ctx, question) => {
        asked.push(question);
        if (question.env === "sandbox") throw resolverDecision(problem(403, "probe.sandbox_refused", "Sandbox."));
        const member = question.person === "app:ci" || question.person === "usr_d1";
        return member && ["", "prj_1"].includes(question.scope) ? "deployer" : undefined;
      },
    },
    {},
  );
  return { relations, asked };
}

/** The caller enforcement admits for a token on a method, or its refusal. */
async function admitted(method: DescMethod, claims: TokenClaims): Promise<Caller> {
  return admission.admit(method, new Headers({ authorization: `Bearer ${await mintToken(keys, claims)}` }));
}

/** The status and code of a refusal. */
function refusalOf(error: unknown) {
  const [found] = ConnectError.from(error).findDetails(ProblemSchema);
  return { status: found?.status, code: found?.code };
}

const ci = (fp = true): TokenClaims => ({ kind: "app", app_id: "ci", caps: ["probe.use"], fp });

describe("a relation held by apps", () => {
  it("asks about a first-party app acting for nobody as app:<id>, and admits it by its role", async () => {
    const service = probe(true);
    const read = service.methods[0];
    const { relations, asked } = resolving(service);
    const caller = await relations.admit(read, await admitted(read, ci()), create(read.input));
    expect(caller.relation).toEqual({ name: "probe.member", role: "deployer" });
    expect(asked).toEqual([{ person: "app:ci", scope: "", env: undefined }]);
  });

  it("a relation not held by apps never asks about an app acting for nobody: its declared refusal", async () => {
    const service = probe(false);
    const read = service.methods[0];
    const { relations, asked } = resolving(service);
    const refusal = await relations.admit(read, await admitted(read, ci()), create(read.input)).catch(refusalOf);
    expect(refusal).toEqual({ status: 403, code: "auth.role_required" });
    expect(asked).toEqual([]);
  });

  it("a third-party app is refused by the visibility before any relation is asked (403 auth.first_party_only)", async () => {
    const read = probe(true).methods[0];
    expect(await admitted(read, ci(false)).catch(refusalOf)).toEqual({ status: 403, code: "auth.first_party_only" });
  });
});

describe("the token's environment", () => {
  it("is passed to the resolver (env), whose own 403 decision is answered as is, never as 503", async () => {
    const service = probe(true);
    const read = service.methods[0];
    const { relations, asked } = resolving(service);
    const production = await admitted(read, { kind: "user", sub: "usr_d1", env: "production" });
    expect((await relations.admit(read, production, create(read.input))).relation?.role).toBe("deployer");
    const sandbox = await admitted(read, { kind: "user", sub: "usr_d1", env: "sandbox" });
    expect(await relations.admit(read, sandbox, create(read.input)).catch(refusalOf)).toEqual({
      status: 403,
      code: "probe.sandbox_refused",
    });
    expect(asked.map((each) => each.env)).toEqual(["production", "sandbox"]);
  });
});

describe("a relation on a client-streamed request", () => {
  /** Runs the interceptor on an upload of these messages; answers what the handler read, and how many were pulled. */
  async function upload(service: DescService, caller: Caller, ids: string[]) {
    const method = service.methods[1];
    const { relations } = resolving(service);
    let pulled = 0;
    async function* messages() {
      for (const [at, id] of ids.entries()) {
        pulled++;
        yield create(method.input, { id, chunk: new Uint8Array([at]) }) as Message;
      }
    }
    const contextValues = createContextValues();
    contextValues.set(callerKey, caller);
    const req = { stream: true, method, message: messages(), contextValues } as unknown as StreamRequest;
    let handled: { id: string; chunk: Uint8Array }[] | undefined;
    const next = async (request: UnaryRequest | StreamRequest) => {
      if (!request.stream) throw new Error("the upload is a stream");
      handled = [];
      for await (const each of request.message) handled.push(each as unknown as { id: string; chunk: Uint8Array });
      return { caller: request.contextValues.get(callerKey) } as never;
    };
    const answer = await relations
      .interceptor()(next)(req)
      .then((done) => ({ done }), refusalOf);
    return { answer, handled, pulled: () => pulled };
  }

  it("is resolved from its first message; the handler then reads every message, the first again", async () => {
    const service = probe(true);
    const caller = await admitted(service.methods[1], { kind: "user", sub: "usr_d1" });
    const { answer, handled } = await upload(service, caller, ["prj_1", "", ""]);
    expect(answer).toMatchObject({ done: { caller: { relation: { name: "probe.member", role: "deployer" } } } });
    expect(handled!.map((each) => [each.id, each.chunk[0]])).toEqual([
      ["prj_1", 0],
      ["", 1],
      ["", 2],
    ]);
  });

  it("is refused before the handler reads anything: only the first message was read", async () => {
    const service = probe(true);
    const caller = await admitted(service.methods[1], { kind: "user", sub: "usr_d1" });
    const { answer, handled, pulled } = await upload(service, caller, ["prj_other", "", ""]);
    expect(answer).toEqual({ status: 403, code: "auth.role_required" });
    expect(handled).toBeUndefined();
    expect(pulled()).toBe(1);
  });
});
