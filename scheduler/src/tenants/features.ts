/** Tenant features that routes can be gated on (`config.feature`). */
export type TenantFeature = 'time_tracking';
