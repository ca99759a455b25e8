// The client's runtime: openapi-fetch with the API's base URL and a bearer token. Its types are
// in ./index.d.ts (hand-written, 3 declarations) over ./api-types.d.ts (generated: `npm run gen:client`).
import createClient from 'openapi-fetch';

/**
 * A typed client of the API: openapi-fetch's `GET`, `POST`, `PUT`, `DELETE` … over the paths of
 * the OpenAPI document. `token` (a JWT, or a function returning one, awaited before every request)
 * is sent as `Authorization: Bearer <token>`; without it requests carry no credentials (the public
 * routes). Every other option goes to openapi-fetch's `createClient` as is.
 */
export function createCoffeeTraceClient({ token, ...options }) {
  const client = createClient(options);
  if (token !== undefined) {
    client.use({
      async onRequest({ request }) {
        const value = typeof token === 'function' ? await token() : token;
        request.headers.set('authorization', `Bearer ${value}`);
        return request;
      },
    });
  }
  return client;
}
