import { describe, expect, it } from "vitest";
import { declaredMemory } from "../../agent/sandbox/wasm-memory.js";

const assemble = async (wat: string): Promise<Uint8Array> => {
  const { default: loadWabt } = await import("wabt");
  const parsed = (await loadWabt()).parseWat("test.wat", wat, { threads: true });
  try {
    return parsed.toBinary({}).buffer;
  } finally {
    parsed.destroy();
  }
};

const PAGE = 65_536;

// The function sandbox bounds memory by the maximum a module declares: read from its bytes.
describe("a module's declared memory", () => {
  it("is its memory section's limits, in bytes", async () => {
    expect(declaredMemory(await assemble("(module (memory 1 4))"))).toEqual({ min: PAGE, max: 4 * PAGE });
  });

  it("has no maximum when the module declares none", async () => {
    expect(declaredMemory(await assemble("(module (memory 2))"))).toEqual({ min: 2 * PAGE, max: undefined });
  });

  it("is read from an import too, past the imports before it", async () => {
    const wat = `(module
      (import "wasi_snapshot_preview1" "proc_exit" (func (param i32)))
      (import "env" "table" (table 1 2 funcref))
      (import "env" "g" (global i32))
      (import "env" "memory" (memory 3 5)))`;
    expect(declaredMemory(await assemble(wat))).toEqual({ min: 3 * PAGE, max: 5 * PAGE });
  });

  it("is unsupported when shared, absent or more than one", async () => {
    expect(declaredMemory(await assemble("(module (memory 1 2 shared))")).unsupported).toBe("shared memory");
    expect(declaredMemory(await assemble("(module)")).unsupported).toBe("declares 0 memories, not one");
  });
});
