import { create, createFileRegistry, type DescService } from "@bufbuild/protobuf";
import {
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FileDescriptorProtoSchema,
  MethodOptionsSchema,
  ServiceOptionsSchema,
  type MethodOptions,
  type ServiceOptions,
} from "@bufbuild/protobuf/wkt";

/** One RPC of the probe: its name, options and whether it streams its answer, or takes an upload. */
export interface ProbeMethod {
  name: string;
  options?: MethodOptions;
  serverStreaming?: boolean;
  /** Takes a stream of `Upload` messages (a client-streaming upload RPC) instead of one `Nothing`. */
  upload?: boolean;
}

const { OPTIONAL } = FieldDescriptorProto_Label;
const { STRING, BYTES } = FieldDescriptorProto_Type;

/**
 * A real service descriptor (`pf.probe.v1.ProbeService`) whose RPCs take and
 * answer an empty message: the kit's interceptors read options from
 * descriptors, so a test declares exactly the options it needs here. An
 * upload RPC takes `Upload`: a path variable `id`, a form field `note`, a
 * file's `name` and `content_type`, and its bytes in `chunk`.
 */
export function probeService(
  methods: ProbeMethod[],
  serviceOptions: ServiceOptions = create(ServiceOptionsSchema),
): DescService {
  const file = create(FileDescriptorProtoSchema, {
    name: "pf/probe/v1/probe.proto",
    package: "pf.probe.v1",
    syntax: "proto3",
    messageType: [
      { name: "Nothing" },
      {
        name: "Upload",
        field: [
          { name: "id", number: 1, type: STRING, label: OPTIONAL, jsonName: "id" },
          { name: "note", number: 2, type: STRING, label: OPTIONAL, jsonName: "note" },
          { name: "name", number: 3, type: STRING, label: OPTIONAL, jsonName: "name" },
          { name: "content_type", number: 4, type: STRING, label: OPTIONAL, jsonName: "contentType" },
          { name: "chunk", number: 5, type: BYTES, label: OPTIONAL, jsonName: "chunk" },
        ],
      },
    ],
    service: [
      {
        name: "ProbeService",
        options: serviceOptions,
        method: methods.map(
          ({ name, options = create(MethodOptionsSchema), serverStreaming = false, upload = false }) => ({
            name,
            inputType: upload ? ".pf.probe.v1.Upload" : ".pf.probe.v1.Nothing",
            outputType: ".pf.probe.v1.Nothing",
            options,
            serverStreaming,
            clientStreaming: upload,
          }),
        ),
      },
    ],
  });
  return createFileRegistry(file, () => undefined).getService("pf.probe.v1.ProbeService")!;
}
