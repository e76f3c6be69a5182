/**
 * Headers for calls that never leave the process: the same interface as the
 * fetch Headers, without its per-call validation and normalisation (about a
 * microsecond and a half per request on the gateway's hot path). Names are
 * kept lowercase; values are taken as given, since nothing here is sent on a wire.
 */
export class PlainHeaders implements Headers {
  readonly #fields = new Map<string, string>();

  constructor(init?: ConstructorParameters<typeof Headers>[0]) {
    if (init === undefined) return;
    if (init instanceof Headers || Array.isArray(init)) {
      for (const [name, value] of init as Iterable<[string, string]>) this.append(name, value);
    } else {
      for (const name in init) this.append(name, (init as Record<string, string>)[name]);
    }
  }

  append(name: string, value: string): void {
    const key = name.toLowerCase();
    const current = this.#fields.get(key);
    this.#fields.set(key, current === undefined ? value : `${current}, ${value}`);
  }

  delete(name: string): void {
    this.#fields.delete(name.toLowerCase());
  }

  get(name: string): string | null {
    return this.#fields.get(name.toLowerCase()) ?? null;
  }

  getSetCookie(): string[] {
    const cookie = this.#fields.get("set-cookie");
    return cookie === undefined ? [] : [cookie];
  }

  has(name: string): boolean {
    return this.#fields.has(name.toLowerCase());
  }

  set(name: string, value: string): void {
    this.#fields.set(name.toLowerCase(), value);
  }

  forEach(callback: (value: string, name: string, parent: Headers) => void, thisArg?: unknown): void {
    for (const [name, value] of this.#fields) callback.call(thisArg, value, name, this as Headers);
  }

  entries(): MapIterator<[string, string]> {
    return this.#fields.entries();
  }

  keys(): MapIterator<string> {
    return this.#fields.keys();
  }

  values(): MapIterator<string> {
    return this.#fields.values();
  }

  [Symbol.iterator](): MapIterator<[string, string]> {
    return this.entries();
  }
}
