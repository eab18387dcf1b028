/**
 * One nesting limit for every JSON value that comes in (request bodies, stored settings and
 * configs, arguments that cross a thread or the sandbox boundary). Recursive code further on
 * (`JSON.stringify`, structured clone, the sandbox's marshalling) runs out of stack somewhere
 * between 3,000 and 10,000 levels, so a value is refused long before: a small request must never
 * take a process down.
 *
 * Both checks are iterative, so the check itself cannot overflow.
 */
import { CodedError } from "#lib/errors";

/** Deepest nesting of arrays and objects accepted (`[]` and `{}` are depth 1, a scalar 0). */
export const MAX_JSON_DEPTH = 64;

export type JsonDepthErrorCode = "JSON_TOO_DEEP";

export class JsonDepthError extends CodedError<JsonDepthErrorCode> {
  constructor(readonly maxDepth: number) {
    super("JSON_TOO_DEEP", `JSON nested deeper than ${maxDepth} levels`);
  }
}

/** The nesting depth of JSON text, counted without parsing (brackets outside strings). Stops
 * counting at `limit + 1`; the text need not be valid JSON. */
export function jsonTextDepth(text: string, limit = MAX_JSON_DEPTH): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > deepest && (deepest = depth) > limit) return deepest;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return deepest;
}

/** The nesting depth of a value (arrays and plain objects), walked without recursion. Stops at
 * `limit + 1`. */
export function valueDepth(value: unknown, limit = MAX_JSON_DEPTH): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (typeof v !== "object" || v === null) continue;
    const here = d + 1;
    if (here > deepest && (deepest = here) > limit) return deepest;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (typeof child === "object" && child !== null) stack.push([child, here]);
    }
  }
  return deepest;
}

/** Throws JsonDepthError when `value` nests deeper than `maxDepth`. */
export function assertJsonDepth(value: unknown, maxDepth = MAX_JSON_DEPTH): void {
  if (valueDepth(value, maxDepth) > maxDepth) throw new JsonDepthError(maxDepth);
}

/** `JSON.parse`, refusing text nested deeper than `maxDepth` before parsing it (JsonDepthError);
 * bad JSON throws the parser's SyntaxError as usual. */
export function parseJsonBounded(text: string, maxDepth = MAX_JSON_DEPTH): unknown {
  if (jsonTextDepth(text, maxDepth) > maxDepth) throw new JsonDepthError(maxDepth);
  return JSON.parse(text);
}
