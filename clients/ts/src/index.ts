import { createConnectTransport } from "@connectrpc/connect-node";
import { platformClient, type PlatformClient, type PlatformClientOptions } from "./platform-client.js";

export * from "./exports.js";

/**
 * Connect clients for every service of the platform, sharing one transport: Connect over HTTP/2 to the RPC port
 * (`baseUrl`, `http://127.0.0.1:8081` under `npm start`) unless `transport` makes another.
 */
export function createPlatformClient(options: PlatformClientOptions): PlatformClient {
  return platformClient(options, (transport) => createConnectTransport({ ...transport, httpVersion: "2" }));
}
