// Imported for its effect, before nest-cli.ts loads NestJS and nest-commander (see lean-load.ts).
import { bundleRxjs } from '@app/boot/lean-load';
import { deferInquirer } from './lean-load';

bundleRxjs();
deferInquirer();
