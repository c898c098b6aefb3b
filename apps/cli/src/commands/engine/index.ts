import type { Provider } from '@nestjs/common';

/** task, job, stop, resume, output, watch, status, gc, wrap, shell-setup (owner: runner work) */
export const engineCommands: Provider[] = [];
