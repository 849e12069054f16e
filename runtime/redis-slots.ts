/**
 * Redis Cluster hash slots: CRC16 (XMODEM) of a key's hash tag, modulo 16,384. The store needs
 * them to keep a per-slot record (its epoch) in the same slot as the session keys a script touches:
 * a script's keys must all live in one slot, or a cluster refuses it with CROSSSLOT.
 */
export const SLOTS = 16_384;

const TABLE = (() => {
  const t = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i << 8;
    for (let j = 0; j < 8; j++) c = c & 0x8000 ? ((c << 1) ^ 0x1021) & 0xffff : (c << 1) & 0xffff;
    t[i] = c;
  }
  return t;
})();

function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const b of bytes) crc = ((crc << 8) & 0xffff) ^ (TABLE[((crc >> 8) ^ b) & 0xff] as number);
  return crc;
}

/**
 * The slot of a key as Redis computes it: of the text between the first `{` and the next `}` when
 * that is non-empty, else of the whole key.
 */
export function keySlot(key: Uint8Array | string): number {
  const b = typeof key === 'string' ? Buffer.from(key) : key;
  const open = b.indexOf(0x7b);
  if (open >= 0) {
    const close = b.indexOf(0x7d, open + 1);
    if (close > open + 1) return crc16(b.subarray(open + 1, close)) % SLOTS;
  }
  return crc16(b) % SLOTS;
}

let tags: string[] | undefined;

/** A short hash tag that lands in `slot` (`epoch-<n>`, the first such n): found once for all slots. */
export function tagForSlot(slot: number): string {
  if (tags === undefined) {
    const found: string[] = new Array<string>(SLOTS);
    let left = SLOTS;
    for (let n = 0; left > 0; n++) {
      const tag = `epoch-${n}`;
      const s = crc16(Buffer.from(tag)) % SLOTS;
      if (found[s] === undefined) {
        found[s] = tag;
        left--;
      }
    }
    tags = found;
  }
  return tags[slot] as string;
}
