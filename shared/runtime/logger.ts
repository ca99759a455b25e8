import { Logger } from '@aws-lambda-powertools/logger';

/**
 * The structured JSON logger (Powertools). Every line carries the service name; HTTP handlers add
 * `request_id` for the life of a request. Personal data (phones, names) is never logged in full.
 */
export const logger = new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'coffee-trace' });
