import booleanIntersects from '@turf/boolean-intersects';
import { point, polygon as turfPolygon } from '@turf/helpers';
import type { FarmLocation } from '../../domain/farm-geometry';
import type { ForestCheck, ForestCheckResult } from '../../domain/ports/registry';
import alertAreas from './alert-areas.json';

/** EUDR cut-off: deforestation after this date makes a plot ineligible. */
const EUDR_CUTOFF_DATE = '2020-12-31';

interface AlertFeature {
  properties: { name: string; alert_date: string; confidence: string; area_ha: number };
  geometry: { type: 'Polygon'; coordinates: number[][][] };
}

/**
 * Forest check over the bundled GeoJSON of deforestation alert areas (docs/api/registries.md#forest-check): a farm whose
 * point or polygon touches an area with an alert after 2020-12-31 is FLAGGED, otherwise CLEAR.
 * Geometry tests use @turf/boolean-intersects. The dataset name and version are recorded with the
 * result. (The Global Forest Watch adapter implements the same port against the GFW Data API.)
 */
export class BundledAlertAreasForestCheck implements ForestCheck {
  constructor(private readonly now: () => Date = () => new Date()) {}

  async check(farm: FarmLocation): Promise<ForestCheckResult> {
    const shape = farm.polygon ? turfPolygon(farm.polygon.coordinates) : point([farm.gps.lng, farm.gps.lat]);
    const alerts = (alertAreas.features as AlertFeature[])
      .filter((f) => f.properties.alert_date > EUDR_CUTOFF_DATE)
      .filter(
        (f) =>
          booleanIntersects(shape, turfPolygon(f.geometry.coordinates)) ||
          (farm.polygon ? booleanIntersects(point([farm.gps.lng, farm.gps.lat]), turfPolygon(f.geometry.coordinates)) : false),
      )
      .map((f) => ({
        date: f.properties.alert_date,
        confidence: f.properties.confidence,
        area_ha: f.properties.area_ha,
        area_name: f.properties.name,
      }));
    return {
      status: alerts.length > 0 ? 'FLAGGED' : 'CLEAR',
      checked_at: this.now().toISOString(),
      cutoff_date: EUDR_CUTOFF_DATE,
      dataset: alertAreas.dataset,
      alerts,
    };
  }
}
