import type { Provider } from '@nestjs/common';

/** list, validate (owner: storage work) */
export const inspectCommands: Provider[] = [];
