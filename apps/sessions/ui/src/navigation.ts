/** Views are chosen by the URL hash (`#/templates[/id]`, `#/sessions[/id]`); `#/sessions` by default. */
import { useEffect, useState } from "preact/hooks";

export function useHash(): string {
  const [hash, setHash] = useState(location.hash || "#/sessions");
  useEffect(() => {
    const on = () => setHash(location.hash || "#/sessions");
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return hash;
}

export const go = (hash: string) => (location.hash = hash);
