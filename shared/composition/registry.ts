import { BundledAlertAreasForestCheck } from '../adapters/forest-check/bundled-alert-areas';
import { now } from './repos';

/** The forest check used at registration (decisions §3). */
export const forestCheck = () => new BundledAlertAreasForestCheck(now);
