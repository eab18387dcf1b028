/** Types of bundle.mjs (plain JavaScript: it runs before any TypeScript loader). */
export function bundledEntry(entry: URL): URL | undefined;
export function bundledProcessEntry(entry: URL): Promise<URL | undefined>;
export function forgetBundledEntry(entry: URL): void;
