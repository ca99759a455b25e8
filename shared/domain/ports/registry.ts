/**
 * Ports: Cooperatives and farmers: their store, the national farmer registry and the forest check
 * (docs/api/registries.md).
 * Adapters in `shared/adapters/<system>/` implement them; tests hand in fakes or the local components.
 * Money is integers: `*_usd_micro` is micro-USD(C) (6 decimals), `*_ugx` whole shillings.
 */

import type { FarmLocation } from '../farm-geometry';
import type { Cooperative, FarmChange, Farmer, Job, PhoneChange } from '../records';

/** Result of a forest check of a farm location (docs/api/registries.md#forest-check, docs/api/eudr.md#forest-check). */
export interface ForestCheckResult {
  status: 'CLEAR' | 'FLAGGED';
  checked_at: string;
  cutoff_date: string;
  dataset: { name: string; version: string };
  alerts: Array<{ date: string; confidence: string; area_ha: number }>;
}

export interface ForestCheck {
  check(farm: FarmLocation): Promise<ForestCheckResult>;
}

/** A registration stored while the national registry did not answer, and the job that reports it. */
export interface PendingNationalCheck {
  farmer_id: string;
  job_id: string;
  registered_at: string;
}

/** Cooperatives, farmers and the cooperative holding balance (docs/api/registries.md#cooperatives-farmers-and-the-forest-check). */
export interface RegistryStore {
  /** Errors: COOPERATIVE_ALREADY_EXISTS (409) when the id is taken. */
  createCooperative(c: Cooperative): Promise<void>;
  getCooperative(id: string): Promise<Cooperative | null>;
  /** Applies the changed fields. Errors: COOPERATIVE_NOT_FOUND (404). */
  updateCooperative(id: string, patch: Partial<Omit<Cooperative, 'cooperative_id' | 'created_at'>>): Promise<Cooperative>;
  /** USDC (micro) held for the cooperative from payouts in manual review. */
  getHolding(cooperativeId: string): Promise<{ held_usd_micro: number; payouts_held: number; updated_at: string | null }>;
  /** The cooperative's farms the forest check flagged. */
  flaggedFarmers(cooperativeId: string): Promise<Farmer[]>;
  setForestCheck(
    farmerId: string,
    r: { status: Farmer['gfw_status']; checked_at: string; dataset: { name: string; version: string } },
  ): Promise<void>;
  /**
   * Stores a farmer; with `job`, a registration still waiting for the national registry, which is
   * then listed by `pendingNationalChecks` until settled. Errors: FARMER_ALREADY_REGISTERED (409).
   */
  createFarmer(f: Farmer, job?: Job): Promise<void>;
  /** Registrations waiting for the national registry, oldest first (at most `limit`). */
  pendingNationalChecks(limit: number): Promise<PendingNationalCheck[]>;
  /**
   * Completes a registration that waited for the national registry: the farmer's status and the
   * job, and its removal from the pending list, in one transaction (idempotent).
   */
  settleNationalCheck(farmerId: string, jobId: string, outcome: 'VERIFIED' | 'REJECTED', at: string): Promise<void>;
  getFarmer(id: string): Promise<Farmer | null>;
}

/** Phone corrections of farmers (PATCH /farmers/{id}, docs/api/payouts.md#manual-review), apart from RegistryStore so that only that route bundles them. */
export interface FarmerPhoneStore {
  /**
   * Sets the farmer's phone (E.164), `phone_updated_at` and `updated_by`, and appends `change` to
   * the farmer's `phone_changes` (its audit of phone changes), in one conditional update: the
   * farmer exists in `cooperative_id` and its phone is still `previous_phone` (none when null).
   * Returns the farmer as stored, or null when the condition failed.
   */
  updateFarmerPhone(input: {
    farmer_id: string;
    cooperative_id: string;
    phone: string;
    previous_phone: string | null;
    actor: string;
    at: string;
    change: PhoneChange;
  }): Promise<Farmer | null>;
}

/** Result of a national farmer registry look-up: only an ACTIVE farmer counts as found. */
export type FarmerRegistryLookup = { found: true; farmer_id: string; full_name: string; district: string } | { found: false };

/** Plot corrections of farmers (PUT /farmers/{id}/farm, docs/api/eudr.md#correcting-a-plot), apart from RegistryStore so that only that route bundles them. */
export interface FarmerFarmStore {
  /**
   * Replaces the farmer's `farm` and its forest-check fields (`gfw_status`, and `gfw_checked_at`,
   * `gfw_dataset` when checked, else removed), sets `farm_updated_at` and `updated_by`, appends
   * `change` to `farm_changes`, and keeps the change's own record with both plots
   * (`previous_farm`, `farm`), in one transaction conditioned on the farmer being in
   * `cooperative_id` with its plot last replaced at `previous_updated_at` (never, when null).
   * Returns true, or false when that condition no longer holds (nothing written).
   */
  replaceFarm(input: {
    farmer_id: string;
    cooperative_id: string;
    previous_updated_at: string | null;
    previous_farm: Farmer['farm'];
    farm: Farmer['farm'];
    forest: { status: Farmer['gfw_status']; checked_at?: string; dataset?: { name: string; version: string } };
    change: FarmChange;
  }): Promise<boolean>;
}

/** The national farmer registry (MAAIF). */
export interface NationalFarmerRegistry {
  /** Looks up a national farmer ID. Errors: NationalRegistryUnavailableError when the registry does not answer. */
  lookup(farmerId: string): Promise<FarmerRegistryLookup>;
}
