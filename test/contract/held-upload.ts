/**
 * A request whose body the client never finishes: the head declares `Content-Length: length`, a
 * few bytes of body follow, and the client keeps its side open (no more bytes, no FIN) until an
 * answer comes. `answeredWhileHeld` says the answer arrived while the body was still held open: the
 * order that shows a host refused without waiting for (or reading) the body. Not a test file.
 */
import { connect } from "node:net";
import { expect } from "vitest";

export interface HeldUpload {
  /** The answer's status (0: none came). */
  status: number;
  /** The answer came before the client let go of the body. */
  answeredWhileHeld: boolean;
  /** The answer: its head and body. */
  received: string;
}

/** How long the client holds the body open with no answer before it gives up (not a latency bound:
 * a host that waits for the body never answers before this). */
const GIVE_UP_MS = 20_000;

export function heldUpload(port: number, path: string, length: number, headers: Record<string, string> = {}): Promise<HeldUpload> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: "127.0.0.1", allowHalfOpen: true });
    let received = "";
    let held = true;
    let answered = false;
    socket.on("data", (d) => {
      received += d.toString("latin1");
      const final = received.replace(/^HTTP\/1\.1 100 [^\r]*\r\n(?:[^\r]+\r\n)*\r\n/, ""); // past a 100 Continue
      const head = /^HTTP\/1\.1 (\d{3})([^]*?)\r\n\r\n/.exec(final);
      // The whole answer: its head, and its body when the head gives a length.
      const length = head && /\r\ncontent-length: *(\d+)/i.exec(head[2]!);
      if (!answered && head && (!length || final.length - head[0].length >= Number(length[1]))) {
        answered = true;
        const status = Number(head[1]);
        socket.destroy();
        resolve({ status, answeredWhileHeld: held, received });
      }
    });
    socket.on("error", () => {});
    socket.on("close", () => {
      if (!answered) resolve({ status: 0, answeredWhileHeld: false, received });
    });
    const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("");
    socket.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n${extra}\r\n{"a":`);
    setTimeout(() => {
      held = false;
      socket.destroy();
    }, GIVE_UP_MS).unref();
  });
}

/** The host answered `status` while the client still held its body open. */
export function expectRefusedWhileHeld(held: HeldUpload, status: number): void {
  expect(held.status, held.received.slice(0, 300)).toBe(status);
  expect(held.answeredWhileHeld).toBe(true);
  if (status === 413) expect(held.received).toMatch(/"code":"BODY_TOO_LARGE"/);
}
