/** "The stream ticket is one-use and valid two minutes." */
export const TICKET_TTL_MS = 2 * 60 * 1000;
