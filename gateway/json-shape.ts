/** How wide and deep a JSON body may be, besides its size in bytes. */
export const JSON_SHAPE_LIMITS = { members: 1_000, items: 10_000, depth: 64 } as const;

/**
 * Why a JSON text is too wide or too deep to decode (an object of more than
 * `members` keys, an array of more than `items` values, nesting deeper than
 * `depth`), or undefined. One pass over the characters, before JSON.parse: a
 * body of 90,000 keys costs a scan, not a parse and a decode. The text need not
 * be valid JSON; the parser that runs next judges that.
 */
export function jsonShapeFault(text: string, limits = JSON_SHAPE_LIMITS): string | undefined {
  // Per open container: its count so far and whether it is an object.
  const counts: number[] = [];
  const objects: boolean[] = [];
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // a backslash escapes the next character
      else if (c === 34) inString = false;
      continue;
    }
    if (c === 34) inString = true;
    else if (c === 123 || c === 91) {
      if (counts.length === limits.depth) return `The body nests deeper than ${limits.depth} levels.`;
      counts.push(0);
      objects.push(c === 123);
    } else if (c === 125 || c === 93) {
      counts.pop();
      objects.pop();
    } else if (c === 44 || c === 58) {
      // A comma separates members or items; an object counts its members by their colons.
      const top = counts.length - 1;
      if (top < 0 || (c === 58) !== objects[top]) continue;
      const count = ++counts[top];
      if (objects[top] && count > limits.members)
        return `An object in the body has more than ${limits.members} members.`;
      if (!objects[top] && count >= limits.items) return `An array in the body has more than ${limits.items} items.`;
    }
  }
  return undefined;
}
