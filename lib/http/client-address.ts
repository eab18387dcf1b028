/**
 * The address of the caller, as the runtime adapter saw the socket. Node and Deno adapters pass it
 * as `env.clientAddress`; on workerd the platform's `CF-Connecting-IP` is the only source.
 */
import type { Context } from "hono";

export interface ClientAddressEnv {
  clientAddress?: string;
}

export function clientAddress(c: Context): string | undefined {
  const fromAdapter = (c.env as ClientAddressEnv | undefined)?.clientAddress;
  if (typeof fromAdapter === "string") return fromAdapter;
  return c.req.header("cf-connecting-ip") ?? undefined;
}

/** 127.0.0.0/8, ::1 and the IPv4-mapped forms of loopback. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  const a = address.toLowerCase().replace(/^\[|\]$/g, "");
  if (a === "::1" || a === "0:0:0:0:0:0:0:1") return true;
  const v4 = a.startsWith("::ffff:") ? a.slice(7) : a;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}
