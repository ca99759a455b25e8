import { namesMatch } from '../../shared/domain/recipient-name';

/** The tolerant name comparison of the recipient name check (docs/api/payouts.md#recipient-name-check). */
describe('namesMatch', () => {
  it.each([
    ['Joseph Wamala', 'Joseph Wamala'],
    ['Joseph Wamala', 'WAMALA JOSEPH'],
    ['Joseph Wamala', 'wamala, joseph'],
    ['Joseph Wamala', 'Joseph K. Wamala'],
    ['Joseph Kato Wamala', 'Wamala Joseph'],
    ['Zoë Nakato', 'ZOE NAKATO'],
    ['Ssemwogerere', 'SSEMWOGERERE'],
  ])('%s ≈ %s', (registered, holder) => {
    expect(namesMatch(registered, holder)).toBe(true);
  });

  it.each([
    ['Joseph Wamala', 'Grace Nakato Ssemwogerere'],
    ['Joseph Wamala', 'Grace Wamala'],
    ['Joseph Wamala', 'Joseph'],
    ['Joseph Wamala', 'Joseph Wamalaa'],
    ['Joseph Wamala', ''],
    ['', ''],
    ['Joseph Joseph', 'Joseph Wamala'],
  ])('%s ≠ %s', (registered, holder) => {
    expect(namesMatch(registered, holder)).toBe(false);
  });
});
