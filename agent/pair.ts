import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import { PairDeviceResultSchema, type PairDeviceResult } from "../gen/pf/bot/v1/link_service_pb.js";

/**
 * Exchanges a robot's one-time pairing code for this device's id, credential and publish key
 * (`POST /bot/api/v1/devices/pair`). A refusal throws with its status and problem code; neither the code nor any
 * secret is in the message.
 */
export async function pairDevice(url: string, code: string, name: string): Promise<PairDeviceResult> {
  const response = await fetch(new URL("bot/api/v1/devices/pair", url.endsWith("/") ? url : `${url}/`), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ code, name }),
  });
  const body = (await response.json().catch(() => ({}))) as JsonValue;
  if (!response.ok) {
    const problem = body as { code?: string; detail?: string };
    throw new Error(`pairing was refused: ${response.status} ${problem.code ?? ""} ${problem.detail ?? ""}`.trim());
  }
  return fromJson(PairDeviceResultSchema, body, { ignoreUnknownFields: true });
}
