import type { Client, ClientOptions } from 'openapi-fetch';
import type { paths } from './api-types.js';

export type { components, operations, paths } from './api-types.js';

/** Options of {@link createCoffeeTraceClient}: openapi-fetch's, with the API's base URL required and a bearer token. */
export interface CoffeeTraceClientOptions extends ClientOptions {
  /** The API's base URL, e.g. `https://api.example.org` or `http://127.0.0.1:3000` (the local stack). */
  baseUrl: string;
  /** A JWT sent as `Authorization: Bearer <token>`, or a function giving one (awaited before every request). */
  token?: string | (() => string | Promise<string>);
}

/** openapi-fetch's client over the API's paths: `GET`, `POST`, `PUT`, `DELETE` … typed by the OpenAPI document. */
export type CoffeeTraceClient = Client<paths>;

/** A typed client of the API that sends `token` (when given) as a bearer token on every request. */
export declare function createCoffeeTraceClient(options: CoffeeTraceClientOptions): CoffeeTraceClient;
