import { problem } from "../../kit/handler/problem.js";
import { dataCatalogue } from "./data.js";
import type { ToolDescriptor } from "./descriptor.js";
import { filesCatalogue } from "./files.js";
import { netCatalogue } from "./net.js";
import { textCatalogue } from "./text.js";
import { unlistedCatalogue } from "./unlisted.js";

/** Every tool the catalogue lists, planned and mirror ones included (each family's file declares its own). */
const TOOLS: readonly ToolDescriptor[] = [
  ...textCatalogue,
  ...dataCatalogue,
  ...filesCatalogue,
  ...netCatalogue,
  ...unlistedCatalogue,
];

/** The catalogue: the tools by id. */
export class Catalogue {
  readonly tools: readonly ToolDescriptor[] = TOOLS;
  private readonly byId = new Map(TOOLS.map((tool) => [tool.id, tool]));

  /** An available tool, or 404 tools.tool.not_found whose detail says whether it is unknown, planned or a mirror. */
  available(id: string): ToolDescriptor {
    const tool = this.byId.get(id);
    if (tool?.catalogue === "available") return tool;
    const which = tool === undefined ? "unknown" : tool.catalogue;
    const detail =
      which === "unknown"
        ? `No tool is called "${id}".`
        : which === "planned"
          ? `The tool "${id}" is planned and does not run yet.`
          : `The tool "${id}" is a mirror of another site's and does not run here.`;
    throw problem(404, "tools.tool.not_found", detail, { tool: id, which });
  }
}
