// A context index as two readers, two databases or two deployments must agree on it: record ids differ between
// them (a move, an import, a restore gives rows new ids), a restore registers devices again (`@who/device` reads
// `@who`), and the header's clock may pass a minute between two reads; everything else must not differ.
export const comparableContext = (text: string): string =>
  text
    .replace(/^(# cairn memory · .*) · [^·\n]+$/m, '$1 · <now>')
    .replace(/^(S|P)?\d+(?= )/gm, '$1N')
    .replace(/#\d+/g, '#N')
    .replace(/(@[A-Za-z0-9._-]+)\/[A-Za-z0-9._-]+/g, '$1');
