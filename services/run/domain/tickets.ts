import { createHash } from "node:crypto";

/** "The stream ticket is one-use and valid two minutes." */
export const TICKET_TTL_MS = 2 * 60 * 1000;

/** How a ticket is stored: its sha256, never the ticket. */
export function ticketHash(ticket: string): string {
  return createHash("sha256").update(ticket).digest("hex");
}
