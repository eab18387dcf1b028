/**
 * Types for the sandbox-side scripts (bootstrap.js, prelude.js, loader.js): the built-ins the
 * bootstrap captures before any sandboxed code runs and hands to the other helpers, so sandboxed
 * code patching `JSON` or `Array.prototype` cannot change what the helpers do.
 */

/** `uncurry(f)(self, ...args)` is `f.call(self, ...args)` without looking `call` up again. */
export type Uncurry = <T, A extends unknown[], R>(fn: (this: T, ...args: A) => R) => (self: T, ...args: A) => R;

/** Arguments of host functions are copied (see marshal.ts); `require` resolves from `importer`. */
export type Require = (specifier: string, importer?: string) => unknown;

export interface Intrinsics {
  O: ObjectConstructor;
  S: StringConstructor;
  N: NumberConstructor;
  JSONs: typeof JSON.stringify;
  uncurry: Uncurry;
  ownKeys: typeof Reflect.ownKeys;
  getDesc: typeof Object.getOwnPropertyDescriptor;
  getProto: typeof Object.getPrototypeOf;
  objProto: object;
  errProto: object;
  objToString: typeof Object.prototype.toString;
  fnToString: typeof Function.prototype.toString;
  isArray: typeof Array.isArray;
  join: (this: unknown[], separator?: string) => string;
  push: (this: unknown[], ...items: unknown[]) => number;
  pop: (this: unknown[]) => unknown;
  aIndexOf: (this: unknown[], item: unknown) => number;
  slice: typeof String.prototype.slice;
  replace: (this: string, pattern: RegExp, replacement: string | ((match: string) => string)) => string;
  sIndexOf: typeof String.prototype.indexOf;
  test: typeof RegExp.prototype.test;
  reStr: typeof RegExp.prototype.toString;
  symStr: (this: symbol) => string;
  dateIso: typeof Date.prototype.toISOString;
  mapEntries: (this: Map<unknown, unknown>) => IterableIterator<[unknown, unknown]>;
  mapSize: (this: Map<unknown, unknown>) => number;
  setValues: (this: Set<unknown>) => IterableIterator<unknown>;
  setSize: (this: Set<unknown>) => number;
  isView: typeof ArrayBuffer.isView;
  abSlice: (this: ArrayBufferLike, begin?: number, end?: number) => ArrayBuffer;
  taTag: (this: ArrayBufferView) => string;
  taLength: (this: ArrayBufferView) => number;
  abByteLength: (this: ArrayBuffer) => number;
  TypeErr: TypeErrorConstructor;
  PromiseC: PromiseConstructor;
  parseInt: typeof Number.parseInt;
  parseFloat: typeof Number.parseFloat;
  defineProp: typeof Object.defineProperty;
  create: typeof Object.create;
  assign: typeof Object.assign;
  hasOwnProperty: typeof Object.prototype.hasOwnProperty;
  req: Require;
}
