import { ArgumentMetadata, Injectable, ValidationPipe } from '@nestjs/common';
import { ApiError } from './api-error';

/** Global pipe: unknown fields → 400, DTOs instantiated; a missing JSON body → 400 `request body is required`. */
@Injectable()
export class ApiValidationPipe extends ValidationPipe {
  constructor() {
    super({
      whitelist: true,
      forbidNonWhitelisted: true,
      transform: true,
      exceptionFactory: (errors) => {
        const messages = errors.flatMap((e) => flatten(e));
        return new ApiError('BAD_REQUEST', messages.join('; ') || 'invalid request');
      },
    });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'body' && metadata.metatype && metadata.metatype !== Object) {
      if (value === undefined || value === null || value === '') throw new ApiError('BAD_REQUEST', 'request body is required');
      if (typeof value !== 'object' || Array.isArray(value)) throw new ApiError('BAD_REQUEST', 'invalid json: body must be a JSON object');
    }
    return super.transform(value, metadata);
  }
}

function flatten(error: { property: string; constraints?: Record<string, string>; children?: any[] }, prefix = ''): string[] {
  const own = Object.values(error.constraints ?? {}).map((m) => (prefix ? `${prefix}.${m}` : m));
  const nested = (error.children ?? []).flatMap((c) => flatten(c, prefix ? `${prefix}.${error.property}` : error.property));
  return [...own, ...nested];
}
