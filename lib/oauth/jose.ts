/**
 * jose for both apps that verify or sign tokens (the identity provider, the route host's bearer
 * authenticator): loaded on first use, because it is the largest import and a service must answer
 * quickly after start, before anything needs a JWT; its small base64url module eagerly.
 */
import { encode as base64urlEncode } from "jose/base64url";

/** Unpadded base64url of bytes (RFC 4648 §5). */
export { base64urlEncode };

let joseModule: Promise<typeof import("jose")> | undefined;
export const loadJose = () => (joseModule ??= import("jose"));

/** Base64url SHA-256 of a string (PKCE S256, DPoP `ath`). */
export async function sha256Base64url(text: string): Promise<string> {
  return base64urlEncode(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text))));
}
