import type { Provider } from '@nestjs/common';
import { AnswerCommand } from './answer.command';
import { AskCommand } from './ask.command';

/** ask, answer (needs-input, #17) */
export const needsInputCommands: Provider[] = [AskCommand, AnswerCommand];
