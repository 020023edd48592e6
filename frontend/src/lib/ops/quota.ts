// The quota form's input as the API takes it. The form asks for sizes in GiB, the unit the quota
// bars show; the API counts memory in MB (MiB) and storage in GB (GiB).

/** What the operator typed: empty keeps the current limit, 0 means unlimited. */
export interface QuotaFields {
  cpuPercent: string;
  vcpus: string;
  memoryGiB: string;
  storageGiB: string;
}

/** The limits of SetQuotaInput; undefined keeps the current value. */
export interface QuotaLimits {
  cpuPercent?: number;
  vcpus?: number;
  memoryMB?: number;
  storageGB?: number;
}

/** A number input's value: undefined when empty (keep), else the number (NaN when not one). */
function num(s: string): number | undefined {
  return s.trim() === '' ? undefined : Number(s);
}

/** The limits of f in the API's units, or an error message when a field is not a number ≥ 0. */
export function quotaLimits(f: QuotaFields): QuotaLimits | string {
  const memoryGiB = num(f.memoryGiB);
  const limits: QuotaLimits = {
    cpuPercent: num(f.cpuPercent),
    vcpus: num(f.vcpus),
    memoryMB: memoryGiB === undefined ? undefined : Math.round(memoryGiB * 1024),
    storageGB: num(f.storageGiB),
  };
  if (Object.values(limits).some((v) => v !== undefined && (Number.isNaN(v) || v < 0))) return 'Limits are numbers, 0 or more.';
  return limits;
}
