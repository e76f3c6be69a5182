import { createConnectTransport } from "@connectrpc/connect-web";
import { platformClient, type PlatformClient, type PlatformClientOptions } from "./platform-client.js";

export * from "./exports.js";

/**
 * Connect clients for every service of the platform in a browser (the package's `browser` entry), sharing one
 * transport: Connect over fetch to the gateway's URL (`baseUrl`), which serves the public and first-party RPCs,
 * unless `transport` makes another (`createGrpcWebTransport`).
 */
export function createPlatformClient(options: PlatformClientOptions): PlatformClient {
  return platformClient(options, createConnectTransport);
}
