// Imported for its effect, before nest-cli.ts loads NestJS and nest-commander (see lean-load.ts).
import { bundleRxjs, deferInquirer } from './lean-load';

bundleRxjs();
deferInquirer();
