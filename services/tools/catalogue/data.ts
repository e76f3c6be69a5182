import type { ToolDescriptor } from "./descriptor.js";

/** The catalogue's data tools. */
export const dataCatalogue: readonly ToolDescriptor[] = [];
