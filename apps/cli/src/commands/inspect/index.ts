import type { Provider } from '@nestjs/common';
import { ListCommand } from './list.command';
import { ValidateCommand } from './validate.command';

/** list, validate (owner: storage work) */
export const inspectCommands: Provider[] = [ListCommand, ValidateCommand];
