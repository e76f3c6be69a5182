import type { Catalogue } from "../../catalogue/index.js";
import type { ToolDescriptor } from "../../catalogue/descriptor.js";
import type { LiveStatus, ToolStatus } from "../../families/live.js";
import { schemaDocument, toolDocument } from "./documents.js";
import { toolFilter, type ToolQuery } from "./filters.js";

/** A listed tool: its descriptor, its live status and its list entry's JSON (schemas as `$ref`). */
interface Entry {
  tool: ToolDescriptor;
  live: ToolStatus;
  listed: string;
}

const encoder = new TextEncoder();
const listOf = (entries: readonly string[]) => `{"tools":[${entries.join(",")}]}`;

/**
 * The registry's documents, made once from the catalogue and the live status (both fixed for the process):
 * each tool's read and schema as bytes, and the whole list; a filtered list joins the entries it keeps.
 *
 * Lists hold the available tools only, by id: a planned or mirror tool is not listed, since its read, its
 * schema route and its run are all 404 (a list entry whose links answer 404 would only mislead).
 */
export class Registry {
  private readonly entries: Entry[];
  private readonly reads = new Map<string, { tool: Uint8Array; schema: Uint8Array }>();
  private readonly everything: Uint8Array;
  /** The values the family filter takes: every family of the catalogue, planned and mirror tools' included. */
  readonly families: readonly string[];

  constructor(
    private readonly catalogue: Catalogue,
    live: LiveStatus,
  ) {
    const available = catalogue.tools
      .filter((tool) => tool.catalogue === "available")
      .sort((a, b) => (a.id < b.id ? -1 : 1));
    this.entries = available.map((tool) => {
      const status = live.of(tool);
      this.reads.set(tool.id, {
        tool: encoder.encode(JSON.stringify(toolDocument(tool, status, "embedded"))),
        schema: encoder.encode(JSON.stringify(schemaDocument(tool))),
      });
      return { tool, live: status, listed: JSON.stringify(toolDocument(tool, status, "ref")) };
    });
    this.everything = encoder.encode(listOf(this.entries.map((entry) => entry.listed)));
    this.families = [...new Set(catalogue.tools.map((tool) => tool.family))].sort();
  }

  /** tools.tool-list@1 of the tools the filters keep; 400 tools.query.invalid for a bad filter value. */
  list(query: ToolQuery): Uint8Array {
    const keep = toolFilter(query, this.families);
    if (!keep) return this.everything;
    return encoder.encode(listOf(this.entries.filter((each) => keep(each.tool, each.live)).map((each) => each.listed)));
  }

  /** tools.tool@1 with its schemas embedded; 404 tools.tool.not_found (unknown, planned or mirror). */
  tool(id: string): Uint8Array {
    return this.readOf(id).tool;
  }

  /** The tool's schema document; 404 as `tool`. */
  schema(id: string): Uint8Array {
    return this.readOf(id).schema;
  }

  private readOf(id: string) {
    // The catalogue's 404 says which: unknown, planned or mirror.
    return this.reads.get(this.catalogue.available(id).id)!;
  }
}
