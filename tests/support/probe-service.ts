import { create, createFileRegistry, type DescService } from "@bufbuild/protobuf";
import {
  FileDescriptorProtoSchema,
  MethodOptionsSchema,
  ServiceOptionsSchema,
  type MethodOptions,
  type ServiceOptions,
} from "@bufbuild/protobuf/wkt";

/** One RPC of the probe: its name, options and whether it streams its answer. */
export interface ProbeMethod {
  name: string;
  options?: MethodOptions;
  serverStreaming?: boolean;
}

/**
 * A real service descriptor (`pf.probe.v1.ProbeService`) whose RPCs take and
 * answer an empty message: the kit's interceptors read options from
 * descriptors, so a test declares exactly the options it needs here.
 */
export function probeService(
  methods: ProbeMethod[],
  serviceOptions: ServiceOptions = create(ServiceOptionsSchema),
): DescService {
  const file = create(FileDescriptorProtoSchema, {
    name: "pf/probe/v1/probe.proto",
    package: "pf.probe.v1",
    syntax: "proto3",
    messageType: [{ name: "Nothing" }],
    service: [
      {
        name: "ProbeService",
        options: serviceOptions,
        method: methods.map(({ name, options = create(MethodOptionsSchema), serverStreaming = false }) => ({
          name,
          inputType: ".pf.probe.v1.Nothing",
          outputType: ".pf.probe.v1.Nothing",
          options,
          serverStreaming,
        })),
      },
    ],
  });
  return createFileRegistry(file, () => undefined).getService("pf.probe.v1.ProbeService")!;
}
