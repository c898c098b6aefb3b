import type { Provider } from '@nestjs/common';

/** serve and the 'server …' HTTP client group; also backs 'conductor <sub>' (owner: server work) */
export const serverCommands: Provider[] = [];
