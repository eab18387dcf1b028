/** How ids, times and sizes are shown. */
export const short = (id: string) => id.slice(0, 8);
export const time = (iso?: string) => (iso ? new Date(iso).toLocaleTimeString() : "");
export const mib = (bytes: number) => `${(bytes / 1048576).toFixed(0)} MiB`;
