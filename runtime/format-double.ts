/**
 * The canonical decimal form of a double ([OAR-COPY-10]), shared by copy rendering and the
 * tool-call fingerprint's canonical JSON ([OAR-FACT-28]).
 *
 * ECMAScript's Number-to-string already yields the shortest significand that round-trips, choosing
 * the closest (V8 implements the recommended tie-breaking); what remains is to expand exponent
 * notation into ordinary decimal notation and to append `.0` to integral values.
 */
export function formatDouble(x: number): string {
  if (x === 0) return '0.0'; // both signed zeroes
  const neg = x < 0;
  const s = (neg ? -x : x).toString();
  const e = s.indexOf('e');
  let out: string;
  if (e === -1) {
    out = s.includes('.') ? s : s + '.0';
  } else {
    const mantissa = s.slice(0, e);
    const exp = Number(s.slice(e + 1));
    const dot = mantissa.indexOf('.');
    const digits = dot === -1 ? mantissa : mantissa.slice(0, dot) + mantissa.slice(dot + 1);
    const pointAt = (dot === -1 ? mantissa.length : dot) + exp; // position of the decimal point
    if (pointAt <= 0) out = '0.' + '0'.repeat(-pointAt) + digits;
    else if (pointAt >= digits.length) out = digits + '0'.repeat(pointAt - digits.length) + '.0';
    else out = digits.slice(0, pointAt) + '.' + digits.slice(pointAt);
  }
  return neg ? '-' + out : out;
}
