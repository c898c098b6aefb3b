import type { Provider } from '@nestjs/common';
import { CompletionCommand } from './completion.command';

/** completion bash|zsh|fish (owner: packaging work) */
export const completionCommands: Provider[] = [CompletionCommand];
