import {
  createRegistry,
  toBinary,
  type DescFile,
  type DescService,
  type MessageInitShape,
  type Registry,
} from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type ConnectRouter } from "@connectrpc/connect";
import type { Admission } from "../auth/enforce.js";
import { Health } from "../../../gen/grpc/health/v1/health_pb.js";
import {
  ServerReflection,
  type ServerReflectionRequest,
  type ServerReflectionResponseSchema,
} from "../../../gen/grpc/reflection/v1/reflection_pb.js";

type Answer = MessageInitShape<typeof ServerReflectionResponseSchema>["messageResponse"];

// gRPC status codes, as the reflection protocol carries them in error_response.
const INVALID_ARGUMENT = 3;
const NOT_FOUND = 5;

/**
 * grpc.reflection.v1 over the hosted services' own descriptors, so `buf curl`
 * and `grpcurl` need no local schema. Every file answer carries the whole import
 * closure, since clients must link a file against its dependencies. It lists
 * internal and admin services, so it answers only callers that may discover
 * them: service tokens (`grpcurl -H` sends its headers with reflection too;
 * `buf curl` needs `--reflect-header '*'`).
 */
export function reflectionRoutes(
  router: ConnectRouter,
  services: DescService[],
  admission: Pick<Admission, "discoversInternals">,
): void {
  const exposed = [...services, Health, ServerReflection];
  const files = new Map<string, DescFile>();
  for (const service of exposed) collect(service.file, files);
  const registry = createRegistry(...files.values());
  const names = [...new Set(exposed.map((s) => s.typeName))];

  const answer = (req: ServerReflectionRequest): Answer => {
    const { case: kind, value } = req.messageRequest;
    switch (kind) {
      case "listServices":
        return { case: "listServicesResponse", value: { service: names.map((name) => ({ name })) } };
      case "fileByFilename":
        return fileAnswer(files.get(value), `file "${value}"`);
      case "fileContainingSymbol":
        return fileAnswer(fileOfSymbol(registry, value), `symbol "${value}"`);
      case "fileContainingExtension": {
        const extendee = registry.getMessage(value.containingType);
        const extension = extendee && registry.getExtensionFor(extendee, value.extensionNumber);
        return fileAnswer(extension?.file, `extension ${value.extensionNumber} of "${value.containingType}"`);
      }
      case "allExtensionNumbersOfType": {
        if (!registry.getMessage(value)) return error(NOT_FOUND, `type "${value}" not found`);
        const numbers: number[] = [];
        for (const desc of registry)
          if (desc.kind === "extension" && desc.extendee.typeName === value) numbers.push(desc.number);
        return { case: "allExtensionNumbersResponse", value: { baseTypeName: value, extensionNumber: numbers } };
      }
      default:
        return error(INVALID_ARGUMENT, "empty reflection request");
    }
  };

  router.service(ServerReflection, {
    async *serverReflectionInfo(requests, context) {
      const authorization = context.requestHeader.get("authorization");
      // undefined: a token that is not valid.
      const allowed = await admission.discoversInternals(authorization).catch(() => undefined);
      if (!allowed) {
        const code = allowed === false && authorization ? Code.PermissionDenied : Code.Unauthenticated;
        throw new ConnectError("Reflection answers valid service tokens only.", code);
      }
      for await (const req of requests)
        yield { validHost: req.host, originalRequest: req, messageResponse: answer(req) };
    },
  });
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
