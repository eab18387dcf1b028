/**
 * The native module `httpmod:host` (script-sandbox.ts installs it): every function but `claim`
 * takes the key `claim` returned, and copies its data to the host, which validates it.
 */
declare module "httpmod:host" {
  export function claim(): string;
  export function route(key: string, data: object): void;
  export function mount(key: string, data: object): void;
  export function static(key: string, data: object): void;
  export function staticAssets(key: string, data: object): void;
  export function bytes(key: string, data: Uint8Array): void;
}
