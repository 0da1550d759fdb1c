/**
 * Rust's `str::escape_debug`: `\t \r \n \\ \' \"` and `\0` escaped; characters
 * that Rust does not consider printable (controls, format characters,
 * separators other than the ASCII space, private use, unassigned, surrogates)
 * as `\u{hex}`; a grapheme extender is escaped only at the start of the text.
 */
let tables: { nonPrintable: RegExp; graphemeExtend: RegExp } | undefined;

/** Compiled on first use: the Unicode property tables cost start-up time. */
function unicode() {
  tables ??= {
    nonPrintable: /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u,
    graphemeExtend: /\p{Grapheme_Extend}/u,
  };
  return tables;
}

const SIMPLE: Readonly<Record<string, string>> = {
  '\0': '\\0', '\t': '\\t', '\r': '\\r', '\n': '\\n', '\\': '\\\\', "'": "\\'", '"': '\\"',
};

export function escapeDebug(text: string): string {
  if (/^[\x20-\x7e]*$/.test(text) && !/['"\\]/.test(text)) return text;
  let out = '';
  let first = true;
  for (const ch of text) {
    const simple = SIMPLE[ch];
    if (simple !== undefined) out += simple;
    else if (ch > '~' || ch < ' ') {
      const u = unicode();
      out += (u.nonPrintable.test(ch) || (first && u.graphemeExtend.test(ch))) ? `\\u{${ch.codePointAt(0)!.toString(16)}}` : ch;
    } else out += ch;
    first = false;
  }
  return out;
}

