/**
 * A least-recently-used map bounded by the bytes of what it holds (strings
 * count two bytes a character, as V8 may hold them; bytes their length), not by its number of
 * entries: a cache of rendered text holds a few huge entries or many small
 * ones within the same memory. An entry larger than the whole bound is not
 * kept. Map keeps insertion order, so the first key is the least recent.
 */
export class ByteLru<V extends string | Uint8Array = string> {
  private readonly entries = new Map<string, V>();
  private held = 0;

  constructor(private readonly maxBytes: number) {}

  /** The value, marked most recently used. */
  get(key: string): V | undefined {
    const value = this.entries.get(key);
    if (value === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, value);
    return value;
  }

  set(key: string, value: V): void {
    this.delete(key);
    const size = sizeOf(key, value);
    if (size > this.maxBytes) return;
    this.entries.set(key, value);
    this.held += size;
    for (const [oldest, kept] of this.entries) {
      if (this.held <= this.maxBytes) break;
      this.delete(oldest, kept);
    }
  }

  /** Forgets every entry. */
  clear(): void {
    this.entries.clear();
    this.held = 0;
  }

  /** Bytes held (keys and values). */
  get bytes(): number {
    return this.held;
  }

  private delete(key: string, value = this.entries.get(key)): void {
    if (value === undefined) return;
    this.entries.delete(key);
    this.held -= sizeOf(key, value);
  }
}

function sizeOf(key: string, value: string | Uint8Array): number {
  return 2 * key.length + (typeof value === "string" ? 2 * value.length : value.byteLength);
}
