// The part of marked-terminal's API that Folio uses (the package ships no types; the DefinitelyTyped
// ones pin an older marked).
declare module 'marked-terminal' {
  import type { MarkedExtension } from 'marked';
  export interface TerminalRendererOptions {
    width?: number;
    reflowText?: boolean;
    showSectionPrefix?: boolean;
    tab?: number | string;
    emoji?: boolean;
  }
  export function markedTerminal(options?: TerminalRendererOptions, highlightOptions?: object): MarkedExtension;
}
