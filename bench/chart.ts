// The benchmark chart: hand-written SVG, one column per size, comparing requests, memory and latency side by side.
import { PARTICIPANT_LABELS, PARTICIPANTS } from './options.js';
import { sizeLabel } from './report.js';
import type { SessionResult } from './results.js';
import { totalRequests } from './stats.js';

/** One bar series of a panel. */
interface Series {
  readonly name: string;
  readonly color: string;
  /** One value per participant row; undefined draws "n/a". */
  readonly values: readonly (number | undefined)[];
}

/** One panel: horizontal bars, a row per participant. */
interface Panel {
  readonly title: string;
  readonly unit: string;
  /** Bars on a log10(1 + x) scale (requests span orders of magnitude). */
  readonly log: boolean;
  readonly series: readonly Series[];
}

const PANEL_WIDTH = 560;
const LABEL_WIDTH = 170;
const BAR_HEIGHT = 11;
const ROW_GAP = 7;
const TITLE_HEIGHT = 34;
const LEGEND_HEIGHT = 16;
const COLORS = { a: '#4e79a7', b: '#f28e2b', c: '#76b7b2' };

/** Escapes text for SVG content and attributes. */
export function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function formatValue(value: number): string {
  if (value >= 10_000) return `${(value / 1000).toFixed(0)}k`;
  if (Number.isInteger(value)) return String(value);
  if (value >= 100) return value.toFixed(0);
  if (value >= 10) return value.toFixed(1);
  return value.toFixed(2).replace(/\.?0+$/, '') || '0';
}

function panelHeight(panel: Panel, rows: number): number {
  return TITLE_HEIGHT + LEGEND_HEIGHT + rows * (panel.series.length * BAR_HEIGHT + ROW_GAP) + 8;
}

function renderPanel(panel: Panel, rows: readonly string[], x: number, y: number): string {
  const plotWidth = PANEL_WIDTH - LABEL_WIDTH - 60;
  const values = panel.series.flatMap((series) => series.values.filter((value): value is number => value !== undefined));
  const max = Math.max(...values, panel.log ? 1 : 1e-9);
  const scale = (value: number): number => (panel.log ? Math.log10(1 + value) / Math.log10(1 + max) : value / max) * plotWidth;
  const parts: string[] = [
    `<text x="${x}" y="${y + 16}" class="title">${escapeXml(panel.title)}</text>`,
    `<text x="${x + PANEL_WIDTH - 10}" y="${y + 16}" class="unit" text-anchor="end">${escapeXml(panel.unit)}${panel.log ? ', log scale' : ''}</text>`,
  ];
  panel.series.forEach((series, index) => {
    const legendX = x + LABEL_WIDTH + index * 110;
    parts.push(`<rect x="${legendX}" y="${y + TITLE_HEIGHT - 9}" width="10" height="10" fill="${series.color}"/>`);
    parts.push(`<text x="${legendX + 14}" y="${y + TITLE_HEIGHT}" class="legend">${escapeXml(series.name)}</text>`);
  });
  let rowY = y + TITLE_HEIGHT + LEGEND_HEIGHT;
  rows.forEach((label, row) => {
    const rowHeight = panel.series.length * BAR_HEIGHT;
    parts.push(
      `<text x="${x + LABEL_WIDTH - 8}" y="${rowY + rowHeight / 2 + 4}" class="label" text-anchor="end">${escapeXml(label)}</text>`,
    );
    panel.series.forEach((series, index) => {
      const value = series.values[row];
      const barY = rowY + index * BAR_HEIGHT;
      if (value === undefined) {
        parts.push(`<text x="${x + LABEL_WIDTH + 2}" y="${barY + BAR_HEIGHT - 2}" class="value">n/a</text>`);
        return;
      }
      const width = Math.max(value > 0 ? 1 : 0, scale(value));
      parts.push(
        `<rect x="${x + LABEL_WIDTH}" y="${barY}" width="${width.toFixed(1)}" height="${BAR_HEIGHT - 2}" fill="${series.color}"><title>${escapeXml(`${label}, ${series.name}: ${value}`)}</title></rect>`,
      );
      parts.push(
        `<text x="${(x + LABEL_WIDTH + width + 4).toFixed(1)}" y="${barY + BAR_HEIGHT - 2}" class="value">${formatValue(value)}</text>`,
      );
    });
    rowY += rowHeight + ROW_GAP;
  });
  return parts.join('\n');
}

function panelsFor(sessions: readonly (SessionResult | undefined)[]): Panel[] {
  const pick = (read: (session: SessionResult) => number | undefined): (number | undefined)[] =>
    sessions.map((session) => (session ? read(session) : undefined));
  const perOp = (phase: SessionResult['referenced']): number | undefined =>
    phase ? totalRequests(phase.requests) / Math.max(1, phase.operations) : undefined;
  return [
    {
      title: 'API requests',
      unit: 'requests',
      log: true,
      series: [
        {
          name: 'cold start',
          color: COLORS.a,
          values: pick((session) => (session.coldStart ? totalRequests(session.coldStart.requests) : undefined)),
        },
        {
          name: 'restart',
          color: COLORS.c,
          values: pick((session) => (session.restart ? totalRequests(session.restart.requests) : undefined)),
        },
      ],
    },
    {
      title: 'API requests per update',
      unit: 'requests per write',
      log: true,
      series: [
        { name: 'referenced', color: COLORS.a, values: pick((session) => perOp(session.referenced)) },
        { name: 'unrelated', color: COLORS.b, values: pick((session) => perOp(session.unrelated)) },
        { name: 'spec', color: COLORS.c, values: pick((session) => perOp(session.spec)) },
      ],
    },
    {
      title: 'Memory after sync',
      unit: 'MiB',
      log: false,
      series: [
        {
          name: 'heap',
          color: COLORS.a,
          values: pick((session) => {
            const heap = session.afterSync?.memory.heapUsedBytes;
            return heap === undefined ? undefined : heap / 2 ** 20;
          }),
        },
        {
          name: 'RSS',
          color: COLORS.b,
          values: pick((session) => (session.afterSync ? session.afterSync.memory.rssBytes / 2 ** 20 : undefined)),
        },
      ],
    },
    {
      title: 'Propagation latency (ConfigMap write → Deployment seen)',
      unit: 'ms',
      log: true,
      series: [
        { name: 'p50', color: COLORS.a, values: pick((session) => session.referenced?.latencyMs?.p50) },
        { name: 'p99', color: COLORS.b, values: pick((session) => session.referenced?.latencyMs?.p99) },
        { name: 'API floor p99 (same run)', color: COLORS.c, values: pick((session) => session.referenced?.floorMs?.p99) },
      ],
    },
  ];
}

/** The chart of a run: a column per size, four panels per column (requests, requests per update, memory, latency). */
export function renderChart(sessions: readonly SessionResult[], title: string): string {
  const sizes = [...new Set(sessions.map((session) => session.size))].sort((a, b) => a - b);
  const participants = PARTICIPANTS.filter((participant) => sessions.some((session) => session.participant === participant));
  const rows = participants.map((participant) => PARTICIPANT_LABELS[participant]);
  const columns = sizes.map((size) =>
    panelsFor(participants.map((participant) => sessions.find((session) => session.participant === participant && session.size === size))),
  );
  const heights = (columns[0] ?? []).map((panel) => panelHeight(panel, rows.length));
  const width = Math.max(1, sizes.length) * (PANEL_WIDTH + 20) + 20;
  const height = 60 + heights.reduce((sum, value) => sum + value, 0);
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif">`,
    '<style>.title{font-size:13px;font-weight:bold;fill:#222}.unit{font-size:10px;fill:#666}.legend{font-size:10px;fill:#333}.label{font-size:11px;fill:#222}.value{font-size:10px;fill:#444}.heading{font-size:15px;font-weight:bold;fill:#111}</style>',
    `<rect width="${width}" height="${height}" fill="#fff"/>`,
    `<text x="20" y="24" class="heading">${escapeXml(title)}</text>`,
  ];
  columns.forEach((panels, column) => {
    const x = 20 + column * (PANEL_WIDTH + 20);
    parts.push(`<text x="${x}" y="48" class="title">${escapeXml(`${sizeLabel(sizes[column]!)} CustomApps`)}</text>`);
    let y = 56;
    panels.forEach((panel, index) => {
      parts.push(renderPanel(panel, rows, x, y));
      y += heights[index]!;
    });
  });
  parts.push('</svg>', '');
  return parts.join('\n');
}
