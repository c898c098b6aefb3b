'use strict';
// FNV-1a with 64 bits, as 16 hex digits: names that tell things apart (a supervisor's socket, an
// install's code caches) where no one else can write, so no cryptographic strength is needed, and
// node:crypto costs ~6 ms of CPU to load (docs/decisions/fanout-and-capacity.md).
const FNV_OFFSET = 0xcbf29ce484222325n;
const FNV_PRIME = 0x100000001b3n;
const MASK_64 = (1n << 64n) - 1n;

module.exports = function fnv1a64(text) {
  let h = FNV_OFFSET;
  for (const byte of Buffer.from(text)) h = ((h ^ BigInt(byte)) * FNV_PRIME) & MASK_64;
  return h.toString(16).padStart(16, '0');
};
