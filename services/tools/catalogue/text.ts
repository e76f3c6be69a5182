import type { ToolDescriptor } from "./descriptor.js";

/** The catalogue's text tools. */
export const textCatalogue: readonly ToolDescriptor[] = [];
