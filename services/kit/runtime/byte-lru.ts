import { Lru } from "./lru.js";

/**
 * A least-recently-used map bounded by the bytes of what it holds (strings count two bytes a character, as V8 may
 * hold them; bytes their length), not by its number of entries: a cache of rendered text holds a few huge entries or
 * many small ones within the same memory. An entry larger than the whole bound is not kept.
 */
export class ByteLru<V extends string | Uint8Array = string> extends Lru<V> {
  constructor(maxBytes: number) {
    super({ maxWeight: maxBytes, weigh: sizeOf, refuseOversized: true });
  }

  /** Bytes held (keys and values). */
  get bytes(): number {
    return this.weight;
  }
}

function sizeOf(value: string | Uint8Array, key: string): number {
  return 2 * key.length + (typeof value === "string" ? 2 * value.length : value.byteLength);
}
