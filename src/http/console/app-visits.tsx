/**
 * "Visits this week" on an app's console page: the last seven UTC days of page views and
 * unique visitors (src/apps/analytics.ts) as a small bar chart drawn in inline SVG (no
 * script, no library), with the numbers also in a table for screen readers and copying.
 */
import { analyticsReport } from "../../apps/analytics";

type Report = Awaited<ReturnType<typeof analyticsReport>>;

const WIDTH = 280;
const HEIGHT = 80;
const BAR_GAP = 6;

export async function visitsThisWeek(env: Env, appId: string): Promise<Report> {
  return analyticsReport(env, appId, 7);
}

export function VisitsSection({ report }: { report: Report }) {
  const peak = Math.max(1, ...report.days.map((d) => d.views));
  const barWidth = (WIDTH - BAR_GAP * (report.days.length - 1)) / report.days.length;
  return (
    <section aria-labelledby="visits-heading">
      <h2 id="visits-heading">Visits this week</h2>
      <p id="visits-total">{`${report.totals.views} page views, ${report.totals.uniques} unique visitors (UTC days ${report.from} to ${report.to}).`}</p>
      <svg id="visits-chart" role="img" aria-labelledby="visits-total" width={WIDTH} height={HEIGHT + 14} viewBox={`0 0 ${WIDTH} ${HEIGHT + 14}`}>
        {report.days.map((day, i) => {
          const height = Math.round((day.views / peak) * HEIGHT);
          const x = i * (barWidth + BAR_GAP);
          return (
            <g data-day={day.day} data-views={String(day.views)}>
              <title>{`${day.day}: ${day.views} views, ${day.uniques} unique`}</title>
              <rect x={x.toFixed(1)} y={String(HEIGHT - height)} width={barWidth.toFixed(1)} height={String(Math.max(height, 1))} fill={day.views ? "currentColor" : "#ccc"} />
              <text x={(x + barWidth / 2).toFixed(1)} y={String(HEIGHT + 12)} font-size="9" text-anchor="middle">{day.day.slice(8)}</text>
            </g>
          );
        })}
      </svg>
      <table id="visits" class="vh">
        <thead><tr><th scope="col">Day</th><th scope="col">Views</th><th scope="col">Unique</th></tr></thead>
        <tbody>{report.days.map((day) => <tr><th scope="row">{day.day}</th><td>{day.views}</td><td>{day.uniques}</td></tr>)}</tbody>
      </table>
    </section>
  );
}
