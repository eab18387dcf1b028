/** `deno run -A apps/routes/script/testdata/deno-responsiveness.ts`: prints what responsiveness() saw. */
import { denoThreadSpawner } from "#lib/adapters/deno/threads";
import { responsiveness } from "./responsiveness.ts";

console.log(JSON.stringify(await responsiveness(denoThreadSpawner(new URL("../../entries/deno-thread.ts", import.meta.url)))));
