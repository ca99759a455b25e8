import { createGfwForestCheckFromEnv } from '../adapters/forest-check/gfw-forest-check';
import type { ForestCheck } from '../domain/ports/registry';

/**
 * The forest check (docs/api/registries.md#forest-check, docs/api/eudr.md#forest-check): Global Forest Watch (GFW_API_URL, GFW_API_KEY or
 * GFW_API_KEY_SECRET_ARN), created once per container so its dataset version lookup is cached —
 * unless the process put another check in place with `useForestCheck` (the local stack: the
 * bundled alert areas, wired by infra/local so no Lambda bundle carries them).
 */
let forest: ForestCheck | undefined;

/** Puts `check` in place of Global Forest Watch for this process (the local stack's bundled alert areas). */
export function useForestCheck(check: ForestCheck): void {
  forest = check;
}

/** The forest check of this process. */
export function forestCheck(): ForestCheck {
  forest ??= createGfwForestCheckFromEnv({ timeoutMs: 4000 });
  return forest;
}
