/**
 * Cheap looks at source text before it is handed to QuickJS.
 */

/** REPL/script input that uses `await` is evaluated as an async global script (QuickJS
 * `JS_EVAL_FLAG_ASYNC`), which allows top-level await and still declares into the global scope.
 * A false positive (the word in a string or an inner async function) is harmless. */
export function mayUseAwait(code: string): boolean {
  return code.includes("await") && /\bawait\b/.test(code);
}

/**
 * The QuickJS parser recurses on the host's native stack about 1.5 KiB per bracket level and
 * does not see it coming: ~600 nested brackets overflow the host stack instead of raising a
 * SyntaxError. Inputs nested deeper than this are refused before parsing.
 */
export const MAX_NESTING = 256;

/** Deepest bracket nesting, skipping strings, template text and comments (regex literals are
 * not recognised; they can only make the count slightly off). */
export function nestingDepth(code: string): number {
  let depth = 0;
  let max = 0;
  // Template literal nesting: depth at which each open `${` started.
  const templates: number[] = [];
  const n = code.length;
  let i = 0;
  while (i < n) {
    const c = code.charCodeAt(i);
    switch (c) {
      case 40: // (
      case 91: // [
      case 123: // {
        if (++depth > max) max = depth;
        i++;
        break;
      case 41: // )
      case 93: // ]
        depth--;
        i++;
        break;
      case 125: // }
        if (templates.length > 0 && templates[templates.length - 1] === depth) {
          templates.pop();
          depth--;
          i = skipTemplate(code, i + 1, templates, depth);
          if (templates.length > 0 && templates[templates.length - 1] === depth + 1) {
            depth++; // skipTemplate stopped at a new `${`
            if (depth > max) max = depth;
          }
        } else {
          depth--;
          i++;
        }
        break;
      case 34: // "
      case 39: // '
        i = skipQuoted(code, i + 1, c);
        break;
      case 96: // `
        i = skipTemplate(code, i + 1, templates, depth);
        if (templates.length > 0 && templates[templates.length - 1] === depth + 1) {
          depth++;
          if (depth > max) max = depth;
        }
        break;
      case 47: // /
        if (code.charCodeAt(i + 1) === 47) {
          const e = code.indexOf("\n", i + 2);
          i = e < 0 ? n : e + 1;
        } else if (code.charCodeAt(i + 1) === 42) {
          const e = code.indexOf("*/", i + 2);
          i = e < 0 ? n : e + 2;
        } else i++;
        break;
      default:
        i++;
    }
  }
  return max;
}

function skipQuoted(code: string, i: number, quote: number): number {
  const n = code.length;
  while (i < n) {
    const c = code.charCodeAt(i);
    if (c === 92) i += 2;
    else if (c === quote || c === 10) return i + 1;
    else i++;
  }
  return n;
}

/** Skips template text; at `${` pushes the new depth (depth + 1) and returns after it. */
function skipTemplate(code: string, i: number, templates: number[], depth: number): number {
  const n = code.length;
  while (i < n) {
    const c = code.charCodeAt(i);
    if (c === 92) i += 2;
    else if (c === 96) return i + 1;
    else if (c === 36 && code.charCodeAt(i + 1) === 123) {
      templates.push(depth + 1);
      return i + 2;
    } else i++;
  }
  return n;
}
