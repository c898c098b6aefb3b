const UNITS: Record<string, number> = {
  '': 1,
  B: 1,
  K: 1024,
  KB: 1024,
  KIB: 1024,
  M: 1024 ** 2,
  MB: 1024 ** 2,
  MIB: 1024 ** 2,
  G: 1024 ** 3,
  GB: 1024 ** 3,
  GIB: 1024 ** 3,
  T: 1024 ** 4,
  TB: 1024 ** 4,
  TIB: 1024 ** 4,
};

/**
 * A memory size like `2GiB`, `512MiB`, `1.5G`, `4096` (bytes); units are 1024-based (KB = KiB).
 * Throws on anything else (negative, no number, unknown unit).
 */
export function parseByteSize(text: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(text.trim());
  const unit = m ? UNITS[m[2].toUpperCase()] : undefined;
  if (!m || unit === undefined) throw new Error(`must be a size like 2GiB or 512MiB, got ${JSON.stringify(text)}`);
  return Math.floor(Number(m[1]) * unit);
}

/** Bytes as the largest whole-ish unit: `1.5 GiB`, `512 MiB`. */
export function formatByteSize(bytes: number): string {
  for (const [unit, size] of [['TiB', 1024 ** 4], ['GiB', 1024 ** 3], ['MiB', 1024 ** 2], ['KiB', 1024]] as const) {
    if (bytes >= size) return `${Number((bytes / size).toFixed(1))} ${unit}`;
  }
  return `${bytes} B`;
}
