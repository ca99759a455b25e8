/**
 * The base URL a caller used, from the Host / X-Forwarded-* headers and API Gateway's stage
 * prefix, for self-links in documents.
 */
export function serverBaseUrl(headers: Record<string, string>, stagePrefix = ''): string {
  const host = headers['x-forwarded-host'] ?? headers.host ?? '127.0.0.1';
  const proto = headers['x-forwarded-proto'] ?? (host.startsWith('127.0.0.1') || host.startsWith('localhost') ? 'http' : 'https');
  return `${proto}://${host}${stagePrefix}`;
}
