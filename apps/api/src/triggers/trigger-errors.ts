import { TriggerError } from '@app/triggers';
import { ApiError } from '../common/api-error';

/** A TriggerError as the API's error envelope (a route answers its own 401, like the auth hook's). */
export function toApiError(err: unknown): unknown {
  if (!(err instanceof TriggerError)) return err;
  return new ApiError(err.code === 'UNAUTHORIZED' ? 'FORBIDDEN' : err.code, err.message);
}
