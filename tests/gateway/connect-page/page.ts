// The script of the page the browser test loads (bundled by esbuild): one public and one authenticated RPC of the
// gateway's port, over Connect and over gRPC-Web, as a browser app would call them with @connectrpc/connect-web.
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-web";
import { PasteService } from "../../../gen/pf/community/v1/pastes_pb.js";

declare const location: { hash: string };

/** What one protocol got: the created paste's owner, whether the anonymous read found it, a refusal's code. */
export interface Outcome {
  owner: string;
  read: boolean;
  refused: string;
}

// The gateway's URL and a person's token, in the page's fragment (never sent to the page's server).
const asked = new URLSearchParams(location.hash.slice(1));
const baseUrl = asked.get("gateway") ?? "";
const token = asked.get("token") ?? "";

async function run(protocol: string, transport: Transport): Promise<Outcome> {
  const pastes = createClient(PasteService, transport);
  const draft = { title: `From the browser over ${protocol}`, body: "hello" };
  const { paste } = await pastes.createPaste(draft, { headers: { authorization: `Bearer ${token}` } });
  const read = await pastes.getPaste({ slug: paste?.slug ?? "" });
  const refused = await pastes.createPaste(draft).then(
    () => "answered",
    (error: unknown) => Code[ConnectError.from(error).code],
  );
  return { owner: paste?.owner ?? "", read: read.paste?.id === paste?.id, refused };
}

(globalThis as { outcomes?: Promise<Record<string, Outcome>> }).outcomes = (async () => ({
  connect: await run("Connect", createConnectTransport({ baseUrl })),
  grpcWeb: await run("gRPC-Web", createGrpcWebTransport({ baseUrl })),
}))();
