/**
 * Personal data as shown in responses and notifications (docs/security.md#personal-data): a farmer's phone is
 * never returned in full. `+256712345123` → `+256 7•• ••• 123`.
 */
export function maskPhone(e164: string): string {
  const national = e164.replace(/^\+256/, '');
  if (national.length < 4) return '+256 •••';
  return `+256 ${national[0]}•• ••• ${national.slice(-3)}`;
}
