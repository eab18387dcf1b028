/** A thread entry for node-threads.test.ts: echoes each message with the URL it runs from. */
import { nodeThreadEndpoint } from "../node-threads.ts";

const endpoint = nodeThreadEndpoint<{ n: number }, { n: number; url: string }>();
endpoint.listen((message: { n: number }) => endpoint.post({ n: message.n + 1, url: import.meta.url }));
