/**
 * Posting lists: ascending document numbers in typed arrays. A list grows at its end only (a document's every
 * version gets a new, higher number), so it stays sorted without a sort; set operations merge in one pass.
 */
export class Postings {
  private ids = new Uint32Array(4);
  private size = 0;

  add(id: number): void {
    if (this.size === this.ids.length) {
      const grown = new Uint32Array(this.ids.length * 2);
      grown.set(this.ids);
      this.ids = grown;
    }
    this.ids[this.size++] = id;
  }

  get length(): number {
    return this.size;
  }

  /** The numbers, ascending (a view: valid until the next add). */
  view(): Uint32Array {
    return this.ids.subarray(0, this.size);
  }
}

/** Numbers in both. */
export function intersect(a: Uint32Array, b: Uint32Array): Uint32Array {
  if (a.length > b.length) [a, b] = [b, a];
  const out = new Uint32Array(a.length);
  let n = 0;
  let j = 0;
  for (let i = 0; i < a.length && j < b.length; i++) {
    const x = a[i];
    // A short list against a long one: gallop the long one forward.
    if (b[j] < x) {
      let step = 1;
      while (j + step < b.length && b[j + step] < x) step *= 2;
      let low = j + (step >> 1);
      let high = Math.min(j + step, b.length);
      while (low < high) {
        const mid = (low + high) >> 1;
        if (b[mid] < x) low = mid + 1;
        else high = mid;
      }
      j = low;
    }
    if (j < b.length && b[j] === x) out[n++] = x;
  }
  return out.subarray(0, n);
}

/** Numbers in either. */
export function union(a: Uint32Array, b: Uint32Array): Uint32Array {
  const out = new Uint32Array(a.length + b.length);
  let i = 0;
  let j = 0;
  let n = 0;
  while (i < a.length && j < b.length) {
    if (a[i] < b[j]) out[n++] = a[i++];
    else if (b[j] < a[i]) out[n++] = b[j++];
    else ((out[n++] = a[i++]), j++);
  }
  while (i < a.length) out[n++] = a[i++];
  while (j < b.length) out[n++] = b[j++];
  return out.subarray(0, n);
}

/** Numbers in a and not in b. */
export function difference(a: Uint32Array, b: Uint32Array): Uint32Array {
  const out = new Uint32Array(a.length);
  let j = 0;
  let n = 0;
  for (let i = 0; i < a.length; i++) {
    while (j < b.length && b[j] < a[i]) j++;
    if (j >= b.length || b[j] !== a[i]) out[n++] = a[i];
  }
  return out.subarray(0, n);
}
