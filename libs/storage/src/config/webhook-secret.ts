const STANDARD_SECRET = /^whsec_([A-Za-z0-9+/]+={0,2})$/;

/**
 * The key bytes of a Standard Webhooks signing secret (`whsec_` + base64 of 24 to 64 bytes, as the
 * spec and its libraries generate them), undefined when the text is not one.
 */
export function standardWebhooksKey(secret: string): Buffer | undefined {
  const m = STANDARD_SECRET.exec(secret.trim());
  if (!m || m[1].length % 4 !== 0) return undefined;
  const key = Buffer.from(m[1], 'base64');
  return key.length >= 24 && key.length <= 64 ? key : undefined;
}
