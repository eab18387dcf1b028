/** Form helpers: reporting invalid fields instead of blocking silently, and drafts that survive refreshes. */
import { useCallback, useState } from "preact/hooks";
import { ApiFailure } from "./api.ts";
import type { Report } from "./report.ts";

/** The name a form control is shown by: its <label>, else its aria-label. */
function labelOf(el: HTMLInputElement): string {
  return (el.labels?.[0]?.textContent ?? el.getAttribute("aria-label") ?? el.name).replace(/\s+/g, " ").trim();
}

/**
 * Forms are `novalidate`, so an empty or invalid field never makes a button do nothing: it is
 * reported in the page's error banner (and focused). True when the form may be sent.
 */
export function formReady(form: HTMLFormElement, report: Report): boolean {
  const bad = [...form.elements].find((el) => (el as HTMLInputElement).willValidate && !(el as HTMLInputElement).checkValidity()) as
    | HTMLInputElement
    | undefined;
  if (!bad) return true;
  const what = labelOf(bad);
  report(
    new ApiFailure(
      0,
      "REQUIRED",
      bad.validity.valueMissing ? `${what[0]!.toUpperCase()}${what.slice(1)} is empty: fill it in first.` : `${what}: ${bad.validationMessage}`,
    ),
  );
  bad.focus();
  return false;
}

/** A form's state kept in sessionStorage under `key`: what is typed survives the page's own
 * refreshes (its lists poll) and a reload of the tab. */
export function useDraft<T extends Record<string, string | undefined>>(key: string, initial: T): [T, (field: keyof T, value: string) => void] {
  const [draft, setDraft] = useState<T>(() => {
    try {
      return { ...initial, ...(JSON.parse(sessionStorage.getItem(key) ?? "{}") as Partial<T>) };
    } catch {
      return initial;
    }
  });
  const set = useCallback(
    (field: keyof T, value: string) =>
      setDraft((d) => {
        const next = { ...d, [field]: value };
        try {
          sessionStorage.setItem(key, JSON.stringify(next));
        } catch {
          // storage full or off: the state still holds it
        }
        return next;
      }),
    [key],
  );
  return [draft, set];
}

export const valueOf = (e: Event) => (e.target as HTMLInputElement).value;
