/**
 * A thread entry for node-threads.test.ts: echoes each message, with the `workerData` it started
 * with (node-thread-boot.mjs, the tsx fallback, is given the entry there; a bundle gets none).
 */
import { workerData } from "node:worker_threads";
import { nodeThreadEndpoint } from "../thread-endpoint.ts";

const endpoint = nodeThreadEndpoint<{ n: number }, { n: number; workerData: unknown }>();
endpoint.listen((message: { n: number }) => endpoint.post({ n: message.n + 1, workerData: workerData ?? null }));
