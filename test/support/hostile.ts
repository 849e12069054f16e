/**
 * Strings that would break out of a JavaScript string literal, comment or script if pasted into
 * generated code, plus names of globals, prototype members and the emitters' own locals: rule text
 * must reach generated code only inside literals (DESIGN: code generation rule 1).
 */
export const HOSTILE: readonly string[] = [
  '"', "'", '\\', '\\"', "\\'", '\\\\', '`', '${process.exit(1)}', '${', '*/', '/*', '//', '-->', '<!--',
  '</script>', '</script><script>process.exit(1)</script>', '\u2028', '\u2029', 'a\u2028b\u2029c',
  '\u0000', '\u0000"', '\uD800', '\uDFFF', '\uDBFF', 'x\uDC00y', '\uD83D\uDE00', '\uDE00\uD83D',
  '"); process.exit(1); ("', "'); process.exit(1); ('", '"]); process.exit(1); //', '}; process.exit(1); {',
  '\\u0022); process.exit(1); (\\u0022', '\r\n', '\n', '\t', '\u001b[31m', '\u007f', '\uFEFF', 'constructor',
  '__proto__', 'toString', 'hasOwnProperty', 'prototype', 'return this', 'f', 'k0', 'Set', 'iadd',
];
