/** A module's linear memory as it declares it, in bytes. */
export interface DeclaredMemory {
  min: number;
  /** Undefined when the module declares no maximum (it could grow to 4 GiB: never run). */
  max?: number;
  /** Shared (threads) or 64-bit memory: never run either. */
  unsupported?: string;
}

const PAGE = 65_536;
const IMPORT_SECTION = 2;
const MEMORY_SECTION = 5;

/**
 * The memories a WebAssembly binary declares (imported or its own), read from its import and memory sections. The
 * function sandbox bounds memory by refusing a module whose maximum exceeds the job's limit, so this is read from
 * the bytes, which WebAssembly.Module's reflection does not expose.
 */
export function declaredMemories(bytes: Uint8Array): DeclaredMemory[] {
  const reader = new Reader(bytes);
  reader.skip(8); // magic and version
  const memories: DeclaredMemory[] = [];
  while (!reader.done()) {
    const id = reader.byte();
    const size = reader.leb();
    const end = reader.offset + size;
    if (id === IMPORT_SECTION) {
      for (let count = reader.leb(); count > 0; count--) {
        reader.skip(reader.leb()); // module name
        reader.skip(reader.leb()); // field name
        const kind = reader.byte();
        if (kind === 0) reader.leb();
        else if (kind === 1) {
          reader.skip(1); // the table's element type
          reader.limits();
        } else if (kind === 2) memories.push(reader.limits());
        else if (kind === 3) reader.skip(2);
        else throw new Error(`unknown import kind ${kind}`);
      }
    } else if (id === MEMORY_SECTION) {
      for (let count = reader.leb(); count > 0; count--) memories.push(reader.limits());
    }
    reader.offset = end;
  }
  return memories;
}

/** The one memory a WASI module runs with; anything else (none, several) is a module the sandbox refuses. */
export function declaredMemory(bytes: Uint8Array): DeclaredMemory {
  const memories = declaredMemories(bytes);
  if (memories.length !== 1) return { min: 0, unsupported: `declares ${memories.length} memories, not one` };
  return memories[0];
}

class Reader {
  offset = 0;
  constructor(private readonly bytes: Uint8Array) {}

  done = () => this.offset >= this.bytes.length;

  byte(): number {
    if (this.offset >= this.bytes.length) throw new Error("truncated module");
    return this.bytes[this.offset++];
  }

  skip(count: number) {
    this.offset += count;
  }

  /** An unsigned LEB128 (up to 64 bits: a 64-bit memory's limits are read to be skipped). */
  leb(): number {
    let value = 0;
    for (let shift = 0; shift < 70; shift += 7) {
      const byte = this.byte();
      value += (byte & 0x7f) * 2 ** shift;
      if (!(byte & 0x80)) return value;
    }
    throw new Error("malformed LEB128");
  }

  limits(): DeclaredMemory {
    const flags = this.byte();
    const min = this.leb() * PAGE;
    const max = flags & 0b1 ? this.leb() * PAGE : undefined;
    if (flags & 0b100) return { min, max, unsupported: "64-bit memory" };
    if (flags & 0b10) return { min, max, unsupported: "shared memory" };
    return { min, max };
  }
}
