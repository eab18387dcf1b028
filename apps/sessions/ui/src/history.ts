/** The REPL input history: `up`/`down` walk it, keeping what was being typed as the newest entry. */
export class InputHistory {
  private items: string[] = [];
  private at = 0;
  private draft = "";
  add(text: string): void {
    if (text.trim() !== "" && this.items.at(-1) !== text) this.items.push(text);
    this.at = this.items.length;
    this.draft = "";
  }
  up(current: string): string | undefined {
    if (this.at === 0) return undefined;
    if (this.at === this.items.length) this.draft = current;
    return this.items[--this.at];
  }
  down(): string | undefined {
    if (this.at >= this.items.length) return undefined;
    this.at++;
    return this.at === this.items.length ? this.draft : this.items[this.at];
  }
}
