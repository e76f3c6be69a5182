import type { ToolDescriptor } from "./descriptor.js";

/** The catalogue's net tools. */
export const netCatalogue: readonly ToolDescriptor[] = [];
