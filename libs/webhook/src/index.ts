export * from './webhook.module';
export * from './webhook.service';
export * from './webhook.providers';
export * from './delivery';
