import { documentInvalid, schemaCheck, type DocumentCheck } from "../../../kit/documents/json-schema.js";
import type { ToolDescriptor } from "../../catalogue/descriptor.js";
import type { JsonObject } from "../../catalogue/descriptor.js";

/**
 * The input and output checks of every tool the run API serves, compiled once on the kit's ajv when the service
 * starts (a descriptor whose schema ajv refuses fails the start, not a run).
 */
export class ToolSchemas {
  private readonly checks = new Map<string, { input: DocumentCheck; output: DocumentCheck }>();

  constructor(tools: readonly ToolDescriptor[]) {
    for (const tool of tools)
      if (tool.catalogue === "available" && tool.api && tool.input !== false)
        this.checks.set(tool.id, { input: schemaCheck(tool.input), output: schemaCheck(tool.output) });
  }

  /**
   * The input, when it is within the tool's `limits.maxInputBytes` (as JSON text) and valid against its input
   * schema; else 400 tools.input.invalid naming each fault at a JSON pointer.
   */
  input(tool: ToolDescriptor, input: JsonObject): JsonObject {
    const bytes = Buffer.byteLength(JSON.stringify(input));
    const max = tool.limits.maxInputBytes;
    if (bytes > max)
      throw documentInvalid("tools.input.invalid", "input", [
        { pointer: "", message: `is ${bytes} bytes of JSON, more than the ${max} ${tool.id} takes` },
      ]);
    const faults = this.checksOf(tool).input(input);
    if (faults.length > 0) throw documentInvalid("tools.input.invalid", "input", faults, `${tool.id} input`);
    return input;
  }

  /** Throws when a tool answered an output its schema refuses: the tool's bug, never the caller's. */
  output(tool: ToolDescriptor, output: JsonObject): JsonObject {
    const [fault] = this.checksOf(tool).output(output);
    if (fault) throw new Error(`${tool.id} answered an output its schema refuses: ${fault.pointer} ${fault.message}`);
    return output;
  }

  private checksOf(tool: ToolDescriptor) {
    const checks = this.checks.get(tool.id);
    if (!checks) throw new Error(`${tool.id} is not a tool the run API serves`);
    return checks;
  }
}
