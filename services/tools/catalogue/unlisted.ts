import type { ToolDescriptor } from "./descriptor.js";

/** The catalogue's unlisted tools. */
export const unlistedCatalogue: readonly ToolDescriptor[] = [];
