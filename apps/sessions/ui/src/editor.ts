/**
 * CodeMirror 6 editors (loaded on demand: the lists need none of it): the REPL input (Enter runs, Shift+Enter adds a line, ArrowUp/ArrowDown on
 * the first/last line walk the history) and a plain code editor for JSON documents.
 */
import { defaultKeymap, history, historyKeymap, insertNewlineAndIndent } from "@codemirror/commands";
import { bracketMatching, defaultHighlightStyle, LanguageSupport, LRLanguage, syntaxHighlighting } from "@codemirror/language";
import { parser } from "@lezer/javascript";
import { EditorState, type Extension } from "@codemirror/state";
import { EditorView, keymap, lineNumbers, placeholder } from "@codemirror/view";
import type { InputHistory } from "./history.ts";

/** JavaScript highlighting from the Lezer grammar alone (lang-javascript would add completion and
 * linting, a third of the page's weight, that a REPL line does not need). */
const javascript = () => new LanguageSupport(LRLanguage.define({ parser, languageData: { commentTokens: { line: "//" } } }));

const base: Extension[] = [history(), bracketMatching(), syntaxHighlighting(defaultHighlightStyle), EditorView.lineWrapping];

export interface ReplInput {
  view: EditorView;
  value(): string;
  set(text: string): void;
  focus(): void;
}

export function replInput(parent: HTMLElement, options: { onRun: (text: string) => void; history: InputHistory }): ReplInput {
  const set = (view: EditorView, text: string) => {
    view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text }, selection: { anchor: text.length } });
    return true;
  };
  const view = new EditorView({
    parent,
    state: EditorState.create({
      extensions: [
        keymap.of([
          {
            key: "Enter",
            run: (v) => {
              const text = v.state.doc.toString();
              if (text.trim() === "") return true;
              options.onRun(text);
              return true;
            },
          },
          { key: "Shift-Enter", run: insertNewlineAndIndent },
          {
            key: "ArrowUp",
            run: (v) => {
              const line = v.state.doc.lineAt(v.state.selection.main.head);
              if (line.number !== 1) return false;
              const prev = options.history.up(v.state.doc.toString());
              return prev === undefined ? false : set(v, prev);
            },
          },
          {
            key: "ArrowDown",
            run: (v) => {
              const line = v.state.doc.lineAt(v.state.selection.main.head);
              if (line.number !== v.state.doc.lines) return false;
              const next = options.history.down();
              return next === undefined ? false : set(v, next);
            },
          },
        ]),
        ...base,
        keymap.of([...defaultKeymap, ...historyKeymap]),
        javascript(),
        // The keys are said once, in the hint under the input (views/console.ts).
        placeholder("JavaScript, e.g. 6 * 7"),
        EditorView.contentAttributes.of({ "aria-label": "REPL input", "data-testid": "repl-input" }),
      ],
    }),
  });
  return { view, value: () => view.state.doc.toString(), set: (text) => void set(view, text), focus: () => view.focus() };
}

export interface CodeEditor {
  view: EditorView;
  value(): string;
}

/** A multi-line editor for a JSON document (settings, capability config). */
export function jsonEditor(parent: HTMLElement, doc: string, label: string): CodeEditor {
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc,
      extensions: [
        lineNumbers(),
        ...base,
        keymap.of([...defaultKeymap, ...historyKeymap]),
        javascript(),
        EditorView.contentAttributes.of({ "aria-label": label }),
      ],
    }),
  });
  return { view, value: () => view.state.doc.toString() };
}
