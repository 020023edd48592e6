// Usage and invoices of a tenant (package metering): what its resources reserved this month,
// drawn per day and per resource kind, the most expensive resources, every tenant's month for
// operators, and the tenant's invoices (DRAFT while the month runs, FINAL after).
import { useMemo, useState } from 'react';
import { useSearchParams } from 'react-router';
import { useQuery } from 'urql';
import { graphql } from '../../gql';
import { Problem } from '../../components/Problem';
import { Loading } from '../../components/Loading';
import { useInfraAccess } from '../../components/compute/access';
import '../../components/ops/ops.css';
import './usage.css';

const TenantsDocument = graphql(`
  query UsageTenants {
    tenants(first: 100, orderBy: { field: NAME }) { edges { node { id name displayName } } }
  }
`);

const UsageDocument = graphql(`
  query TenantUsage($tenantID: ID!, $from: Time!, $to: Time!) {
    byDay: usage(tenantID: $tenantID, from: $from, to: $to, groupBy: [DAY]) {
      lines { key kind seconds amount currency }
      total { amount currency }
    }
    byResource: usage(tenantID: $tenantID, from: $from, to: $to, groupBy: [RESOURCE]) {
      lines { key resourceID kind seconds quantity amount currency }
    }
    invoices(tenantID: $tenantID, first: 12) {
      edges { node {
        period status total { amount currency }
        lines { key kind seconds amount }
        adjustments { period amount reason }
      } }
    }
  }
`);

const TenantTotalDocument = graphql(`
  query TenantMonthTotal($tenantID: ID!, $from: Time!, $to: Time!) {
    usage(tenantID: $tenantID, from: $from, to: $to) { total { amount currency } }
  }
`);

/** The colours of resource kinds in the charts. */
const kindColors: Record<string, string> = {
  VIRTUAL_MACHINE: '#3b82f6',
  VOLUME: '#10b981',
  IP_ADDRESS: '#f59e0b',
  LOAD_BALANCER: '#8b5cf6',
};
const kindLabels: Record<string, string> = {
  VIRTUAL_MACHINE: 'VMs',
  VOLUME: 'Volumes',
  IP_ADDRESS: 'Addresses',
  LOAD_BALANCER: 'Load balancers',
};

/** The first instant of this month and of the next (UTC), as the API reads times. */
function monthRange(offset: number): { from: string; to: string; label: string } {
  const now = new Date();
  const from = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + offset, 1));
  const to = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + offset + 1, 1));
  return { from: from.toISOString(), to: to.toISOString(), label: from.toISOString().slice(0, 7) };
}

function money(amount: string, currency: string): string {
  return `${Number(amount).toFixed(2)} ${currency}`;
}

type DayLine = { key: string; kind: string; amount: string };

/** A stacked bar per day, one colour per resource kind, in SVG. */
function DailyChart({ lines, currency }: { lines: DayLine[]; currency: string }) {
  const days = [...new Set(lines.map((l) => l.key))].sort();
  const kinds = [...new Set(lines.map((l) => l.kind))].sort();
  const value = (day: string, kind: string) =>
    lines.filter((l) => l.key === day && l.kind === kind).reduce((s, l) => s + Number(l.amount), 0);
  const totals = days.map((d) => kinds.reduce((s, k) => s + value(d, k), 0));
  const max = Math.max(...totals, 0.000001);
  const w = 760, h = 220, pad = 40, bw = days.length ? (w - pad) / days.length : 0;
  return (
    <figure className="usage-chart">
      <svg viewBox={`0 0 ${w} ${h + 30}`} role="img" aria-label="Cost per day by resource kind">
        <line x1={pad} y1={h} x2={w} y2={h} stroke="currentColor" strokeOpacity={0.3} />
        <text x={0} y={12} className="axis">{max.toFixed(2)}</text>
        <text x={0} y={h} className="axis">0</text>
        {days.map((d, i) => {
          let y = h;
          return (
            <g key={d}>
              {kinds.map((k) => {
                const bh = (value(d, k) / max) * (h - 10);
                y -= bh;
                return (
                  <rect key={k} x={pad + i * bw + 1} y={y} width={Math.max(bw - 2, 1)} height={bh} fill={kindColors[k] ?? '#999'}>
                    <title>{`${d} ${kindLabels[k] ?? k}: ${value(d, k).toFixed(6)} ${currency}`}</title>
                  </rect>
                );
              })}
              {(i % 5 === 0 || i === days.length - 1) && (
                <text x={pad + i * bw} y={h + 16} className="axis">{d.slice(5)}</text>
              )}
            </g>
          );
        })}
      </svg>
      <figcaption>
        {kinds.map((k) => (
          <span key={k} className="legend"><span className="swatch" style={{ background: kindColors[k] ?? '#999' }} />{kindLabels[k] ?? k}</span>
        ))}
      </figcaption>
    </figure>
  );
}

/** Horizontal bars: the month's cost per resource kind. */
function KindChart({ lines, currency }: { lines: DayLine[]; currency: string }) {
  const byKind = new Map<string, number>();
  for (const l of lines) byKind.set(l.kind, (byKind.get(l.kind) ?? 0) + Number(l.amount));
  const rows = [...byKind.entries()].sort((a, b) => b[1] - a[1]);
  const max = Math.max(...rows.map((r) => r[1]), 0.000001);
  return (
    <svg className="usage-chart" viewBox={`0 0 760 ${rows.length * 28 + 8}`} role="img" aria-label="Cost per resource kind">
      {rows.map(([k, v], i) => (
        <g key={k} transform={`translate(0 ${i * 28 + 4})`}>
          <text x={0} y={16} className="axis">{kindLabels[k] ?? k}</text>
          <rect x={130} y={2} height={20} width={(v / max) * 480} fill={kindColors[k] ?? '#999'} />
          <text x={140 + (v / max) * 480} y={16} className="axis">{`${v.toFixed(2)} ${currency}`}</text>
        </g>
      ))}
    </svg>
  );
}

/** One tenant's bar in the operators' chart of every tenant's month. */
function TenantBar({ id, name, from, to, scale }: { id: string; name: string; from: string; to: string; scale: number }) {
  const [{ data }] = useQuery({ query: TenantTotalDocument, variables: { tenantID: id, from, to } });
  const total = data?.usage.total;
  const v = total ? Number(total.amount) : 0;
  return (
    <div className="tenant-bar">
      <span className="tenant-name">{name}</span>
      <svg viewBox="0 0 500 20" role="img" aria-label={`${name}: ${total ? money(total.amount, total.currency) : '…'}`}>
        <rect x={0} y={2} height={16} width={Math.min(v / scale, 1) * 500} fill={kindColors.VIRTUAL_MACHINE} />
      </svg>
      <span className="num">{total ? money(total.amount, total.currency) : '…'}</span>
    </div>
  );
}

export default function UsagePage() {
  const [params, setParams] = useSearchParams();
  const { infra } = useInfraAccess();
  const [offset, setOffset] = useState(0);
  const range = useMemo(() => monthRange(offset), [offset]);
  const [{ data: tenantsData }] = useQuery({ query: TenantsDocument });
  const tenants = tenantsData?.tenants.edges?.flatMap((e) => (e?.node ? [e.node] : [])) ?? [];
  const tenantID = params.get('tenant') ?? tenants[0]?.id ?? '';
  const [{ data, error, fetching }] = useQuery({
    query: UsageDocument,
    variables: { tenantID, from: range.from, to: range.to },
    pause: !tenantID,
  });
  const [open, setOpen] = useState<string | null>(null);
  const currency = data?.byDay.total.currency ?? 'EUR';
  const top = [...(data?.byResource.lines ?? [])].sort((a, b) => Number(b.amount) - Number(a.amount)).slice(0, 15);
  const invoices = data?.invoices.edges?.flatMap((e) => (e?.node ? [e.node] : [])) ?? [];
  return (
    <div>
      <div className="row">
        <h1>Usage &amp; invoices</h1>
      </div>
      <div className="filters">
        <label>
          Tenant
          <select value={tenantID} onChange={(e) => setParams({ tenant: e.currentTarget.value })}>
            {tenants.map((t) => <option key={t.id} value={t.id}>{t.displayName || t.name}</option>)}
          </select>
        </label>
        <button type="button" onClick={() => setOffset(offset - 1)}>← previous month</button>
        <strong>{range.label}</strong>
        <button type="button" onClick={() => setOffset(offset + 1)} disabled={offset >= 0}>next month →</button>
        <a href={`/api/tenants/${tenantID}/usage.csv?from=${encodeURIComponent(range.from)}&to=${encodeURIComponent(range.to)}&groupBy=RESOURCE,DAY`}>
          CSV (with an API token)
        </a>
      </div>
      <Problem error={error} />
      {!data && fetching && <Loading />}
      {data && (
        <>
          <p>
            Reserved this month so far: <strong>{money(data.byDay.total.amount, currency)}</strong>
            <span className="muted small"> — billed by the second a resource stays reserved, running or stopped</span>
          </p>
          <h2>Per day</h2>
          <DailyChart lines={data.byDay.lines} currency={currency} />
          <h2>Per resource kind</h2>
          <KindChart lines={data.byDay.lines} currency={currency} />
          <h2>Most expensive resources</h2>
          <table className="ops-table" aria-label="Resources">
            <thead><tr><th>Resource</th><th>Kind</th><th className="num">Hours</th><th className="num">Quantity</th><th className="num">Amount</th></tr></thead>
            <tbody>
              {top.map((l) => (
                <tr key={`${l.kind}-${l.resourceID}`}>
                  <td>{l.key}</td><td>{kindLabels[l.kind] ?? l.kind}</td>
                  <td className="num">{(l.seconds / 3600).toFixed(2)}</td>
                  <td className="num">{Number(l.quantity).toFixed(2)}</td>
                  <td className="num">{money(l.amount, l.currency)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <h2>Invoices</h2>
          {invoices.length === 0 && <p className="muted">No invoices yet.</p>}
          <table className="ops-table" aria-label="Invoices">
            <thead><tr><th>Month</th><th>Status</th><th className="num">Lines</th><th>Adjustments</th><th className="num">Total</th></tr></thead>
            <tbody>
              {invoices.map((inv) => (
                <tr key={inv.period} onClick={() => setOpen(open === inv.period ? null : inv.period)} className="clickable">
                  <td>{inv.period}</td>
                  <td><span className={`badge ${inv.status === 'FINAL' ? 'ok' : 'warn'}`}>{inv.status}</span></td>
                  <td className="num">{inv.lines.length}</td>
                  <td>{inv.adjustments.map((a) => `${a.period}: ${a.amount}`).join(', ') || <span className="muted">none</span>}</td>
                  <td className="num">{money(inv.total.amount, inv.total.currency)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {open && (() => {
            const inv = invoices.find((i) => i.period === open);
            if (!inv) return null;
            return (
              <section aria-label={`Invoice ${inv.period}`}>
                <h3>Invoice {inv.period} ({inv.status})</h3>
                <table className="ops-table">
                  <thead><tr><th>Resource</th><th>Kind</th><th className="num">Seconds</th><th className="num">Amount</th></tr></thead>
                  <tbody>
                    {inv.lines.map((l, i) => (
                      <tr key={i}><td>{l.key}</td><td>{kindLabels[l.kind] ?? l.kind}</td><td className="num">{l.seconds}</td><td className="num">{l.amount}</td></tr>
                    ))}
                    {inv.adjustments.map((a) => (
                      <tr key={`adj-${a.period}`}><td colSpan={3}>Adjustment for {a.period}: {a.reason}</td><td className="num">{a.amount}</td></tr>
                    ))}
                  </tbody>
                </table>
              </section>
            );
          })()}
        </>
      )}
      {infra && tenants.length > 0 && (
        <>
          <h2>Every tenant this month</h2>
          {tenants.map((t) => (
            <TenantBar key={t.id} id={t.id} name={t.displayName || t.name} from={range.from} to={range.to}
              scale={Math.max(1, Number(data?.byDay.total.amount ?? 1) * 2)} />
          ))}
        </>
      )}
    </div>
  );
}
