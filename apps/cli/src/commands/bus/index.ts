import type { Provider } from '@nestjs/common';

/** bus post | read | discover (owner: messagebus work) */
export const busCommands: Provider[] = [];
