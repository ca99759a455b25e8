import { BundledAlertAreasForestCheck } from '../adapters/forest-check/bundled-alert-areas';
import { createGfwForestCheckFromEnv } from '../adapters/forest-check/gfw-forest-check';
import type { ForestCheck } from '../domain/ports';
import { now } from './repos';

/**
 * The forest check (decisions §3, §9): Global Forest Watch when its key is configured
 * (GFW_API_KEY or GFW_API_KEY_SECRET_ARN), otherwise the bundled alert areas (the local stack).
 * Created once per container, so the GFW dataset version lookup is cached.
 */
let forest: ForestCheck | undefined;

export function forestCheck(): ForestCheck {
  forest ??= process.env.GFW_API_KEY || process.env.GFW_API_KEY_SECRET_ARN ? createGfwForestCheckFromEnv({ timeoutMs: 4000 }) : new BundledAlertAreasForestCheck(now);
  return forest;
}
