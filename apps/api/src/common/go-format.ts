/** The wire formatting helpers live in @app/storage (go-format.ts); the API's names for them. */
export { formatTime, isZeroWireTime as isZeroTime, goDurationSeconds, parseGoDurationOrUndefined, isTruthyFlag } from '@app/storage';
