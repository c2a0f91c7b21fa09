import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

/** The longest time a chart spans, in seconds: its newest point at the right edge. */
const SPAN_S = 120;

/** One line per series, told apart by colour (the style sheet's palette). */
const COLOURS = ['#3d6ee0', '#d9534f', '#2f9e6b', '#e0a03d', '#8a5cd6', '#3db7c9', '#7a828e'];

interface Props {
  /** What the chart is, for tests and links: `rates`, `stage:<pipeline> · <stage>`. */
  name: string;
  title: string;
  /** The series' labels, in the order of `values`. */
  series: readonly string[];
  /** Seconds since the epoch, one per point. */
  times: readonly number[];
  /** Per series, one value per time; null where there was none (a gap in the line). */
  values: ReadonlyArray<ReadonlyArray<number | null>>;
  /** Added to each value in the legend: `ms`, `/s`. */
  unit: string;
}

/**
 * A small time-series chart. uPlot: maintained, no dependencies, about 50 kB bundled (Chart.js is
 * several times that), drawn on a canvas with no inline script or style attribute, so it runs
 * under the console's strict Content-Security-Policy. Made once per set of series; new points
 * only redraw it.
 */
export function TimeChart({ name, title, series, times, values, unit }: Props) {
  const box = useRef<HTMLDivElement>(null);
  const chart = useRef<uPlot>();
  const data = [[...times], ...values.map((v) => [...v])] as uPlot.AlignedData;
  const labels = series.join('\n');
  // Made anew only when the series change (by their labels); new data follows in the effect below.
  useEffect(() => {
    if (box.current === null) return;
    const made = new uPlot(
      {
        width: 380,
        height: 140,
        series: [
          {},
          ...series.map((label, i) => ({
            label,
            stroke: COLOURS[i % COLOURS.length],
            width: 1.5,
            // A point alone between gaps (one read with requests) would otherwise draw nothing.
            points: { show: true, size: 4 },
            value: (_: uPlot, v: number | null) => (v === null ? '—' : `${Number(v.toPrecision(3))} ${unit}`),
          })),
        ],
        // From the first point kept (the last two minutes at most) to the newest.
        scales: {
          x: {
            time: true,
            range: (_u, min, max) => [min === max ? max - 2 : Math.max(min, max - SPAN_S), max],
          },
        },
        axes: [{}, { size: 48 }],
        // The series' names only: the table under the charts gives the figures.
        legend: { live: false },
        cursor: { drag: { x: false, y: false } },
      },
      data,
      box.current,
    );
    chart.current = made;
    return () => {
      made.destroy();
      chart.current = undefined;
    };
  }, [labels, unit]);
  useEffect(() => {
    chart.current?.setData(data);
  });
  return (
    <figure class="chart" data-chart={name} data-points={times.length}>
      <figcaption>{title}</figcaption>
      <div ref={box} />
    </figure>
  );
}
