import * as v from 'valibot';
import { LICENCE_STATUSES } from '../domain/records';
import { DateOnly, Email, GpsSchema, Id, Lat, Lng, maxDecimals, NonEmpty, Phone, PriceUgx } from './schema-parts';

/** Cooperative and farmer registration schemas (re-exported by shared/http/schemas.ts). */

const ManagerSchema = v.strictObject({ name: NonEmpty(120), email: Email, phone: Phone });
const PricesSchema = v.strictObject({ screen18: PriceUgx, screen15: PriceUgx, FAQ: PriceUgx, PB: PriceUgx });

export const CreateCooperativeSchema = v.strictObject({
  cooperative_id: Id,
  name: NonEmpty(200),
  district: NonEmpty(100),
  licence_status: v.picklist(LICENCE_STATUSES),
  licence_expires_at: DateOnly,
  manager: ManagerSchema,
  prices_ugx_per_kg: PricesSchema,
  export_premium_ugx_per_kg: PriceUgx,
});

export const UpdateCooperativeSchema = v.pipe(
  v.strictObject({
    name: v.optional(NonEmpty(200)),
    district: v.optional(NonEmpty(100)),
    licence_status: v.optional(v.picklist(LICENCE_STATUSES)),
    licence_expires_at: v.optional(DateOnly),
    manager: v.optional(ManagerSchema),
    prices_ugx_per_kg: v.optional(PricesSchema),
    export_premium_ugx_per_kg: v.optional(PriceUgx),
  }),
  v.check((o) => Object.values(o).some((x) => x !== undefined), 'at least one field to change is required'),
);

/** A GeoJSON position [lng, lat] in WGS84 degrees, at most 7 decimals each. */
const Position = v.pipe(
  v.array(Lng),
  v.length(2, 'a position is [lng, lat]'),
  v.check((p) => p.length !== 2 || v.is(Lat, p[1]), 'latitude (the second number) must be between -90 and 90 with at most 7 decimals'),
);
/** Rings of 4–5000 positions, at most 50 rings (the outer boundary and its holes). */
const PolygonSchema = v.strictObject({
  type: v.literal('Polygon'),
  coordinates: v.pipe(
    v.array(
      v.pipe(
        v.array(Position),
        v.minLength(4, 'a ring needs at least 4 positions'),
        v.maxLength(5000, 'a ring has at most 5000 positions'),
      ),
    ),
    v.minLength(1),
    v.maxLength(50),
  ),
});

/** A farm's plot: its GPS point, optional polygon and declared area (registration's `farm`; the body of PUT /farmers/{id}/farm). */
export const FarmSchema = v.strictObject({
  gps: GpsSchema,
  polygon: v.optional(PolygonSchema),
  /** Hectares, > 0, at most 10000, at most 4 decimals (1 m²). */
  area_ha: v.pipe(v.number(), v.gtValue(0, 'must be greater than 0'), v.maxValue(10_000), maxDecimals(4)),
});

export const RegisterFarmerSchema = v.strictObject({
  farmer_id: Id,
  full_name: NonEmpty(200),
  cooperative_id: Id,
  phone: v.optional(Phone),
  district: NonEmpty(100),
  farm: FarmSchema,
});
