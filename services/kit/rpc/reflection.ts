import {
  clone,
  create,
  createFileRegistry,
  createRegistry,
  toBinary,
  type DescFile,
  type DescMethod,
  type DescService,
  type MessageInitShape,
  type Registry,
} from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema, FileDescriptorSetSchema, type FileDescriptorProto } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter } from "@connectrpc/connect";
import type { Admission } from "../auth/enforce.js";
import { Health } from "../../../gen/grpc/health/v1/health_pb.js";
import {
  ServerReflection,
  type ServerReflectionRequest,
  type ServerReflectionResponseSchema,
} from "../../../gen/grpc/reflection/v1/reflection_pb.js";
import { onPublicSurface, publicServices } from "./surface.js";

type Answer = MessageInitShape<typeof ServerReflectionResponseSchema>["messageResponse"];

// gRPC status codes, as the reflection protocol carries them in error_response.
const INVALID_ARGUMENT = 3;
const NOT_FOUND = 5;

/** What one caller may discover: the services listed, and the files (with their registry) answered. */
interface View {
  names: string[];
  files: Map<string, DescFile>;
  registry: Registry;
}

/**
 * grpc.reflection.v1 over the hosted services' own descriptors, so `buf curl`
 * and `grpcurl` need no local schema. Every file answer carries the whole import
 * closure, since clients must link a file against its dependencies.
 *
 * Callers that may discover internal and admin services (service tokens:
 * `Admission.discoversInternals`) see everything; everyone else (no token, a
 * user's or an app's) sees the public and first-party surface
 * (`onPublicSurface`), as the public OpenAPI document shows it: files keep
 * their messages, but their services keep only those RPCs, and a service
 * without one is left out. A token that is not valid is refused (401
 * `auth.invalid`), as on every route.
 */
export function reflectionRoutes(
  router: ConnectRouter,
  services: DescService[],
  admission: Pick<Admission, "discoversInternals">,
): void {
  const beside = [Health, ServerReflection];
  // Built at the first request that needs it: linking the cut files of every service takes about half a second.
  let whole: View | undefined;
  let open: View | undefined;
  const viewOf = async (authorization: string | null): Promise<View> => {
    if (await admission.discoversInternals(authorization)) return (whole ??= wholeView([...services, ...beside]));
    return (open ??= surfaceView([...publicServices(services), ...beside], new Set(beside)));
  };

  router.service(ServerReflection, {
    async *serverReflectionInfo(requests, context) {
      const view = await viewOf(context.requestHeader.get("authorization"));
      for await (const req of requests)
        yield { validHost: req.host, originalRequest: req, messageResponse: answer(view, req) };
    },
  });
}

function answer(view: View, req: ServerReflectionRequest): Answer {
  const { case: kind, value } = req.messageRequest;
  switch (kind) {
    case "listServices":
      return { case: "listServicesResponse", value: { service: view.names.map((name) => ({ name })) } };
    case "fileByFilename":
      return fileAnswer(view.files.get(value), `file "${value}"`);
    case "fileContainingSymbol":
      return fileAnswer(fileOfSymbol(view.registry, value), `symbol "${value}"`);
    case "fileContainingExtension": {
      const extendee = view.registry.getMessage(value.containingType);
      const extension = extendee && view.registry.getExtensionFor(extendee, value.extensionNumber);
      return fileAnswer(extension?.file, `extension ${value.extensionNumber} of "${value.containingType}"`);
    }
    case "allExtensionNumbersOfType": {
      if (!view.registry.getMessage(value)) return error(NOT_FOUND, `type "${value}" not found`);
      const numbers: number[] = [];
      for (const desc of view.registry)
        if (desc.kind === "extension" && desc.extendee.typeName === value) numbers.push(desc.number);
      return { case: "allExtensionNumbersResponse", value: { baseTypeName: value, extensionNumber: numbers } };
    }
    default:
      return error(INVALID_ARGUMENT, "empty reflection request");
  }
}

/** Every service as it is, with its files and their imports. */
function wholeView(exposed: DescService[]): View {
  const files = new Map<string, DescFile>();
  for (const service of exposed) collect(service.file, files);
  return { names: namesOf(exposed), files, registry: createRegistry(...files.values()) };
}

/**
 * The same files, each with its services cut to the RPCs on the public
 * surface (`whole` services kept as they are), relinked so that what a client
 * links never names an RPC left out.
 */
function surfaceView(exposed: DescService[], whole: ReadonlySet<DescService>): View {
  const shown = (method: DescMethod) => whole.has(method.parent) || onPublicSurface(method);
  const originals = new Map<string, DescFile>();
  for (const service of exposed) collect(service.file, originals);
  const protos = [...originals.values()].map((file) => {
    const kept = new Map(file.services.map((s) => [s.name, new Set(s.methods.filter(shown).map((m) => m.name))]));
    const proto = clone(FileDescriptorProtoSchema, file.proto);
    proto.service = proto.service.filter((s) => (kept.get(s.name)?.size ?? 0) > 0);
    for (const service of proto.service)
      service.method = service.method.filter((m) => kept.get(service.name)!.has(m.name));
    return proto;
  });
  // A descriptor set lists each file after its imports.
  const ordered = new Set<FileDescriptorProto>();
  const byName = new Map(protos.map((proto) => [proto.name, proto]));
  const add = (proto: FileDescriptorProto) => {
    if (ordered.has(proto)) return;
    for (const name of proto.dependency) add(byName.get(name)!);
    ordered.add(proto);
  };
  protos.forEach(add);
  const registry = createFileRegistry(create(FileDescriptorSetSchema, { file: [...ordered] }));
  const files = new Map<string, DescFile>();
  for (const name of originals.keys()) files.set(name, registry.getFile(name)!);
  return { names: namesOf(exposed), files, registry };
}

function namesOf(services: DescService[]): string[] {
  return [...new Set(services.map((s) => s.typeName))];
}

/** The file first, then its imports, each once. */
function collect(file: DescFile, into: Map<string, DescFile>): void {
  if (into.has(file.proto.name)) return;
  into.set(file.proto.name, file);
  for (const dep of file.dependencies) collect(dep, into);
}

function fileAnswer(file: DescFile | undefined, what: string): Answer {
  if (!file) return error(NOT_FOUND, `${what} not found`);
  const closure = new Map<string, DescFile>();
  collect(file, closure);
  const fileDescriptorProto = [...closure.values()].map((f) => toBinary(FileDescriptorProtoSchema, f.proto));
  return { case: "fileDescriptorResponse", value: { fileDescriptorProto } };
}

/** Types and extensions are registered by full name; methods and fields are members of one. */
function fileOfSymbol(registry: Registry, symbol: string): DescFile | undefined {
  const desc = registry.get(symbol);
  if (desc) return desc.file;
  const dot = symbol.lastIndexOf(".");
  if (dot < 0) return undefined;
  const parent = registry.get(symbol.slice(0, dot));
  const member = symbol.slice(dot + 1);
  if (parent?.kind === "service") return parent.methods.some((m) => m.name === member) ? parent.file : undefined;
  if (parent?.kind === "message") return parent.fields.some((f) => f.name === member) ? parent.file : undefined;
  return undefined;
}

function error(errorCode: number, errorMessage: string): Answer {
  return { case: "errorResponse", value: { errorCode, errorMessage } };
}
