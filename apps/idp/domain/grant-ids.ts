/**
 * Grant ids: the key that groups the tokens one grant issued, so that revoking the grant (a
 * reused code or refresh token, RFC 9700 §4.14.2) or ending a session deletes them together.
 * Never shown to clients.
 */

/**
 * The grant of the tokens that live only as long as session `sid` (tokens exchanged for an ID
 * token of it, token-exchange.ts): ending the session deletes that group. Prefixed, so it never
 * meets a random grant id.
 */
export const sessionGrantId = (sid: string) => `session ${sid}`;

/**
 * A grant made in session `sid` (a code issued to a signed-in browser) names the session in its
 * id, so that revoking it also reaches the session's group: the ID tokens of a session whose code
 * or refresh token was replayed may have leaked with them (issue.ts revokeGrant).
 */
export const grantIdInSession = (grantId: string, sid: string) => `${grantId} in ${sid}`;

/** The session a grant was made in (grantIdInSession), if any. */
export function sessionOfGrant(grantId: string): string | undefined {
  const at = grantId.indexOf(" in ");
  return at < 0 ? undefined : grantId.slice(at + " in ".length);
}
