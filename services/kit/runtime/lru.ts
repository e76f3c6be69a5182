/**
 * A least-recently-used map bounded by its number of entries and, with a weight per entry, by their total weight
 * (bytes of rendered text, files of a manifest). Map keeps insertion order, so the first key is the least recent.
 * An entry weighing more than the whole bound is kept alone (it is being used) unless `refuseOversized`.
 */
export class Lru<V> {
  private readonly entries = new Map<string, V>();
  private held = 0;

  constructor(
    private readonly bounds: {
      maxEntries?: number;
      maxWeight?: number;
      weigh?: (value: V, key: string) => number;
      refuseOversized?: boolean;
    },
  ) {}

  /** The value, marked most recently used. */
  get(key: string): V | undefined {
    const value = this.entries.get(key);
    if (value === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, value);
    return value;
  }

  set(key: string, value: V): void {
    const { maxEntries = Infinity, maxWeight = Infinity, refuseOversized = false } = this.bounds;
    this.delete(key);
    const weight = this.weightOf(value, key);
    if (refuseOversized && weight > maxWeight) return;
    this.entries.set(key, value);
    this.held += weight;
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= maxEntries && this.held <= maxWeight) break;
      if (oldest === key) break;
      this.delete(oldest);
    }
  }

  delete(key: string): void {
    const value = this.entries.get(key);
    if (value === undefined) return;
    this.entries.delete(key);
    this.held -= this.weightOf(value, key);
  }

  /** Forgets every entry. */
  clear(): void {
    this.entries.clear();
    this.held = 0;
  }

  /** The total weight held. */
  get weight(): number {
    return this.held;
  }

  private weightOf(value: V, key: string): number {
    return this.bounds.weigh?.(value, key) ?? 0;
  }
}
