import type { ToolDescriptor } from "./descriptor.js";

/** The catalogue's files tools. */
export const filesCatalogue: readonly ToolDescriptor[] = [];
