import type { Sse } from '@nestjs/common';
import { SSE_MAX_PENDING_CHARS } from '@app/streams';

/** Options of every @Sse route: the drop-and-resync limit of libs/streams/src/resync.ts. */
export const SSE_OPTIONS: Parameters<typeof Sse>[1] = { maxPendingDataLength: SSE_MAX_PENDING_CHARS };
