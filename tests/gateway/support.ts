import { clone, createFileRegistry, getExtension, setExtension, type DescService } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema, type MethodOptions, type ServiceDescriptorProto } from "@bufbuild/protobuf/wkt";
import { exportJWK, generateKeyPair } from "jose";
import type { Admitting } from "../../gateway/route-context.js";
import { access, type Access } from "../../gen/pf/v1/options_pb.js";
import { Admission } from "../../services/kit/auth/enforce.js";
import { loadKeys } from "../../services/kit/auth/keys.js";
import { ANONYMOUS } from "../../services/kit/auth/principal.js";
import { mintToken, TokenVerifier, type TokenClaims } from "../../services/kit/auth/tokens.js";
import { loadConfig } from "../../services/kit/runtime/config.js";

/** Admits every request: for tests of the gateway's mapping, whose in-memory services enforce nothing either. */
export const admitEveryone: Admitting = {
  admit: () => ({ principal: ANONYMOUS, admittedBy: "" }),
  discoversInternals: async () => true,
};

/** The platform's enforcement over a key pair made for the test (nothing written to disk), and tokens it takes. */
export async function testEnforcement(): Promise<{
  admission: Admission;
  token(claims: TokenClaims): Promise<string>;
}> {
  const { privateKey } = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
  const keys = await loadKeys({ ...loadConfig({}), jwtPrivateKey: JSON.stringify(await exportJWK(privateKey)) });
  return { admission: new Admission(new TokenVerifier(keys)), token: (claims) => mintToken(keys, claims) };
}

/**
 * A service as its generated descriptors declare it, with its declaration
 * edited: how these tests try options no proto uses (there is no test proto).
 * Only the options should change; the service keeps its name, key, RPCs and
 * messages, so it is served and routed as the real one.
 */
export function withService(service: DescService, edit: (declaration: ServiceDescriptorProto) => void): DescService {
  const file = clone(FileDescriptorProtoSchema, service.file.proto);
  edit(file.service.find((each) => each.name === service.name)!);
  const dependency = (name: string) => service.file.dependencies.find((each) => each.proto.name === name);
  const registry = createFileRegistry(file, dependency);
  return registry.getService(service.typeName)!;
}

/** The service with one RPC's options edited. */
export function withOptions(service: DescService, rpc: string, edit: (options: MethodOptions) => void): DescService {
  return withService(service, (declaration) => {
    const method = declaration.method.find((each) => each.name === rpc);
    if (!method?.options) throw new Error(`${service.typeName} has no RPC ${rpc} with options`);
    edit(method.options);
  });
}

/** The service with one RPC's access rule edited. */
export function withAccess(service: DescService, rpc: string, edit: (rule: Access) => void): DescService {
  return withOptions(service, rpc, (options) => {
    const rule = getExtension(options, access);
    edit(rule);
    setExtension(options, access, rule);
  });
}
