import { randomBytes } from "node:crypto";
import { expect } from "vitest";
import type { TestPlatform } from "../support/platform.js";

/** A creator no other test (or test file sharing NATS) uses, so live events never cross. */
export function creatorId(): string {
  return `usr_${randomBytes(8).toString("hex")}`;
}

/** Mints an overlay token for a creator with the creator's own user token; answers its id and its secret. */
export async function mintOverlayToken(
  t: TestPlatform,
  creator: string,
  scopes: string[],
): Promise<{ id: string; secret: string }> {
  const token = await t.token({ kind: "user", sub: creator });
  const answer = await t.http("POST", "/tips/api/v1/overlay-tokens", { token, body: { scopes, label: "OBS" } });
  expect(answer.status).toBe(201);
  return { id: answer.body.token.id, secret: answer.body.secret };
}

/** The overlay stream's URL with its token (and any other query parameters). */
export function streamUrl(t: TestPlatform, secret: string, query: Record<string, string> = {}): string {
  return `${t.gatewayUrl}/tips/api/v1/stream?${new URLSearchParams({ token: secret, ...query }).toString()}`;
}

/** Records an external tip through the payments half's internal route (it publishes tips.interaction.settled); answers the interaction. */
export async function recordExternalTip(
  t: TestPlatform,
  creator: string,
  options: { minor?: number; message?: string; goalId?: string } = {},
) {
  const token = await t.token({ kind: "service", svc: "streamlabs", caps: ["tips.interaction.record"] });
  const answer = await t.http("POST", "/tips/api/v1/interactions/external", {
    token,
    body: {
      creator,
      provider: "kofi",
      provider_ref: `ref_${randomBytes(6).toString("hex")}`,
      amount: { minor_units: String(options.minor ?? 500), currency: "USD" },
      message: options.message ?? "hello",
      supporter_name: "Ann",
      ...(options.goalId && { goal_id: options.goalId }),
    },
  });
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body.interaction;
}

/** Creates an open goal of a creator with the creator's own user token; answers its id. */
export async function createGoal(t: TestPlatform, creator: string): Promise<string> {
  const token = await t.token({ kind: "user", sub: creator });
  const answer = await t.http("POST", "/tips/api/v1/goals", {
    token,
    body: { title: "Goal", target: { minor_units: "1000", currency: "USD" } },
  });
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body.goal.id;
}
