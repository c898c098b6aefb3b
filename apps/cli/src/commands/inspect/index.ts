import type { Provider } from '@nestjs/common';
import { ListCommand } from './list.command';
import { ValidateCommand } from './validate.command';
import { DoctorCommand } from './doctor.command';

/** list, validate, doctor (owner: storage work) */
export const inspectCommands: Provider[] = [ListCommand, ValidateCommand, DoctorCommand];
