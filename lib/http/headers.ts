/**
 * Editing a response's headers wherever it came from: a Response the app made has mutable
 * headers; one from `fetch()`, `Response.redirect` or a service binding has immutable ones, and
 * gets a copy that can carry the edit.
 */
export function withEditedHeaders(response: Response, edit: (headers: Headers) => void): Response {
  try {
    edit(response.headers);
    return response;
  } catch {
    const copy = new Response(response.body, response);
    edit(copy.headers);
    return copy;
  }
}
