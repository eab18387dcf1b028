/** `deno task dev`: every service under Deno. */
import { denoRuntime } from "../../lib/adapters/deno.ts";
import { startAll } from "./start.ts";

await startAll(denoRuntime());
